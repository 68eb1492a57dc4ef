"""stdio transport: a server subprocess speaking newline-delimited JSON-RPC.

Invariants: the child runs in its own process group with a minimal environment; stdout is
framed with memory bounded by `max_message_size`; stderr is always drained into a ring
buffer (never onto the user's terminal); `aclose()` runs the whole shutdown ladder even when
the caller is cancelled, and kills the whole group so wrapper grandchildren die too.
"""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ._confine import Confinement
from ._jsonrpc import batches_allowed
from ._limits import Limits
from ._ndjson import NdjsonDecoder, encode
from ._process import ServerProcess
from ._server_spec import DEFAULT_MAX_MESSAGE_SIZE
from ._stderr import StderrLog, StderrTail, open_log
from ._stdio_start import build_env, contain, start_failure
from ._transport import Era, ErrorSink, MessageSink, Transport, TransportTraits, TransportWatcher
from .errors import ConnectionClosed, MessageTooLarge

if TYPE_CHECKING:
    from ._sandbox.prepare import PreparedSandbox
    from ._sandbox.profile import Sandbox

__all__ = ["StdioTransport"]

log = logging.getLogger("paicli.mcp.stdio")

# After stdout EOF, how long to wait for the exit status and stderr tail to build the error.
EOF_EXIT_GRACE = 0.5
# Messages per write in a burst. One write per message costs a syscall each; one write per
# burst leaves the server idle until the whole burst is encoded. Measured with 64 calls in
# flight on two cores: 32 per write about doubles throughput over either extreme.
FLUSH_EVERY = 32

Message = dict[str, Any]
StdoutTap = Callable[[bytes], None]


class StdioTransport(Transport):
    """A running stdio server. Create with `await StdioTransport.start(...)`. Besides the
    contract: `PushDelivery`, `AgreementHook`, `Watchable` and `ProcessTransport`."""

    # A server that ignores unknown methods must not cost seconds: half a second is long
    # for a started server to answer, and a slow modern one is probed again (see
    # TransportTraits.discovery_timeout).
    traits = TransportTraits(kind="stdio", discovery_timeout=0.5)

    def __init__(
        self,
        command: str,
        max_message_size: int,
        mirror: StderrLog | None,
        stdout_tap: StdoutTap | None = None,
    ) -> None:
        self._command = command
        self._tap = stdout_tap
        self._decoder = self._new_decoder(max_message_size)
        self._stderr = StderrTail(mirror)
        self._skipped = 0  # stdout lines that were not messages
        self._process: ServerProcess | None = None
        self._confinement: Confinement | None = None
        self._sandbox: PreparedSandbox | None = None
        self._messages: deque[Message] = deque()
        # When set, messages go straight to it from the read callback (see deliver_to).
        self._sink: MessageSink | None = None
        self._closed: ConnectionClosed | None = None
        self._stdout_eof = False
        self._waiter: asyncio.Future[None] | None = None
        self._closing = False
        self._outbox: list[bytes] = []
        self._batching = False
        self._flush_scheduled = False
        # What `restart()` runs again, and the processes it replaced (still being stopped).
        self._spawn_args: tuple[list[str], dict[str, str], str | os.PathLike[str] | None]
        self._spawn_args = ([], {}, None)
        self._retired: list[ServerProcess] = []

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
        stderr_filter: Callable[[str], str] | None = None,
        label: str | None = None,
        stdout_tap: StdoutTap | None = None,
        limits: Limits | None = None,
        sandbox: Sandbox | None = None,
    ) -> StdioTransport:
        """Spawn `command args...` (no shell) in a new process group. `label` names the
        server in errors (default: the command). `stdout_tap`, if given, sees every chunk
        of the server's stdout as read, before framing (a diagnostic view of what the
        server wrote: lines without a newline, text that is not JSON, invalid UTF-8).
        `stderr_filter` rewrites each stderr line before `stderr_file` gets it. `limits`
        are applied to the group before the command runs (see `_confine` for how); one
        that cannot be applied raises `ConnectionClosed` unless the limits are not strict.
        With `sandbox`, the server runs in it (see `Sandbox`), limits still applying
        inside; when no sandbox works here, `ConnectionClosed` again, unless the profile
        is not strict."""
        name = label or command
        confinement, prepared = await contain(name, limits, sandbox)
        mirror = open_log(stderr_file, stderr_filter) if stderr_file is not None else None
        transport = cls(name, max_message_size, mirror, stdout_tap)
        transport._confinement = confinement
        transport._sandbox = prepared
        keep = sandbox.env if sandbox is not None and prepared is not None else None
        child_env = build_env(env, keep=keep)
        transport._spawn_args = ([command, *args], child_env, cwd)
        try:
            transport._process = await transport._spawn()
        except OSError as exc:
            await transport._failed_start()
            reason = start_failure(command, cwd, child_env.get("PATH", os.defpath), exc)
            raise ConnectionClosed(f"cannot start {reason}") from exc
        except subprocess.SubprocessError as exc:
            # Raised for an exception in the child's preexec: a limit did not take.
            await transport._failed_start()
            what = "its limits or sandbox" if prepared is not None else "its limits"
            raise ConnectionClosed(f"{name}: not started: cannot apply {what} ({exc})") from exc
        except BaseException:
            await transport._failed_start()
            raise
        return transport

    async def _failed_start(self) -> None:
        self._stderr.close()
        if self._confinement is not None:
            self._confinement.release()
        if self._sandbox is not None:
            await self._sandbox.aclose()

    async def _spawn(self) -> ServerProcess:
        """Start the server process; what a replaced process still writes is ignored."""
        argv, env, cwd = self._spawn_args
        generation = len(self._retired)

        def current() -> bool:
            return generation == len(self._retired)

        def on_stdout(data: bytes) -> None:
            if current():
                self._on_stdout(data)

        def on_stdout_eof() -> None:
            if current():
                self._on_stdout_eof()

        def on_stderr_eof() -> None:
            if current():
                self._stderr.eof()

        preexec = self._confinement.preexec() if self._confinement is not None else None
        launch = None
        if self._sandbox is not None:
            launch = self._sandbox.launch(argv, env, cwd=cwd)
            argv, env, preexec = launch.argv, launch.env, launch.preexec_after(preexec)
        try:
            return await ServerProcess.spawn(
                argv,
                env=env,
                cwd=cwd,
                on_stdout=on_stdout,
                on_stdout_eof=on_stdout_eof,
                on_stderr=self._stderr.feed,  # a replaced process's last words count too
                on_stderr_eof=on_stderr_eof,
                preexec=preexec,
                pass_fds=launch.pass_fds if launch is not None else (),
                cgroup=Confinement.folder_of(self._confinement),
            )
        finally:
            if launch is not None:
                launch.close()

    async def restart(self) -> bool:
        """Replace the server process with a new one; the old one is stopped with the
        usual ladder (awaited by `aclose()`). What the old process still writes is ignored,
        and nothing queued for it is sent to the new one. False once the transport is
        closed (the server died, or `aclose()`): the session ends then, as always."""
        if self._closed is not None or self._closing:
            return False
        old = self._proc
        self._retired.append(old)
        old.begin_close(abort_stdin=True)
        self._outbox.clear()
        self._batching = False
        batches = self._decoder.batches
        self._decoder = self._new_decoder(self._decoder.max_size)
        self._decoder.batches = batches
        try:
            self._process = await self._spawn()
        except (OSError, subprocess.SubprocessError) as exc:
            self._closed = ConnectionClosed(f"{self._command}: cannot restart: {exc}")
            self._process = old
            self._wake()
            return False
        log.info("%s: restarted (pid %d replaced by %d)", self._command, old.pid, self.pid)
        return True

    def _new_decoder(self, max_size: int) -> NdjsonDecoder:
        return NdjsonDecoder(max_size, self._on_message, label=self._command, skipped=self._skip)

    def _skip(self, why: str) -> None:
        """A stdout line that is no message (a banner, a log line): the first is a warning
        that says where they all go, the rest are counted; each is noted in the stderr log
        file, if there is one."""
        self._skipped += 1
        if self._skipped == 1:
            kept = self._stderr.kept_in()
            where = f"; each is kept in {kept}" if kept is not None else ""
            log.warning("%s (later lines like it are counted, not shown%s)", why, where)
        else:
            log.debug("%s", why)
        self._stderr.note(f"[paicli] {why}")

    def skipped_lines(self) -> int:
        return self._skipped

    @property
    def _proc(self) -> ServerProcess:
        assert self._process is not None
        return self._process

    @property
    def pid(self) -> int:
        """The server process id (also its process group id)."""
        return self._proc.pid

    @property
    def returncode(self) -> int | None:
        """The exit status once the process has exited, else None."""
        return self._proc.returncode

    def stderr_lines(self) -> list[str]:
        """The last stderr lines of the server (at most 200)."""
        return list(self._stderr.lines)

    @property
    def exit_reason(self) -> str | None:
        """How the server's process ended, in words, or None while it runs."""
        return self._proc.exit_reason

    def watch(self, watcher: TransportWatcher | None) -> None:
        self._stderr.watcher = watcher

    def deliver_to(self, sink: MessageSink, on_error: ErrorSink) -> bool:
        """Hand every message to `sink` straight from the read callback.

        This saves the event-loop turn that a separate receiving task costs per message
        (a sequential call's latency is a few such turns). `receive()` then returns no
        messages and only raises `ConnectionClosed` when the server is gone. (`on_error`
        is for transports that can fail a single request; a pipe never does.)
        """
        self._sink = sink
        while self._messages:
            self._to_sink(self._messages.popleft())
        return True

    def negotiated(self, era: Era, version: str) -> None:
        self._decoder.batches = batches_allowed(era, version)

    def input_unread(self) -> bool:
        return bool(self._outbox) or self._proc.stdin_unread

    # -- reading -------------------------------------------------------------------------

    def _on_stdout(self, data: bytes) -> None:
        if self._tap is not None:
            try:
                self._tap(data)
            except Exception:
                # An observer's bug must not take the pipe down with it.
                log.exception("stdout tap failed")
        if self._closed is not None:
            return
        # A reply arrived: the next send may go out at once (unless some are queued,
        # which must keep their order).
        self._batching = False
        try:
            self._decoder.feed(data)
        except MessageTooLarge as exc:
            self._closed = exc
            self._proc.stop_reading_stdout()
            self._wake()

    def _on_message(self, message: Message) -> None:
        if self._sink is not None:
            self._to_sink(message)
        else:
            self._messages.append(message)
            self._wake()

    def _to_sink(self, message: Message) -> None:
        assert self._sink is not None
        try:
            self._sink(message)
        except Exception:
            # The sink's bug must not take the pipe down with it.
            log.exception("message handler failed on %.200r", message)

    def _on_stdout_eof(self) -> None:
        if self._closed is None:
            try:
                self._decoder.finish()
            except MessageTooLarge as exc:
                self._closed = exc
        self._stdout_eof = True
        self._wake()

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    async def receive(self) -> Message:
        while True:
            if self._messages:
                return self._messages.popleft()
            if self._closed is not None:
                self._stop_process()
                raise self._closed
            if self._stdout_eof:
                self._closed = await self._closed_error("server closed its stdout")
                self._stop_process()
                raise self._closed
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None

    def _stop_process(self) -> None:
        # The connection is unusable: stop the server now rather than when the caller lets
        # go of the session (a server that closed its stdout may well keep running).
        if not self._closing:
            self._proc.begin_close()

    async def _closed_error(self, reason: str) -> ConnectionClosed:
        """Build the error for a dead server, with its exit code and stderr tail if we can."""
        process = self._proc
        if not self._closing:
            waits: set[asyncio.Future[Any]] = {process.exited, self._stderr.done}
            await asyncio.wait(waits, timeout=EOF_EXIT_GRACE)
        code = process.returncode
        if code is not None and self._sandbox is not None:
            code = self._sandbox.exit_status(code)
        tail = tuple(self._stderr.lines)[-10:]
        limit = None
        if self._confinement is not None and not process.signalled:
            # All the stderr kept: V8 says "out of memory" above a long stack trace.
            limit = self._confinement.verdict(code, process.cpu_seconds, self._stderr.lines)
        if limit is not None:
            reason = f"stopped by its {limit}"
        elif code is not None and reason == "server closed its stdout":
            reason = "server exited"
        return ConnectionClosed(
            f"{self._command}: {reason}", exit_code=code, stderr_tail=tail, limit=limit
        )

    # -- writing -------------------------------------------------------------------------

    async def send(self, message: Message) -> None:
        if self._closed is not None:
            raise self._closed
        process = self._proc
        if not process.stdin_open or process.returncode is not None:
            raise await self._closed_error("server stdin is closed")
        data = encode(message)
        if self._batching or self._outbox:
            # Sends that follow one another without a reply in between are written together
            # at the end of the event-loop turn, or as soon as a burst fills a batch, so the
            # server starts on the first part of a burst while we encode the rest.
            self._outbox += (data, b"\n")
            if len(self._outbox) >= 2 * FLUSH_EVERY:
                self._write_outbox()
            elif not self._flush_scheduled:
                self._flush_scheduled = True
                asyncio.get_running_loop().call_soon(self._end_turn)
        else:
            # A send after a reply (or the first one) goes out at once, so a lone call
            # waits for nothing.
            process.write((data, b"\n"))
            self._batching = True
        try:
            await process.drain()
        except asyncio.CancelledError:
            if process.stdin_full and self._closed is None:
                # Cancelled (the request's deadline, or the caller) while the server is not
                # reading: what is queued may never leave, and every later write would
                # wait behind it. The server is stuck; stop it.
                self._closed = ConnectionClosed(
                    f"{self._command}: server stopped reading its input"
                )
                process.begin_close(abort_stdin=True)
                self._wake()
            raise

    def _end_turn(self) -> None:
        self._flush_scheduled = False
        self._batching = False
        self._write_outbox()

    def _write_outbox(self) -> None:
        if self._outbox:
            outbox, self._outbox = self._outbox, []
            # A closed stdin drops the bytes; the reading side reports the dead server.
            self._proc.write(outbox)

    # -- closing -------------------------------------------------------------------------

    async def aclose(self) -> None:
        """Stop the server with the bounded ladder (see `ServerProcess.aclose`)."""
        if self._closing:
            return
        self._closing = True
        self._write_outbox()
        cancelled = False
        try:
            for process in [*self._retired, self._proc]:
                try:
                    await process.aclose()
                except asyncio.CancelledError:
                    cancelled = True  # every ladder still runs to its end
                if process.stop_signal == "SIGKILL":  # it may have left work unfinished
                    self._stderr.warn(f"{self._command} (pid {process.pid}): {process.exit_reason}")
            if self._confinement is not None:
                await self._confinement.release_within(self._command)
            if self._sandbox is not None:
                await self._sandbox.aclose()
        finally:
            if self._confinement is not None:
                self._confinement.release()  # one last try when cancelled
            self._stderr.close()
            if self._closed is None:
                self._closed = ConnectionClosed(f"{self._command}: transport closed")
            self._wake()
        if cancelled:
            raise asyncio.CancelledError
