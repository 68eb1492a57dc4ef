"""Our fault server, run inside the test process on an in-memory transport.

The in-memory tier of the suite: the same protocol behaviour as
`tests/server_programs/fault_server.py` in a subprocess (it is the same code), without spawning
anything. The server's threads read the messages the client sends and write bytes, which are split
into lines and handed to the server end of a `MemoryTransport.pair()` on the event loop. Modes that
are about processes, pipes and framing (`huge_line`, `no_newline`, `garbage_stdout`,
`ignore_sigterm`, `stderr_flood`, `poison_lines`, `batch_replies`) run only as real processes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import queue
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from paicli.mcp import (
    ClientHandlers,
    ClientSession,
    ConnectionClosed,
    EraCache,
    MemoryTransport,
    Timeouts,
)
from paicli.mcp._versions import ProtocolChoice
from tests.server_programs.fault_server import FaultServer, parse_options
from tests.server_programs.skills_server import SkillsServer
from tests.server_programs.task_server import TaskServer
from tests.server_programs.task_server import parse_options as parse_task_options

PROCESS_ONLY_MODES = frozenset(
    {
        "huge_line",
        "no_newline",
        "garbage_stdout",
        "chatty_stdout",
        "ignore_sigterm",
        "stderr_flood",
        "poison_lines",
        "batch_replies",
        "hostile_catalogue",
    }
)
# How long closing waits for the server's reading thread to see the end of input.
JOIN_TIMEOUT = 5.0

Json = dict[str, Any]


class _ServerEnd:
    """Bridges the fault server's threads and the server end of the memory pair."""

    def __init__(self, transport: MemoryTransport) -> None:
        self.transport = transport
        self.loop = asyncio.get_running_loop()
        self.incoming: queue.Queue[bytes | None] = queue.Queue()
        self.outgoing: asyncio.Queue[Json | None] = asyncio.Queue()
        self.stderr: list[str] = []
        self.exit_code: int | None = None
        self._partial = b""
        self._lock = threading.Lock()
        self._stopped = False

    # -- called from the server's threads ------------------------------------------------

    def write(self, data: bytes) -> None:
        with self._lock:
            if self._stopped:
                raise OSError("connection closed")  # the server exits quietly on this
            self._schedule(self._feed, data)

    def stop(self, code: int) -> None:
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
            self.exit_code = code
            self._schedule(self.outgoing.put_nowait, None)

    def log(self, text: str) -> None:
        self.stderr.append(text)

    def lines(self) -> Iterator[bytes]:
        return iter(self.incoming.get, None)

    def _schedule(self, func: Any, arg: Any) -> None:
        try:
            self.loop.call_soon_threadsafe(func, arg)
        except RuntimeError:  # the test's loop is already closed
            self._stopped = True

    # -- on the event loop ---------------------------------------------------------------

    def _feed(self, data: bytes) -> None:
        *lines, self._partial = (self._partial + data).split(b"\n")
        for line in lines:
            if line.strip():
                self.outgoing.put_nowait(json.loads(line))

    async def pump_out(self) -> None:
        """Server output → the client, in order; the server's exit closes the connection."""
        while (message := await self.outgoing.get()) is not None:
            try:
                await self.transport.send(message)
            except ConnectionClosed:
                break
        await self.transport.aclose()

    async def pump_in(self) -> None:
        """Client messages → the server's reading thread; end of input when the client goes."""
        try:
            while True:
                message = await self.transport.receive()
                self.incoming.put(json.dumps(message).encode() + b"\n")
        except ConnectionClosed:
            pass
        finally:
            self.incoming.put(None)


@asynccontextmanager
async def fault_in_memory(mode: str = "normal", *extra: str) -> AsyncIterator[MemoryTransport]:
    """Run the fault server in `mode` in this process; yield the client's transport."""
    if mode in PROCESS_ONLY_MODES:
        raise ValueError(f"mode {mode!r} needs a real process")
    client, server = MemoryTransport.pair()
    end = _ServerEnd(server)
    fault = FaultServer(
        parse_options(["--mode", mode, *extra]), out=end.write, stop=end.stop, log=end.log
    )
    thread = threading.Thread(target=fault.serve, args=(end.lines(),), daemon=True)
    # Not a TaskGroup: the caller's own exception must come out as it is, not in a group.
    pumps = [asyncio.ensure_future(end.pump_in()), asyncio.ensure_future(end.pump_out())]
    thread.start()
    try:
        yield client
    finally:
        await client.aclose()
        end.stop(0)
        async with asyncio.timeout(JOIN_TIMEOUT):
            await asyncio.gather(*pumps)
        await asyncio.to_thread(thread.join, JOIN_TIMEOUT)


@asynccontextmanager
async def memory_fault_session(
    mode: str = "normal",
    *extra: str,
    protocol: ProtocolChoice = "auto",
    handshake_timeout: float = 30.0,
    request_timeout: float = 60.0,
    handlers: ClientHandlers | None = None,
    era_cache: EraCache | None = None,
) -> AsyncIterator[ClientSession]:
    """An open session with the fault server in `mode`, all in this process."""
    async with (
        fault_in_memory(mode, *extra) as transport,
        ClientSession(
            transport,
            name=f"fault-{mode}",
            protocol=protocol,
            timeouts=Timeouts(handshake_timeout, request_timeout),
            handlers=handlers,
            era_cache=era_cache,
            identity=("memory", mode, *extra),
        ) as session,
    ):
        yield session


@asynccontextmanager
async def skills_in_memory(
    folder: Path, *, tamper: str | None = None
) -> AsyncIterator[tuple[MemoryTransport, SkillsServer]]:
    """Serve the skills of `folder` (tests/server_programs/skills_server.py) in this
    process; yield the client's transport and the server (its `reads`)."""
    client, end = MemoryTransport.pair()
    server = SkillsServer(folder, tamper=tamper)

    async def serve() -> None:
        with contextlib.suppress(ConnectionClosed):
            while True:
                reply = server.handle(await end.receive())
                if reply is not None:
                    await end.send(reply)

    task = asyncio.ensure_future(serve())
    try:
        yield client, server
    finally:
        await client.aclose()
        await end.aclose()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


@asynccontextmanager
async def task_in_memory(*options: str) -> AsyncIterator[tuple[MemoryTransport, TaskServer]]:
    """Serve tests/server_programs/task_server.py with `options` in this process; yield the
    client's transport and the server (its `methods`, `tasks`)."""
    client, end = MemoryTransport.pair()

    async def send(message: Json) -> None:
        with contextlib.suppress(ConnectionClosed):
            await end.send(message)

    server = TaskServer(parse_task_options(list(options)), send)

    async def serve() -> None:
        with contextlib.suppress(ConnectionClosed):
            while True:
                message = await end.receive()
                if isinstance(message, dict):
                    server.receive(message)

    task = asyncio.ensure_future(serve())
    try:
        yield client, server
    finally:
        await client.aclose()
        await end.aclose()
        for job in [task, *server.running]:
            job.cancel()
        await asyncio.gather(task, *server.running, return_exceptions=True)
