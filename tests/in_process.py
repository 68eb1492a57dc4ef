"""`paicli ARGS` run inside the test process through its entry point, `paicli.cli.main`, as a
process would run it: its own environment (exactly `environ`), working folder, stdin, and
stdout and stderr at the file-descriptor level (so what a server or command it starts writes
to an inherited stderr lands there too), logging set up afresh. Everything is put back after.

A real `paicli` process costs a Python start and its imports (the model SDK alone is most of a
second of CPU) before it does anything; in process, a run costs what the command does. The
servers, the scripted model and the sockets stay real. What only a process shows (its exit on
a signal, a pipe closed under it, the order of its imports, a terminal) stays with tests that
start one.

`run_paicli` runs in the calling thread: call it from a synchronous test (the run has the main
thread, so its signal handlers are set up as in a process). `run_paicli_async` runs it in a
thread of its own, so the test's event loop (a scripted model, an HTTP server) goes on
serving it. `paicli_on_pipes` does too, with its stdin and stdout live pipes the test talks
through while it runs (a protocol on stdio: `paicli acp`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
import tempfile
import threading
from collections.abc import AsyncIterator, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from paicli.cli import main

__all__ = ["Piped", "Run", "paicli_on_pipes", "run_paicli", "run_paicli_async"]

_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
# One run at a time per process: the environment, the folder and the descriptors are global.
_one_at_a_time = threading.Lock()


@dataclass
class Run:
    """What a `paicli` run ended with: the exit code and the decoded output."""

    code: int
    stdout: str
    stderr: str

    @property
    def returncode(self) -> int:  # as subprocess.CompletedProcess names it
        return self.code


def run_paicli(
    args: list[str] | tuple[str, ...],
    *,
    cwd: Path,
    environ: Mapping[str, str],
    stdin: str | None = None,
    merged: bool = False,
) -> Run:
    """`paicli ARGS` in `cwd` with exactly `environ`; `stdin` is piped in (None: /dev/null);
    `merged`: stderr goes to stdout (`Run.stderr` stays empty).
    Called where an event loop runs (an async test), the run takes a thread of its own and
    the loop waits for it, as it would for `subprocess.run`."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _run(args, cwd, environ, stdin, merged)
    with ThreadPoolExecutor(1) as thread:
        return thread.submit(_run, args, cwd, environ, stdin, merged).result()


async def run_paicli_async(
    args: list[str] | tuple[str, ...],
    *,
    cwd: Path,
    environ: Mapping[str, str],
    stdin: str | None = None,
    merged: bool = False,
) -> Run:
    """`run_paicli` in a thread of its own, within 60 s (as the process helpers wait)."""
    async with asyncio.timeout(60):
        return await asyncio.to_thread(_run, args, cwd, environ, stdin, merged)


@dataclass
class Piped:
    """A `paicli` run on live pipes: write its stdin to `stdin`, read its stdout from
    `stdout`; `ended` is its exit code once it has returned."""

    stdin: asyncio.StreamWriter
    stdout: asyncio.StreamReader
    ended: asyncio.Future[int]


@asynccontextmanager
async def paicli_on_pipes(
    args: list[str] | tuple[str, ...],
    *,
    cwd: Path,
    environ: Mapping[str, str],
    stderr: IO[bytes],
    limit: int = 2**16,
) -> AsyncIterator[Piped]:
    """`paicli ARGS` in a thread of its own, its stdin and stdout pipes to this event loop
    and its stderr `stderr`. Leaving closes its stdin (as an editor that quits does) and
    waits, within 60 s, for the run to return."""
    loop = asyncio.get_running_loop()
    stdin_read, stdin_write = os.pipe()
    stdout_read, stdout_write = os.pipe()

    def run() -> int:
        with open(stdin_read, "rb") as source, open(stdout_write, "wb") as out:
            return _main(args, cwd, environ, source, out, stderr)

    ended = asyncio.ensure_future(asyncio.to_thread(run))
    reader = asyncio.StreamReader(limit=limit)
    read_pipe, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader),
        os.fdopen(stdout_read, "rb", buffering=0),  # the transport closes it
    )
    write_pipe, protocol = await loop.connect_write_pipe(
        lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader()),
        os.fdopen(stdin_write, "wb", buffering=0),
    )
    writer = asyncio.StreamWriter(write_pipe, protocol, None, loop)
    try:
        yield Piped(writer, reader, ended)
    finally:
        writer.close()
        try:
            async with asyncio.timeout(60):
                await ended
        finally:
            read_pipe.close()


def _run(
    args: list[str] | tuple[str, ...],
    cwd: Path,
    environ: Mapping[str, str],
    stdin: str | None,
    merged: bool,
) -> Run:
    with ExitStack() as stack:
        out, err = (stack.enter_context(tempfile.TemporaryFile()) for _ in range(2))
        source: IO[bytes]
        if stdin is None:
            source = stack.enter_context(open(os.devnull, "rb"))
        else:
            source = stack.enter_context(_piped(stdin.encode()))
        code = _main(args, cwd, environ, source, out, out if merged else err)
        return Run(code, _read(out), "" if merged else _read(err))


def _main(
    args: list[str] | tuple[str, ...],
    cwd: Path,
    environ: Mapping[str, str],
    *streams: IO[bytes],
) -> int:
    """`paicli.cli.main(args)` with the process's state and descriptors 0-2 on `streams`."""
    with _one_at_a_time, ExitStack() as running:
        running.enter_context(_process_state(cwd, environ))
        running.enter_context(_standard_streams(*streams))
        running.enter_context(_fresh_logging())
        try:
            return main(list(args))
        except SystemExit as exc:  # argparse's usage errors, --help, --version
            return exc.code if isinstance(exc.code, int) else int(exc.code is not None)


@contextmanager
def _piped(data: bytes) -> Iterator[IO[bytes]]:
    """A pipe's reading end with `data` written into it (and then closed) by a thread: a
    run that stops reading early leaves the writer a broken pipe, not a wait."""
    reader, writer = os.pipe()

    def write() -> None:
        with open(writer, "wb") as pipe, contextlib.suppress(BrokenPipeError):
            pipe.write(data)

    feeding = threading.Thread(target=write, daemon=True)
    feeding.start()
    try:
        with open(reader, "rb") as pipe:
            yield pipe
    finally:
        feeding.join()


def _read(file: IO[bytes]) -> str:
    file.seek(0)
    return file.read().decode()  # strictly, as the process tests decode what they read


@contextmanager
def _process_state(cwd: Path, environ: Mapping[str, str]) -> Iterator[None]:
    """The environment, the working folder, argv and (in the main thread, where a run sets
    its own) the signal handlers, put back after."""
    saved_environ, saved_cwd, saved_argv = dict(os.environ), os.getcwd(), sys.argv
    in_main = threading.current_thread() is threading.main_thread()
    saved_handlers = {sig: signal.getsignal(sig) for sig in _SIGNALS} if in_main else {}
    os.environ.clear()
    os.environ.update(environ)
    os.chdir(cwd)
    sys.argv = ["paicli"]
    try:
        yield
    finally:
        for sig, handler in saved_handlers.items():
            signal.signal(sig, handler)
        sys.argv = saved_argv
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_environ)


@contextmanager
def _standard_streams(*files: IO[bytes]) -> Iterator[None]:
    """Descriptors 0, 1 and 2 on `files`, and sys.stdin/stdout/stderr on them as a process
    started with a UTF-8 locale has them (their error handlers too; stderr line-buffered)."""
    saved_streams = sys.stdin, sys.stdout, sys.stderr
    for stream in saved_streams[1:]:
        stream.flush()
    saved_fds = [os.dup(fd) for fd in (0, 1, 2)]
    try:
        for fd, file in enumerate(files):
            os.dup2(file.fileno(), fd)
        sys.stdin = open(0, encoding="utf-8", errors="surrogateescape", closefd=False)  # noqa: SIM115
        sys.stdout = open(1, "w", encoding="utf-8", errors="surrogateescape", closefd=False)  # noqa: SIM115
        sys.stderr = open(  # noqa: SIM115
            2, "w", encoding="utf-8", errors="backslashreplace", closefd=False, buffering=1
        )
        try:
            yield
        finally:
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except ValueError:
                    pass  # closed by the run
    finally:
        for fd, saved in enumerate(saved_fds):
            os.dup2(saved, fd)
            os.close(saved)
        sys.stdin, sys.stdout, sys.stderr = saved_streams


@contextmanager
def _fresh_logging() -> Iterator[None]:
    """Logging as a new process has it: the root logger without handlers at WARNING, so the
    run's `log_to_terminal` sets it up, and paicli's own loggers as their modules made them
    (a run may set one's level: the doctor quietens the library). The test's logging
    (pytest's handlers) is put back after."""
    root = logging.getLogger()
    saved_root = root.handlers[:], root.level
    saved = {logger: (logger.level, logger.disabled) for logger in _paicli_loggers()}
    root.handlers.clear()
    root.setLevel(logging.WARNING)
    for logger in saved:
        logger.setLevel(logging.NOTSET)
        logger.disabled = False
    try:
        yield
    finally:
        logging.captureWarnings(False)
        for handler in root.handlers:
            handler.close()
        root.handlers[:], level = saved_root
        root.setLevel(level)
        for logger in _paicli_loggers():
            level, logger.disabled = saved.get(logger, (logging.NOTSET, False))
            logger.setLevel(level)


def _paicli_loggers() -> list[logging.Logger]:
    return [
        logger
        for name, logger in logging.root.manager.loggerDict.items()
        if (name == "paicli" or name.startswith("paicli.")) and isinstance(logger, logging.Logger)
    ]
