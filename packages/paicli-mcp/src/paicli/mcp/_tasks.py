"""The wire side of MCP tasks, one class per era, behind `tasks.TaskHandle`.

2025-11-25 (core, experimental): a `tools/call` carries `task: {ttl?}` when the server
announces `tasks.requests.tools.call` and the tool allows it (`execution.taskSupport`); the
answer is `CreateTaskResult {task}`; `tasks/get` polls, `tasks/result` hands over the
payload (and is pending while the server asks for input over the connection), `tasks/list`,
`tasks/cancel`, `notifications/tasks/status`.

2026-07-28 (extension `io.modelcontextprotocol/tasks`): the request declares the extension
in its per-request capabilities and the server alone decides; a `resultType: "task"` answer
is the task itself; `tasks/get` inlines `result`, `error` or `inputRequests`;
`tasks/update` answers input; `tasks/cancel`; `notifications/tasks` on the listen stream.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Final

from .errors import HandlerError, ProtocolError, RpcError
from .tasks import STATUS_NOTIFICATIONS, TASKS_EXTENSION, Polled, TaskFailed, TaskHandle, TaskInfo
from .types import CallToolResult, Notification

__all__ = [
    "LegacyTaskOps",
    "ModernTaskOps",
    "call_as_task",
    "offers_tool_tasks",
    "task_ops",
    "task_support",
]

Json = dict[str, Any]
Request = Callable[..., Awaitable[Json]]
Subscribe = Callable[[Callable[[Notification], object]], Callable[[], None]]
# tasks/result may wait as long as the task runs: the caller's own deadline bounds it.
PAYLOAD_WAIT: Final = 24 * 3600.0
META_CAPS: Final = "io.modelcontextprotocol/clientCapabilities"


def task_support(tool_meta: Any) -> str:
    """A 2025-11-25 tool's `execution.taskSupport` (absent: "forbidden")."""
    if isinstance(tool_meta, dict):
        value = tool_meta.get("taskSupport")
        if value in ("optional", "required"):
            return str(value)
    return "forbidden"


class _Ops:
    def __init__(
        self,
        request: Request,
        answer: Callable[[str, Json | None], Awaitable[Json]],
        subscribe: Subscribe,
        label: str,
        on_watch: Callable[[str, bool], None] | None = None,
    ) -> None:
        self.request = request
        self._answer = answer
        self._subscribe = subscribe
        self.label = label
        self._on_watch = on_watch

    async def answer(self, method: str, params: Json | None) -> Json:
        try:
            return await self._answer(method, params if isinstance(params, dict) else None)
        except Exception as exc:
            reason = exc.message if isinstance(exc, RpcError) else str(exc)
            raise HandlerError(
                f"{self.label}: could not answer the task's {method}: {reason}"
            ) from exc

    def subscribe(self, task_id: str, wake: Callable[[Notification], None]) -> Callable[[], None]:
        def heard(notification: Notification) -> None:
            method, params = notification.method, notification.params
            if method in STATUS_NOTIFICATIONS and params.get("taskId") == task_id:
                wake(notification)

        remove = self._subscribe(heard)
        if self._on_watch is not None:
            self._on_watch(task_id, True)

        def unsubscribe() -> None:
            remove()
            if self._on_watch is not None:
                self._on_watch(task_id, False)

        return unsubscribe

    async def cancel(self, task_id: str) -> None:
        await self.request("tasks/cancel", {"taskId": task_id})


class LegacyTaskOps(_Ops):
    """2025-11-25 core tasks."""

    input_via_payload = True

    async def get(self, task_id: str, timeout: float | None) -> Polled:
        result = await self.request("tasks/get", {"taskId": task_id}, timeout=timeout)
        return Polled(TaskInfo.from_wire(result))

    async def payload(self, task_id: str, timeout: float | None) -> Json | None:
        try:
            return await self.request(
                "tasks/result", {"taskId": task_id}, timeout=timeout or PAYLOAD_WAIT
            )
        except RpcError as exc:
            raise TaskFailed(
                f"{self.label}: task {task_id!r:.80} failed: {exc.message:.500}",
                task_id=task_id,
                status="failed",
                error={"code": exc.code, "message": exc.message},
            ) from exc

    async def update(self, task_id: str, responses: Json) -> None:
        raise ProtocolError(
            f"{self.label}: 2025-11-25 tasks take input through the client's handlers"
        )

    async def list(self, cursor: str | None = None) -> Json:
        return await self.request("tasks/list", {"cursor": cursor} if cursor else {})


class ModernTaskOps(_Ops):
    """2026-07-28 extension `io.modelcontextprotocol/tasks`."""

    input_via_payload = False

    async def get(self, task_id: str, timeout: float | None) -> Polled:
        result = await self.request("tasks/get", {"taskId": task_id}, timeout=timeout)
        info = TaskInfo.from_wire(result)
        inner = result.get("result")
        asks = result.get("inputRequests")
        return Polled(
            info,
            result=inner if info.status == "completed" and isinstance(inner, dict) else None,
            error=result.get("error") if info.status == "failed" else None,
            input_requests=asks
            if info.status == "input_required" and isinstance(asks, dict)
            else None,
        )

    async def payload(self, task_id: str, timeout: float | None) -> Json | None:
        raise ProtocolError(f"{self.label}: task {task_id!r:.80} completed without a result")

    async def update(self, task_id: str, responses: Json) -> None:
        await self.request("tasks/update", {"taskId": task_id, "inputResponses": responses})


async def call_as_task(
    ops: LegacyTaskOps | ModernTaskOps,
    server_capabilities: Json,
    name: str,
    arguments: Json,
    *,
    support: str,
    ttl_ms: int | None,
    timeout: float | None,
) -> TaskHandle:
    """Send `tools/call` offering a task, and wrap whatever the server answered."""
    params: Json = {"name": name, "arguments": arguments}
    if isinstance(ops, ModernTaskOps):
        caps: Json = {"extensions": {TASKS_EXTENSION: {}}}
        params["_meta"] = {META_CAPS: caps}
    elif offers_tool_tasks(server_capabilities) and support != "forbidden":
        params["task"] = {} if ttl_ms is None else {"ttl": ttl_ms}
    result = await ops.request("tools/call", params, timeout=timeout)
    if result.get("resultType") == "task":
        return TaskHandle(ops, TaskInfo.from_wire(result), server=ops.label)
    if "task" in result and "content" not in result:
        return TaskHandle(ops, TaskInfo.from_wire(result["task"]), server=ops.label)
    return TaskHandle(None, None, server=ops.label, result=CallToolResult.from_wire(result))


def offers_tool_tasks(capabilities: Json) -> bool:
    tasks = capabilities.get("tasks")
    requests = tasks.get("requests") if isinstance(tasks, dict) else None
    tools = requests.get("tools") if isinstance(requests, dict) else None
    return isinstance(tools, dict) and isinstance(tools.get("call"), dict)


def task_ops(  # noqa: PLR0917
    modern: bool,
    request: Request,
    answer: Callable[[str, Json | None], Awaitable[Json]],
    subscribe: Subscribe,
    label: str,
    watch: Callable[[str, bool], None],
) -> LegacyTaskOps | ModernTaskOps:
    """The task operations of a session in its era (2026 tasks are heard on the listen
    stream, so watching one reopens it)."""
    if modern:
        return ModernTaskOps(request, answer, subscribe, label, watch)
    return LegacyTaskOps(request, answer, subscribe, label)
