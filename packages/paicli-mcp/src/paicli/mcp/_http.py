"""Streamable HTTP transport (2025-03-26 onwards, both eras), on aiohttp.

Every outgoing message is its own POST, made inside `send()` in the caller's task (an
"inline" send); the answer (a JSON body, an SSE stream, or 202) is parsed and its messages
pushed to the engine (`PushDelivery`), a failure of one request to its `on_error`. The HTTP
binding is defined in terms of the messages, so unlike a pipe this transport reads what it
carries: the answer to `initialize` brings the session (`_http_session`: `Mcp-Session-Id`
and `MCP-Protocol-Version` on every later request, one re-initialization when the server
forgot it, after which the request is sent again unless it is a tool call, a DELETE on
close), `notifications/initialized` opens the GET stream
for server-initiated messages, and a dropped SSE stream is resumed with `Last-Event-ID`.
2026-07-28 requests carry `Mcp-Method`/`Mcp-Name`/`Mcp-Param-*` headers (from each tool
list: `ToolsHook`), are cancelled by closing their stream (`CancelHook`), and are sent once
more, under a new id, when their stream breaks before the response (that revision has no
resumption). Reading, following and resuming the SSE streams lives in `_http_stream`; the
aiohttp boundary shared with the legacy transport (client, error translation, bodies) in
`_http_exchange`.

aiohttp rather than httpx: measured on bench/ (64 calls in flight against one local server)
httpx spends most of each call in its connection-pool bookkeeping, and aiohttp does about
ten times the calls per second with the same code on top (see the README's table).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import aiohttp
import orjson
from multidict import CIMultiDict, CIMultiDictProxy

from ._headers import HeaderParam, header_params, request_headers
from ._http_direct import direct_post
from ._http_exchange import (
    HTTP_FAILURES,
    exchange,
    hand_over,
    http_client,
    oauth_use,
    translate_http_error,
)
from ._http_renewal import VERSION_KEY, SessionUpkeep, is_modern
from ._http_session import (
    HttpSession,
    says_session_not_found,
    session_error_body,
)
from ._http_stream import BrokenStream, StreamLink, listen_get, read_answer
from ._jsonrpc import batches_allowed
from ._server_spec import DEFAULT_MAX_MESSAGE_SIZE
from ._transport import (
    Era,
    ErrorSink,
    MessageSink,
    RequestId,
    Transport,
    TransportTraits,
    TransportWatcher,
)
from .errors import ConnectionClosed, McpError
from .types import Tool

if TYPE_CHECKING:
    from .auth import OAuth
    from .auth._authorizer import Authorizer

__all__ = ["StreamableHttpTransport"]

log = logging.getLogger("paicli.mcp.http")

Message = dict[str, Any]

# How long the handshake waits for the optional GET stream to be established.
GET_READY_TIMEOUT = 5.0
# With OAuth, how often one request is sent again after a 401/403 (a refresh or a login,
# then perhaps a step-up to more scopes); a server that refuses a third token will not
# accept a fourth.
MAX_AUTH_RETRIES = 2
# What every POST says it sends and accepts.
POST_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
# Request headers are handed to aiohttp in its own read-only type, which it takes as it is
# (a plain dict would be copied into one on every request).
Headers = Mapping[str, str]
FROZEN_POST_HEADERS: Headers = CIMultiDictProxy(CIMultiDict(POST_HEADERS))
# The requests whose answer tells the transport about the session (its id; the GET stream).
SESSION_METHODS = frozenset({"initialize", "notifications/initialized"})


class StreamableHttpTransport(SessionUpkeep, Transport):
    """One MCP endpoint reached over Streamable HTTP.

    `headers` go on every request (an API key, say); `label` names the server in errors
    (default: the URL); a message or body larger than `max_message_size` bytes is refused;
    `auth` enables OAuth (`paicli.mcp.auth.OAuth`); `client` is the aiohttp session to use
    (default: a pooled one of its own, closed by `aclose()`).
    """

    traits = TransportTraits(kind="http")

    # `send()` performs the HTTP exchange itself instead of handing it to a task: a lone
    # call then costs two event-loop turns fewer. The engine interrupts it on deadline.

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        label: str | None = None,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        auth: OAuth | None = None,
        client: aiohttp.ClientSession | None = None,
    ) -> None:
        self._url = url
        self._label = label or url
        self._max_message_size = max_message_size
        self._client = client or http_client(headers or {})
        # POSTs one layer below `ClientSession.request`, on a client of our own only (one
        # given may have tracing, middlewares, proxies...).
        self._direct = direct_post(self._client, url) if client is None else None
        self._auth: Authorizer | None = None
        if auth is not None:
            from .auth._authorizer import Authorizer  # noqa: PLC0415 - only when configured

            self._auth = Authorizer(auth, url, self._label)
        self._session = HttpSession(self._label, max_message_size)
        self._era: Era | None = None
        # Whether an array in a body or an event is a batch (only once 2025-03-26 is agreed).
        self._batches = False
        # 2026: each tool's parameters mirrored into `Mcp-Param-*` headers.
        self._tool_headers: dict[str, list[HeaderParam]] = {}
        self._sink: MessageSink | None = None
        self._on_error: ErrorSink | None = None
        self._watcher: TransportWatcher | None = None
        self._queue: asyncio.Queue[Message | McpError] = asyncio.Queue()
        self._closed: McpError | None = None
        self._get_stream: asyncio.Task[None] | None = None
        # Set once the GET stream is established, refused, or given up on.
        self._get_ready = asyncio.Event()
        # Ids of re-issued 2026 requests -> the engine's id, so replies reach the caller.
        self._reissued: dict[str, Any] = {}
        self._reissue_ids = itertools.count(1)
        # The headers of a handshake-era POST (without OAuth), for the session they were
        # made for: every call sends the same ones.
        self._post_headers = FROZEN_POST_HEADERS
        self._post_headers_for: tuple[str | None, str | None] | None = None
        self._link = StreamLink(
            label=self._label,
            url=url,
            max_message_size=max_message_size,
            client=self._client,
            base_headers=self._base_headers,
            batches=lambda: self._batches,
            deliver=self._deliver,
            fail=self._fail,
            watcher=lambda: self._watcher,
            oauth=oauth_use(auth),
        )

    @property
    def session_id(self) -> str | None:
        """The server's `Mcp-Session-Id` for this session (stateful servers), else None."""
        return self._session.id

    # -- the contract and its optional hooks ----------------------------------------------

    def deliver_to(self, sink: MessageSink, on_error: ErrorSink) -> bool:
        """Hand incoming messages to `sink` and per-request failures to `on_error`."""
        self._sink = sink
        self._on_error = on_error
        return True

    def watch(self, watcher: TransportWatcher | None) -> None:
        self._watcher = watcher

    def negotiated(self, era: Era, version: str) -> None:
        self._era = era
        self._session.version = version if era == "legacy" else None
        self._batches = batches_allowed(era, version)

    def cancel_request(self, request_id: RequestId) -> bool:
        # 2026: a request is cancelled by closing its response stream, which happened when
        # the engine interrupted the inline send; no notification is defined over HTTP.
        # Before that revision a dropped stream is no cancellation: the engine notifies.
        return self._era == "modern"

    def tools_listed(self, tools: Sequence[Tool]) -> list[Tool]:
        """2026: remember each tool's `x-mcp-header` parameters; leave out (with a warning)
        a tool whose annotations are invalid, as the specification requires."""
        if self._era != "modern":
            return list(tools)
        usable = []
        for tool in tools:
            try:
                self._tool_headers[tool.name] = header_params(tool.input_schema)
            except ValueError as exc:
                log.warning("%s: leaving out tool %r: %s", self._label, tool.name, exc)
                self._tool_headers.pop(tool.name, None)
                continue
            usable.append(tool)
        return usable

    async def send(self, message: Message) -> None:
        """Carry one message's whole exchange in the caller's task:
        its response (or failure) has been delivered when this returns."""
        if self._closed is not None:
            raise self._closed
        method = message.get("method")
        modern = is_modern(message)
        if modern and "id" in message:
            await self._post_modern(message)
        else:
            await self._post(message, modern=modern)
        if method == "notifications/initialized" and self._get_stream is not None:
            # The GET stream should be up before the first call: servers may send requests
            # meant for it during that call.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(GET_READY_TIMEOUT):
                    await self._get_ready.wait()

    async def receive(self) -> Message:
        item = await self._queue.get()
        if isinstance(item, McpError):
            self._queue.put_nowait(item)  # Every later receive() sees the closure too.
            raise item
        return item

    async def aclose(self) -> None:
        if self._closed is not None:
            return
        self._closed = ConnectionClosed(f"{self._label}: transport closed")
        self._queue.put_nowait(self._closed)
        # Requests in flight run in their callers' tasks, which the session cancels; only
        # the GET stream is ours.
        if self._get_stream is not None:
            self._get_stream.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._get_stream
        try:
            await self._session.end(self._delete)
        finally:
            await self._client.close()
            if self._auth is not None:
                await self._auth.aclose()

    async def _delete(self) -> aiohttp.ClientResponse:
        headers = self._base_headers("DELETE")
        return await exchange(
            self._client, self._label, "DELETE", self._url, headers=headers, watcher=self._watcher
        )

    # -- sending ---------------------------------------------------------------------------

    def _base_headers(self, method: str = "GET") -> dict[str, str]:
        headers = self._session.headers()
        if self._auth is not None:
            headers.update(self._auth.header(method, self._url))
        return headers

    def _headers_for(self, message: Message, modern: bool) -> Headers:
        """The headers of the POST of `message` (often shared: never change them)."""
        headers: Headers
        if modern:
            headers = {
                **POST_HEADERS,
                "MCP-Protocol-Version": message["params"]["_meta"][VERSION_KEY],
                **request_headers(message, self._tool_headers),
            }
        elif message.get("method") == "initialize":
            # The version is not negotiated yet during `initialize`.
            headers = FROZEN_POST_HEADERS
        else:
            headers = self._session_post_headers()
        if self._auth is not None:
            headers = {**headers, **self._auth.header("POST", self._url)}
        return headers

    def _session_post_headers(self) -> Headers:
        """POST_HEADERS and the session's own, made again only when the session changes."""
        session = self._session
        key = (session.id, session.version)
        if key != self._post_headers_for:
            self._post_headers = CIMultiDictProxy(
                CIMultiDict({**POST_HEADERS, **session.headers()})
            )
            self._post_headers_for = key
        return self._post_headers

    async def _post_modern(self, message: Message) -> None:
        """A 2026 request. If its stream breaks before the response, the request is lost and
        the specification has the client send it again as a new request with a new id; once
        only, since a server that breaks every stream will not answer a third time either."""
        try:
            await self._post(message, modern=True)
            return
        except BrokenStream:
            log.info("%s: %s stream broke; sending it again", self._label, message["method"])
        reissue_id = f"paicli-reissue-{next(self._reissue_ids)}"
        self._reissued[reissue_id] = message["id"]
        try:
            await self._post({**message, "id": reissue_id}, modern=True)
        except BrokenStream:
            self._fail(
                reissue_id, self._link.stream_broke(message, "(also after sending it again)")
            )
        finally:
            del self._reissued[reissue_id]

    async def _post(
        self, message: Message, *, modern: bool, after_reinit: bool = False, auth_retries: int = 0
    ) -> None:
        method = message.get("method")
        request_id = message.get("id") if method is not None else None
        session = self._session
        if method == "initialize":
            session.initialize = message
        generation = session.generation
        try:
            # A renewal failed before: try again first (nothing of this one was sent yet).
            renew_first = session.lost and not after_reinit
            if renew_first and not await self._renew(message, generation, None):
                return
            if self._auth is not None:
                await self._auth.prepare()
            headers = self._headers_for(message, modern)
            response = await exchange(
                self._client,
                self._label,
                "POST",
                self._url,
                data=orjson.dumps(message),
                headers=headers,
                watcher=self._watcher,
                direct=self._direct,
            )
            # (Released by hand: `async with` would then also await aiohttp's body writer,
            # which `release()` cancels if it still runs, at three coroutines a call.)
            try:
                status = response.status
                if (
                    status in (401, 403)
                    and self._auth is not None
                    and auth_retries < MAX_AUTH_RETRIES
                ):
                    challenge = response.headers.get("WWW-Authenticate")
                    nonce = response.headers.get("DPoP-Nonce")
                    response.release()
                    sent = headers.get("Authorization")
                    if await self._auth.challenged(response.status, challenge, sent, nonce):
                        await self._post(
                            message,
                            modern=modern,
                            after_reinit=after_reinit,
                            auth_retries=auth_retries + 1,
                        )
                        return
                body = None
                if status >= 400 and self._may_have_lost_session(method) and not after_reinit:
                    body = await session_error_body(response, self._max_message_size)
                    if status == 404 or says_session_not_found(body or b""):
                        response.release()
                        await self._session_lost(message, modern, generation, status)
                        return
                if (
                    status >= 300
                    or method not in SESSION_METHODS
                    or self._took_session(method, request_id, response.headers)
                ):
                    await read_answer(self._link, message, request_id, response, modern, body=body)
            finally:
                response.release()
        except asyncio.CancelledError:
            raise
        except HTTP_FAILURES as exc:
            self._fail(request_id, translate_http_error(self._label, self._url, exc))
        except McpError as exc:
            self._fail(request_id, exc)

    def _open_get_stream(self) -> None:
        if self._get_stream is None and self._closed is None:
            self._get_stream = asyncio.get_running_loop().create_task(
                listen_get(self._link, self._get_ready)
            )

    # -- delivery --------------------------------------------------------------------------

    def _deliver(self, message: Message) -> None:
        reply_id = message.get("id")
        reissued = self._reissued
        if (
            reissued
            and "method" not in message
            and isinstance(reply_id, str)
            and reply_id in reissued
        ):
            # The reply to a re-issued request answers the engine's original one.
            message = {**message, "id": self._reissued[reply_id]}
        hand_over(message, self._sink, self._queue)

    def _fail(self, request_id: Any, exc: McpError) -> None:
        if isinstance(request_id, str):
            request_id = self._reissued.get(request_id, request_id)
        if request_id is not None and self._on_error is not None:
            self._on_error(request_id, exc)
        else:
            log.warning("%s", exc)
