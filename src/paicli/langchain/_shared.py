"""One session per process and per server for tools that arrived pickled (Ray, multiprocessing).

A pickled `MCPTool` or `McpToolset` carries its server's description (a `SharedServer`) and
the options it was made with, never a session, process, lock or event loop. Where it is
unpickled, the first call opens the session with that server on the process's private loop,
and every later call, of any tool unpickled with the same description in that process, reuses
it: a Ray worker that runs a hundred tasks starts the server once. The session stays open for
the process (a received tool's `close()` leaves it to the next task) and is closed at
interpreter exit with everything else on the private loop; a worker that is killed takes its
servers with it (the stdio transport's lifeline and parent-death signal). A forked child never
reuses its parent's session: its table starts empty.
"""

from __future__ import annotations

import asyncio
import os
import threading
from typing import TYPE_CHECKING

from paicli.langchain._link import ServerLink
from paicli.langchain._loop import private_loop, wait_on
from paicli.mcp import HttpServer, StdioServer

if TYPE_CHECKING:
    from paicli.servers.manager import Connector

__all__ = ["SharedServer", "close_shared", "shared_link"]


class SharedServer:
    """A server's description as a received tool holds it: its link is this process's one."""

    __slots__ = ("_cached", "connector", "spec")

    def __init__(self, spec: StdioServer | HttpServer, connector: Connector | None = None) -> None:
        self.spec = spec
        self.connector = connector  # tests serve in memory (a module-level function)
        self._cached: tuple[int, ServerLink] | None = None

    def link(self) -> ServerLink:
        """This process's session with the server (made on first need, per process)."""
        cached = self._cached
        if cached is not None and cached[0] == os.getpid() and not cached[1].closed:
            return cached[1]
        link = shared_link(self.spec, self.connector)
        self._cached = (os.getpid(), link)
        return link

    def __reduce__(self) -> tuple[type[SharedServer], tuple[object, ...]]:
        return (SharedServer, (self.spec, self.connector))


class _Table:
    """The links of one process, found by description (and connector)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.links: list[ServerLink] = []


_table = _Table()


def shared_link(spec: StdioServer | HttpServer, connector: Connector | None = None) -> ServerLink:
    """The process's link with `spec`, made (not yet opened) on first need and closed at
    interpreter exit."""
    table = _table
    with table.lock:
        for link in table.links:
            if link.spec == spec and link.connector is connector:
                return link
        loop = private_loop()
        link = ServerLink(spec, loop, connector=connector)
        private_loop(link)
        table.links.append(link)
        return link


def close_shared() -> None:
    """Stop this process's shared sessions now (bounded); a later call opens them again."""
    with _table.lock:
        links, _table.links = _table.links, []
    if links:

        async def close() -> None:
            await asyncio.gather(*(link.aclose() for link in links), return_exceptions=True)

        wait_on(links[0].loop, close)


def _forget_in_child() -> None:
    """A forked child starts its own table: the parent's sessions live on the parent's loop
    (whose thread the child does not have) and their pipes are the parent's."""
    global _table  # noqa: PLW0603 - one table per process
    _table = _Table()


os.register_at_fork(after_in_child=_forget_in_child)
