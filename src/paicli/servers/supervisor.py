"""The supervisor: one owner task per server, which starts it, watches it and restarts it.

Invariants: a server has at most one owner task, and only the supervisor writes its record.
The owner enters the server's session with `async with` in an exit stack of its own task, so
however the owner ends (a crash, a stop, a cancelled start) its tools are withdrawn first and
then the session is closed (for stdio the bounded shutdown ladder). At most `concurrency`
servers are connecting at once; one server's failure, hang or slowness never touches another.
Every state change wakes those waiting for one, then tells the change callback. Backoff and
start times are on the running loop's clock, the one the library's deadlines use, so a test
that runs the loop on a virtual clock times all of them (tests/virtual_clock.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from paicli.mcp import (
    EraCache,
    LoginRequired,
    McpError,
)
from paicli.servers.cold_start import first_start
from paicli.servers.containment import SandboxCheck
from paicli.servers.crashes import BACKOFF_MAX, BACKOFF_START, crashed, forget_crashes
from paicli.servers.errors import ServerNotReady, UnknownServer
from paicli.servers.leftovers import RunRecord
from paicli.servers.relisting import relisting
from paicli.servers.screening import ToolScreen
from paicli.servers.server_record import ServerRecord
from paicli.servers.server_view import ChangeCallback, ServerEntryLike, ServerState, StartTimes
from paicli.servers.stderr_log import mark_run, with_log_file

if TYPE_CHECKING:
    from paicli.mcp import (
        ClientHandlers,
        ClientSession,
        HttpServer,
        StdioServer,
        Tool,
    )

__all__ = ["DEFAULT_CONCURRENCY", "Connector", "Supervisor"]

log = logging.getLogger("paicli.servers")

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


class Supervisor:
    """Owns the servers' records and their owner tasks; `ServerManager` is its facade."""

    def __init__(
        self,
        entries: Iterable[ServerEntryLike],
        *,
        handlers: ClientHandlers | Callable[[str], ClientHandlers] | None,
        concurrency: int,
        on_change: ChangeCallback | None,
        log_dir: Path | None,
        connector: Connector,
        screen: ToolScreen,
        held: bool,
        sandbox_check: SandboxCheck | None = None,
        run_record: RunRecord | None = None,
    ) -> None:
        self._servers = {e.name: ServerRecord(e) for e in entries}
        # One set for every server, or one per server name (who asks is shown to the user).
        self._handlers = handlers
        self._connect = connector  # tests pass one that serves in memory
        # Whether a contained server's sandbox can be had here, asked before each start
        # (None: the connector spawns nothing, as in memory).
        self._sandbox_check = sandbox_check
        self._concurrency = concurrency
        self._startup_slots = asyncio.Semaphore(concurrency)
        # Protocol verdicts of these servers, so a restart skips a useless probe.
        self._era_cache = EraCache()
        self._on_change = on_change
        # stdio servers' stderr is mirrored to {log_dir}/{name}.log (for `paicli mcp logs`).
        self._log_dir = log_dir
        self._screen = screen
        self._owners: dict[str, asyncio.Task[None]] = {}
        self._settled: dict[str, asyncio.Event] = {n: asyncio.Event() for n in self._servers}
        self._changed = asyncio.Event()  # set (and replaced) at every change of any server
        self._closed = False
        # Servers shown as starting whose owners wait for `release()` (see `held`).
        self._held: set[str] = set()
        self._holding = held
        # This run's servers' pids, for the sweep of a paicli killed before it stopped them.
        self._record = run_record

    # -- lifecycle ---------------------------------------------------------------------------

    def open(self) -> None:
        """Settle what cannot run, and start (or hold, or leave idle) the rest."""
        for server in self._servers.values():
            if not self._runnable(server):
                continue
            server.cached_tools = self._screen.cached(server.entry)
            if server.cached_tools is not None:
                server.cached_instructions = self._screen.cached_instructions(server.entry)
            if server.entry.lazy and server.cached_tools is not None:
                self._set(server, ServerState.IDLE)
            elif self._holding:
                self._held.add(server.name)
                self._settled[server.name].clear()
                self._set(server, ServerState.STARTING)
            else:
                self._start_owner(server)

    def release(self) -> None:
        """Start the servers held back (idempotent)."""
        self._holding = False
        for name in sorted(self._held):
            self._start_owner(self._servers[name])

    async def aclose(self) -> None:
        self._closed = True
        for name in sorted(self._held):  # never started: nothing to stop
            self._held.discard(name)
            self._set(self._servers[name], ServerState.STOPPED)
        owners = list(self._owners.values())
        for task in owners:
            task.cancel()
        # Every owner closes its own session on cancellation; wait for all of them.
        await asyncio.gather(*owners, return_exceptions=True)
        self._owners.clear()

    async def wait_ready(self, names: list[str], timeout: float | None) -> bool:
        if self._held.intersection(names):
            self.release()  # waiting for a held server: nothing else comes first any more
        try:
            async with asyncio.timeout(timeout):
                await asyncio.gather(*(self._settled[n].wait() for n in names))
        except TimeoutError:
            return False
        return True

    def records(self) -> list[ServerRecord]:
        return list(self._servers.values())

    def get(self, name: str) -> ServerRecord:
        try:
            return self._servers[name]
        except KeyError:
            raise UnknownServer(name) from None

    # -- control -----------------------------------------------------------------------------

    def add(self, entry: ServerEntryLike) -> ServerRecord:
        if entry.name in self._servers:
            raise ValueError(f"server {entry.name!r} is already managed")
        server = self._servers[entry.name] = ServerRecord(entry)
        self._settled[entry.name] = asyncio.Event()
        if self._runnable(server):
            self._start_owner(server)
        return server

    async def restart(self, name: str) -> None:
        server = self.get(name)
        await self._stop_owner(name)
        server.restarts = 0
        forget_crashes(server)
        self._start_owner(server)

    async def disable(self, name: str) -> None:
        server = self.get(name)
        await self._stop_owner(name)
        forget_crashes(server)
        self._set(server, ServerState.DISABLED)

    async def enable(self, name: str) -> None:
        server = self.get(name)
        if server.entry.spec is None:
            self._set(server, ServerState.ERROR, server.entry.error or "invalid config")
            return
        if name not in self._owners:
            self._start_owner(server)

    def wake(self, name: str) -> None:
        """A call is coming for `name`: start it if it idles (a lazy server's first use),
        crashed (after its backoff), or is held back (so are the others: none comes first)."""
        server = self.get(name)
        if server.state is ServerState.IDLE:
            self._start_owner(server)
        elif server.state is ServerState.ERROR and server.revive_at is not None:
            self._revive(server)
        if name in self._held:
            self.release()

    def _revive(self, server: ServerRecord) -> None:
        """Start a crashed server again once its backoff has passed (if nothing does)."""
        owner = self._owners.get(server.name)
        if server.revive_at is None or (owner is not None and not owner.done()):
            return
        loop = asyncio.get_running_loop()
        self._start_owner(server, after=max(server.revive_at - loop.time(), 0.0))

    async def replaced(
        self, server: ServerRecord, old: ClientSession, *, revive: bool = False
    ) -> None:
        """Wait until `server` is ready on a session other than `old`, starting it again
        if its owner has given up (its restart policy said never): at once, or with
        `revive` once its crash backoff has passed."""
        while not (server.state is ServerState.READY and server.session not in (None, old)):
            if server.state is ServerState.DISABLED or self._closed:
                raise ServerNotReady(server.name, server.state.value)
            owner = self._owners.get(server.name)
            if (owner is None or owner.done()) and server.state is ServerState.ERROR:
                if revive and server.revive_at is not None:
                    self._revive(server)
                else:
                    self._start_owner(server)
            await self._changed.wait()

    async def until_settled(self, server: ServerRecord, timeout: float | None) -> None:
        """Wait, at most `timeout` seconds, while `server` is starting or waits to be
        started again (backoff)."""
        if server.name in self._held:
            self.release()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                while server.state is ServerState.STARTING or server.restarting:
                    await self._changed.wait()

    # -- owners ------------------------------------------------------------------------------

    def _runnable(self, server: ServerRecord) -> bool:
        """False, with the server settled as disabled or failed, when it cannot run."""
        if server.entry.disabled:
            self._set(server, ServerState.DISABLED)
        elif server.entry.spec is None:
            self._set(server, ServerState.ERROR, server.entry.error or "invalid config")
        else:
            return True
        return False

    def _start_owner(self, server: ServerRecord, after: float = 0.0) -> None:
        """Start `server`'s owner task, which waits `after` seconds first (backoff)."""
        self._held.discard(server.name)
        if self._closed:
            return
        self._settled[server.name].clear()
        server.restarting = after > 0
        self._set(server, ServerState.STARTING)
        self._owners[server.name] = asyncio.get_running_loop().create_task(
            self._own(server, after), name=f"mcp:{server.name}"
        )

    async def _stop_owner(self, name: str) -> None:
        self._held.discard(name)
        task = self._owners.pop(name, None)
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _own(self, server: ServerRecord, after: float = 0.0) -> None:
        """Run one server for as long as it should run: start (after `after` seconds),
        watch, restart."""
        assert server.entry.spec is not None
        spec = with_log_file(server.entry.spec, self._log_dir, server.name)
        if self._record is not None:
            spec = self._record.marked(spec)
        first = server.cached_tools is None and server.started_at is None
        spec, server.installing = first_start(spec, server.entry.first_start_timeout, first)
        if server.installing is not None:  # said at once: it may take a while
            server.start_began = asyncio.get_running_loop().time()
            self._notify(server)
        if after > 0:
            try:
                await asyncio.sleep(after)
            finally:
                server.restarting = False
            self._notify(server)
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
        clock = server.clock = asyncio.get_running_loop().time
        started = server.start_began = clock()
        mark_run(spec, server.name, server.restarts)
        session: ClientSession | None = None
        try:
            if self._sandbox_check is not None:
                refused = await self._sandbox_check(server.name, server.entry.containment)
                if refused is not None:  # restarting cannot help: the machine lacks it
                    forget_crashes(server)
                    self._set(server, ServerState.ERROR, refused)
                    return None
            async with contextlib.AsyncExitStack() as stack:
                if self._record is not None:  # unwound last: once the process is stopped
                    stack.callback(self._record.ended, server.name)
                async with self._startup_slots:
                    slotted = clock()
                    handlers = self._handlers
                    if callable(handlers):
                        handlers = handlers(server.name)
                    session = await stack.enter_async_context(
                        self._connect(
                            spec, name=server.name, handlers=handlers, era_cache=self._era_cache
                        )
                    )
                # Unwound first: the tools are withdrawn before the session closes.
                stack.callback(self._detach, server)
                server.session = session
                if self._record is not None:
                    self._record.started(server.name, server.pid)
                reason = await self._serve(server, session, stack, started, slotted)
                process = session.process
                server.stderr_tail = process.stderr_lines() if process is not None else []
                crashed(server, served=clock() - (server.started_at or clock()))
                self._set(server, ServerState.ERROR, str(reason))
                return str(reason)
        except asyncio.CancelledError:
            self._set(server, ServerState.STOPPED)
            raise
        except LoginRequired as exc:
            server.needs_login = True
            forget_crashes(server)
            self._set(server, ServerState.ERROR, str(exc))
            return None  # restarting cannot help: the user has to log in
        except McpError as exc:
            if server.revive_at is not None:  # a revival that failed: back off further
                crashed(server, served=0.0)
            self._set(server, ServerState.ERROR, str(exc))
            return str(exc)
        except Exception as exc:  # A bug must cost one server, never the app.
            log.exception("%s: unexpected failure", server.name)
            self._set(server, ServerState.ERROR, f"internal error: {exc}")
            return str(exc)
        finally:
            # Read once the session is closed: how its process ended (a SIGKILL included).
            if session is not None and session.process is not None:
                server.last_exit = session.process.exit_reason or server.last_exit

    async def _serve(
        self,
        server: ServerRecord,
        session: ClientSession,
        stack: contextlib.AsyncExitStack,
        started: float,
        slotted: float,
    ) -> McpError:
        """List the tools, declare the server ready, and wait for the connection to end
        (why it ended), relisting whenever the server says its tools changed."""
        clock = server.clock = asyncio.get_running_loop().time
        connected = clock()
        offered = await session.list_tools()
        hints = session.cache_hints("tools/list")
        server.tools, server.left_out = self._screen.listing(
            server.entry, offered, server.left_out, hints, session.instructions
        )
        # Relisted while it serves (the subscription ends before the session does).
        await stack.enter_async_context(
            relisting(server.name, session, lambda tools: self._relisted(server, tools, session))
        )
        server.needs_login = False
        server.revive_at, server.crash_tools, server.installing = None, [], None
        server.started_at = clock()
        server.ready_after = server.started_at - started
        server.start_times = StartTimes(
            queued=slotted - started,
            connect=connected - slotted,
            probe=session.probe_fallback,
            tools=server.started_at - connected,
        )
        server.slow_start = server.start_times.why_slow(self._concurrency)
        self._set(server, ServerState.READY)
        return await session.wait_closed()

    def _detach(self, server: ServerRecord) -> None:
        server.session = None
        server.tools = []

    def _relisted(self, server: ServerRecord, offered: list[Tool], session: ClientSession) -> None:
        # One assignment: readers see the old list or the new one.
        hints = session.cache_hints("tools/list")
        server.tools, server.left_out = self._screen.listing(
            server.entry, offered, server.left_out, hints, session.instructions
        )
        self._notify(server)

    # -- state -------------------------------------------------------------------------------

    def _set(self, server: ServerRecord, state: ServerState, error: str | None = None) -> None:
        server.state = state
        server.error = error
        if state is not ServerState.READY:
            server.tools = []
        if state not in (ServerState.STARTING, ServerState.IDLE):
            server.cached_tools = None  # up (its live list wins) or failed: never again
            server.cached_instructions = None
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
