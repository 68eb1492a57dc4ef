"""The model client: one streamed chat completion at a time over the openai SDK.

The SDK's own retries are off (`max_retries=0`): we retry 429, 5xx and dropped connections
here, yielding `Retrying` before each wait so the UI can show it, and never once a delta has
been yielded (the user has seen it; a retry would repeat it). Every SDK exception is
translated into an `LlmError` at this one boundary. This is the only module that imports
`openai` when it runs (and `httpx2`, the HTTP library it runs on; `_assembly` names openai's
types for the type checker only), so nothing else pays for loading it.
"""

from __future__ import annotations

import asyncio
import email.utils
import re
import socket
import time
from collections.abc import (
    AsyncGenerator,
    AsyncIterable,
    Callable,
    Iterable,
    Mapping,
    Sequence,
)
from typing import TYPE_CHECKING

import httpx2
import openai

from paicli.llm._assembly import ChunkAssembler
from paicli.llm._unstreamed import BODY_LIMIT, NotACompletion, as_chunk
from paicli.llm.errors import (
    AuthenticationFailed,
    EndpointUnreachable,
    LlmError,
    ModelNotFound,
    RequestRejected,
    ServiceUnavailable,
)
from paicli.llm.events import Retrying, StreamEvent
from paicli.llm.messages import Message, ToolDefinition
from paicli.llm.settings import ModelSettings, display_url

if TYPE_CHECKING:
    from openai.types.chat import (
        ChatCompletionChunk,
    )

__all__ = ["HttpClient", "LlmClient"]

# The HTTP client the openai SDK runs on. A caller may pass its own (tests answer in memory
# through an `httpx2.MockTransport`); the caller then owns it and closes it.
HttpClient = httpx2.AsyncClient

# Servers that need no key still get an Authorization header; the SDK insists on a value.
NO_KEY = "no-key"
# Longest silence allowed between streamed bytes: reasoning models may think for minutes
# before the first token, but a silent socket for longer than this is dead.
READ_TIMEOUT = 300.0
# A host that has not accepted the connection in this long is not going to.
CONNECT_TIMEOUT = 15.0
# The first retry waits this long, then doubling; Retry-After replaces it when sent.
BASE_DELAY = 1.0
# No wait is longer than this, whatever Retry-After says: the user is watching a spinner.
MAX_DELAY = 30.0
# A model list is one small GET: an endpoint silent for this long has none to give.
LIST_TIMEOUT = 10.0
# More models than a list can usefully show (OpenRouter lists hundreds); the rest by name.
MAX_MODELS = 500
# Server messages quoted in errors are cut to this many characters (they can be pages).
MESSAGE_LIMIT = 300

_MODEL_MISSING = re.compile(
    r"model.*(not exist|not found|does not exist|unknown)|unknown model|模型不存在", re.I
)


class LlmClient:
    """Streams chat completions from the model `settings` name; `aclose()` when done."""

    def __init__(
        self,
        settings: ModelSettings,
        *,
        max_retries: int = 4,
        timeout: float = READ_TIMEOUT,
        base_delay: float = BASE_DELAY,
        max_delay: float = MAX_DELAY,
        http_client: HttpClient | None = None,
        on_answer: Callable[[], object] | None = None,
    ) -> None:
        """`on_answer` is called each time a request has been answered (the response has
        begun, or failed): the request has left, and other work may have the machine."""
        if not settings.base_url or not settings.model:
            # The SDK would otherwise fall back to OPENAI_BASE_URL or api.openai.com.
            raise LlmError(settings.why_not_configured())
        self.settings = settings
        self._max_retries = max_retries
        self._base_delay = base_delay
        self._max_delay = max_delay
        # Cleared when a server rejects `stream_options`; usage is then simply unknown.
        self._ask_usage = True
        self._owns_http_client = http_client is None
        self._on_answer = on_answer
        self._client = openai.AsyncOpenAI(
            base_url=settings.base_url,
            api_key=settings.api_key or NO_KEY,
            max_retries=0,
            timeout=openai.Timeout(timeout, connect=min(timeout, CONNECT_TIMEOUT)),
            http_client=http_client,
        )

    def _answered(self) -> None:
        if self._on_answer is not None:
            self._on_answer()

    async def aclose(self) -> None:
        """Release the connections; a client passed in as `http_client` stays open (the
        SDK's `close()` would close it under its owner)."""
        if self._owns_http_client:
            await self._client.close()

    async def list_models(self) -> list[str]:
        """The ids of the models the endpoint offers (`GET {base_url}/models`, as OpenAI's
        API answers it), sorted, at most `MAX_MODELS`; an `LlmError` of one line when it
        has no such list, refuses the key or answers something else."""
        where = self._where()
        ids: set[str] = set()
        try:
            async with asyncio.timeout(LIST_TIMEOUT):
                async for model in self._client.models.list():
                    name = getattr(model, "id", None)
                    if isinstance(name, str) and name and len(ids) < MAX_MODELS:
                        ids.add(name)
        except TimeoutError:
            raise EndpointUnreachable(f"{where} did not list its models in time") from None
        except openai.APIStatusError as exc:
            if exc.status_code in (401, 403):
                hint = self.settings.key_hint
                raise AuthenticationFailed(
                    f"authentication failed for {where}: check {hint}"
                ) from exc
            raise RequestRejected(
                f"{where} has no model list (HTTP {exc.status_code} for /models)"
            ) from exc
        except openai.APIConnectionError as exc:
            raise EndpointUnreachable(f"cannot reach {where}: {_connection_reason(exc)}") from exc
        except (openai.APIError, ValueError, TypeError, AttributeError) as exc:
            raise RequestRejected(f"{where} answered /models with no model list") from exc
        return sorted(ids)

    async def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolDefinition],
        *,
        max_tokens: int | None = None,
    ) -> AsyncGenerator[StreamEvent, None]:
        """Stream one completion: text and reasoning deltas as they arrive, `Retrying`
        before each retry wait, and a final `Completion`. Raises `LlmError`.

        Iterate it inside `contextlib.aclosing(...)`: cancelling the iterating task then
        closes the HTTP response at once."""
        failures = 0
        while True:
            assembler = ChunkAssembler()
            try:
                try:
                    response = await self._create(messages, tools, max_tokens)
                except openai.APIError:
                    self._answered()  # (not when cancelled: nothing else is to start then)
                    raise
                self._answered()
                try:
                    if _content_type(response) == "application/json":
                        chunks: AsyncIterable[ChatCompletionChunk] = self._whole(response)
                    else:
                        chunks = response
                    async for chunk in chunks:
                        for delta in assembler.feed(chunk):
                            yield delta
                finally:
                    await response.close()
                if not assembler.chunks:
                    raise ServiceUnavailable(f"{self._where()} sent an empty answer (no chunks)")
            except openai.APIError as exc:
                if self._ask_usage and _rejects_stream_options(exc) and not assembler.started:
                    self._ask_usage = False
                    continue
                failures += 1
                delay = None
                if not assembler.started and failures <= self._max_retries:
                    delay = self._retry_delay(exc, failures)
                if delay is None:
                    raise self._translate(exc, failures, started=assembler.started) from exc
                yield Retrying(failures, delay, _retry_reason(exc))
                await asyncio.sleep(delay)
                continue
            yield assembler.completion()
            return

    async def _create(
        self, messages: Sequence[Message], tools: Sequence[ToolDefinition], max_tokens: int | None
    ) -> openai.AsyncStream[ChatCompletionChunk]:
        from openai.types.chat import ChatCompletion, ChatCompletionChunk  # noqa: PLC0415

        # Posted as built: the SDK's `chat.completions.create` would first walk the whole
        # request against its typed parameters (the conversation and every tool's schema,
        # each call) to rename keys none of these has. Our TypedDicts are the wire's shape.
        body: dict[str, object] = {
            "model": str(self.settings.model),
            "messages": messages,
            "stream": True,
        }
        if tools:
            body["tools"] = tools
        if self._ask_usage:
            body["stream_options"] = {"include_usage": True}
        if max_tokens is not None:  # a server's sampling request only (its maxTokens holds)
            body["max_tokens"] = max_tokens
        return await self._client.post(
            "/chat/completions",
            cast_to=ChatCompletion,
            body=body,
            stream=True,
            stream_cls=openai.AsyncStream[ChatCompletionChunk],
        )

    async def _whole(
        self, response: openai.AsyncStream[ChatCompletionChunk]
    ) -> AsyncGenerator[ChatCompletionChunk, None]:
        """The one completion an endpoint that ignores `stream` sent, as one chunk."""
        from openai.types.chat import ChatCompletionChunk  # noqa: PLC0415

        body = bytearray()
        try:
            async for piece in response.response.aiter_bytes():
                body += piece
                if len(body) > BODY_LIMIT:
                    raise ServiceUnavailable(
                        f"{self._where()} sent an unstreamed answer over {BODY_LIMIT} bytes"
                    )
        except httpx2.HTTPError as exc:
            reason = " ".join(str(exc).split()) or type(exc).__name__
            raise ServiceUnavailable(
                f"the answer from {self._where()} broke off: {reason}"
            ) from exc
        try:
            chunk = as_chunk(bytes(body), str(self.settings.model))
            yield ChatCompletionChunk.model_validate(chunk)
        except (NotACompletion, ValueError) as exc:
            why = exc if isinstance(exc, NotACompletion) else "a completion it cannot read"
            raise ServiceUnavailable(f"{self._where()} ignored streaming and sent {why}") from exc

    def _retry_delay(self, exc: openai.APIError, failures: int) -> float | None:
        """Seconds to wait before the next attempt, or None if `exc` is not worth one."""
        if isinstance(exc, openai.APIStatusError):
            if exc.status_code != 429 and exc.status_code < 500:
                return None
            after = _retry_after(exc.response.headers)
            if after is not None:
                return min(max(after, 0.0), self._max_delay)
        elif not isinstance(exc, openai.APIConnectionError) or _never_connected(exc):
            return None
        backoff: float = self._base_delay * 2.0 ** (failures - 1)
        return min(backoff, self._max_delay)

    def _translate(self, exc: openai.APIError, failures: int, *, started: bool) -> LlmError:
        where = self._where()
        attempts = f"{failures} attempt{'s' if failures != 1 else ''}"
        if isinstance(exc, openai.APIConnectionError):
            reason = _connection_reason(exc)
            if started:
                return ServiceUnavailable(f"the stream from {where} broke off: {reason}")
            if _never_connected(exc):
                return EndpointUnreachable(f"cannot reach {where}: {reason}")
            return ServiceUnavailable(f"lost the connection to {where} after {attempts}")
        message = self._server_message(exc)
        if not isinstance(exc, openai.APIStatusError):
            return ServiceUnavailable(f"{where} reported an error mid-stream: {message}")
        status = exc.status_code
        if status in (401, 403):
            hint = self.settings.key_hint
            return AuthenticationFailed(f"authentication failed for {where}: check {hint}")
        if exc.code == "model_not_found" or (
            status in (400, 404) and _MODEL_MISSING.search(message)
        ):
            model = self.settings.model
            return ModelNotFound(f"{where} does not know the model {model!r}: {message}")
        if status == 404:
            return RequestRejected(
                f"{where} has no chat completions endpoint (HTTP 404): check the base URL"
            )
        if status == 429:
            return ServiceUnavailable(f"rate limited by {where} after {attempts}: {message}")
        if status >= 500:
            return ServiceUnavailable(
                f"{where} failed with HTTP {status} after {attempts}: {message}"
            )
        return RequestRejected(f"{where} rejected the request (HTTP {status}): {message}")

    def _where(self) -> str:
        settings = self.settings
        url = display_url(settings.base_url or "")
        if settings.provider:
            return f"{settings.provider} ({url})"
        return url

    def _server_message(self, exc: openai.APIError) -> str:
        """The server's own message, on one line, cut short, with the key scrubbed out."""
        body = exc.body
        message = body.get("message") if isinstance(body, dict) else None
        text = str(message) if message else exc.message
        text = " ".join(text.split())
        if self.settings.api_key:
            text = text.replace(self.settings.api_key, "***")
        if len(text) > MESSAGE_LIMIT:
            text = text[: MESSAGE_LIMIT - 1] + "…"
        return text or "no message"


def _content_type(response: openai.AsyncStream[ChatCompletionChunk]) -> str:
    value = response.response.headers.get("content-type", "")
    return str(value).split(";")[0].strip().lower()


def _rejects_stream_options(exc: openai.APIError) -> bool:
    """Some older OpenAI-compatible servers answer 400/422 to `stream_options`."""
    return (
        isinstance(exc, openai.APIStatusError)
        and exc.status_code in (400, 422)
        and ("stream_options" in str(exc.body) or "include_usage" in str(exc.body))
    )


def _retry_reason(exc: openai.APIError) -> str:
    if isinstance(exc, openai.APIStatusError):
        if exc.status_code == 429:
            return "rate limited"
        return f"server error (HTTP {exc.status_code})"
    return "connection lost"


def _retry_after(headers: Mapping[str, str]) -> float | None:
    """`retry-after-ms`, or `retry-after` in seconds or as an HTTP date."""
    value = headers.get("retry-after-ms")
    if value is not None:
        try:
            return float(value) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return when.timestamp() - time.time()


def _causes(exc: BaseException) -> Iterable[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _never_connected(exc: openai.APIError) -> bool:
    """Refused, unresolvable or timed out: retrying in a second will not change it (a
    reset after connecting is different: a proxy or load balancer hiccup)."""
    if isinstance(exc, openai.APITimeoutError):
        return True
    return any(
        isinstance(cause, ConnectionRefusedError | socket.gaierror)
        or type(cause).__name__ in ("ConnectError", "ConnectTimeout")
        for cause in _causes(exc)
    )


def _connection_reason(exc: openai.APIError) -> str:
    if isinstance(exc, openai.APITimeoutError):
        return "timed out"
    for cause in _causes(exc):
        if isinstance(cause, ConnectionRefusedError):
            return "connection refused"
        if isinstance(cause, socket.gaierror):
            return "host name not resolved"
    for cause in _causes(exc):
        if cause is not exc and str(cause):
            return " ".join(str(cause).split())
    return "connection failed"
