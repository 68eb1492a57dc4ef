"""MCP tasks: a tool call the server runs in the background, in either protocol era.

`ClientSession.call_tool_as_task()` offers the server to run a tool call as a task and
returns a `TaskHandle` whatever the server chose: a handle on a task (2025-11-25 core tasks,
or the 2026-07-28 extension `io.modelcontextprotocol/tasks`), or one already complete when
the server answered at once. The handle hides the era:

    handle = await session.call_tool_as_task("build", {"target": "all"})
    print(handle.task_id, handle.status)
    result = await handle.result(timeout=600)   # polls; a status notification wakes it

`result()` polls `tasks/get` no faster than the server's poll interval (and never faster
than `MIN_POLL_INTERVAL`, however many status notifications arrive), answers the server's
requests for input through the session's `ClientHandlers` (2026: `tasks/update`; 2025-11-25:
the server asks over the connection while `tasks/result` is pending), and raises
`TaskTimeout` when the caller's deadline passes (the task is not cancelled: call
`cancel()`), `TaskFailed` when the task failed or was cancelled.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol, cast, get_args

from .errors import McpError, ProtocolError

if TYPE_CHECKING:
    from .types import CallToolResult, Notification

__all__ = [
    "MIN_POLL_INTERVAL",
    "TASKS_EXTENSION",
    "TaskFailed",
    "TaskHandle",
    "TaskInfo",
    "TaskStatus",
    "TaskTimeout",
]

TaskStatus = Literal["working", "input_required", "completed", "failed", "cancelled"]
STATUSES: Final = frozenset(get_args(TaskStatus))
TERMINAL: Final = frozenset({"completed", "failed", "cancelled"})
TASKS_EXTENSION: Final = "io.modelcontextprotocol/tasks"
#: Seconds between two polls of one task, at least: notifications wake a poll, never spin it.
MIN_POLL_INTERVAL: Final = 0.1
MAX_POLL_INTERVAL: Final = 30.0
DEFAULT_POLL_INTERVAL: Final = 1.0
# A task id is an opaque token; anything longer than this is not one.
MAX_TASK_ID: Final = 512
STATUS_NOTIFICATIONS: Final = frozenset({"notifications/tasks/status", "notifications/tasks"})

Json = dict[str, Any]


class TaskFailed(McpError):
    """The task ended without a result: `status` is `"failed"` or `"cancelled"`; `error`
    is the JSON-RPC error object the server gave, if any."""

    def __init__(self, message: str, *, task_id: str, status: str, error: Any = None) -> None:
        super().__init__(message)
        self.task_id = task_id
        self.status = status
        self.error = error


class TaskTimeout(McpError):
    """The caller's deadline passed before the task ended (the task still runs)."""

    def __init__(self, message: str, *, task_id: str, seconds: float) -> None:
        super().__init__(message)
        self.task_id = task_id
        self.seconds = seconds


def _opt_int(data: Json, *keys: str) -> int | None:
    for key in keys:
        value = data.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value
    return None


def _opt_text(data: Json, key: str) -> str | None:
    value = data.get(key)
    return value if isinstance(value, str) else None


@dataclass(frozen=True, slots=True)
class TaskInfo:
    """What the server last said about a task (either era's spelling: `ttl`/`ttlMs`,
    `pollInterval`/`pollIntervalMs`, both in milliseconds)."""

    task_id: str
    status: TaskStatus
    status_message: str | None = None
    created_at: str | None = None
    last_updated_at: str | None = None
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None

    @classmethod
    def from_wire(cls, data: Any) -> TaskInfo:
        if not isinstance(data, dict):
            raise ProtocolError(f"task: expected an object, got {type(data).__name__}")
        task_id = data.get("taskId")
        if not isinstance(task_id, str) or not task_id or len(task_id) > MAX_TASK_ID:
            raise ProtocolError(f"task: taskId must be a string of 1..{MAX_TASK_ID} characters")
        status = data.get("status")
        if status not in STATUSES:
            raise ProtocolError(f"task {task_id!r:.80}: unknown status {status!r:.40}")
        status = cast("TaskStatus", status)
        return cls(
            task_id=task_id,
            status=status,
            status_message=_opt_text(data, "statusMessage"),
            created_at=_opt_text(data, "createdAt"),
            last_updated_at=_opt_text(data, "lastUpdatedAt"),
            ttl_ms=_opt_int(data, "ttlMs", "ttl"),
            poll_interval_ms=_opt_int(data, "pollIntervalMs", "pollInterval"),
        )

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    @property
    def poll_interval(self) -> float:
        """Seconds to wait between polls: the server's, kept within sane bounds."""
        if self.poll_interval_ms is None:
            return DEFAULT_POLL_INTERVAL
        return min(max(self.poll_interval_ms / 1000, MIN_POLL_INTERVAL), MAX_POLL_INTERVAL)


@dataclass(frozen=True, slots=True)
class Polled:
    """One `tasks/get` answer: the task, and what the 2026 extension inlines with it."""

    info: TaskInfo
    result: Json | None = None
    error: Any = None
    input_requests: Json | None = None


class TaskOps(Protocol):
    """The wire operations of one era (see `paicli.mcp._tasks`)."""

    #: 2025-11-25: the server asks for input while `tasks/result` is pending.
    input_via_payload: bool

    async def get(self, task_id: str, timeout: float | None) -> Polled: ...
    async def payload(self, task_id: str, timeout: float | None) -> Json | None: ...
    async def cancel(self, task_id: str) -> None: ...
    async def update(self, task_id: str, responses: Json) -> None: ...
    async def answer(self, method: str, params: Json | None) -> Json: ...
    def subscribe(self, task_id: str, wake: Any) -> Any: ...


class TaskHandle:
    """A tool call the server runs as a task (or one it already answered: `task_id` None).

    `status` and `info` are the latest the client knows (from a poll or a notification);
    `pending_input` holds the server's outstanding input requests (2026) for a caller who
    answers them itself with `update()` and `result(answer_input=False)`.
    """

    def __init__(
        self,
        ops: TaskOps | None,
        info: TaskInfo | None,
        *,
        server: str,
        result: CallToolResult | None = None,
    ) -> None:
        self._ops = ops
        self._info = info
        self._server = server
        self._result = result
        self._error: Any = None
        self._answered: set[str] = set()
        self.pending_input: Json = {}
        self._wake = asyncio.Event()
        # The task's creation counts as a poll: the first `tasks/get` waits its interval.
        self._last_poll = float("-inf") if ops is None else asyncio.get_running_loop().time()
        self._unsubscribe = (
            None if ops is None or info is None else ops.subscribe(info.task_id, self._heard)
        )

    @property
    def task_id(self) -> str | None:
        return None if self._info is None else self._info.task_id

    @property
    def info(self) -> TaskInfo | None:
        return self._info

    @property
    def status(self) -> TaskStatus:
        return "completed" if self._info is None else self._info.status

    @property
    def done(self) -> bool:
        return self._info is None or self._info.terminal

    def _heard(self, notification: Notification) -> None:
        """A status notification for this task: note its status and wake the poller."""
        try:
            info = TaskInfo.from_wire(notification.params)
        except ProtocolError:
            return
        if self._info is not None and info.task_id == self._info.task_id:
            # Only a poll ends a task: a notice that says it ended just wakes the poller.
            if not self._info.terminal and not info.terminal:
                self._info = info
            self._wake.set()

    async def refresh(self, timeout: float | None = None) -> TaskInfo | None:
        """Ask the server for the task's state now (`tasks/get`)."""
        if self._ops is None or self._info is None:
            return self._info
        self._last_poll = asyncio.get_running_loop().time()
        polled = await self._ops.get(self._info.task_id, timeout)
        if polled.info.task_id != self._info.task_id:
            raise ProtocolError(f"{self._server}: tasks/get answered for another task")
        self._info = polled.info
        if polled.result is not None:
            self._result = _tool_result(polled.result)
        self._error = polled.error
        self.pending_input = polled.input_requests or {}
        return self._info

    async def cancel(self) -> None:
        """Ask the server to cancel the task (`tasks/cancel`); cooperative: it may still
        finish. Afterwards the handle counts the task as cancelled."""
        if self._ops is None or self._info is None or self._info.terminal:
            return
        task_id = self._info.task_id
        try:
            await self._ops.cancel(task_id)
        finally:
            self._info = TaskInfo(task_id, "cancelled", "cancelled by the client")
            self.close()

    async def update(self, responses: Mapping[str, Any]) -> None:
        """Answer the server's input requests (2026 `tasks/update`), keyed as it keyed them."""
        if self._ops is None or self._info is None:
            raise ProtocolError(f"{self._server}: this call is not a task")
        self._answered.update(responses)
        await self._ops.update(self._info.task_id, dict(responses))

    def close(self) -> None:
        """Stop hearing status notifications (done for you once `result()` returns)."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    async def result(
        self, timeout: float | None = None, *, answer_input: bool = True
    ) -> CallToolResult:
        """The tool's result once the task completes; waits at most `timeout` seconds
        (None: as long as the task runs)."""
        try:
            async with asyncio.timeout(timeout):
                return await self._until_done(answer_input)
        except TimeoutError:
            task = self.task_id or "?"
            raise TaskTimeout(
                f"{self._server}: task {task!r:.80} not done after {timeout:g}s",
                task_id=task,
                seconds=timeout or 0.0,
            ) from None

    async def _until_done(self, answer_input: bool) -> CallToolResult:
        while True:
            if self._result is not None:
                self.close()
                return self._result
            assert self._ops is not None and self._info is not None
            if self._info.terminal:
                self.close()
                if self._info.status == "completed":
                    payload = await self._ops.payload(self._info.task_id, None)
                    if payload is not None:
                        self._result = _tool_result(payload)
                        continue
                raise self._failure()
            input_wanted = self._info.status == "input_required" and answer_input
            if input_wanted and await self._give_input():
                continue
            await self._pause()
            await self.refresh()

    async def _give_input(self) -> bool:
        """Answer what the server asks; True when a payload arrived meanwhile (2025-11-25)."""
        assert self._ops is not None and self._info is not None
        fresh = {k: v for k, v in self.pending_input.items() if k not in self._answered}
        if fresh:
            answers = {}
            for key, ask in fresh.items():
                if not isinstance(ask, dict) or not isinstance(ask.get("method"), str):
                    raise ProtocolError(f"{self._server}: malformed input request {key!r:.80}")
                answers[key] = await self._ops.answer(ask["method"], ask.get("params"))
            await self.update(answers)
            return False
        if self.pending_input:
            return False  # answered already: wait for the server to move on
        if not self._ops.input_via_payload:
            return False
        # 2025-11-25: the server asks over the connection while tasks/result is pending.
        payload = await self._ops.payload(self._info.task_id, None)
        if payload is None:
            return False
        self._result = _tool_result(payload)
        return True

    async def _pause(self) -> None:
        """Wait for the poll interval, or less when a notification wakes us; never less
        than `MIN_POLL_INTERVAL` after the last poll."""
        assert self._info is not None
        loop = asyncio.get_running_loop()
        left = self._info.poll_interval - (loop.time() - self._last_poll)
        if left > 0:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(left):
                    await self._wake.wait()
        self._wake.clear()
        gap = MIN_POLL_INTERVAL - (loop.time() - self._last_poll)
        if gap > 0:
            await asyncio.sleep(gap)

    def _failure(self) -> TaskFailed:
        assert self._info is not None
        info = self._info
        why = info.status_message
        if isinstance(self._error, dict) and isinstance(self._error.get("message"), str):
            why = self._error["message"]
        return TaskFailed(
            f"{self._server}: task {info.task_id!r:.80} {info.status}"
            + (f": {why:.500}" if why else ""),
            task_id=info.task_id,
            status=info.status,
            error=self._error,
        )


def _tool_result(payload: Any) -> CallToolResult:
    """`CallToolResult.from_wire`. The types are loaded by the session that made the task,
    not with this module: a program that only catches `TaskFailed` need not load them."""
    from .types import CallToolResult  # noqa: PLC0415

    return CallToolResult.from_wire(payload)
