"""`asyncio.create_subprocess_exec`, `subprocess.run` and `subprocess.Popen` for
`python -m paicli.cli ...`, forked from a zygote (tests/zygote.py) when that applies, else
exactly the real call.

The forked child gets real pipes (PIPE), /dev/null (DEVNULL) or the descriptor given; the
test's side of a pipe is an asyncio stream as asyncio's own (`stdin` a StreamWriter, `stdout`
and `stderr` StreamReaders), or read by threads in `run`.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import threading
from collections.abc import Sequence
from contextlib import suppress
from typing import IO, Any, cast

from tests.zygote import ZygoteChild, spawn_on_fds

__all__ = ["Popen", "ZygotePopen", "ZygoteProcess", "create_subprocess_exec", "run"]

PIPE, DEVNULL, STDOUT = subprocess.PIPE, subprocess.DEVNULL, subprocess.STDOUT
LIMIT = 2**16  # asyncio's stream limit for a subprocess's pipes

Stdio = int | IO[Any] | None


class _Ends:
    """The child's three descriptors, and the test's ends of the pipes among them."""

    def __init__(self, stdin: Stdio, stdout: Stdio, stderr: Stdio) -> None:
        self._close: list[int] = []  # ours to close once the child has its copies
        self.parent: list[int | None] = [None, None, None]
        child_in = self._end(0, stdin)
        child_out = self._end(1, stdout)
        self.child = (child_in, child_out, self._end(2, stderr, child_out))

    def _end(self, fd: int, how: Stdio, stdout: int | None = None) -> int:
        if how is None:
            return fd
        if how == PIPE:
            read, write = os.pipe()
            mine, theirs = (write, read) if fd == 0 else (read, write)
            self.parent[fd] = mine
            self._close.append(theirs)
            return theirs
        if how == DEVNULL:
            null = os.open(os.devnull, os.O_RDWR)
            self._close.append(null)
            return null
        if how == STDOUT and stdout is not None:
            return stdout
        return how if isinstance(how, int) else how.fileno()

    def given(self) -> None:
        """The child has its copies: close ours of its ends."""
        for fd in self._close:
            os.close(fd)
        self._close.clear()

    def abandon(self) -> None:
        self.given()
        for fd in self.parent:
            if fd is not None:
                os.close(fd)


class _Forked:
    """What both process surfaces share: a forked child's pid, exit code and signals."""

    def __init__(self, child: ZygoteChild) -> None:
        self._child = child
        self.pid = child.pid

    @property
    def returncode(self) -> int | None:
        return self._child.returncode

    def send_signal(self, sig: int) -> None:
        self._child.send_signal(sig)

    def terminate(self) -> None:
        self._child.terminate()

    def kill(self) -> None:
        self._child.kill()


class ZygoteProcess(_Forked):
    """asyncio.subprocess.Process's surface over a forked child."""

    def __init__(
        self,
        child: ZygoteChild,
        stdin: asyncio.StreamWriter | None,
        stdout: asyncio.StreamReader | None,
        stderr: asyncio.StreamReader | None,
    ) -> None:
        super().__init__(child)
        self.stdin, self.stdout, self.stderr = stdin, stdout, stderr

    async def wait(self) -> int:
        return await self._child.wait()

    async def communicate(self, input: bytes | None = None) -> tuple[bytes, bytes]:
        """As asyncio's: stdin fed (and closed) only when `input` is given; None for an
        output that is not a pipe (typed as asyncio's stub types it)."""

        async def feed() -> None:
            if self.stdin is None or input is None:
                return
            self.stdin.write(input)
            with suppress(BrokenPipeError, ConnectionResetError):
                await self.stdin.drain()
            self.stdin.close()

        async def read(stream: asyncio.StreamReader | None) -> bytes | None:
            return None if stream is None else await stream.read()

        _, out, err = await asyncio.gather(feed(), read(self.stdout), read(self.stderr))
        await self.wait()
        return cast(bytes, out), cast(bytes, err)


async def _reader(fd: int) -> asyncio.StreamReader:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=LIMIT, loop=loop)
    pipe = os.fdopen(fd, "rb", 0)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader, loop=loop), pipe)
    return reader


async def _writer(fd: int) -> asyncio.StreamWriter:
    loop = asyncio.get_running_loop()
    pipe = os.fdopen(fd, "wb", 0)
    transport, protocol = await loop.connect_write_pipe(
        lambda: asyncio.streams.FlowControlMixin(loop=loop), pipe
    )
    return asyncio.StreamWriter(transport, protocol, None, loop)


def _spawn(
    argv: Sequence[str], cwd: Any, env: Any, ends: _Ends, session: bool
) -> ZygoteChild | None:
    environ = dict(os.environ if env is None else env)
    folder = os.getcwd() if cwd is None else cwd
    child0, child1, child2 = ends.child
    try:
        child = spawn_on_fds(
            argv, cwd=folder, env=environ, fds=(child0, child1, child2), session=session
        )
    except BaseException:
        ends.abandon()
        raise
    if child is None:
        ends.abandon()
    else:
        ends.given()
    return child


async def create_subprocess_exec(
    program: str,
    *args: str,
    cwd: Any = None,
    env: Any = None,
    stdin: Stdio = None,
    stdout: Stdio = None,
    stderr: Stdio = None,
    start_new_session: bool = False,
    **more: Any,
) -> asyncio.subprocess.Process | ZygoteProcess:
    """As asyncio's; forked from a zygote when it applies (no other keyword, the paicli
    form, the test not marked `fresh_paicli`)."""
    argv = [program, *args]
    child = None
    if not more:
        ends = _Ends(stdin, stdout, stderr)
        child = _spawn(argv, cwd, env, ends, start_new_session)
    if child is None:
        return await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            env=env,
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            start_new_session=start_new_session,
            **more,
        )
    theirs_in, theirs_out, theirs_err = ends.parent
    return ZygoteProcess(
        child,
        None if theirs_in is None else await _writer(theirs_in),
        None if theirs_out is None else await _reader(theirs_out),
        None if theirs_err is None else await _reader(theirs_err),
    )


def run(
    argv: Sequence[str],
    *,
    cwd: Any = None,
    env: Any = None,
    input: str | bytes | None = None,
    capture_output: bool = False,
    text: bool = False,
    timeout: float | None = None,
    stdin: Stdio = None,
    stdout: Stdio = None,
    stderr: Stdio = None,
    check: bool = False,
) -> subprocess.CompletedProcess[Any]:
    """As subprocess.run (these keywords only); forked from a zygote when it applies."""
    if capture_output:
        stdout = stderr = PIPE
    ends = _Ends(PIPE if input is not None else stdin, stdout, stderr)
    child = _spawn(argv, cwd, env, ends, False)
    if child is None:
        return subprocess.run(
            list(argv),
            cwd=cwd,
            env=env,
            input=input,
            text=text,
            timeout=timeout,
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            check=check,
        )
    with ZygotePopen(list(argv), child, ends, text) as process:
        if isinstance(input, str) and not text:
            input = input.encode()
        try:
            out, err = process.communicate(input, timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
            raise subprocess.TimeoutExpired(list(argv), timeout or 0) from None
    done = subprocess.CompletedProcess(list(argv), child.wait_blocking(), out, err)
    if check:
        done.check_returncode()
    return done


class ZygotePopen(_Forked):
    """subprocess.Popen's surface (as the tests use it) over a forked child: pipes as file
    objects (text with `text`), wait, poll, communicate, signals, a context manager."""

    def __init__(self, args: list[str], child: ZygoteChild, ends: _Ends, text: bool) -> None:
        super().__init__(child)
        self.args = args
        suffix = "" if text else "b"
        theirs_in, theirs_out, theirs_err = ends.parent
        self.stdin: IO[Any] | None = None if theirs_in is None else open(theirs_in, "w" + suffix)  # noqa: SIM115
        self.stdout: IO[Any] | None = None if theirs_out is None else open(theirs_out, "r" + suffix)  # noqa: SIM115
        self.stderr: IO[Any] | None = None if theirs_err is None else open(theirs_err, "r" + suffix)  # noqa: SIM115
        self._threads: list[threading.Thread] | None = None
        self._got: dict[int, Any] = {}

    def poll(self) -> int | None:
        return self._child.poll()

    def wait(self, timeout: float | None = None) -> int:
        return self._child.wait_blocking(timeout)

    def communicate(self, input: Any = None, timeout: float | None = None) -> tuple[Any, Any]:
        if self._threads is None:
            self._threads = []
            if self.stdin is not None:
                self._threads.append(threading.Thread(target=self._feed, args=(input,)))
            for number, stream in ((1, self.stdout), (2, self.stderr)):
                if stream is not None:
                    self._threads.append(
                        threading.Thread(target=self._drain, args=(number, stream))
                    )
            for thread in self._threads:
                thread.daemon = True
                thread.start()
        self.wait(timeout)
        for thread in self._threads:
            thread.join()
        return self._got.get(1), self._got.get(2)

    def _feed(self, input: Any) -> None:
        assert self.stdin is not None
        with self.stdin, suppress(BrokenPipeError):
            if input:
                self.stdin.write(input)

    def _drain(self, number: int, stream: IO[Any]) -> None:
        with stream:
            self._got[number] = stream.read()

    def __enter__(self) -> ZygotePopen:
        return self

    def __exit__(self, *exc: object) -> None:
        for stream in (self.stdin, self.stdout, self.stderr):
            if stream is not None:
                with suppress(OSError):
                    stream.close()
        self.wait()


def Popen(  # named as what it stands for
    args: Sequence[str],
    *,
    cwd: Any = None,
    env: Any = None,
    stdin: Stdio = None,
    stdout: Stdio = None,
    stderr: Stdio = None,
    text: bool = False,
) -> subprocess.Popen[Any] | ZygotePopen:
    """As subprocess.Popen (these keywords only); forked from a zygote when it applies."""
    ends = _Ends(stdin, stdout, stderr)
    child = _spawn(args, cwd, env, ends, False)
    if child is None:
        return subprocess.Popen(
            list(args), cwd=cwd, env=env, stdin=stdin, stdout=stdout, stderr=stderr, text=text
        )
    return ZygotePopen(list(args), child, ends, text)
