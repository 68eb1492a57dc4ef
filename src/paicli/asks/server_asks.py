"""How paicli answers what MCP servers ask of it: roots, elicitation and sampling.

Every server gets the folder paicli works in (the run's `root`) as its one root. An
elicitation (form mode) goes to the UI's `Elicitor`, a sampling request to the UI's
`SamplingApprover` and, on a yes, to the model. Without them (`paicli -p`) an elicitation
gets the configured answer (`[mcp] elicitation` in config.toml: "decline", the default, or
"cancel") and sampling is refused, each with one warning line naming the server. Every
answer is a line in the audit log, like a tool call (the form's field names, never what the
user typed); what is typed into a secret field joins the run's known secrets.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from paicli.asks.elicitation import FormError, FormField, form_fields, form_problem
from paicli.audit.log import AuditLog
from paicli.escape import one_line
from paicli.llm.errors import LlmError
from paicli.llm.events import Completion
from paicli.llm.messages import AssistantMessage, Message, SystemMessage, UserMessage
from paicli.mcp import ClientHandlers, RpcError
from paicli.redact import Redactor
from paicli.user_config import UserConfig

if TYPE_CHECKING:
    from paicli.llm.client import HttpClient
    from paicli.llm.settings import ModelSettings
    from paicli.mcp import Root

__all__ = [
    "ElicitAnswer",
    "ElicitationRequest",
    "Elicitor",
    "SampleReviewer",
    "Sampled",
    "SamplingApprover",
    "SamplingModel",
    "SamplingRequest",
    "ServerAsks",
    "model_sampler",
    "unattended_elicitation",
]

log = logging.getLogger("paicli.servers")

Json = dict[str, Any]
Action = Literal["accept", "decline", "cancel"]
# JSON-RPC errors a server gets (sampling: "user rejected" is -1 in the specification).
USER_REJECTED = -1
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
# A server's message list is summarised for the user at this many messages; the model gets
# them all.
MAX_SHOWN_MESSAGES = 20


@dataclass(frozen=True)
class ElicitationRequest:
    """A server asks the user to fill in a form."""

    server: str
    message: str
    fields: tuple[FormField, ...]


@dataclass(frozen=True)
class ElicitAnswer:
    action: Action
    content: Mapping[str, object] | None = None  # accept: the answers (unanswered left out)


@dataclass(frozen=True)
class SamplingRequest:
    """A server asks for a completion from the user's model."""

    server: str
    messages: tuple[tuple[str, str], ...]  # (role, text; other content described)
    system_prompt: str
    max_tokens: int


@dataclass(frozen=True)
class Sampled:
    text: str
    model: str
    finish_reason: str | None


Elicitor = Callable[[ElicitationRequest], Awaitable[ElicitAnswer]]
SamplingApprover = Callable[[SamplingRequest], Awaitable[bool]]
# (the request, the model's answer) -> whether that answer goes to the server.
SampleReviewer = Callable[[SamplingRequest, str], Awaitable[bool]]
# (chat messages, max tokens) -> the model's answer; raises LlmError.
SamplingModel = Callable[[Sequence[Message], int], Awaitable[Sampled]]


def model_sampler(
    settings: Callable[[], ModelSettings],
    http_client: HttpClient | None,
    on_usage: Callable[[Mapping[str, int]], None],
    redactor: Redactor,
) -> SamplingModel:
    """A `SamplingModel` asking the model `settings()` names at the time of the request (a
    `/model` switch applies), on a client of its own, without the secrets `redactor` knows (a
    server's messages may quote them); token counts go to `on_usage`."""

    async def sample(messages: Sequence[Message], max_tokens: int) -> Sampled:
        current = settings()
        if not current.configured:
            raise LlmError(current.why_not_configured())
        from paicli.llm.client import LlmClient  # noqa: PLC0415 - openai loads only when needed

        client = LlmClient(current, http_client=http_client)
        completion: Completion | None = None
        try:
            sent = redactor.redact_known_in(list(messages))
            stream = client.stream(sent, [], max_tokens=max_tokens)
            async with contextlib.aclosing(stream):
                async for event in stream:
                    if isinstance(event, Completion):
                        completion = event
        finally:
            await client.aclose()
        if completion is None:
            raise LlmError("the model's stream ended without a completion")
        if completion.usage is not None:
            on_usage(
                {
                    "prompt_tokens": completion.usage.prompt_tokens,
                    "completion_tokens": completion.usage.completion_tokens,
                }
            )
        return Sampled(completion.text, str(current.model), completion.finish_reason)

    return sample


def unattended_elicitation(user_config: UserConfig) -> tuple[Action, list[str]]:
    """`[mcp] elicitation` from config.toml: how `paicli -p` answers a form ("decline" by
    default, or "cancel"), and the problem with the setting if any."""
    value = user_config.section("mcp").get("elicitation", "decline")
    if value == "cancel":
        return "cancel", []
    if value == "decline":
        return "decline", []
    where = user_config.source or "config"
    return "decline", [f'{where}: [mcp] elicitation must be "decline" or "cancel"']


class ServerAsks:
    """Builds each server's `ClientHandlers` and answers through the UI's callbacks."""

    def __init__(
        self,
        root: Path,
        audit: AuditLog,
        *,
        session_id: str,
        elicit: Elicitor | None,
        approve_sampling: SamplingApprover | None,
        model: SamplingModel | None,
        unattended: Action = "decline",
        review: SampleReviewer | None = None,
        learn_secrets: Callable[[Iterable[str]], None] | None = None,
    ) -> None:
        self._root = root.resolve()
        self._audit = audit
        self._session_id = session_id
        self._elicit = elicit
        self._approve_sampling = approve_sampling
        self._review = review
        self._model = model
        self._unattended = unattended
        # What the user types into a secret field is redacted from then on (the run's
        # `Redactor.learn`): a server that echoes it into a tool result must not hand it on.
        self._learn_secrets = learn_secrets

    def roots(self) -> list[Root]:
        from paicli.mcp import Root  # noqa: PLC0415 - loaded with the session first

        return [Root(self._root.as_uri(), self._root.name or str(self._root))]

    def handlers(self, server: str) -> ClientHandlers:
        return ClientHandlers(
            roots=self.roots(),
            sampling=partial(self._sample, server),
            elicitation=partial(self._elicitation, server),
        )

    # -- elicitation ---------------------------------------------------------------------

    async def _elicitation(self, server: str, params: Json) -> Json:
        start = time.monotonic()
        message = params.get("message")
        message = message if isinstance(message, str) else ""
        record: Json = {"tool": "elicitation/create", "server": server, "message": message}
        try:
            fields = form_fields(params.get("requestedSchema", {}))
        except FormError as exc:
            log.warning("%s asked for input with a form paicli cannot show: %s", server, exc)
            self._record(record, start, "refused", "policy", str(exc))
            raise RpcError(INVALID_PARAMS, f"requestedSchema: {exc}") from None
        record["fields"] = [f.name for f in fields]
        if self._elicit is None:
            action = self._unattended
            log.warning(
                "%s asked for input (%s); %s: paicli -p does not ask ([mcp] elicitation in "
                "config.toml)",
                server,
                one_line(message, 100),
                "declined" if action == "decline" else "cancelled",
            )
            self._record(record, start, action, "config")
            return {"action": action}
        answer = await self._elicit(ElicitationRequest(server, message, tuple(fields)))
        if answer.action != "accept":
            self._record(record, start, answer.action, "user")
            return {"action": answer.action}
        content = {k: v for k, v in (answer.content or {}).items() if v is not None}
        problem = form_problem(fields, content)
        if problem is not None:  # the form checks every answer: this is a bug, not a user
            log.warning("%s: the answers do not fit the form (%s); cancelled", server, problem)
            self._record(record, start, "cancel", "policy", problem)
            return {"action": "cancel"}
        if self._learn_secrets is not None:
            self._learn_secrets(
                str(content[f.name]) for f in fields if f.secret and f.name in content
            )
        self._record(record, start, "accept", "user")
        return {"action": "accept", "content": content}

    # -- sampling ------------------------------------------------------------------------

    async def _sample(self, server: str, params: Json) -> Json:
        start = time.monotonic()
        request = _sampling_request(server, params)
        record: Json = {
            "tool": "sampling/createMessage",
            "server": server,
            "messages": len(request.messages),
            "max_tokens": request.max_tokens,
        }
        if self._approve_sampling is None:
            log.warning(
                "%s asked for a completion from the model (sampling); refused: paicli -p does "
                "not ask",
                server,
            )
            self._record(record, start, "denied", "flag")
            raise RpcError(USER_REJECTED, "User rejected sampling request (paicli -p)")
        if self._model is None:
            self._record(record, start, "refused", "policy", "no model configured")
            raise RpcError(INTERNAL_ERROR, "paicli has no model configured")
        if not await self._approve_sampling(request):
            self._record(record, start, "denied", "user")
            raise RpcError(USER_REJECTED, "User rejected sampling request")
        chat: list[Message] = []
        if request.system_prompt:
            chat.append(SystemMessage(role="system", content=request.system_prompt))
        for role, text in request.messages:
            # The server's words, never the assistant's own turn in paicli's conversation.
            chat.append(UserMessage(role="user", content=text) if role == "user" else _said(text))
        try:
            answer = await self._model(chat, request.max_tokens)
        except LlmError as exc:
            self._record(record, start, "error", "user", str(exc))
            raise RpcError(INTERNAL_ERROR, f"the model failed: {exc}") from None
        if self._review is not None and not await self._review(request, answer.text):
            self._record(record, start, "withheld", "user")
            raise RpcError(USER_REJECTED, "User rejected the sampled answer")
        self._record(record, start, "ok", "user")
        return {
            "role": "assistant",
            "content": {"type": "text", "text": answer.text},
            "model": answer.model,
            "stopReason": "maxTokens" if answer.finish_reason == "length" else "endTurn",
        }

    def _record(
        self, record: Json, start: float, outcome: str, decided_by: str, error: str | None = None
    ) -> None:
        allowed = outcome in ("ok", "accept", "error")
        self._audit.write(
            {
                "time": self._audit.clock().isoformat(timespec="milliseconds"),
                "session": self._session_id,
                **record,
                "decision": "allowed" if allowed else "denied",
                "decided_by": decided_by,
                "outcome": outcome,
                "duration_ms": round((time.monotonic() - start) * 1000),
                "error": error,
            }
        )


def _said(text: str) -> Message:
    return AssistantMessage(role="assistant", content=text)


def _sampling_request(server: str, params: Json) -> SamplingRequest:
    """The request as the user is shown it and the model is asked; RpcError (-32602) for
    what this client does not take (tools: `sampling.tools` is not declared)."""
    if params.get("tools") or params.get("toolChoice"):
        raise RpcError(INVALID_PARAMS, "sampling with tools is not supported by this client")
    max_tokens = params.get("maxTokens")
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
        raise RpcError(INVALID_PARAMS, "maxTokens must be a positive integer")
    raw = params.get("messages")
    if not isinstance(raw, list) or not raw:
        raise RpcError(INVALID_PARAMS, "messages must be a non-empty list")
    messages: list[tuple[str, str]] = []
    for item in raw:
        if not isinstance(item, Mapping) or item.get("role") not in ("user", "assistant"):
            raise RpcError(INVALID_PARAMS, "each message needs a role of user or assistant")
        messages.append((str(item["role"]), content_text(item.get("content"))))
    system = params.get("systemPrompt")
    return SamplingRequest(
        server, tuple(messages), system if isinstance(system, str) else "", max_tokens
    )


def content_text(content: object) -> str:
    """The text of one content block or a list of them; other content in one line each."""
    blocks = content if isinstance(content, list) else [content]
    parts: list[str] = []
    for block in blocks:
        if not isinstance(block, Mapping):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif kind in ("tool_use", "tool_result"):
            raise RpcError(INVALID_PARAMS, "sampling with tools is not supported by this client")
        else:
            mime = block.get("mimeType")
            detail = f", {mime}" if isinstance(mime, str) else ""
            parts.append(f"[{one_line(str(kind), 40)} content{one_line(detail, 80)}, not shown]")
    return "\n".join(parts)
