"""The JSON-RPC engine: one receive loop per connection and a map from request id to future.

Invariants: ids are a per-connection increasing integer, never reused; a message that is
not valid JSON-RPC 2.0 (see `_jsonrpc.envelope_problem`) is logged and dropped, and a
response answers a request only if its id is that integer (never `true`, never 1.0); a
response that matches no pending request is logged and dropped; every request has a
deadline, and when it passes (or the caller is cancelled) the server gets
`notifications/cancelled` (unless the transport cancels it its own way, a `CancelHook`);
when the transport dies every pending request fails at once with the transport's error.
Messages are pushed from the transport's read callback when it offers `PushDelivery`, else
received in a loop. What a pending request holds is `_pending`'s; the server's own requests
are answered by `_server_requests`.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Callable
from typing import Any

from ._jsonrpc import envelope_problem
from ._pending import INTERNAL_ERROR, Pending, Progress, ProgressCallback, error_from_wire
from ._server_requests import RequestHandler, ServerRequests
from ._transport import CancelHook, JsonObject, PushDelivery, RequestId, Transport
from .errors import ConnectionClosed, McpError, RequestTimeout, RpcError

__all__ = ["RpcEngine"]

log = logging.getLogger("paicli.mcp.rpc")

# How many cancelled request ids to remember so their late replies are dropped quietly.
CANCELLED_MEMORY = 1024
# A cancellation notice that cannot be written within this time finds a server that is not
# reading its input; giving up on the notice lets the transport stop that server.
CANCEL_NOTICE_TIMEOUT = 1.0

NotificationHandler = Callable[[str, JsonObject | None], None]


class _DeadlinePassed(Exception):
    """Internal marker set on a pending future when its timer fires."""


class RpcEngine:
    """Requests, notifications and server-to-client requests over one transport."""

    def __init__(
        self,
        transport: Transport,
        *,
        on_request: RequestHandler,
        on_notification: NotificationHandler,
        label: str | None = None,
    ) -> None:
        self._transport = transport
        # A transport that cancels requests its own way (2026 HTTP), if this one does.
        self._canceller = transport if isinstance(transport, CancelHook) else None
        self._label = label  # the server's name, for errors the engine raises itself
        self._on_notification = on_notification
        self._server_requests = ServerRequests(transport, on_request)
        self._pending: dict[int, Pending] = {}
        self._next_id = 0
        self._closed: McpError | None = None
        # Ids of requests we cancelled recently (insertion-ordered, bounded).
        self._cancelled: dict[int, None] = {}
        self._loop = asyncio.get_running_loop()
        # One timer for all deadlines, armed at the earliest: most requests finish long
        # before their deadline, so a timer per request would be pure overhead.
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = math.inf
        # Responses received so far (late and unmatched ones too): whether a server has
        # said anything since a given moment.
        self.responses = 0

    @property
    def _who(self) -> str:
        return self._label or "server"

    @property
    def closed(self) -> McpError | None:
        """The error that closed the connection, or None while it is open."""
        return self._closed

    async def run(self) -> None:
        """Receive and dispatch messages until the transport closes."""
        transport = self._transport
        async with asyncio.TaskGroup() as group:
            self._server_requests.group = group
            if isinstance(transport, PushDelivery):
                # Taken: receive() returns nothing and only raises at the end.
                transport.deliver_to(self._dispatch, self._fail_request)
            try:
                while True:
                    message = await transport.receive()
                    try:
                        self._dispatch(message)
                    except Exception:
                        # A bug in dispatch must not kill the connection; log and go on.
                        log.exception("failed to dispatch message %.200r", message)
            except ConnectionClosed as exc:
                self._fail_all(exc)
            finally:
                if self._closed is None:
                    self._fail_all(ConnectionClosed("connection closed"))
                self._server_requests.cancel_all()

    def _entry(self, request_id: object) -> Pending | None:
        """The pending request with this id: an integer, as ours are (a bool is not one)."""
        if type(request_id) is not int:
            return None
        return self._pending.get(request_id)

    def _fail_request(self, request_id: RequestId, exc: McpError) -> None:
        """A transport could not carry one request (HTTP status, dropped stream, ...)."""
        entry = self._entry(request_id)
        if entry is not None and not entry.future.done():
            entry.future.set_exception(exc)

    def _fail_all(self, exc: McpError) -> None:
        self._closed = exc
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        for entry in self._pending.values():
            if not entry.future.done():
                entry.future.set_exception(exc)

    # -- outgoing ------------------------------------------------------------------------

    async def request(
        self,
        method: str,
        params: JsonObject | None,
        *,
        timeout: float | None,
        on_progress: ProgressCallback | None = None,
        progress_extends_deadline: bool = False,
        max_timeout: float | None = None,
        cancellable: bool = True,
        any_result: bool = False,
    ) -> JsonObject:
        """Send a request and return its result, or raise the error it ended with.

        `timeout` is the deadline in seconds (None: none). With `progress_extends_deadline`
        every progress notification restarts the clock, never past `max_timeout` seconds
        after the request was sent. A request that is not `cancellable` never sends
        `notifications/cancelled` (its late answer is dropped quietly). With `any_result`
        the result may be any JSON value and comes back as `{"value": result}`.
        """
        if self._closed is not None:
            raise self._closed
        self._next_id += 1
        request_id = self._next_id
        message: JsonObject = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if on_progress is not None:
            params = dict(params) if params else {}
            params["_meta"] = {**params.get("_meta", {}), "progressToken": request_id}
        if params is not None:
            message["params"] = params
        loop = self._loop
        future: asyncio.Future[JsonObject] = loop.create_future()
        entry = Pending(future, method, on_progress)
        entry.any_result = any_result
        self._pending[request_id] = entry
        entry.sent_at = loop.time()
        if timeout is not None:
            now = entry.sent_at
            entry.timeout = timeout
            entry.deadline = now + timeout
            if entry.deadline < self._timer_at:
                self._arm(entry.deadline)
            if progress_extends_deadline:
                entry.deadline_cap = now + (max_timeout if max_timeout else timeout * 10)
        try:
            # A send that is still running when the deadline passes is interrupted (an HTTP
            # exchange, or a pipe the server stopped reading).
            entry.sender = asyncio.current_task()
            await self._transport.send(message)
            entry.sender = None
            return await future
        except _DeadlinePassed:
            return await self._timed_out(request_id, entry, cancellable)
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if entry.expired and task is not None and task.uncancel() == 0:
                # Our own deadline cancelled the inline send (nobody else cancelled us).
                return await self._timed_out(request_id, entry, cancellable)
            if cancellable and self._closed is None:
                await self._send_cancelled(request_id, "cancelled by the client")
            else:
                self._forget(request_id)
            raise
        finally:
            del self._pending[request_id]
            # A send that failed after the connection's end had failed this request too: the
            # caller saw the send's error, so the other is retrieved here, never reported
            # later as "never retrieved" (by then no redactor may stand before the screen).
            if future.done() and not future.cancelled():
                future.exception()

    async def _timed_out(self, request_id: int, entry: Pending, cancellable: bool) -> JsonObject:
        elapsed = self._loop.time() - entry.sent_at
        cap = entry.deadline_cap
        # The deadline sat at the cap: progress had carried it as far as it may go.
        maximum = cap - entry.sent_at if cap is not None and entry.deadline >= cap else None
        if cancellable:
            await self._send_cancelled(request_id, "timeout")
        else:
            self._forget(request_id)  # a late answer (say, to a probe) is dropped quietly
        raise RequestTimeout(
            entry.method,
            entry.timeout,
            server=self._label,
            elapsed=elapsed if cap is not None else None,
            maximum=maximum,
        ) from None

    def _arm(self, when: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer_at = when
        self._timer = self._loop.call_at(when, self._expire_due)

    def _expire_due(self) -> None:
        """Fail the requests whose deadline has passed; re-arm for the next one."""
        self._timer = None
        self._timer_at = math.inf
        now = self._loop.time()
        earliest = math.inf
        for entry in self._pending.values():
            if entry.deadline <= now:
                if entry.sender is not None and not entry.expired:
                    # Still inside an inline send: interrupt it (request() tells this
                    # cancellation from the caller's own by `expired`).
                    entry.expired = True
                    entry.sender.cancel()
                elif not entry.future.done():
                    entry.future.set_exception(_DeadlinePassed())
            elif entry.deadline < earliest:
                earliest = entry.deadline
        if earliest < math.inf:
            self._arm(earliest)

    async def notify(self, method: str, params: JsonObject | None = None) -> None:
        """Send a notification."""
        if self._closed is not None:
            raise self._closed
        message: JsonObject = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self._transport.send(message)

    def _forget(self, request_id: int) -> None:
        # A reply may still be on its way; remember the id so it is dropped quietly.
        self._cancelled[request_id] = None
        if len(self._cancelled) > CANCELLED_MEMORY:
            del self._cancelled[next(iter(self._cancelled))]

    async def _send_cancelled(self, request_id: int, reason: str) -> None:
        self._forget(request_id)
        if self._canceller is not None and self._canceller.cancel_request(request_id):
            return  # the transport cancelled it its own way (2026 HTTP: stream closed)
        try:
            async with asyncio.timeout(CANCEL_NOTICE_TIMEOUT):
                await self.notify(
                    "notifications/cancelled", {"requestId": request_id, "reason": reason}
                )
        except (McpError, TimeoutError) as exc:
            log.debug("could not send cancellation for request %s: %r", request_id, exc)

    # -- incoming ------------------------------------------------------------------------

    def _dispatch(self, message: JsonObject) -> None:
        if not isinstance(message, dict):
            # A transport that does not split arrays (batches are split where they are
            # allowed: see `_jsonrpc.parse`).
            log.warning(
                "%s: dropping a message that is not a JSON object: %.200r", self._who, message
            )
            return
        problem = envelope_problem(message)
        if problem is not None:
            log.warning(
                "%s: dropping an invalid JSON-RPC message (%s): %.200r", self._who, problem, message
            )
            return
        method = message.get("method")
        if method is None:
            self._on_response(message)
        elif "id" in message:
            self._server_requests.start(message["id"], method, message.get("params"))
        elif method == "notifications/progress":
            self._on_progress(message.get("params"))
        elif method == "notifications/cancelled":
            self._on_cancelled(message.get("params"))
        else:
            params = message.get("params")
            try:
                self._on_notification(method, params if isinstance(params, dict) else None)
            except Exception:
                log.exception("notification handler failed for %s", method)

    def _on_response(self, message: JsonObject) -> None:
        # The envelope is valid: exactly one of result and error, and an id that is a string
        # or an integer (or none, on an error).
        self.responses += 1
        request_id = message.get("id")
        entry = self._entry(request_id)
        if entry is None:
            if type(request_id) is int and request_id in self._cancelled:
                del self._cancelled[request_id]
                log.debug("dropping late response to cancelled request %s", request_id)
            elif request_id is None:
                log.warning(
                    "%s: server error without a request id: %.300r",
                    self._who,
                    message.get("error"),
                )
            else:
                log.warning(
                    "%s: dropping response for unknown request id %.100r", self._who, request_id
                )
            return
        future = entry.future
        if future.done():
            return
        if "result" in message:
            result = message["result"]
            if entry.any_result:
                future.set_result({"value": result})
            elif isinstance(result, dict):
                future.set_result(result)
            else:
                future.set_exception(
                    RpcError(INTERNAL_ERROR, f"{entry.method}: result is not an object")
                )
        else:
            future.set_exception(error_from_wire(message["error"]))

    def _on_progress(self, params: Any) -> None:
        if not isinstance(params, dict):
            return
        entry = self._entry(params.get("progressToken"))
        if entry is None or entry.on_progress is None:
            return
        progress = params.get("progress")
        total = params.get("total")
        message = params.get("message")
        if not isinstance(progress, int | float):
            return
        try:
            entry.on_progress(
                Progress(
                    float(progress),
                    float(total) if isinstance(total, int | float) else None,
                    message if isinstance(message, str) else None,
                )
            )
        except Exception:
            log.exception("progress callback failed for %s", entry.method)
        if entry.deadline_cap is not None and entry.deadline < math.inf:
            # The armed timer fires at the old deadline, sees the new one, and re-arms.
            entry.deadline = min(self._loop.time() + entry.timeout, entry.deadline_cap)

    def _on_cancelled(self, params: Any) -> None:
        if not isinstance(params, dict):
            return
        self._server_requests.cancel(params.get("requestId"))
        try:
            self._on_notification("notifications/cancelled", params)
        except Exception:
            log.exception("notification handler failed for notifications/cancelled")
