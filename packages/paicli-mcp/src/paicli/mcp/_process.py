"""A server subprocess wired to the event loop: pipes, exit status, and a bounded shutdown.

The pipes are connected with `connect_read_pipe`/`connect_write_pipe` rather than
`loop.subprocess_exec`, whose transport defers every chunk of output by one event-loop turn
(`call_soon`); on a request/response protocol that turn is a large share of a call's latency.
The exit status comes from a pidfd (Linux) or a waiting thread elsewhere. The process and
its group die with this one, however it ends (`_lifeline`).
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import signal
import subprocess
import sys
import termios
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence

from ._lifeline import Lifeline, die_with_parent, lifeline

__all__ = ["ServerProcess"]

# Shutdown ladder timings. A well-behaved server exits on stdin EOF almost at once, so one
# second is generous; SIGTERM gets two seconds to let servers flush and stop their children.
STDIN_CLOSE_GRACE = 1.0
SIGTERM_GRACE = 2.0
# After SIGKILL the kernel ends the group at once; this only bounds waiting for the reap.
SIGKILL_GRACE = 1.0
# Polling the process group: cheap, and only done during shutdown.
GROUP_POLL_INTERVAL = 0.02
READ_CHUNK = 64 * 1024


class _PipeReader(asyncio.Protocol):
    def __init__(self, on_data: Callable[[bytes], None], on_eof: Callable[[], None]) -> None:
        self._on_data = on_data
        self._on_eof = on_eof

    def data_received(self, data: bytes) -> None:
        self._on_data(data)

    def connection_lost(self, exc: Exception | None) -> None:
        self._on_eof()


class _PipeWriter(asyncio.Protocol):
    """Flow control for the child's stdin: `drain()` waits while the pipe is full."""

    def __init__(self) -> None:
        self.paused = False
        self.closed = False
        self._waiters: list[asyncio.Future[None]] = []

    def pause_writing(self) -> None:
        self.paused = True

    def resume_writing(self) -> None:
        self.paused = False
        self._release()

    def connection_lost(self, exc: Exception | None) -> None:
        # The child closed its stdin (or exited): nobody may wait for a drain forever.
        self.closed = True
        self._release()

    async def drain(self) -> None:
        if not self.paused or self.closed:
            return
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        await waiter

    def _release(self) -> None:
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(None)
        self._waiters.clear()


class ServerProcess:
    """A child process in its own process group, with its three pipes on the event loop."""

    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        self._popen = popen
        self.pid = popen.pid
        self.returncode: int | None = None
        # CPU seconds the server itself used (from wait4), once it has been reaped.
        self.cpu_seconds = 0.0
        # Whether we signalled it: then its end says nothing about its limits.
        self.signalled = False
        # The last signal of the shutdown ladder sent ("SIGTERM", "SIGKILL"), if any.
        self.stop_signal: str | None = None
        self.exited: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._stdin: asyncio.WriteTransport | None = None
        self._writer = _PipeWriter()
        self._readers: list[asyncio.BaseTransport] = []
        # The shutdown ladder, once started: one run, however many callers wait for it.
        self._closer: asyncio.Task[None] | None = None
        # What ends the group if this process dies first (None: nothing here can).
        self._lifeline: Lifeline | None = None

    @property
    def exit_reason(self) -> str | None:
        """How the process ended, in words, or None while it runs."""
        code = self.returncode
        if code is None:
            return None
        if self.stop_signal == "SIGKILL":
            return f"killed with SIGKILL: still running {SIGTERM_GRACE:g} s after SIGTERM"
        if self.stop_signal == "SIGTERM":
            return "stopped with SIGTERM"
        if code < 0:
            name = signal.Signals(-code).name if -code in signal.valid_signals() else -code
            return f"ended by signal {name}"
        return f"exited with code {code}"

    @classmethod
    async def spawn(
        cls,
        argv: Sequence[str],
        *,
        env: Mapping[str, str],
        cwd: str | os.PathLike[str] | None,
        on_stdout: Callable[[bytes], None],
        on_stdout_eof: Callable[[], None],
        on_stderr: Callable[[bytes], None],
        on_stderr_eof: Callable[[], None],
        preexec: Callable[[], None] | None = None,
        pass_fds: Sequence[int] = (),
        cgroup: str | None = None,
    ) -> ServerProcess:
        """Start `argv` (no shell); raises OSError when it cannot be started, and
        SubprocessError when `preexec` (run in the child before exec) fails. `pass_fds`
        are inherited by the child (a sandbox's seccomp program). The process, its group
        and `cgroup` (the folder of the cgroup it joins, if any) die with this process
        (`_lifeline`)."""
        argv, preexec = die_with_parent(argv, dict(env), cwd, preexec)
        # fork/exec is quick and is what asyncio's own subprocess_exec does inline too.
        popen = subprocess.Popen(  # noqa: ASYNC220
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=dict(env),
            start_new_session=True,
            bufsize=0,
            # Only given with limits (it costs the fast vfork path). It makes system calls
            # only, on values computed beforehand, so the threads caveat does not bite.
            preexec_fn=preexec,  # noqa: PLW1509
            pass_fds=tuple(pass_fds),
        )
        process = cls(popen)
        process._lifeline = lifeline()
        if process._lifeline is not None:
            process._lifeline.watch(popen.pid, cgroup)
        process._watch_exit()
        try:
            await process._connect_pipes(on_stdout, on_stdout_eof, on_stderr, on_stderr_eof)
        except BaseException:
            # Cancelled (or failed) before anyone owns the process: it must not outlive us.
            process.kill()
            raise
        return process

    async def _connect_pipes(
        self,
        on_stdout: Callable[[bytes], None],
        on_stdout_eof: Callable[[], None],
        on_stderr: Callable[[bytes], None],
        on_stderr_eof: Callable[[], None],
    ) -> None:
        loop = asyncio.get_running_loop()
        popen = self._popen
        assert popen.stdin is not None and popen.stdout is not None and popen.stderr is not None
        stdin, _ = await loop.connect_write_pipe(lambda: self._writer, popen.stdin)
        assert isinstance(stdin, asyncio.WriteTransport)
        self._stdin = stdin
        for pipe, on_data, on_eof in (
            (popen.stdout, on_stdout, on_stdout_eof),
            (popen.stderr, on_stderr, on_stderr_eof),
        ):
            reader, _ = await loop.connect_read_pipe(
                lambda d=on_data, e=on_eof: _PipeReader(d, e),  # type: ignore[misc]
                pipe,
            )
            # asyncio reads pipes 256 KiB at a time, which allocates (mmap) and frees a
            # 256 KiB buffer per read; below the malloc mmap threshold a read is much cheaper,
            # and replies are rarely that large.
            reader.max_size = READ_CHUNK  # type: ignore[attr-defined]
            self._readers.append(reader)

    def kill(self) -> None:
        """SIGKILL the whole group now, reap the child and drop the pipes (for a process
        nobody owns yet)."""
        self.signalled = True
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        else:
            # A SIGKILLed child ends at once; reaping it here is a wait of microseconds.
            self._reaped(*_reap(self.pid, block=True))
        self._forget()
        if self._stdin is not None:
            self._stdin.abort()
        for reader in self._readers:
            reader.close()
        # Pipes not yet handed to a transport are still plain files: close them here.
        owned = [self._stdin is not None, len(self._readers) > 0, len(self._readers) > 1]
        pipes = (self._popen.stdin, self._popen.stdout, self._popen.stderr)
        for pipe, taken in zip(pipes, owned, strict=True):
            if pipe is not None and not taken:
                pipe.close()

    # -- I/O -----------------------------------------------------------------------------

    @property
    def stdin_open(self) -> bool:
        return self._stdin is not None and not self._stdin.is_closing() and not self._writer.closed

    @property
    def stdin_full(self) -> bool:
        """Whether the child is behind on reading: the pipe is full and bytes are queued."""
        return self._writer.paused and not self._writer.closed

    def write(self, chunks: Iterable[bytes]) -> None:
        """Queue bytes for the child's stdin (dropped if stdin is already closed)."""
        if self.stdin_open:
            assert self._stdin is not None
            self._stdin.writelines(chunks)

    @property
    def stdin_unread(self) -> bool:
        """Whether bytes written to the child's stdin wait to be read: queued on our side,
        or still in the pipe (FIONREAD; False where the system cannot tell)."""
        if not self.stdin_open:
            return False
        assert self._stdin is not None and self._popen.stdin is not None
        if self._stdin.get_write_buffer_size():
            return True
        try:
            unread = fcntl.ioctl(self._popen.stdin.fileno(), termios.FIONREAD, b"\0\0\0\0")
        except (OSError, ValueError):
            return False
        return int.from_bytes(unread, sys.byteorder) > 0

    async def drain(self) -> None:
        """Wait while the stdin pipe is full."""
        await self._writer.drain()

    def stop_reading_stdout(self) -> None:
        if self._readers:
            self._readers[0].close()

    # -- exit ------------------------------------------------------------------------------

    def _watch_exit(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            pidfd = os.pidfd_open(self.pid)
        except (AttributeError, OSError):
            # No pidfd (not Linux, or an old kernel): a thread waits for the child, which
            # always ends because aclose() escalates to SIGKILL.
            threading.Thread(target=self._wait_in_thread, args=(loop,), daemon=True).start()
            return

        def on_readable() -> None:
            loop.remove_reader(pidfd)
            os.close(pidfd)
            self._reaped(*_reap(self.pid))

        loop.add_reader(pidfd, on_readable)

    def _wait_in_thread(self, loop: asyncio.AbstractEventLoop) -> None:
        code, cpu = _reap(self.pid, block=True)
        try:
            loop.call_soon_threadsafe(self._reaped, code, cpu)
        except RuntimeError:
            pass  # The loop is closed; nobody is waiting any more.

    def _reaped(self, code: int, cpu_seconds: float = 0.0) -> None:
        if self.returncode is not None:
            return  # already reaped (by kill()); a later -1 from the watcher means nothing
        self.returncode = code
        self.cpu_seconds = cpu_seconds
        # Tell Popen too, so it neither warns about a running child nor reaps it again.
        self._popen.returncode = code
        if not self.exited.done():
            self.exited.set_result(code)

    def begin_close(self, *, abort_stdin: bool = False) -> None:
        """Start the shutdown ladder (see `aclose`) without waiting for it. With
        `abort_stdin`, bytes still queued for the child are dropped: it is not reading."""
        if abort_stdin and self._stdin is not None:
            self._stdin.abort()
        if self._closer is None:
            self._closer = asyncio.get_running_loop().create_task(self._ladder())

    async def aclose(self) -> None:
        """Close stdin, wait; SIGTERM the group, wait; SIGKILL the group. Each step is
        bounded; if the caller is cancelled the remaining steps still run and the
        cancellation is re-raised at the end."""
        self.begin_close()
        assert self._closer is not None
        cancelled = False
        while not self._closer.done():
            try:
                await asyncio.shield(self._closer)
            except asyncio.CancelledError:
                cancelled = True
        if cancelled:
            raise asyncio.CancelledError

    async def _ladder(self) -> None:
        if self._stdin is not None:
            self._stdin.close()
        await self._wait(STDIN_CLOSE_GRACE, group=False)
        for sig, grace in ((signal.SIGTERM, SIGTERM_GRACE), (signal.SIGKILL, SIGKILL_GRACE)):
            if not group_alive(self.pid):
                break
            self.signalled = True
            try:
                os.killpg(self.pid, sig)
            except (ProcessLookupError, PermissionError):
                break
            self.stop_signal = sig.name
            await self._wait(grace, group=True)
        for reader in self._readers:
            reader.close()
        self._forget()

    def _forget(self) -> None:
        if self._lifeline is not None:
            self._lifeline.forget(self.pid)
            self._lifeline = None

    async def _wait(self, timeout: float, *, group: bool) -> bool:
        """Wait until the child has exited (and with `group`, its whole group is gone)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        if not self.exited.done():
            done, _ = await asyncio.wait({self.exited}, timeout=timeout)
            if not done:
                return False
        while group and group_alive(self.pid):
            if loop.time() >= deadline:
                return False
            await asyncio.sleep(GROUP_POLL_INTERVAL)
        return True


def _reap(pid: int, *, block: bool = False) -> tuple[int, float]:
    """The exit code and the CPU seconds the process used."""
    try:
        _, status, usage = os.wait4(pid, 0 if block else os.WNOHANG)
    except ChildProcessError:
        return -1, 0.0  # Reaped elsewhere; the status is lost.
    return os.waitstatus_to_exitcode(status), usage.ru_utime + usage.ru_stime


def group_alive(pgid: int) -> bool:
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
