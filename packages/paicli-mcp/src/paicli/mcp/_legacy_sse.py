"""The legacy HTTP+SSE transport of 2024-11-05 (deprecated, still served by many servers).

A GET opens an event stream whose first `endpoint` event names the URL to POST messages to;
every server message, responses included, then arrives as a `message` event on that stream.
The endpoint must have the stream's origin, so a server cannot redirect our traffic.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from typing import Any
from urllib.parse import urljoin

import aiohttp
import orjson

from ._http_exchange import (
    HTTP_FAILURES,
    error_body,
    exchange,
    hand_over,
    http_client,
    origin_of,
    status_error,
    translate_http_error,
)
from ._jsonrpc import batches_allowed, parse
from ._server_spec import DEFAULT_HANDSHAKE_TIMEOUT, DEFAULT_MAX_MESSAGE_SIZE
from ._sse import iter_events
from ._transport import (
    Era,
    ErrorSink,
    MessageSink,
    Transport,
    TransportTraits,
    TransportWatcher,
)
from .errors import ConnectionClosed, HttpError, McpError, ProtocolError

__all__ = ["LegacySseTransport"]

log = logging.getLogger("paicli.mcp.sse")

Message = dict[str, Any]


class LegacySseTransport(Transport):
    """A session on a 2024-11-05 HTTP+SSE server. Create with `await open(url, ...)`.

    Besides the contract it pushes messages as they arrive (`deliver_to`), reads batches once
    2025-03-26 is agreed (`negotiated`) and reports HTTP responses (`watch`)."""

    traits = TransportTraits(kind="sse", legacy_only=True)

    def __init__(
        self, url: str, label: str, max_message_size: int, client: aiohttp.ClientSession
    ) -> None:
        self._url = url
        self._label = label
        self._max_message_size = max_message_size
        self._client = client
        self._endpoint: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._sink: MessageSink | None = None
        self._on_error: ErrorSink | None = None
        self._watcher: TransportWatcher | None = None
        self._queue: asyncio.Queue[Message | McpError] = asyncio.Queue()
        self._closed: McpError | None = None
        self._reader: asyncio.Task[None] | None = None
        self._posts: set[asyncio.Task[None]] = set()
        # Whether an array in an event is a batch (only once 2025-03-26 is agreed).
        self._batches = False

    @classmethod
    async def open(
        cls,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        label: str | None = None,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        open_timeout: float = DEFAULT_HANDSHAKE_TIMEOUT,
    ) -> LegacySseTransport:
        """Open the event stream at `url` and wait up to `open_timeout` seconds for the
        endpoint. `headers` go on every request; `label` names the server in errors
        (default: the URL); a larger event than `max_message_size` bytes is refused."""
        label = label or url
        transport = cls(url, label, max_message_size, http_client(headers or {}))
        transport._reader = asyncio.get_running_loop().create_task(transport._read())
        try:
            async with asyncio.timeout(open_timeout):
                await transport._endpoint
        except TimeoutError:
            await transport.aclose()
            raise HttpError(f"{label}: no 'endpoint' event on the SSE stream") from None
        except BaseException:
            await transport.aclose()
            raise
        return transport

    def deliver_to(self, sink: MessageSink, on_error: ErrorSink) -> bool:
        self._sink = sink
        self._on_error = on_error
        return True

    def watch(self, watcher: TransportWatcher | None) -> None:
        self._watcher = watcher

    def negotiated(self, era: Era, version: str) -> None:
        self._batches = batches_allowed(era, version)

    async def _read(self) -> None:
        headers = {"Accept": "text/event-stream"}
        error: McpError
        try:
            async with await exchange(
                self._client, self._label, "GET", self._url, headers=headers
            ) as response:
                if response.status != 200:
                    body = await error_body(response)
                    refused = "opening the event stream (GET)"
                    error = status_error(self._label, response, body, refused=refused)
                else:
                    async for event in iter_events(
                        response.content.iter_any(), self._max_message_size
                    ):
                        self._on_event(event.event, event.data)
                    error = ConnectionClosed(f"{self._label}: the server closed the SSE stream")
        except HTTP_FAILURES as exc:
            error = translate_http_error(self._label, self._url, exc)
        except McpError as exc:
            error = exc
        self._closed = error
        if not self._endpoint.done():
            self._endpoint.set_exception(error)
        self._queue.put_nowait(error)

    def _on_event(self, kind: str, data: str) -> None:
        if kind == "endpoint":
            if self._endpoint.done():
                return
            endpoint = urljoin(self._url, data.strip())
            if origin_of(endpoint) != origin_of(self._url):
                self._endpoint.set_exception(
                    ProtocolError(f"{self._label}: endpoint {endpoint!r} is on another origin")
                )
                return
            self._endpoint.set_result(endpoint)
        elif kind == "message" and data:
            where = f"{self._label}: SSE event"
            for message in parse(data, batches=self._batches, where=where):
                hand_over(message, self._sink, self._queue)

    async def send(self, message: Message) -> None:
        if self._closed is not None:
            raise self._closed
        task = asyncio.get_running_loop().create_task(self._post(message))
        self._posts.add(task)
        task.add_done_callback(self._posts.discard)

    async def _post(self, message: Message) -> None:
        request_id = message.get("id") if "method" in message else None
        endpoint = self._endpoint.result()
        error: McpError | None = None
        try:
            async with await exchange(
                self._client,
                self._label,
                "POST",
                endpoint,
                data=orjson.dumps(message),
                headers={"Content-Type": "application/json"},
                watcher=self._watcher,
            ) as response:
                if response.status >= 300:
                    error = status_error(self._label, response, await error_body(response))
        except HTTP_FAILURES as exc:
            error = translate_http_error(self._label, endpoint, exc)
        except McpError as exc:
            error = exc
        if error is not None:
            if request_id is not None and self._on_error is not None:
                self._on_error(request_id, error)
            else:
                log.warning("%s", error)

    async def receive(self) -> Message:
        item = await self._queue.get()
        if isinstance(item, McpError):
            self._queue.put_nowait(item)
            raise item
        return item

    async def aclose(self) -> None:
        if self._closed is None:
            self._closed = ConnectionClosed(f"{self._label}: transport closed")
        tasks = [*self._posts, *([self._reader] if self._reader else [])]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._queue.put_nowait(self._closed)
        await self._client.close()
