"""Re-listing a connection's tools when the server says they changed.

Entered in the owner task's exit stack for as long as a connection serves: each
`notifications/tools/list_changed` makes one `tools/list`, coalesced (while one runs, any
number of notices make one more, never one each), in a task group of the owner's. On exit the
subscription is removed first, so no refresh starts once the connection is going; a stop
cancels the refresh running, an ended connection lets it fail on its own.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from paicli.mcp import McpError

if TYPE_CHECKING:
    from paicli.mcp import ClientSession, Notification, Tool

__all__ = ["relisting"]

log = logging.getLogger("paicli.servers")

LIST_CHANGED = "notifications/tools/list_changed"


@asynccontextmanager
async def relisting(
    name: str, session: ClientSession, listed: Callable[[list[Tool]], None]
) -> AsyncIterator[None]:
    """While entered, `listed(tools)` gets each list `session`'s server relists."""
    async with asyncio.TaskGroup() as tasks:
        refresh = _Coalesced(name, session, listed, tasks)
        unsubscribe = session.subscribe(refresh.notice)
        try:
            yield
        finally:
            unsubscribe()


class _Coalesced:
    def __init__(
        self,
        name: str,
        session: ClientSession,
        listed: Callable[[list[Tool]], None],
        tasks: asyncio.TaskGroup,
    ) -> None:
        self._name = name
        self._session = session
        self._listed = listed
        self._tasks = tasks
        self._stale = False  # told of a change since the running refresh began
        self._running = False

    def notice(self, notification: Notification) -> None:
        if notification.method != LIST_CHANGED:
            return
        self._stale = True
        if not self._running:
            self._running = True
            self._tasks.create_task(self._while_stale())

    async def _while_stale(self) -> None:
        try:
            while self._stale:
                self._stale = False
                await self._refresh()
        except Exception:  # a bug here must cost a refresh, never the server's owner
            log.exception("%s: could not refresh tools", self._name)
        finally:
            self._running = False

    async def _refresh(self) -> None:
        try:
            offered = await self._session.list_tools()
        except McpError as exc:
            log.warning("%s: could not refresh tools: %s", self._name, exc)
            return
        self._listed(offered)
