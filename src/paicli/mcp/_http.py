"""Streamable HTTP transport (2025-03-26 onwards, both eras), on aiohttp.

Every outgoing message is its own POST, run as a task this transport owns; the answer (a
JSON body, an SSE stream, or 202) is parsed and its messages handed to the engine. Stateful
servers get `Mcp-Session-Id` and `MCP-Protocol-Version` on every request after
`initialize`, a GET stream for server-initiated messages, resumption of a dropped SSE stream
with `Last-Event-ID`, one transparent re-initialization when the session is gone (404), and
a DELETE on close. 2026-07-28 requests carry `Mcp-Method`/`Mcp-Name`/`Mcp-Param-*` headers,
are cancelled by closing their stream, and are sent once more, under a new id, when their
stream breaks before the response (that revision has no resumption).

aiohttp rather than httpx: measured on bench/ (64 calls in flight against one local server)
httpx spends most of each call in its connection-pool bookkeeping, and aiohttp does about
ten times the calls per second with the same code on top (see the README's table).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any, NamedTuple

import aiohttp
import orjson

from ._headers import HeaderParam, request_headers
from ._sse import iter_events
from .errors import AuthenticationError, ConnectionClosed, HttpError, McpError, MessageTooLarge
from .servers import HttpServer

__all__ = ["StreamableHttpTransport", "hand_over", "http_client", "translate_http_error"]

log = logging.getLogger("paicli.mcp.http")

Message = dict[str, Any]
ErrorSink = Callable[[Any, McpError], None]
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"

# Connecting and sending are quick on any working network; reading has no limit here
# because SSE streams idle for long stretches and every request has its own deadline.
HTTP_TIMEOUT = aiohttp.ClientTimeout(total=None, connect=10.0, sock_read=None)
# Resuming a dropped stream: the server's `retry` if it sent one, else one second, and at
# most three attempts in a row so a broken server cannot keep us looping.
DEFAULT_RETRY = 1.0
MAX_RESUMES = 3
# Reopening the GET stream: each failure in a row doubles the wait (the server's `retry`,
# else DEFAULT_RETRY), so a struggling server is not hammered; MAX_RESUMES bounds the run.
GET_BACKOFF_FACTOR = 2.0
# Closing the session (DELETE) is a courtesy; never let it hold up shutdown.
DELETE_TIMEOUT = 2.0
# How long the handshake waits for the optional GET stream to be established.
GET_READY_TIMEOUT = 5.0


def http_client(server: HttpServer) -> aiohttp.ClientSession:
    """A pooled keep-alive client carrying the server's configured headers."""
    return aiohttp.ClientSession(
        headers=dict(server.headers),
        timeout=HTTP_TIMEOUT,
        connector=aiohttp.TCPConnector(limit=100),
    )


# What aiohttp raises for a failed exchange (its timeouts are asyncio's TimeoutError).
HTTP_FAILURES = (aiohttp.ClientError, TimeoutError)


def translate_http_error(label: str, url: str, exc: BaseException) -> McpError:
    """One clear line for a failed HTTP exchange, naming the server."""
    if isinstance(exc, aiohttp.ClientSSLError | aiohttp.ClientConnectorCertificateError):
        return HttpError(f"{label}: TLS failure connecting to {url}: {exc}")
    if isinstance(exc, aiohttp.ClientConnectorError):
        reason = exc.os_error.strerror or str(exc.os_error)
        return HttpError(f"{label}: cannot connect to {url}: {reason}")
    if isinstance(exc, TimeoutError):
        return HttpError(f"{label}: timed out talking to {url}")
    if isinstance(exc, aiohttp.ServerDisconnectedError | aiohttp.ClientPayloadError):
        return HttpError(f"{label}: the server broke the connection: {exc}")
    return HttpError(f"{label}: HTTP request to {url} failed: {exc}")


def status_error(label: str, response: aiohttp.ClientResponse) -> McpError:
    """The error for an unsuccessful HTTP status with no JSON-RPC error in the body."""
    status = response.status
    text = f"{label}: HTTP {status} {response.reason or ''}".rstrip()
    if status in (401, 403):
        return AuthenticationError(
            f"{text} (the server needs credentials; set them with 'headers')",
            status=status,
            www_authenticate=response.headers.get("www-authenticate"),
        )
    return HttpError(text, status=status)


async def read_body(response: aiohttp.ClientResponse, limit: int) -> bytes:
    """The whole body, refusing to hold more than `limit` bytes."""
    length = response.content_length
    if length is not None and length <= limit:
        # The common case: a declared, acceptable size, usually already buffered.
        return await response.read()
    body = bytearray()
    async for chunk in response.content.iter_any():
        body += chunk
        if len(body) > limit:
            raise MessageTooLarge(f"server sent a response body over the {limit} byte limit")
    return bytes(body)


def hand_over(
    message: Message,
    sink: Callable[[Message], None] | None,
    queue: asyncio.Queue[Message | McpError],
) -> None:
    """Give one incoming message to the engine's sink (or queue it for `receive()`)."""
    if sink is None:
        queue.put_nowait(message)
        return
    try:
        sink(message)
    except Exception:
        # The sink's bug must not take the stream down with it.
        log.exception("message handler failed on %.200r", message)


def _is_modern(message: Message) -> bool:
    """Whether a message is a 2026-07-28 request (it carries the per-request version)."""
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return "method" in message and isinstance(meta, dict) and isinstance(meta.get(VERSION_KEY), str)


def parse_messages(body: bytes | str) -> list[Message]:
    """The JSON-RPC messages in a body (one object, or a 2025-03-26 batch)."""
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        log.warning("skipping a non-JSON message from the server: %.200r", body[:200])
        return []
    if isinstance(data, dict):
        return [data]
    if isinstance(data, list):
        return [m for m in data if isinstance(m, dict)]
    return []


class StreamEnd(NamedTuple):
    """What reading one SSE stream left behind."""

    last_id: str | None  # the last event id seen (for `Last-Event-ID`)
    retry: float | None  # the server's last `retry`, in seconds
    answered: bool  # whether the awaited response was among the events
    events: int  # how many events arrived (priming events included)


class _BrokenStream(Exception):
    """Internal: a 2026 request's response stream ended before its response."""


class StreamableHttpTransport:
    """One MCP endpoint reached over Streamable HTTP."""

    mirrors_tool_headers = True
    # `send()` performs the HTTP exchange itself instead of handing it to a task: a lone
    # call then costs two event-loop turns fewer. The engine interrupts it on deadline.
    sends_inline = True

    def __init__(self, server: HttpServer, client: aiohttp.ClientSession | None = None) -> None:
        self._server = server
        self._client = client or http_client(server)
        self._label = server.label
        self.session_id: str | None = None
        # Set by the session once a handshake-era version is agreed.
        self.protocol_version: str | None = None
        self.tool_headers: dict[str, list[HeaderParam]] = {}
        self._sink: Callable[[Message], None] | None = None
        self._on_error: ErrorSink | None = None
        self._queue: asyncio.Queue[Message | McpError] = asyncio.Queue()
        self._closed: McpError | None = None
        # Ids of 2026-era requests in flight (their cancellation is closing the stream).
        self._modern_ids: set[Any] = set()
        self._initialize: Message | None = None
        self._reinit_lock = asyncio.Lock()
        self._generation = 0
        self._get_stream: asyncio.Task[None] | None = None
        # Set once the GET stream is established, refused, or given up on.
        self._get_ready = asyncio.Event()
        # Ids of re-issued 2026 requests -> the engine's id, so replies reach the caller.
        self._reissued: dict[str, Any] = {}
        self._reissue_ids = itertools.count(1)

    # -- the Transport interface ---------------------------------------------------------

    def deliver_to(self, sink: Callable[[Message], None], on_error: ErrorSink) -> None:
        """Hand incoming messages to `sink` and per-request failures to `on_error`."""
        self._sink = sink
        self._on_error = on_error

    async def send(self, message: Message) -> None:
        """Carry one message's whole exchange in the caller's task (see `sends_inline`):
        its response (or failure) has been delivered when this returns."""
        if self._closed is not None:
            raise self._closed
        method = message.get("method")
        if method == "notifications/cancelled":
            params = message.get("params") or {}
            if params.get("requestId") in self._modern_ids:
                # 2026: the request's stream was closed when its task was cancelled; that
                # is the cancellation, and no notification is defined over HTTP.
                return
        modern = _is_modern(message)
        request_id = message.get("id") if method is not None else None
        if modern and request_id is not None:
            self._modern_ids.add(request_id)
        try:
            if modern and request_id is not None:
                await self._post_modern(message)
            else:
                await self._post(message, modern=modern)
        finally:
            self._modern_ids.discard(request_id)
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
                with contextlib.suppress(aiohttp.ClientError):
                    async with asyncio.timeout(DELETE_TIMEOUT):
                        url, headers = self._server.url, self._base_headers()
                        async with self._client.delete(url, headers=headers):
                            pass
        except TimeoutError:
            log.debug("%s: DELETE of the session timed out", self._label)
        finally:
            await self._client.close()

    # -- sending ---------------------------------------------------------------------------

    def _base_headers(self) -> dict[str, str]:
        headers: dict[str, str] = {}
        if self.session_id is not None:
            headers["Mcp-Session-Id"] = self.session_id
        if self.protocol_version is not None:
            headers["MCP-Protocol-Version"] = self.protocol_version
        return headers

    def _headers_for(self, message: Message) -> dict[str, str]:
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        }
        if _is_modern(message):
            headers["MCP-Protocol-Version"] = message["params"]["_meta"][VERSION_KEY]
            headers.update(request_headers(message, self.tool_headers))
        elif message.get("method") != "initialize":
            # The version is not negotiated yet during `initialize`.
            headers.update(self._base_headers())
        return headers

    async def _post_modern(self, message: Message) -> None:
        """A 2026 request. If its stream breaks before the response, the request is lost and
        the specification has the client send it again as a new request with a new id; once
        only, since a server that breaks every stream will not answer a third time either."""
        try:
            await self._post(message, modern=True)
            return
        except _BrokenStream:
            log.info("%s: %s stream broke; sending it again", self._label, message["method"])
        reissue_id = f"paicli-reissue-{next(self._reissue_ids)}"
        self._reissued[reissue_id] = message["id"]
        try:
            await self._post({**message, "id": reissue_id}, modern=True)
        except _BrokenStream:
            self._fail(reissue_id, self._stream_broke(message, "(also after sending it again)"))
        finally:
            del self._reissued[reissue_id]

    def _stream_broke(self, message: Message, detail: str = "") -> ConnectionClosed:
        text = f"{self._label}: the response stream for {message.get('method')} ended before "
        return ConnectionClosed(f"{text}the response {detail}".rstrip())

    async def _post(self, message: Message, *, modern: bool, after_reinit: bool = False) -> None:
        request_id = message.get("id") if "method" in message else None
        if message.get("method") == "initialize":
            self._initialize = message
        generation = self._generation
        try:
            async with self._client.post(
                self._server.url,
                data=orjson.dumps(message),
                headers=self._headers_for(message),
            ) as response:
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
        if status >= 400:
            body = await read_body(response, limit)
            is_json = response.content_type == "application/json"
            errors = [m for m in parse_messages(body) if "error" in m] if is_json else []
            if errors and request_id is not None and status not in (401, 403):
                # A real JSON-RPC error in the body (2026 servers send them with 400/404).
                error = errors[0]
                if error.get("id") is None:
                    error = {**error, "id": request_id}
                self._deliver(error)
                return
            self._fail(request_id, status_error(self._label, response))
            return
        if message.get("method") == "initialize":
            session_id = response.headers.get("mcp-session-id")
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
            for reply in parse_messages(await read_body(response, limit)):
                self._deliver(reply)
        elif content_type == "text/event-stream":
            await self._follow_stream(message, request_id, response, modern)
        else:
            self._fail(
                request_id,
                HttpError(
                    f"{self._label}: unexpected content type {content_type or '(none)'!r} "
                    f"in the response to {message.get('method')}",
                    status=status,
                ),
            )

    async def _follow_stream(
        self, message: Message, request_id: Any, response: aiohttp.ClientResponse, modern: bool
    ) -> None:
        """Read a request's SSE stream; if it drops before the response, resume it (the
        2026 revision has no resumption: `_post_modern` sends the request again)."""
        last_id, retry, answered, _ = await self._read_stream(
            response.content.iter_any(), request_id
        )
        if modern and not answered:
            raise _BrokenStream
        resumes = 0
        while not answered:
            if last_id is None or resumes >= MAX_RESUMES:
                self._fail(request_id, self._stream_broke(message))
                return
            resumes += 1
            await asyncio.sleep(retry if retry is not None else DEFAULT_RETRY)
            headers = {
                **self._base_headers(),
                "Accept": "text/event-stream",
                "Last-Event-ID": last_id,
            }
            async with self._client.get(self._server.url, headers=headers) as resumed:
                if resumed.status != 200:
                    self._fail(request_id, status_error(self._label, resumed))
                    return
                new_id, new_retry, answered, _ = await self._read_stream(
                    resumed.content.iter_any(), request_id
                )
                last_id = new_id or last_id
                retry = new_retry if new_retry is not None else retry

    async def _read_stream(self, chunks: AsyncIterator[bytes], request_id: Any) -> StreamEnd:
        """Deliver a stream's messages until it ends or brings the response to
        `request_id`."""
        last_id: str | None = None
        retry: float | None = None
        answered = False
        events = 0
        try:
            async for event in iter_events(chunks, self._server.max_message_size):
                events += 1
                if event.id is not None:
                    last_id = event.id
                if event.retry_ms is not None:
                    retry = event.retry_ms / 1000
                if event.event != "message" or not event.data:
                    continue  # Priming events carry only an id and a retry.
                for reply in parse_messages(event.data):
                    if (
                        request_id is not None
                        and reply.get("id") == request_id
                        and "method" not in reply
                    ):
                        answered = True
                    self._deliver(reply)
                if answered:
                    # Done with this request: stop reading even if the server keeps the
                    # stream open (some resume on a GET stream that never ends).
                    break
        except HTTP_FAILURES as exc:
            # A dropped connection mid-stream is resumable; not an error by itself.
            log.debug("%s: stream interrupted: %s", self._label, exc)
        return StreamEnd(last_id, retry, answered, events)

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
            url = self._server.url
            async with self._client.post(url, data=orjson.dumps(request), headers=headers) as r:
                if r.status >= 400:
                    return False
                self.session_id = r.headers.get("mcp-session-id")
                await r.read()
            self._generation += 1
            initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            body, headers = orjson.dumps(initialized), self._headers_for(initialized)
            async with self._client.post(url, data=body, headers=headers):
                pass
            return True

    def _open_get_stream(self) -> None:
        if self._get_stream is None and self._closed is None:
            self._get_stream = asyncio.get_running_loop().create_task(self._listen_get())

    async def _listen_get(self) -> None:
        """The optional GET stream for server-initiated messages (405: none offered)."""
        try:
            await self._get_loop()
        finally:
            self._get_ready.set()

    async def _get_loop(self) -> None:
        """Keep the GET stream open: reopen it when it drops, resuming from the last event
        id it carried, after the server's `retry` (doubled for each failure in a row). A
        reopening that brings events resets the count; MAX_RESUMES failures in a row end
        the loop, and so does 405 (the server offers no GET stream)."""
        last_id: str | None = None
        retry: float | None = None
        failures = 0
        while True:
            headers = {**self._base_headers(), "Accept": "text/event-stream"}
            if last_id is not None:
                headers["Last-Event-ID"] = last_id
            try:
                async with self._client.get(self._server.url, headers=headers) as response:
                    self._get_ready.set()
                    if response.status == 405:
                        return
                    ctype = response.headers.get("content-type", "")
                    if response.status == 200 and ctype.startswith("text/event-stream"):
                        end = await self._read_stream(response.content.iter_any(), None)
                        last_id = end.last_id or last_id
                        retry = end.retry if end.retry is not None else retry
                        failures = 0 if end.events else failures + 1
                    else:
                        log.debug("%s: GET stream refused: HTTP %s", self._label, response.status)
                        failures += 1
            except HTTP_FAILURES as exc:
                log.debug("%s: GET stream failed: %s", self._label, exc)
                failures += 1
            except McpError as exc:
                log.warning("%s: GET stream dropped: %s", self._label, exc)
                failures += 1
            if failures >= MAX_RESUMES:
                log.info("%s: giving up on the GET stream", self._label)
                return
            base = retry if retry is not None else DEFAULT_RETRY
            await asyncio.sleep(base * GET_BACKOFF_FACTOR**failures)

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
