"""A transport wrapper that pairs each request of its session with how it ended, for the
metrics and OpenTelemetry instruments (`paicli.mcp.metrics`, `paicli.mcp.otel`).

A request ends with its response (`ok`, or `error`: a JSON-RPC error or a tool's `isError`),
with its cancellation (`timeout` when the notification says so, else `cancelled`; a 2026
HTTP request cancelled by its transport counts as `cancelled`), or with the connection
(`closed`). Subclasses are told when a request starts (and may change it, to add trace
context) and when it ends. An instrument that only counts sets `defer`: requests and replies
are then paired after a sent message has left (while the server works on it) or within
50 ms by a timer, instead of on the hot path.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ._transport import (
    Era,
    JsonObject,
    RequestId,
    Transport,
    TransportWatcher,
    TransportWrapper,
    Watchable,
)
from .errors import ConnectionClosed

__all__ = ["Observed", "Outcome", "Request", "ending_reason", "target_of"]

# How late a deferred instrument may be (a scrape sees a reply at most this much later).
SETTLE_DELAY = 0.05
# Messages held unprocessed at most: a burst is processed in pieces.
SETTLE_LIMIT = 1024

#: How a request ended (see the module).
Outcome = Literal["ok", "error", "timeout", "cancelled", "closed"]

TARGETED = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


def target_of(method: str, params: object) -> str | None:
    """The tool or prompt name, or resource URI, a request is about."""
    key = TARGETED.get(method)
    if key is None or not isinstance(params, dict):
        return None
    target = params.get(key)
    return target if isinstance(target, str) else None


def ending_reason(exc: ConnectionClosed | None) -> str:
    """Why a connection ended, as a short label: `stopped` (by the client), `exit` (status
    0), `crash`, `closed`, or `memory_limit`-style when a resource limit stopped it."""
    if exc is None:
        return "stopped"
    if exc.limit is not None:
        return exc.limit.split(" ", 1)[0].lower() + "_limit"
    if exc.exit_code is None:
        return "closed"
    return "exit" if exc.exit_code == 0 else "crash"


@dataclass(slots=True)
class Request:
    method: str
    target: str | None
    id: RequestId
    started: float  # perf_counter
    state: Any = None  # the subclass's (a span)


class Observed(TransportWrapper):
    """Calls `started`, `ended`, `connected` and `disconnected`; forwards everything."""

    #: Pair requests and replies off the hot path (the message sent cannot be changed).
    defer = False

    def __init__(self, inner: Transport, server: str) -> None:
        super().__init__(inner)
        self.server = server
        self.version: str | None = None
        self.era: Era | None = None
        self._pending: dict[object, Request] = {}
        self._over = False
        self._outer: TransportWatcher | None = None
        # Deferred: (sent?, perf_counter, message) not yet paired, and the timer for them.
        self._events: list[tuple[bool, float, JsonObject]] = []
        self._timer: asyncio.TimerHandle | None = None
        if isinstance(inner, Watchable):
            inner.watch(self)

    # -- hooks ---------------------------------------------------------------------------

    def started(self, request: Request, message: JsonObject) -> JsonObject:
        """A request is about to be sent; return the message to send."""
        return message

    def ended(self, request: Request, outcome: Outcome, error_type: str | None, at: float) -> None:
        """A request ended (`ok`, `error`, `timeout`, `cancelled`, `closed`) at `at`
        (`time.perf_counter()`)."""

    def connected(self) -> None:
        """The protocol was agreed (`version`, `era` are set)."""

    def disconnected(self, reason: str) -> None:
        """The connection ended (see `ending_reason`)."""

    # -- TransportWatcher: ours stays on the inner transport, an outer one is told too ----

    def watch(self, watcher: TransportWatcher | None) -> None:
        self._outer = watcher

    def stderr_line(self, text: str) -> None:
        if self._outer is not None:
            self._outer.stderr_line(text)

    def http_response(self, method: str, url: str, status: int, headers: Mapping[str, str]) -> None:
        if self._outer is not None:
            self._outer.http_response(method, url, status, headers)

    # -- the transport -------------------------------------------------------------------

    async def send(self, message: JsonObject) -> None:
        if self.defer:
            self._later(True, message)
            await self.inner.send(message)
            self._settle()
        else:
            await self.inner.send(self._outgoing(message, time.perf_counter()))

    def observe_incoming(self, message: JsonObject) -> None:
        if self.defer:
            self._later(False, message)
        else:
            self._incoming(message, time.perf_counter())

    def _later(self, sent: bool, message: JsonObject) -> None:
        self._events.append((sent, time.perf_counter(), message))
        if len(self._events) >= SETTLE_LIMIT:
            self._settle()
        elif self._timer is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                self._settle()
                return
            self._timer = loop.call_later(SETTLE_DELAY, self._settle)

    def _settle(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        events, self._events = self._events, []
        for sent, at, message in events:
            if sent:
                self._outgoing(message, at)
            else:
                self._incoming(message, at)

    def _outgoing(self, message: JsonObject, at: float) -> JsonObject:
        method = message.get("method")
        if isinstance(method, str):
            if "id" in message:
                params = message.get("params")
                request = Request(method, target_of(method, params), message["id"], at)
                message = self.started(request, message)
                self._pending[_key(request.id)] = request
            elif method == "notifications/cancelled":
                params = message.get("params")
                if isinstance(params, dict):
                    timeout = params.get("reason") == "timeout"
                    outcome: Outcome = "timeout" if timeout else "cancelled"
                    self._end(params.get("requestId"), outcome, outcome, at)
        return message

    def _incoming(self, message: JsonObject, at: float) -> None:
        if "method" in message or "id" not in message:
            return
        error = message.get("error")
        if error is not None:
            code = error.get("code") if isinstance(error, dict) else None
            self._end(message["id"], "error", str(code) if code is not None else "error", at)
            return
        result = message.get("result")
        if isinstance(result, dict) and result.get("isError") is True:
            self._end(message["id"], "error", "tool_error", at)
        else:
            self._end(message["id"], "ok", None, at)

    def cancel_request(self, request_id: RequestId) -> bool:
        done = super().cancel_request(request_id)
        if done:
            self._settle()
            self._end(request_id, "cancelled", "cancelled", time.perf_counter())
        return done

    def negotiated(self, era: Era, version: str) -> None:
        self._settle()
        self.era, self.version = era, version
        super().negotiated(era, version)
        self.connected()

    async def receive(self) -> JsonObject:
        try:
            return await super().receive()
        except ConnectionClosed as exc:
            self._close(exc)
            raise

    async def aclose(self) -> None:
        try:
            await self.inner.aclose()
        finally:
            self._close(None)

    def _close(self, exc: ConnectionClosed | None) -> None:
        if self._over:
            return
        self._over = True
        self._settle()
        now = time.perf_counter()
        for request_id in list(self._pending):
            self._end(request_id, "closed", "closed", now, keyed=True)
        self.disconnected(ending_reason(exc))

    def _end(
        self,
        request_id: object,
        outcome: Outcome,
        error: str | None,
        at: float,
        keyed: bool = False,
    ) -> None:
        request = self._pending.pop(request_id if keyed else _key(request_id), None)
        if request is not None:
            self.ended(request, outcome, error, at)


def _key(request_id: object) -> object:
    # A reply's id is the request's, but 1 and "1" are different ids (and True is not 1).
    return (type(request_id).__name__, request_id)
