"""Who hears a session's server notifications, and the 2026 listen request that carries them.

Every notification the engine receives (list changes, resource updates, log messages) goes
to each subscriber in turn; one subscriber's failure is logged and costs the others nothing.
In the 2026 era notifications come only on a `subscriptions/listen` request, held open in a
task of ours while anyone listens and the server has something to announce; it is reopened
with a new filter when the resource subscriptions change, and `stop()` ends it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from ._modern import ModernRequests, listen_filter
from ._transport import JsonObject
from .types import Notification

__all__ = ["NotificationCallback", "Subscriptions"]

log = logging.getLogger("paicli.mcp.session")

NotificationCallback = Callable[[Notification], object]


class Subscriptions:
    """A session's notification subscribers and, in the 2026 era, its listen task."""

    def __init__(self) -> None:
        self._callbacks: list[NotificationCallback] = []
        #: The resource URIs subscribed to.
        self.resources: set[str] = set()
        #: The 2026 tasks whose notifications/tasks are wanted.
        self.tasks: set[str] = set()
        # Set once a 2026 session is open: what sends the listen request, and what the
        # server announces changes of.
        self._modern: ModernRequests | None = None
        self._capabilities: JsonObject = {}
        self._listener: asyncio.Task[None] | None = None
        # Every listen task, including replaced ones still winding down; stop() ends them.
        self._listeners: set[asyncio.Task[None]] = set()
        self._stopped = False

    def add(self, callback: NotificationCallback) -> Callable[[], None]:
        """Deliver notifications to `callback`; returns a function that removes it."""
        self._callbacks.append(callback)
        self.ensure_listening()

        def remove() -> None:
            if callback in self._callbacks:
                self._callbacks.remove(callback)

        return remove

    def notify(self, method: str, params: JsonObject | None) -> None:
        """One notification from the server, to every subscriber."""
        notification = Notification(method, params or {})
        for callback in list(self._callbacks):
            try:
                callback(notification)
            except Exception:
                log.exception("notification subscriber failed on %s", method)

    def use_listen(self, modern: ModernRequests, server_capabilities: JsonObject) -> None:
        """A 2026 session is open: notifications need a listen request from now on."""
        self._modern = modern
        self._capabilities = server_capabilities

    def ensure_listening(self) -> None:
        """Open the listen request if it is needed and not open."""
        modern = self._modern
        if modern is None or self._stopped:
            return
        if self._listener is None or self._listener.done():
            wanted = listen_filter(self._capabilities, self.resources, self.tasks)
            if wanted:
                task = asyncio.get_running_loop().create_task(modern.listen(wanted))
                self._listener = task
                self._listeners.add(task)
                task.add_done_callback(self._listeners.discard)

    def watch_task(self, task_id: str, on: bool) -> None:
        """Start (or stop) hearing a 2026 task's status on the listen stream."""
        if on:
            self.tasks.add(task_id)
        else:
            self.tasks.discard(task_id)
        if self._modern is not None and not self._stopped:
            self.restart_listening()

    def restart_listening(self) -> None:
        """Reopen the listen request (the resources subscribed to changed)."""
        if self._listener is not None:
            self._listener.cancel()
            self._listener = None
        self.ensure_listening()

    def stop(self) -> list[asyncio.Task[None]]:
        """Cancel every listen task; returns them, for the caller to wait on."""
        self._stopped = True
        tasks = list(self._listeners)
        for task in tasks:
            task.cancel()
        return tasks
