"""`ClientSession`'s task methods (`paicli.mcp.tasks`), kept beside the session's module."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ._tasks import LegacyTaskOps, ModernTaskOps, call_as_task, offers_tool_tasks, task_ops
from .tasks import TASKS_EXTENSION, TaskHandle, TaskInfo

if TYPE_CHECKING:
    from ._connection import Connection
    from ._subscriptions import Subscriptions
    from .handlers import ClientHandlers

__all__ = ["TaskCalls"]


class TaskCalls:
    """Mixed into `ClientSession`: tool calls the server may run as tasks."""

    _name: str
    _connection: Connection
    _handlers: ClientHandlers
    _subscriptions: Subscriptions
    _task_support: dict[str, str]
    request: Callable[..., Any]
    call_tool: Callable[..., Any]
    subscribe: Callable[..., Any]
    _paginate: Callable[..., Any]

    async def call_tool_as_task(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        ttl_ms: int | None = None,
        timeout: float | None = None,
    ) -> TaskHandle:
        """Call a tool, offering the server to run it as a task (`paicli.mcp.tasks`); the
        handle is complete at once when the server answered directly. 2025-11-25: offered
        when the server and the tool (as last listed) allow it; 2026: the server decides."""
        if self._connection.minimal is not None:
            result = await self.call_tool(name, arguments, timeout=timeout)
            return TaskHandle(None, None, server=self._name, result=result)
        return await call_as_task(
            self._tasks(),
            dict(self._connection.agreed().server_capabilities),
            name,
            dict(arguments or {}),
            support=self._task_support.get(name, "forbidden"),
            ttl_ms=ttl_ms,
            timeout=timeout,
        )

    def may_run_as_task(self, name: str) -> bool:
        """Whether the server can answer a call of `name` with a task: it announced the
        2026 extension, or 2025-11-25 task-augmented `tools/call` and the tool (as last
        listed) allows it. A caller may keep plain `call_tool` (progress, retries) for
        the rest."""
        if self._connection.minimal is not None:
            return False
        agreement = self._connection.agreed()
        capabilities = agreement.server_capabilities
        if agreement.era == "modern":
            extensions = capabilities.get("extensions")
            return isinstance(extensions, dict) and TASKS_EXTENSION in extensions
        support = self._task_support.get(name, "forbidden")
        return offers_tool_tasks(capabilities) and support != "forbidden"

    def task(self, task_id: str) -> TaskHandle:
        """A handle on a task this client started earlier (its id kept), to poll again."""
        return TaskHandle(self._tasks(), TaskInfo(task_id, "working"), server=self._name)

    async def list_tasks(self, *, timeout: float | None = None) -> list[TaskInfo]:
        """The server's tasks (2025-11-25 `tasks/list`; the 2026 extension has none)."""
        tasks: list[TaskInfo] = await self._paginate(
            "tasks/list", "tasks", TaskInfo.from_wire, timeout
        )
        return tasks

    def _tasks(self) -> LegacyTaskOps | ModernTaskOps:
        return task_ops(
            self._connection.agreed().era == "modern",
            self.request,
            self._handlers.answer,
            self.subscribe,
            self._name,
            self._subscriptions.watch_task,
        )
