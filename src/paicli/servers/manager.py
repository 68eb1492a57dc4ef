"""The server manager: every configured MCP server kept running by one owner task.

Servers start in parallel (at most `concurrency` at once, 64 by default); one server's failure,
hang or slowness never touches another, and callers can use the ready ones at once. Each
server's state (starting, ready, error, disabled, stopped, idle) is observable; a crash withdraws
its tools and, with `restart: on-failure`, restarts it with exponential backoff. `aclose()`
stops every server with the bounded stdio shutdown ladder. Callers get `ServerError`s
(`paicli.servers.errors`), never the library's `McpError` or a bare `KeyError`.

This is a facade: the owner tasks and states are the `Supervisor`'s (`supervisor.py`), a
call's policy is the `ToolCaller`'s (`tool_caller.py`), what is offered of a listing is
`screening.py`'s. Callers read servers as `ManagedServer`s (`server_view.py`), never change
them.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from paicli.home import PaicliHome
from paicli.mcp import ClientHandlers, HttpServer, StdioServer
from paicli.servers.call_limits import CallDefaults, CallLimits, limits_by_server
from paicli.servers.catalogue import Catalogue
from paicli.servers.config import ServerEntry
from paicli.servers.containment import SandboxCheck, sandbox_refusal
from paicli.servers.leftovers import RunRecord, sweep
from paicli.servers.screening import ToolScreen
from paicli.servers.server_view import (
    ChangeCallback,
    ManagedServer,
    ServerEntryLike,
    ServerState,
    StartTimes,
)
from paicli.servers.supervisor import DEFAULT_CONCURRENCY, Connector, Supervisor
from paicli.servers.tool_caller import ProgressCallback, ToolCaller

if TYPE_CHECKING:
    from paicli.mcp import CallToolResult, ClientSession, EraCache, TaskHandle, Tool

__all__ = [
    "ChangeCallback",
    "Connector",
    "ManagedServer",
    "ServerEntryLike",
    "ServerManager",
    "ServerState",
    "StartTimes",
    "build_manager",
]


def connect(
    spec: StdioServer | HttpServer,
    /,
    *,
    name: str,
    handlers: ClientHandlers | None,
    era_cache: EraCache,
) -> AbstractAsyncContextManager[ClientSession]:
    """`paicli.mcp.connect`, the default `Connector`: a run with no server never loads the
    protocol's session (`ServerManager` loads it at once when it has servers to start)."""
    from paicli.mcp import connect as mcp_connect  # noqa: PLC0415

    return mcp_connect(spec, name=name, handlers=handlers, era_cache=era_cache)


def load_modules(entries: Iterable[ServerEntryLike]) -> None:
    """Import what starting `entries` will need: the session, the HTTP transports (aiohttp)
    for a remote server, the sandbox for a contained one. Now, in the caller's thread, not
    when the first server starts: by then the model client may be importing in a thread of
    its own (Python 3.11's import locks can fail imports made in two threads at once,
    gh-91351). Nothing for a run without servers."""
    specs = [entry.spec for entry in entries if entry.spec is not None]
    if specs:
        from paicli.mcp import connect  # noqa: F401, PLC0415
    if any(isinstance(spec, HttpServer) for spec in specs):
        from paicli.mcp import LegacySseTransport, StreamableHttpTransport  # noqa: F401, PLC0415
    if any(isinstance(spec, HttpServer) and spec.auth is not None for spec in specs):
        from paicli.mcp.auth import _authorizer  # noqa: F401, PLC0415 - OAuth's, at its start
    if any(isinstance(spec, StdioServer) and spec.sandbox is not None for spec in specs):
        from paicli.mcp import check_sandbox, sandbox_command  # noqa: F401, PLC0415


class ServerManager:
    """Owns the configured servers. Use as `async with ServerManager(entries) as manager`."""

    def __init__(
        self,
        entries: Iterable[ServerEntryLike],
        *,
        handlers: ClientHandlers | Callable[[str], ClientHandlers] | None = None,
        concurrency: int = DEFAULT_CONCURRENCY,
        on_change: ChangeCallback | None = None,
        log_dir: Path | None = None,
        connector: Connector = connect,
        catalogue: Catalogue | None = None,
        call_limits: Mapping[str, CallLimits] | None = None,
        held: bool = False,
        sandbox_check: SandboxCheck | None = sandbox_refusal,
        run_record: RunRecord | None = None,
    ) -> None:
        """`held`: entering starts no server process; `start()` (or the first wait for a
        server, or call to one) does. The caller's first work then has the machine to itself
        (a REPL draws its prompt, a one-shot sends its first request).

        `handlers`: one set for every server, or one per server name. `log_dir`: stdio
        servers' stderr is mirrored to `{log_dir}/{name}.log`. `catalogue`: what each server
        offered last run, so a run need not wait. `call_limits`: per server, the timeout and
        the maximum progress may extend a call to. `sandbox_check`: asked before a contained
        server starts whether its sandbox can be had here (None with a connector that
        spawns nothing). `run_record`: where this run notes its servers' pids, and whose
        folder is swept for what an earlier paicli, killed, left running."""
        entries = list(entries)
        if connector is connect:
            load_modules(entries)
        self._supervisor = Supervisor(
            entries,
            handlers=handlers,
            concurrency=concurrency,
            on_change=on_change,
            log_dir=log_dir,
            connector=connector,
            screen=ToolScreen(catalogue),
            held=held,
            sandbox_check=sandbox_check,
            run_record=run_record,
        )
        self._record = run_record
        self._caller = ToolCaller(self._supervisor, call_limits or {})

    # -- lifecycle ---------------------------------------------------------------------------

    async def __aenter__(self) -> ServerManager:
        # One stat, and a thread only where earlier runs left records (the folder exists).
        if self._record is not None and os.path.isdir(self._record.folder):  # noqa: ASYNC240
            await asyncio.to_thread(sweep, self._record.folder)
        self._supervisor.open()
        return self

    def start(self) -> None:
        """Start the servers a `held` manager has kept back (idempotent)."""
        self._supervisor.release()

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Stop every server; each stop is bounded (the stdio shutdown ladder)."""
        await self._supervisor.aclose()
        if self._record is not None:
            self._record.close()

    async def wait_ready(
        self, names: Iterable[str] | None = None, *, timeout: float | None = None
    ) -> bool:
        """Wait until the given servers (default: all) have left the starting state, or
        `timeout` seconds pass; True when they all settled."""
        wanted = list(names) if names is not None else [s.name for s in self._supervisor.records()]
        return await self._supervisor.wait_ready(wanted, timeout)

    # -- queries -----------------------------------------------------------------------------

    def servers(self) -> list[ManagedServer]:
        return list(self._supervisor.records())

    def starting(self, *, without_catalogue: bool = False) -> list[str]:
        """The names of the servers still starting (only those whose tools are not known
        from the catalogue, with `without_catalogue`: the ones worth waiting for)."""
        return [
            s.name
            for s in self._supervisor.records()
            if s.state is ServerState.STARTING
            and not (without_catalogue and (s.cached_tools is not None or s.crash_tools))
        ]

    def get(self, name: str) -> ManagedServer:
        """The server called `name`; `UnknownServer` when none is."""
        return self._supervisor.get(name)

    def ready_tools(self) -> dict[str, list[Tool]]:
        """The tools of every ready server, after include/exclude filters."""
        return {
            s.name: list(s.tools)
            for s in self._supervisor.records()
            if s.state is ServerState.READY
        }

    def offered_tools(self) -> dict[str, list[Tool]]:
        """What the model may call: the tools of every ready server, those the catalogue
        recorded for servers still starting (a call to one of them waits for its server),
        and the last tools of a server that crashed (a call to one starts it again)."""
        offered: dict[str, list[Tool]] = {}
        # In the config's order, whichever came up first: the tools sent to the model are
        # the same from one request to the next (a provider's prompt cache compares them).
        for s in self._supervisor.records():
            if s.state is ServerState.READY:
                offered[s.name] = list(s.tools)
            elif s.state in (ServerState.STARTING, ServerState.IDLE) and s.cached_tools:
                offered[s.name] = list(s.cached_tools)
            elif s.revive_at is not None and s.crash_tools:
                offered[s.name] = list(s.crash_tools)
        return offered

    async def call_tool(
        self,
        server: str,
        tool: str,
        arguments: Mapping[str, Any],
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
        offered: str | None = None,
    ) -> CallToolResult:
        """Call `tool` on the ready server `server` (one still starting is waited for, up
        to its startup timeout). Progress is always asked for (`on_progress` sees it), and
        each progress notification restarts the timeout, up to the server's maximum.
        `offered` is the hash of the tool's definition as the caller offered it
        (`tool_definition.definition_hash`): the call is sent only while the server still
        defines the tool so. Raises `UnknownServer`, `ServerNotReady`, or `ServerCallFailed`
        (an error reply, a timeout naming the limit hit and how to raise it, the connection
        lost, a tool the server no longer offers or defines otherwise than offered)."""
        return await self._caller.call_tool(
            server, tool, arguments, timeout=timeout, on_progress=on_progress, offered=offered
        )

    def may_run_as_task(self, server: str, tool: str) -> bool:
        """Whether the ready `server` can answer a call of `tool` with an MCP task."""
        return self._caller.may_run_as_task(server, tool)

    async def start_tool(
        self, server: str, tool: str, arguments: Mapping[str, Any], *, offered: str | None
    ) -> tuple[TaskHandle, float]:
        """`call_tool` letting the server run it as a task (`ToolCaller.start_tool`)."""
        return await self._caller.start_tool(server, tool, arguments, offered=offered)

    # -- control -----------------------------------------------------------------------------

    def add(self, entry: ServerEntryLike, limits: CallLimits | None = None) -> ManagedServer:
        """Start a server that was not among the entries at first (a project server the user
        approved during the session); `limits` are its calls' limits (default: its own)."""
        server = self._supervisor.add(entry)
        if limits is not None:
            self._caller.set_limits(entry.name, limits)
        return server

    async def restart(self, name: str) -> None:
        await self._supervisor.restart(name)

    async def disable(self, name: str) -> None:
        """Stop the server and withdraw its tools at once."""
        await self._supervisor.disable(name)

    async def enable(self, name: str) -> None:
        await self._supervisor.enable(name)


def build_manager(
    entries: Iterable[ServerEntry],
    *,
    home: PaicliHome,
    calls: CallDefaults,
    handlers: ClientHandlers | Callable[[str], ClientHandlers] | None = None,
    on_change: ChangeCallback | None = None,
    connector: Connector | None = None,
    held: bool = False,
    read_catalogue: bool = True,
) -> ServerManager:
    """The manager of a run's approved `entries`: stderr logs and the catalogue under `home`,
    each server's call limits from its entry and `calls` (the run's defaults). With
    `read_catalogue` false the catalogue is written, not read (`paicli mcp ...` shows live
    servers only)."""
    entries = list(entries)
    return ServerManager(
        entries,
        handlers=handlers,
        call_limits=limits_by_server(entries, calls),
        on_change=on_change,
        log_dir=home.mcp_logs_dir,
        connector=connector or connect,
        catalogue=Catalogue(home.catalogue_dir, read=read_catalogue),
        held=held,
        # A connector of the caller's own (tests serve in memory) starts no process.
        sandbox_check=sandbox_refusal if connector is None else None,
        run_record=RunRecord(home.root / "runs") if connector is None else None,
    )
