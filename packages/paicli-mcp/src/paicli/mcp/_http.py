"""Streamable HTTP transport (2025-03-26 onwards, both eras), on aiohttp.

Every outgoing message is its own POST, made inside `send()` in the caller's task
(an "inline" send); the answer (a JSON body, an SSE stream, or 202) is parsed and its messages
handed to the engine. Stateful
servers get `Mcp-Session-Id` and `MCP-Protocol-Version` on every request after
`initialize`, a GET stream for server-initiated messages, resumption of a dropped SSE stream
with `Last-Event-ID`, one transparent re-initialization when the session is gone (404), and
a DELETE on close. 2026-07-28 requests carry `Mcp-Method`/`Mcp-Name`/`Mcp-Param-*` headers,
are cancelled by closing their stream, and are sent once more, under a new id, when their
stream breaks before the response (that revision has no resumption). Reading, following and
resuming the SSE streams lives in `_http_stream`; the aiohttp boundary shared with the legacy
transport (client, error translation, bodies, parsing) in `_http_exchange`.

aiohttp rather than httpx: measured on bench/ (64 calls in flight against one local server)
httpx spends most of each call in its connection-pool bookkeeping, and aiohttp does about
ten times the calls per second with the same code on top (see the README's table).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import aiohttp
import orjson

from ._headers import HeaderParam, header_params, request_headers
from ._http_exchange import (
    HTTP_FAILURES,
    excerpt,
    exchange,
    hand_over,
    http_client,
    read_body,
    status_error,
    translate_http_error,
)
from ._http_stream import BrokenStream, StreamLink, answers, follow_stream, listen_get
from ._jsonrpc import batches_allowed, envelope_problem, parse
from ._server_spec import HttpServer
from ._transport import (
    Era,
    ErrorSink,
    MessageSink,
    RequestId,
    Transport,
    TransportTraits,
    TransportWatcher,
)
from .errors import ConnectionClosed, HttpError, McpError, ProtocolError
from .types import Tool

if TYPE_CHECKING:
    from .auth._authorizer import Authorizer

__all__ = ["StreamableHttpTransport"]

log = logging.getLogger("paicli.mcp.http")

Message = dict[str, Any]
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"

# Closing the session (DELETE) is a courtesy; never let it hold up shutdown.
DELETE_TIMEOUT = 2.0
# How long the handshake waits for the optional GET stream to be established.
GET_READY_TIMEOUT = 5.0
# With OAuth, how often one request is sent again after a 401/403 (a refresh or a login,
# then perhaps a step-up to more scopes); a server that refuses a third token will not
# accept a fourth.
MAX_AUTH_RETRIES = 2
# The longest Mcp-Session-Id accepted (it goes back to the server on every request).
MAX_SESSION_ID = 1024


def session_id_problem(session_id: str) -> str | None:
    """What is wrong with a server's `Mcp-Session-Id`, or None. The spec allows visible
    ASCII only (0x21-0x7E); paicli echoes it on every request, so it is also kept short."""
    rule = "a session id must be visible ASCII (no spaces), at most 1 KiB"
    if len(session_id) > MAX_SESSION_ID:
        return f"the server's Mcp-Session-Id is {len(session_id):,} characters long; {rule}"
    for at, char in enumerate(session_id, 1):
        if not 0x21 <= ord(char) <= 0x7E:
            return f"the server's Mcp-Session-Id has {char!a} at character {at}; {rule}"
    return None


def _is_modern(message: Message) -> bool:
    """Whether a message is a 2026-07-28 request (it carries the per-request version)."""
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return "method" in message and isinstance(meta, dict) and isinstance(meta.get(VERSION_KEY), str)


def _unattributed_error(message: Message) -> bool:
    return "method" not in message and message.get("id") is None and "error" in message


class StreamableHttpTransport(Transport):
    """One MCP endpoint reached over Streamable HTTP."""

    traits = TransportTraits(kind="http")

    # `send()` performs the HTTP exchange itself instead of handing it to a task: a lone
    # call then costs two event-loop turns fewer. The engine interrupts it on deadline.

    def __init__(self, server: HttpServer, client: aiohttp.ClientSession | None = None) -> None:
        self._server = server
        self._client = client or http_client(server)
        self._label = server.label
        self._auth: Authorizer | None = None
        if server.auth is not None:
            from .auth._authorizer import Authorizer  # noqa: PLC0415 - only when configured

            self._auth = Authorizer(server.auth, server.url, server.label)
        self.session_id: str | None = None
        self._era: Era | None = None
        # The agreed handshake-era version, sent as a header on every later request.
        self._legacy_version: str | None = None
        # Whether an array in a body or an event is a batch (only once 2025-03-26 is agreed).
        self._batches = False
        # 2026: each tool's parameters mirrored into `Mcp-Param-*` headers.
        self._tool_headers: dict[str, list[HeaderParam]] = {}
        self._sink: MessageSink | None = None
        self._on_error: ErrorSink | None = None
        self._watcher: TransportWatcher | None = None
        self._queue: asyncio.Queue[Message | McpError] = asyncio.Queue()
        self._closed: McpError | None = None
        self._initialize: Message | None = None
        self._reinit_lock = asyncio.Lock()
        self._generation = 0
        self._get_stream: asyncio.Task[None] | None = None
        # Set once the GET stream is established, refused, or given up on.
        self._get_ready = asyncio.Event()
        # Ids of re-issued 2026 requests -> the engine's id, so replies reach the caller.
        self._reissued: dict[str, Any] = {}
        self._reissue_ids = itertools.count(1)
        self._link = StreamLink(
            label=self._label,
            url=server.url,
            max_message_size=server.max_message_size,
            client=self._client,
            base_headers=self._base_headers,
            batches=lambda: self._batches,
            deliver=self._deliver,
            fail=self._fail,
            watcher=lambda: self._watcher,
        )

    # -- the Transport interface ---------------------------------------------------------

    def deliver_to(self, sink: MessageSink, on_error: ErrorSink) -> bool:
        """Hand incoming messages to `sink` and per-request failures to `on_error`."""
        self._sink = sink
        self._on_error = on_error
        return True

    def watch(self, watcher: TransportWatcher | None) -> None:
        self._watcher = watcher

    def negotiated(self, era: Era, version: str) -> None:
        self._era = era
        self._legacy_version = version if era == "legacy" else None
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
        modern = _is_modern(message)
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
            if self.session_id is not None:
                with contextlib.suppress(aiohttp.ClientError, McpError):
                    async with asyncio.timeout(DELETE_TIMEOUT):
                        url, headers = self._server.url, self._base_headers("DELETE")
                        async with exchange(
                            self._client,
                            self._label,
                            "DELETE",
                            url,
                            headers=headers,
                            watcher=self._watcher,
                        ):
                            pass
        except TimeoutError:
            log.debug("%s: DELETE of the session timed out", self._label)
        finally:
            await self._client.close()
            if self._auth is not None:
                await self._auth.aclose()

    # -- sending ---------------------------------------------------------------------------

    def _base_headers(self, method: str = "GET") -> dict[str, str]:
        headers: dict[str, str] = {}
        if self.session_id is not None:
            headers["Mcp-Session-Id"] = self.session_id
        if self._legacy_version is not None:
            headers["MCP-Protocol-Version"] = self._legacy_version
        if self._auth is not None:
            headers.update(self._auth.header(method, self._server.url))
        return headers

    def _headers_for(self, message: Message) -> dict[str, str]:
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        }
        if _is_modern(message):
            headers["MCP-Protocol-Version"] = message["params"]["_meta"][VERSION_KEY]
            headers.update(request_headers(message, self._tool_headers))
        elif message.get("method") != "initialize":
            # The version is not negotiated yet during `initialize`.
            headers.update(self._base_headers("POST"))
        if self._auth is not None:
            headers.update(self._auth.header("POST", self._server.url))
        return headers

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
        request_id = message.get("id") if "method" in message else None
        if message.get("method") == "initialize":
            self._initialize = message
        generation = self._generation
        try:
            if self._auth is not None:
                await self._auth.prepare()
            headers = self._headers_for(message)
            async with exchange(
                self._client,
                self._label,
                "POST",
                self._server.url,
                data=orjson.dumps(message),
                headers=headers,
                watcher=self._watcher,
            ) as response:
                if (
                    response.status in (401, 403)
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
                if (
                    response.status == 404
                    and self.session_id is not None
                    and not after_reinit
                    and message.get("method") != "initialize"
                ):
                    response.release()
                    if await self._reinitialize(generation):
                        await self._post(message, modern=modern, after_reinit=True)
                        return
                await self._handle(message, request_id, response, modern)
        except asyncio.CancelledError:
            raise
        except HTTP_FAILURES as exc:
            self._fail(request_id, translate_http_error(self._label, self._server.url, exc))
        except McpError as exc:
            self._fail(request_id, exc)

    async def _handle(
        self, message: Message, request_id: Any, response: aiohttp.ClientResponse, modern: bool
    ) -> None:
        status = response.status
        limit = self._server.max_message_size
        if status >= 300:
            # (A redirect gets here only when `exchange` would not follow it.)
            body = await read_body(response, limit)
            is_json = response.content_type == "application/json"
            errors = [
                m
                for m in (self._parse(body) if is_json else [])
                if "error" in m and envelope_problem({**m, "id": request_id}) is None
            ]
            if errors and request_id is not None and status not in (401, 403):
                # A real JSON-RPC error in the body (2026 servers send them with 400/404).
                # It answers this POST whatever its id says: servers on the SDK 1.x send
                # `null` or "server-error" there.
                self._deliver({**errors[0], "id": request_id})
                return
            self._fail(request_id, status_error(self._label, response, body))
            return
        if message.get("method") == "initialize":
            session_id = response.headers.get("mcp-session-id")
            problem = session_id_problem(session_id) if session_id else None
            if problem is not None:
                self._fail(request_id, ProtocolError(f"{self._label}: {problem}"))
                return
            if session_id:
                self.session_id = session_id
        if message.get("method") == "notifications/initialized":
            self._open_get_stream()
        if request_id is None:
            return  # Notifications and our answers to server requests: 202 is all we need.
        if status == 202:
            self._fail(request_id, HttpError(f"{self._label}: server sent no response (202)"))
            return
        content_type = response.content_type
        if content_type == "application/json":
            body = await read_body(response, limit)
            if not self._deliver_body(body, request_id):
                # Nothing else will answer it: a body cut short, or not JSON-RPC.
                self._fail(
                    request_id,
                    HttpError(
                        f"{self._label}: the JSON response to {message.get('method')} holds "
                        f'no valid answer to it (cut short, or not JSON-RPC): "{excerpt(body)}"',
                        status=status,
                    ),
                )
        elif content_type == "text/event-stream":
            await follow_stream(self._link, message, request_id, response, modern)
        else:
            self._fail(
                request_id,
                HttpError(
                    f"{self._label}: unexpected content type {content_type or '(none)'!r} "
                    f"in the response to {message.get('method')}",
                    status=status,
                ),
            )

    def _parse(self, body: bytes) -> list[Message]:
        return parse(body, batches=self._batches, where=f"{self._label}: response body")

    def _deliver_body(self, body: bytes, request_id: Any) -> bool:
        """Deliver the messages of a JSON body; whether one answered `request_id`."""
        answered = False
        for reply in self._parse(body):
            if not answered and _unattributed_error(reply):
                # An error the server could not tie to a request (it could not read ours):
                # it answers the POST that carried it.
                reply_to_us = {**reply, "id": request_id}
                answered = envelope_problem(reply_to_us) is None
                self._deliver(reply_to_us)
                continue
            answered = answered or answers(reply, request_id)
            self._deliver(reply)
        return answered

    # -- session upkeep --------------------------------------------------------------------

    async def _reinitialize(self, generation: int) -> bool:
        """The server forgot our session (404): run the handshake again, once."""
        async with self._reinit_lock:
            if self._generation != generation:
                return True  # Another request already did it.
            if self._initialize is None:
                return False
            log.info("%s: session expired; initializing a new one", self._label)
            self.session_id = None
            params = self._initialize.get("params")
            request = {
                "jsonrpc": "2.0",
                "id": f"paicli-reinit-{generation + 1}",
                "method": "initialize",
                "params": params,
            }
            headers = self._headers_for(request)
            url, label, client = self._server.url, self._label, self._client
            data = orjson.dumps(request)
            watcher = self._watcher
            async with exchange(
                client, label, "POST", url, data=data, headers=headers, watcher=watcher
            ) as r:
                session_id = r.headers.get("mcp-session-id")
                if r.status >= 300:
                    return False
                if session_id and (problem := session_id_problem(session_id)) is not None:
                    log.warning("%s: %s", label, problem)
                    return False
                self.session_id = session_id
                await read_body(r, self._server.max_message_size)
            self._generation += 1
            initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            data, headers = orjson.dumps(initialized), self._headers_for(initialized)
            async with exchange(
                client, label, "POST", url, data=data, headers=headers, watcher=watcher
            ):
                pass
            # The new session may offer other tools than the lost one: whoever listens for
            # list changes re-reads them.
            self._deliver({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
            return True

    def _open_get_stream(self) -> None:
        if self._get_stream is None and self._closed is None:
            self._get_stream = asyncio.get_running_loop().create_task(
                listen_get(self._link, self._get_ready)
            )

    # -- delivery --------------------------------------------------------------------------

    def _deliver(self, message: Message) -> None:
        reply_id = message.get("id")
        if "method" not in message and isinstance(reply_id, str) and reply_id in self._reissued:
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
