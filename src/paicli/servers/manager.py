"""The server manager: every configured MCP server kept running by one owner task.

Servers start in parallel (at most `concurrency` at once, 64 by default); one server's failure,
hang or slowness never touches another, and callers can use the ready ones at once. Each
server's state (starting, ready, error, disabled, stopped) is observable; a crash withdraws
its tools and, with `restart: on-failure`, restarts it with exponential backoff. `aclose()`
stops every server with the bounded stdio shutdown ladder. Callers get `ServerError`s
(`paicli.servers.errors`), never the library's `McpError` or a bare `KeyError`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

from paicli.mcp import (
    CallToolResult,
    ClientHandlers,
    ClientSession,
    EraCache,
    HttpServer,
    LoginRequired,
    McpError,
    Notification,
    Progress,
    RequestTimeout,
    StdioServer,
    Tool,
    connect,
)

from .call_limits import MAX_FACTOR, CallLimits, timeout_advice
from .catalogue import Catalogue
from .errors import ServerCallFailed, ServerNotReady, UnknownServer
from .retry import RetryPolicy, default_deadline, retry_safe, with_retries
from .screening import ToolScreen
from .server_record import ServerRecord, StartTimes
from .server_view import ChangeCallback, ManagedServer, ServerEntryLike, ServerState
from .stderr_log import mark_run, with_log_file
from .tool_definition import definition

__all__ = [
    "ChangeCallback",
    "Connector",
    "ManagedServer",
    "ServerEntryLike",
    "ServerManager",
    "ServerState",
    "StartTimes",
]

log = logging.getLogger("paicli.servers")

# Restart backoff: 0.5 s, 1 s, 2 s, ... capped at 30 s, so a crash-looping server costs
# little while a transient failure recovers quickly.
BACKOFF_START = 0.5
BACKOFF_MAX = 30.0
# How many servers may be starting at once. Starting is mostly waiting (a server's imports,
# an npx download, the handshake), so the bound is wide: it keeps a config of hundreds of
# servers from forking them all in one go, while dozens of slow ones start together.
DEFAULT_CONCURRENCY = 64


class Connector(Protocol):
    """Opens one server's session: `paicli.mcp.connect`, or (in tests) a server run in the
    same process on an in-memory transport."""

    def __call__(
        self,
        spec: StdioServer | HttpServer,
        /,
        *,
        name: str,
        handlers: ClientHandlers | None,
        era_cache: EraCache,
    ) -> AbstractAsyncContextManager[ClientSession]: ...


ProgressCallback = Callable[[Progress], object]


def _unwatched(progress: Progress) -> None:
    """Progress nobody shows still restarts the call's timeout: always asked for."""


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
    ) -> None:
        """`held`: entering starts no server process; `start()` (or the first wait for a
        server, or call to one) does. The caller's first work then has the machine to itself
        (a REPL draws its prompt, a one-shot sends its first request)."""
        self._servers = {e.name: ServerRecord(e) for e in entries}
        # One set for every server, or one per server name (who asks is shown to the user).
        self._handlers = handlers
        self._connect = connector  # tests pass one that serves in memory
        self._concurrency = concurrency
        self._startup_slots = asyncio.Semaphore(concurrency)
        # Protocol verdicts of this manager's servers, so a restart skips a useless probe.
        self._era_cache = EraCache()
        self._on_change = on_change
        # stdio servers' stderr is mirrored to {log_dir}/{name}.log (for `paicli mcp logs`).
        self._log_dir = log_dir
        # What each server offered last run (paicli.servers.catalogue), so a run need not wait.
        self._screen = ToolScreen(catalogue)
        # Per server: the timeout and the maximum progress may extend a call to.
        self._call_limits = dict(call_limits or {})
        self._owners: dict[str, asyncio.Task[None]] = {}
        self._settled: dict[str, asyncio.Event] = {n: asyncio.Event() for n in self._servers}
        self._changed = asyncio.Event()  # set (and replaced) at every change of any server
        self._closed = False
        # Tool-list refreshes in flight (list_changed); owned here, cancelled on close.
        self._refreshes: set[asyncio.Task[None]] = set()
        # Servers with a refresh running, and those told of a change since it began.
        self._refreshing: set[str] = set()
        self._stale: set[str] = set()
        # Servers shown as starting whose owners wait for `start()` (see `held`).
        self._held: set[str] = set()
        self._holding = held

    # -- lifecycle ---------------------------------------------------------------------------

    async def __aenter__(self) -> ServerManager:
        for server in self._servers.values():
            if server.entry.disabled:
                self._set(server, ServerState.DISABLED)
            elif server.entry.spec is None:
                self._set(server, ServerState.ERROR, server.entry.error or "invalid config")
            else:
                server.cached_tools = self._screen.cached(server.entry)
                if server.entry.lazy and server.cached_tools is not None:
                    self._set(server, ServerState.IDLE)
                elif self._holding:
                    self._held.add(server.name)
                    self._settled[server.name].clear()
                    self._set(server, ServerState.STARTING)
                else:
                    self._start_owner(server)
        return self

    def start(self) -> None:
        """Start the servers a `held` manager has kept back (idempotent)."""
        self._holding = False
        for name in sorted(self._held):
            self._start_owner(self._servers[name])

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Stop every server; each stop is bounded (the stdio shutdown ladder)."""
        self._closed = True
        for name in sorted(self._held):  # never started: nothing to stop
            self._held.discard(name)
            self._set(self._servers[name], ServerState.STOPPED)
        owners = [*self._owners.values(), *self._refreshes]
        for task in owners:
            task.cancel()
        # Every owner closes its own session on cancellation; wait for all of them.
        await asyncio.gather(*owners, return_exceptions=True)
        self._owners.clear()

    async def wait_ready(
        self, names: Iterable[str] | None = None, *, timeout: float | None = None
    ) -> bool:
        """Wait until the given servers (default: all) have left the starting state, or
        `timeout` seconds pass; True when they all settled."""
        wanted = list(names) if names is not None else list(self._servers)
        if self._held.intersection(wanted):
            self.start()  # waiting for a held server: nothing else comes first any more
        try:
            async with asyncio.timeout(timeout):
                await asyncio.gather(*(self._settled[n].wait() for n in wanted))
        except TimeoutError:
            return False
        return True

    # -- queries -----------------------------------------------------------------------------

    def servers(self) -> list[ManagedServer]:
        return list(self._servers.values())

    def starting(self, *, without_catalogue: bool = False) -> list[str]:
        """The names of the servers still starting (only those whose tools are not known
        from the catalogue, with `without_catalogue`: the ones worth waiting for)."""
        return [
            s.name
            for s in self._servers.values()
            if s.state is ServerState.STARTING
            and not (without_catalogue and s.cached_tools is not None)
        ]

    def get(self, name: str) -> ManagedServer:
        """The server called `name`; `UnknownServer` when none is."""
        return self._record(name)

    def _record(self, name: str) -> ServerRecord:
        try:
            return self._servers[name]
        except KeyError:
            raise UnknownServer(name) from None

    def ready_tools(self) -> dict[str, list[Tool]]:
        """The tools of every ready server, after include/exclude filters."""
        return {
            s.name: list(s.tools) for s in self._servers.values() if s.state is ServerState.READY
        }

    def offered_tools(self) -> dict[str, list[Tool]]:
        """What the model may call: the tools of every ready server, and those the catalogue
        recorded for servers still starting (a call to one of them waits for its server)."""
        offered = self.ready_tools()
        for s in self._servers.values():
            if s.state in (ServerState.STARTING, ServerState.IDLE) and s.cached_tools is not None:
                offered[s.name] = list(s.cached_tools)
        return offered

    async def call_tool(
        self,
        server: str,
        tool: str,
        arguments: Mapping[str, Any],
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> CallToolResult:
        """Call `tool` on the ready server `server` (one still starting is waited for, up
        to its startup timeout). Progress is always asked for (`on_progress` sees it), and
        each progress notification restarts the timeout, up to the server's maximum.
        Raises `UnknownServer`, `ServerNotReady`, or `ServerCallFailed` (an error reply, a
        timeout naming the limit hit and how to raise it, the connection lost, a tool the
        server no longer offers)."""
        managed = self._record(server)
        if managed.state is ServerState.IDLE:  # a lazy server's first use
            self._start_owner(managed)
        if server in self._held:
            self.start()
        waited = managed.state is ServerState.STARTING
        # What the caller was offered from the catalogue: the live tool must still be that.
        promised = next((t for t in managed.cached_tools or () if t.name == tool), None)
        if waited:
            spec = managed.entry.spec
            limit = spec.handshake_timeout if spec is not None else None
            await self.wait_ready([server], timeout=limit)
        session = managed.session
        if managed.state is not ServerState.READY or session is None:
            raise ServerNotReady(server, managed.state.value)
        if waited:
            live = next((t for t in managed.tools if t.name == tool), None)
            if live is None:
                raise ServerCallFailed(
                    server, tool, "the server no longer offers this tool (its list changed)"
                )
            if promised is not None and definition(promised) != definition(live):
                raise ServerCallFailed(
                    server,
                    tool,
                    "the server redefined this tool since it was offered; not called "
                    "(its new definition is offered or held back from the next request)",
                )
        limits = self._call_limits.get(server)
        if limits is None:
            spec = managed.entry.spec
            limits = CallLimits(spec.request_timeout) if spec is not None else CallLimits()
            limits = replace(limits, maximum=limits.timeout * MAX_FACTOR)
        if timeout is not None:
            limits = replace(limits, timeout=timeout, maximum=max(limits.maximum, timeout))
        entry = managed.entry
        offered = next((t for t in managed.tools if t.name == tool), None)
        safe = retry_safe(offered, tool, trusted=entry.trust, patterns=entry.retry_tools)
        progress = on_progress or _unwatched

        async def once(current: ClientSession, seconds: float) -> CallToolResult:
            return await current.call_tool(
                tool,
                arguments,
                timeout=seconds,
                on_progress=progress,
                progress_extends_deadline=True,
                max_timeout=max(limits.maximum, seconds),
            )

        try:
            if entry.retry is None or not safe:
                return await once(session, limits.timeout)
            return await self._call_with_retries(managed, entry.retry, limits.timeout, once)
        except RequestTimeout as exc:
            raise ServerCallFailed(server, tool, f"{exc}. {timeout_advice(exc, limits)}") from exc
        except McpError as exc:
            raise ServerCallFailed(server, tool, str(exc)) from exc

    async def _call_with_retries(
        self,
        managed: ServerRecord,
        policy: RetryPolicy,
        each: float,
        once: Callable[[ClientSession, float], Awaitable[CallToolResult]],
    ) -> CallToolResult:
        """`once` on the server's current session, tried again after a timeout or a crash
        (see `retry`); a crashed server is brought back first."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + (policy.deadline or default_deadline(policy, each))
        used: list[ClientSession] = []

        async def attempt(left: float) -> CallToolResult:
            session = managed.session
            if managed.state is not ServerState.READY or session is None:
                raise ServerNotReady(managed.name, managed.state.value)
            used.append(session)
            # Only a deadline the config sets cuts an attempt short (to the millisecond);
            # the default one leaves each attempt its full timeout.
            seconds = each if policy.deadline is None else max(round(min(each, left), 3), 0.001)
            return await once(session, seconds)

        async def recover(left: float) -> None:
            try:
                async with asyncio.timeout(max(left, 0)):
                    await self._replaced(managed, used[-1])
            except TimeoutError:
                raise ServerNotReady(managed.name, "not back before the call's deadline") from None

        return await with_retries(policy, attempt, recover, deadline=deadline)

    async def _replaced(self, managed: ServerRecord, old: ClientSession) -> None:
        """Wait until `managed` is ready on a session other than `old`, starting it again
        if its owner has given up (its restart policy said never)."""
        while not (managed.state is ServerState.READY and managed.session not in (None, old)):
            if managed.state is ServerState.DISABLED or self._closed:
                raise ServerNotReady(managed.name, managed.state.value)
            owner = self._owners.get(managed.name)
            if (owner is None or owner.done()) and managed.state is ServerState.ERROR:
                self._start_owner(managed)
            await self._changed.wait()

    # -- control -----------------------------------------------------------------------------

    def add(self, entry: ServerEntryLike, limits: CallLimits | None = None) -> ManagedServer:
        """Start a server that was not among the entries at first (a project server the user
        approved during the session); `limits` are its calls' limits (default: its own)."""
        if entry.name in self._servers:
            raise ValueError(f"server {entry.name!r} is already managed")
        server = self._servers[entry.name] = ServerRecord(entry)
        self._settled[entry.name] = asyncio.Event()
        if limits is not None:
            self._call_limits[entry.name] = limits
        if entry.disabled:
            self._set(server, ServerState.DISABLED)
        elif entry.spec is None:
            self._set(server, ServerState.ERROR, entry.error or "invalid config")
        else:
            self._start_owner(server)
        return server

    async def restart(self, name: str) -> None:
        server = self._record(name)
        await self._stop_owner(name)
        server.restarts = 0
        self._start_owner(server)

    async def disable(self, name: str) -> None:
        """Stop the server and withdraw its tools at once."""
        server = self._record(name)
        await self._stop_owner(name)
        self._set(server, ServerState.DISABLED)

    async def enable(self, name: str) -> None:
        server = self._record(name)
        if server.entry.spec is None:
            self._set(server, ServerState.ERROR, server.entry.error or "invalid config")
            return
        if name not in self._owners:
            self._start_owner(server)

    # -- internals ---------------------------------------------------------------------------

    def _start_owner(self, server: ServerRecord) -> None:
        self._held.discard(server.name)
        if self._closed:
            return
        self._settled[server.name].clear()
        self._set(server, ServerState.STARTING)
        self._owners[server.name] = asyncio.get_running_loop().create_task(
            self._own(server), name=f"mcp:{server.name}"
        )

    async def _stop_owner(self, name: str) -> None:
        self._held.discard(name)
        task = self._owners.pop(name, None)
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _own(self, server: ServerRecord) -> None:
        """Run one server for as long as it should run: start, watch, restart."""
        assert server.entry.spec is not None
        spec = with_log_file(server.entry.spec, self._log_dir, server.name)
        while True:
            failure = await self._run_once(server, spec)
            if failure is None:
                return
            if server.entry.restart != "on-failure" or server.restarts >= server.entry.max_restarts:
                return
            delay = min(BACKOFF_START * 2**server.restarts, BACKOFF_MAX)
            server.restarts += 1
            log.info("%s: restarting in %.1fs (%s)", server.name, delay, failure)
            server.restarting = True
            try:
                await asyncio.sleep(delay)
            finally:
                server.restarting = False
            self._set(server, ServerState.STARTING)

    async def _run_once(self, server: ServerRecord, spec: StdioServer | HttpServer) -> str | None:
        """Connect, serve until the connection ends; return why it failed (None: stopped)."""
        started = time.monotonic()
        mark_run(spec, server.name, server.restarts)
        try:
            async with self._startup_slots:
                slotted = time.monotonic()
                handlers = self._handlers
                if callable(handlers):
                    handlers = handlers(server.name)
                context = self._connect(
                    spec, name=server.name, handlers=handlers, era_cache=self._era_cache
                )
                session = await context.__aenter__()
            try:
                server.session = session
                connected = time.monotonic()
                offered = await session.list_tools()
                server.tools, server.left_out = self._screen.listing(
                    server.entry, offered, server.left_out
                )
                session.subscribe(lambda n: self._on_notification(server, n))
                server.needs_login = False
                server.started_at = time.monotonic()
                server.ready_after = server.started_at - started
                server.start_times = StartTimes(
                    queued=slotted - started,
                    connect=connected - slotted,
                    probe=session.probe_fallback,
                    tools=server.started_at - connected,
                )
                server.slow_start = server.start_times.why_slow(self._concurrency)
                self._set(server, ServerState.READY)
                reason = await session.wait_closed()
                server.stderr_tail = session.stderr_lines()
                self._set(server, ServerState.ERROR, str(reason))
                return str(reason)
            finally:
                server.session = None
                server.tools = []
                await context.__aexit__(None, None, None)
        except asyncio.CancelledError:
            self._set(server, ServerState.STOPPED)
            raise
        except LoginRequired as exc:
            server.needs_login = True
            self._set(server, ServerState.ERROR, str(exc))
            return None  # restarting cannot help: the user has to log in
        except McpError as exc:
            self._set(server, ServerState.ERROR, str(exc))
            return str(exc)
        except Exception as exc:  # A bug must cost one server, never the app.
            log.exception("%s: unexpected failure", server.name)
            self._set(server, ServerState.ERROR, f"internal error: {exc}")
            return str(exc)

    def _on_notification(self, server: ServerRecord, notification: Notification) -> None:
        if notification.method != "notifications/tools/list_changed" or not server.session:
            return
        # Coalesced: while a refresh runs, any number of notices make one more refresh.
        self._stale.add(server.name)
        if server.name in self._refreshing:
            return
        task = asyncio.get_running_loop().create_task(self._refresh_while_stale(server))
        self._refreshing.add(server.name)
        self._refreshes.add(task)
        task.add_done_callback(self._refreshes.discard)

    async def _refresh_while_stale(self, server: ServerRecord) -> None:
        try:
            while server.name in self._stale:
                self._stale.discard(server.name)
                await self._refresh_tools(server)
        finally:
            self._refreshing.discard(server.name)

    async def _refresh_tools(self, server: ServerRecord) -> None:
        session = server.session
        if session is None:
            return
        try:
            offered = await session.list_tools()
        except McpError as exc:
            log.warning("%s: could not refresh tools: %s", server.name, exc)
            return
        # One assignment: readers see the old list or the new one.
        server.tools, server.left_out = self._screen.listing(server.entry, offered, server.left_out)
        self._notify(server)

    def _set(self, server: ServerRecord, state: ServerState, error: str | None = None) -> None:
        server.state = state
        server.error = error
        if state is not ServerState.READY:
            server.tools = []
        if state not in (ServerState.STARTING, ServerState.IDLE):
            server.cached_tools = None  # up (its live list wins) or failed: never again
        if state is not ServerState.STARTING:
            self._settled[server.name].set()
        self._notify(server)

    def _notify(self, server: ServerRecord) -> None:
        # Wake whoever waits for a change (a retry waiting for its server), once.
        self._changed.set()
        self._changed = asyncio.Event()
        if self._on_change is not None:
            try:
                self._on_change(server)
            except Exception:
                log.exception("server change callback failed")
