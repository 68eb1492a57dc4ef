"""stdio transport: a server subprocess speaking newline-delimited JSON-RPC.

Invariants: the child runs in its own process group with a minimal environment; stdout is
parsed incrementally with memory bounded by `max_message_size`; stderr is always drained into
a ring buffer (never onto the user's terminal); `aclose()` runs the whole shutdown ladder even
when the caller is cancelled, and kills the whole group so wrapper grandchildren die too.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
from collections import deque
from collections.abc import Mapping, Sequence
from typing import IO, Any

import orjson

from .errors import ConnectionClosed, MessageTooLarge

__all__ = ["StdioTransport"]

log = logging.getLogger("paicli.mcp.stdio")

# Variables a server needs to run at all (find binaries, a home, a locale, a temp dir);
# everything else, API keys included, must be passed explicitly through the server's `env`.
INHERITED_ENV = (
    "HOME",
    "LOGNAME",
    "PATH",
    "SHELL",
    "TERM",
    "USER",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "TMPDIR",
    "TZ",
    "XDG_RUNTIME_DIR",
)

# Shutdown ladder timings. A well-behaved server exits on stdin EOF almost at once, so one
# second is generous; SIGTERM gets two seconds to let servers flush and stop their children.
STDIN_CLOSE_GRACE = 1.0
SIGTERM_GRACE = 2.0
# After SIGKILL the kernel reaps at once; this only bounds waiting for our exit callback.
SIGKILL_GRACE = 1.0
# Polling the process group: cheap, and only done during shutdown.
GROUP_POLL_INTERVAL = 0.02
# After stdout EOF, how long to wait for the exit status and stderr tail to build the error.
EOF_EXIT_GRACE = 0.5

STDERR_RING_LINES = 200
# A stderr "line" longer than this is split, so a server that never writes a newline to
# stderr cannot grow our memory.
STDERR_MAX_LINE = 8192
DEFAULT_MAX_MESSAGE_SIZE = 64 * 1024 * 1024
# From this size on a message is parsed the memory-lean way (see _parse_partial).
LARGE_MESSAGE = 1024 * 1024


def build_env(extra: Mapping[str, str] | None) -> dict[str, str]:
    """The child's environment: a minimal inherited set plus the server's own variables."""
    env = {k: v for k in INHERITED_ENV if (v := os.environ.get(k)) is not None}
    if extra:
        env.update(extra)
    return env


class _StdioProtocol(asyncio.SubprocessProtocol):
    """Frames stdout into messages and drains stderr, inside the event loop's callbacks."""

    def __init__(self, max_message_size: int, stderr_file: IO[bytes] | None) -> None:
        loop = asyncio.get_running_loop()
        self.max_message_size = max_message_size
        self.messages: deque[dict[str, Any]] = deque()
        self.closed: ConnectionClosed | None = None
        self.stdout_eof = False
        self.exited: asyncio.Future[int] = loop.create_future()
        self.stderr_done: asyncio.Future[None] = loop.create_future()
        self.stderr_lines: deque[str] = deque(maxlen=STDERR_RING_LINES)
        self._stderr_file = stderr_file
        self._stderr_partial = b""
        self._partial = bytearray()
        self._waiter: asyncio.Future[None] | None = None
        self._paused = False
        self._drain_waiters: list[asyncio.Future[None]] = []
        self.transport: asyncio.SubprocessTransport | None = None

    # -- asyncio callbacks -------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.SubprocessTransport)
        self.transport = transport

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        if fd == 1:
            self._stdout_data(data)
        else:
            self._stderr_data(data)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd == 1:
            self.stdout_eof = True
            self.wake()
        elif fd == 2:
            if self._stderr_partial:
                self._stderr_line(self._stderr_partial)
                self._stderr_partial = b""
            if not self.stderr_done.done():
                self.stderr_done.set_result(None)
        elif fd == 0:
            # The child closed its stdin (exited); writers must not wait for a drain forever.
            self._release_drain_waiters()

    def process_exited(self) -> None:
        assert self.transport is not None
        code = self.transport.get_returncode()
        if not self.exited.done():
            self.exited.set_result(code if code is not None else -1)
        self.wake()

    def pause_writing(self) -> None:
        self._paused = True

    def resume_writing(self) -> None:
        self._paused = False
        self._release_drain_waiters()

    # -- framing -------------------------------------------------------------------------

    def _stdout_data(self, data: bytes) -> None:
        if self.closed is not None:
            return
        start = 0
        while (end := data.find(b"\n", start)) >= 0:
            if self._partial:
                # The end of a line that spans reads: complete it in place, then parse it.
                self._partial += data[start:end]
                start = end + 1
                if len(self._partial) > self.max_message_size:
                    self._too_large(len(self._partial))
                    return
                self._parse_partial()
                continue
            line = data[start:end]
            start = end + 1
            if len(line) > self.max_message_size:
                self._too_large(len(line))
                return
            self._parse_line(line)
        if start < len(data):
            # Growing one bytearray (realloc, mremap for large sizes) keeps a long message
            # at about its own size in memory, where a list of chunks plus a join needs two.
            self._partial += data[start:] if start else data
            if len(self._partial) > self.max_message_size:
                self._too_large(len(self._partial))
                return
        if self.messages:
            self.wake()

    def _parse_partial(self) -> None:
        """Parse the completed multi-read line, holding as little memory as possible."""
        line, self._partial = self._partial, bytearray()
        if len(line) < LARGE_MESSAGE:
            self._parse_line(line)
            return
        # orjson copies its whole input while parsing, so a large message would peak at three
        # times its size. Decoding first lets us free the bytes before parsing: two times.
        try:
            text = line.decode()
        except UnicodeDecodeError:
            self._garbage(line)
            return
        del line
        try:
            message = json.loads(text)
        except json.JSONDecodeError:
            self._garbage(text.encode()[:200])
            return
        self._deliver(message, text)

    def _parse_line(self, line: bytes | bytearray) -> None:
        try:
            # JSON whitespace includes "\r", so CRLF framing parses as is.
            message = orjson.loads(line)
        except orjson.JSONDecodeError:
            self._garbage(line)
            return
        self._deliver(message, line)

    def _garbage(self, line: bytes | bytearray) -> None:
        if line.isspace() or not line:
            return
        # Banners and log lines on stdout break the spec but are common; skip them.
        log.warning("skipping non-JSON line on server stdout: %.200r", bytes(line[:200]))

    def _deliver(self, message: Any, line: bytes | bytearray | str) -> None:
        if isinstance(message, dict):
            self.messages.append(message)
        elif isinstance(message, list):
            # A JSON-RPC batch (2025-03-26 only): deliver its members one by one.
            self.messages.extend(m for m in message if isinstance(m, dict))
        else:
            log.warning("skipping non-object JSON on server stdout: %.200r", line[:200])

    def _too_large(self, size: int) -> None:
        self._partial = bytearray()
        self.closed = MessageTooLarge(
            f"server sent a message over the {self.max_message_size} byte limit "
            f"(at least {size} bytes)"
        )
        assert self.transport is not None
        stdout = self.transport.get_pipe_transport(1)
        if stdout is not None:
            stdout.close()
        self.wake()

    def _stderr_data(self, data: bytes) -> None:
        if self._stderr_file is not None:
            try:
                self._stderr_file.write(data)
                self._stderr_file.flush()
            except OSError as exc:
                log.warning("cannot mirror server stderr to file: %s", exc)
                self._stderr_file = None
        buf = self._stderr_partial + data if self._stderr_partial else data
        lines = buf.split(b"\n")
        self._stderr_partial = lines.pop()
        for line in lines:
            self._stderr_line(line)
        while len(self._stderr_partial) > STDERR_MAX_LINE:
            self._stderr_line(self._stderr_partial[:STDERR_MAX_LINE])
            self._stderr_partial = self._stderr_partial[STDERR_MAX_LINE:]

    def _stderr_line(self, line: bytes) -> None:
        self.stderr_lines.append(line[:STDERR_MAX_LINE].decode("utf-8", "replace").rstrip("\r"))

    # -- waiting -------------------------------------------------------------------------

    def wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def wait_readable(self) -> None:
        waiter = asyncio.get_running_loop().create_future()
        self._waiter = waiter
        try:
            await waiter
        finally:
            self._waiter = None

    async def drain(self) -> None:
        if not self._paused:
            return
        waiter = asyncio.get_running_loop().create_future()
        self._drain_waiters.append(waiter)
        await waiter

    def _release_drain_waiters(self) -> None:
        for waiter in self._drain_waiters:
            if not waiter.done():
                waiter.set_result(None)
        self._drain_waiters.clear()


class StdioTransport:
    """A running stdio server. Create with `await StdioTransport.start(...)`."""

    def __init__(
        self,
        transport: asyncio.SubprocessTransport,
        protocol: _StdioProtocol,
        command: str,
        stderr_file: IO[bytes] | None,
    ) -> None:
        self._transport = transport
        self._protocol = protocol
        self._command = command
        self._stderr_file = stderr_file
        self._closing = False
        self._outbox: list[bytes] = []
        self._batching = False

    @classmethod
    async def start(
        cls,
        command: str,
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        stderr_file: str | os.PathLike[str] | None = None,
    ) -> StdioTransport:
        """Spawn `command args...` (no shell) in a new process group."""
        loop = asyncio.get_running_loop()
        mirror: IO[bytes] | None = None
        if stderr_file is not None:
            # Creating a log folder and opening a local file are quick, one-off operations;
            # the file is closed in aclose().
            os.makedirs(os.path.dirname(os.path.abspath(stderr_file)), exist_ok=True)  # noqa: ASYNC240
            mirror = open(stderr_file, "ab")  # noqa: SIM115, ASYNC230
        protocol = _StdioProtocol(max_message_size, mirror)
        try:
            transport, _ = await loop.subprocess_exec(
                lambda: protocol,
                command,
                *args,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=cwd,
                env=build_env(env),
                start_new_session=True,
            )
        except OSError as exc:
            if mirror is not None:
                mirror.close()
            raise ConnectionClosed(f"cannot start {command!r}: {exc.strerror or exc}") from exc
        return cls(transport, protocol, command, mirror)

    @property
    def pid(self) -> int:
        """The server process id (also its process group id)."""
        return self._transport.get_pid()

    @property
    def returncode(self) -> int | None:
        """The exit status once the process has exited, else None."""
        return self._transport.get_returncode()

    def stderr_lines(self) -> list[str]:
        """The last stderr lines of the server (at most 200)."""
        return list(self._protocol.stderr_lines)

    async def send(self, message: dict[str, Any]) -> None:
        protocol = self._protocol
        if protocol.closed is not None:
            raise protocol.closed
        if self._transport.get_returncode() is not None:
            raise await self._closed_error("server stdin is closed")
        data = orjson.dumps(message)
        if self._batching:
            # Later sends of the same event-loop turn go out together in one write at the
            # end of the turn: with many calls in flight this saves a syscall per message.
            self._outbox += (data, b"\n")
        else:
            # The first send of a turn goes out at once, so a lone call waits for nothing.
            stdin = self._transport.get_pipe_transport(0)
            if stdin is None or stdin.is_closing():
                raise await self._closed_error("server stdin is closed")
            assert isinstance(stdin, asyncio.WriteTransport)
            stdin.writelines((data, b"\n"))
            self._batching = True
            asyncio.get_running_loop().call_soon(self._end_turn)
        await protocol.drain()

    def _end_turn(self) -> None:
        self._batching = False
        if not self._outbox:
            return
        outbox, self._outbox = self._outbox, []
        stdin = self._transport.get_pipe_transport(0)
        if stdin is None or stdin.is_closing():
            # The receive side reports the dead server and fails the pending calls.
            return
        assert isinstance(stdin, asyncio.WriteTransport)
        stdin.writelines(outbox)

    async def receive(self) -> dict[str, Any]:
        protocol = self._protocol
        while True:
            if protocol.messages:
                return protocol.messages.popleft()
            if protocol.closed is not None:
                raise protocol.closed
            if protocol.stdout_eof:
                protocol.closed = await self._closed_error("server closed its stdout")
                raise protocol.closed
            await protocol.wait_readable()

    async def _closed_error(self, reason: str) -> ConnectionClosed:
        """Build the error for a dead server, with its exit code and stderr tail if we can."""
        protocol = self._protocol
        if not self._closing:
            waits: set[asyncio.Future[Any]] = {protocol.exited, protocol.stderr_done}
            await asyncio.wait(waits, timeout=EOF_EXIT_GRACE)
        code = self._transport.get_returncode()
        if code is not None:
            reason = "server exited" if reason == "server closed its stdout" else reason
        return ConnectionClosed(
            f"{self._command}: {reason}",
            exit_code=code,
            stderr_tail=tuple(protocol.stderr_lines)[-10:],
        )

    async def aclose(self) -> None:
        """Stop the server: close stdin, then SIGTERM, then SIGKILL the process group.

        Every step is bounded; if the caller is cancelled midway the remaining steps still
        run and the cancellation is re-raised at the end.
        """
        if self._closing:
            return
        self._closing = True
        cancelled = False
        pgid = self.pid
        if self._outbox:
            self._end_turn()
        stdin = self._transport.get_pipe_transport(0)
        if stdin is not None:
            stdin.close()
        try:
            await self._wait_exit(STDIN_CLOSE_GRACE, group=None)
        except asyncio.CancelledError:
            cancelled = True
        for sig, grace in ((signal.SIGTERM, SIGTERM_GRACE), (signal.SIGKILL, SIGKILL_GRACE)):
            if not _group_alive(pgid):
                break
            try:
                os.killpg(pgid, sig)
            except (ProcessLookupError, PermissionError):
                break
            try:
                await self._wait_exit(grace, group=pgid)
            except asyncio.CancelledError:
                cancelled = True
        self._transport.close()
        if self._stderr_file is not None:
            self._stderr_file.close()
        if self._protocol.closed is None:
            self._protocol.closed = ConnectionClosed(f"{self._command}: transport closed")
        self._protocol.wake()
        if cancelled:
            raise asyncio.CancelledError

    async def _wait_exit(self, timeout: float, *, group: int | None) -> bool:
        """Wait until the leader has exited (and, if `group` is set, the group is empty)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        exited = self._protocol.exited
        if not exited.done():
            done, _ = await asyncio.wait({exited}, timeout=timeout)
            if not done:
                return False
        if group is None:
            return True
        while _group_alive(group):
            if loop.time() >= deadline:
                return False
            await asyncio.sleep(GROUP_POLL_INTERVAL)
        return True


def _group_alive(pgid: int) -> bool:
    """Whether any live (non-zombie) process is left in the process group."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # killpg(0) also succeeds for zombies, and an orphaned grandchild stays a zombie where
    # PID 1 does not reap (containers); on Linux, look at the real process states.
    try:
        entries = os.listdir("/proc")
    except OSError:
        return True
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # Fields after the parenthesised command name: state, ppid, pgrp, ...
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] != b"Z":
            return True
    return False
