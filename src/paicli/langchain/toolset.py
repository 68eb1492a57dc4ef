"""`load_tools`: every tool of one or more servers, one live session per server.

The returned `McpToolset` opens where it is entered: `async with` opens the sessions on the
caller's event loop, `with` (or `open()`) on the private loop thread that serves synchronous
code. Either way the tools work from both sync and async code (see `_loop`). Leaving the
block, or `aclose()` / `close()`, stops every server (bounded). A toolset pickles as its
servers' descriptions, its options and (once open) its tools; unpickled, it uses the receiving
process's one session per server (`_shared`), which its `close()` leaves open for the process.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator, Mapping, Sequence
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any, overload

from paicli.langchain._containment import SandboxOption, contained
from paicli.langchain._link import ServerLink
from paicli.langchain._loop import private_loop, run_on, wait_on
from paicli.langchain._shared import SharedServer, shared_link
from paicli.langchain._sources import ServerSource, servers_of
from paicli.langchain.errors import BridgeError
from paicli.langchain.tool import MCPTool
from paicli.mcp import HttpServer, Limits, StdioServer

if TYPE_CHECKING:
    from paicli.langchain._guard import ApproveCallback
    from paicli.servers.manager import Connector

__all__ = ["McpToolset", "load_tools"]


def load_tools(
    server: ServerSource,
    *,
    include: Sequence[str] | None = None,
    exclude: Sequence[str] | None = None,
    timeout: float | None = None,
    approve: ApproveCallback | None = None,
    audit: bool | str | os.PathLike[str] | None = None,
    sandbox: SandboxOption = None,
    limits: Limits | None = None,
) -> McpToolset:
    """The tools of `server`: a `StdioServer`/`HttpServer`, an `mcpServers` entry (dict), or
    the path of an mcp.json file (all its servers).

        async with load_tools(StdioServer("python3", ["server.py"])) as tools: ...
        with load_tools("mcp.json", include=["search_*"]) as tools: ...

    `include` / `exclude` are fnmatch patterns of tool names (on the server). `timeout` is
    each call's deadline in seconds (default: each server's `request_timeout`). `approve`
    routes every call through paicli's approval policy, asking the callback when the policy
    does not decide; `audit` (True for `~/.paicli/audit/`, or a folder) writes paicli's
    redacted audit log. `sandbox` (True, or a `paicli.mcp.Sandbox`) and `limits`
    (`paicli.mcp.Limits`) contain every stdio server that sets none of its own: True is
    each server's `cwd` (else the working folder) writable, no network.
    """
    return McpToolset(
        [contained(spec, sandbox, limits) for spec in servers_of(server)],
        include=include,
        exclude=exclude,
        timeout=timeout,
        approve=approve,
        audit=audit,
    )


class McpToolset(Sequence[MCPTool]):
    """The tools of some servers, usable once opened; a sequence of `MCPTool`s."""

    def __init__(
        self,
        servers: Sequence[StdioServer | HttpServer],
        *,
        include: Sequence[str] | None = None,
        exclude: Sequence[str] | None = None,
        timeout: float | None = None,
        approve: ApproveCallback | None = None,
        audit: bool | str | os.PathLike[str] | None = None,
        connector: Connector | None = None,
    ) -> None:
        self._servers = list(servers)
        self._include = tuple(include) if include is not None else None
        self._exclude = tuple(exclude or ())
        self._timeout = timeout
        self._approve = approve
        self._audit = audit
        self._connector = connector  # tests serve in memory
        self._links: list[ServerLink] = []
        self._tools: list[MCPTool] | None = None
        # Unpickled: the sessions are the process's, opened on the private loop, kept open.
        self._shared = False

    # -- opening and closing ---------------------------------------------------------

    async def aopen(self) -> list[MCPTool]:
        """Start every server on the running loop and list their tools."""
        if self._shared:
            loop = private_loop()
            return await run_on(loop, lambda: self._open(loop))
        return await self._open(asyncio.get_running_loop())

    def open(self) -> list[MCPTool]:
        """Start every server on the private loop thread (for synchronous code)."""
        loop = private_loop(None if self._shared else self)
        return wait_on(loop, lambda: self._open(loop))

    async def _open(self, loop: asyncio.AbstractEventLoop) -> list[MCPTool]:
        if self._shared and self._tools is not None:
            return self._tools  # sent open: its tools are known, their sessions shared
        if self._links:
            raise BridgeError("these tools are already open")
        if self._shared:
            self._links = [shared_link(s, self._connector) for s in self._servers]
        else:
            self._links = [ServerLink(s, loop, connector=self._connector) for s in self._servers]
        try:
            async with asyncio.TaskGroup() as group:
                listed = [group.create_task(link.list_tools()) for link in self._links]
        except BaseExceptionGroup as group_error:
            await self._close_links()
            # One server's failure is the error (the others were only cancelled by it).
            first = group_error.exceptions[0]
            raise first from None
        except BaseException:
            await self._close_links()
            raise
        tools: list[MCPTool] = []
        taken: dict[str, str] = {}
        for link, task in zip(self._links, listed, strict=True):
            for tool in task.result():
                if not self._wanted(tool.name):
                    continue
                made = MCPTool.bound(link, tool, timeout=self._timeout, description=None)
                if self._shared:
                    made._shared = SharedServer(link.spec, link.connector)
                if made.name in taken:
                    await self._close_links()
                    raise BridgeError(
                        f"two tools are named {made.name!r} (servers {taken[made.name]!r} "
                        f"and {link.label!r}); leave one out with exclude=[...]"
                    )
                taken[made.name] = link.label
                tools.append(made)
        if self._approve is not None or self._audit:
            from paicli.langchain._guard import CallGuard  # noqa: PLC0415 - paicli's tools layer, when asked

            guard = CallGuard(tools, approve=self._approve, audit=self._audit)
            for made in tools:
                made._guard = guard
        self._tools = tools
        return tools

    def _wanted(self, name: str) -> bool:
        if self._include is not None and not any(fnmatchcase(name, p) for p in self._include):
            return False
        return not any(fnmatchcase(name, p) for p in self._exclude)

    async def _close_links(self) -> None:
        if self._shared:
            # The process's sessions: the next task uses them, the exit closes them.
            self._links = []
            return
        await asyncio.gather(*(link.aclose() for link in self._links), return_exceptions=True)

    async def aclose(self) -> None:
        """Stop every server (bounded). Safe twice."""
        if self._links:
            await run_on(self._links[0].loop, self._close_links)

    def close(self) -> None:
        if self._links:
            wait_on(self._links[0].loop, self._close_links)

    async def __aenter__(self) -> list[MCPTool]:
        return await self.aopen()

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __enter__(self) -> list[MCPTool]:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the tools -----------------------------------------------------------------------

    @property
    def tools(self) -> list[MCPTool]:
        if self._tools is None:
            raise BridgeError(
                "the tools are not open yet: use `async with load_tools(...) as tools`, "
                "`with load_tools(...) as tools`, or `await toolset.aopen()`"
            )
        return self._tools

    @overload
    def __getitem__(self, index: int) -> MCPTool: ...
    @overload
    def __getitem__(self, index: slice) -> list[MCPTool]: ...
    def __getitem__(self, index: int | slice) -> MCPTool | list[MCPTool]:
        return self.tools[index]

    def __len__(self) -> int:
        return len(self.tools)

    def __iter__(self) -> Iterator[MCPTool]:
        return iter(self.tools)

    def by_name(self) -> Mapping[str, MCPTool]:
        return {t.name: t for t in self.tools}

    # -- pickling ------------------------------------------------------------------------

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as the servers' descriptions (secrets in `env` or `headers` included),
        the options, and the tools once open (so the receiver need not list them again)."""
        options = (self._include, self._exclude, self._timeout, self._approve, self._audit)
        return (_unpickled, (self._servers, options, self._connector, self._tools))


def _unpickled(
    servers: list[StdioServer | HttpServer],
    options: tuple[Any, ...],
    connector: Connector | None,
    tools: list[MCPTool] | None,
) -> McpToolset:
    """A toolset sent pickled: its tools use this process's session with each server."""
    include, exclude, timeout, approve, audit = options
    made = McpToolset(
        servers,
        include=include,
        exclude=exclude,
        timeout=timeout,
        approve=approve,
        audit=audit,
        connector=connector,
    )
    made._shared = True
    made._tools = tools
    return made
