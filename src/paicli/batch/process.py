"""`WorkerProcess`: one worker process (`python -m paicli.cli.batch_worker`) and the task it
runs now. Used by the local batch (N of them) and by each Ray actor (one), so a task is
isolated the same way everywhere:

- the worker runs in a session of its own (its own process group), with an address-space
  limit when `--task-memory` gives one;
- a task with no result by its timeout has its worker's group killed (SIGKILL: a hung
  worker cannot be trusted to stop), its scratch folder removed, and fails as `timeout`;
- a worker that dies (a crash, the memory limit) fails its task as `crashed`, with the last
  lines it wrote on stderr;
- either way the next task gets a new worker. The worker's MCP servers die with it (they
  watch it through their lifeline), and so do the commands its tools ran.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import json
import os
import resource
import signal
import sys
from pathlib import Path
from typing import Any

from paicli.batch.task import Task
from paicli.batch.workspace import MAX_DIFF, remove

__all__ = ["READY", "WorkerProcess", "contain", "memory_problem"]

# The worker's first line: loaded and serving (task timeouts count from here).
READY = b'{"ready": true}\n'

# A result line carries a diff of up to 4 MiB, escaped as JSON (up to 6 bytes a byte).
RESULT_LIMIT = 8 * MAX_DIFF
# How long a new worker may take to load (imports on a busy machine) before it counts as
# dead; not part of any task's timeout.
START_TIMEOUT = 120.0
# How long a worker told to stop (stdin closed) may take to close its servers.
STOP_GRACE = 5.0
PR_SET_PDEATHSIG = 1  # linux/prctl.h
# How much of a dead worker's stderr its result quotes.
STDERR_TAIL = 2000


class WorkerProcess:
    """One worker and its pipes (see the module). `run` is called by one task at a time."""

    def __init__(
        self,
        scratch: Path,
        number: int,
        *,
        memory: int | None = None,
        environ: dict[str, str] | None = None,
    ) -> None:
        self._scratch = scratch
        self._number = number
        self._memory = memory
        self._environ = environ
        self._process: asyncio.subprocess.Process | None = None
        self._running: Task | None = None  # the task sent and not answered yet
        self._loaded = False  # the process has said READY
        self.started = 0  # processes started so far (a replaced worker counts again)

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    async def run(
        self, task: Task, defaults: dict[str, Any], timeout: float | None
    ) -> dict[str, Any]:
        """The result line of `task` (with the command line's `defaults`, as sent), whatever
        becomes of the worker."""
        job = {"task": task.to_wire(), "defaults": defaults, "scratch": str(self._scratch)}
        try:
            process = await self._ready()
        except (TimeoutError, OSError, ValueError) as exc:
            code = await self._kill()
            return _failure(task, self._death(code, f"it did not start: {exc}"), "crashed")
        assert process.stdin is not None and process.stdout is not None
        self._running = task
        try:
            process.stdin.write(json.dumps(job).encode() + b"\n")
            await process.stdin.drain()
            async with asyncio.timeout(timeout):
                line = await process.stdout.readline()
        except TimeoutError:
            await self._kill()
            await self._forget(task)
            why = f"no result after {timeout:g}s (--task-timeout): the task was killed"
            return _failure(task, why, "timeout")
        except (OSError, ValueError) as exc:  # a broken pipe, or a line over the limit
            line, why = b"", str(exc)
        else:
            why = ""
        if not line.endswith(b"\n"):
            code = await self._kill()
            await self._forget(task)
            return _failure(task, self._death(code, why), "crashed")
        self._running = None
        result: dict[str, Any] = json.loads(line)
        return result

    async def aclose(self) -> None:
        """Stop the worker: its stdin closed (it closes its servers), SIGTERM too when it is
        mid-task (Ctrl+C: it would finish the task first), then killed if it takes longer
        than `STOP_GRACE`."""
        process = self._process
        if process is None:
            return
        if process.stdin is not None:
            process.stdin.close()
        if self._running is not None and process.returncode is None:
            # The worker itself, not its group: it stops its task and its servers as on
            # Ctrl+C, and its commands die with it.
            with contextlib.suppress(ProcessLookupError):
                process.terminate()
        try:
            async with asyncio.timeout(STOP_GRACE):
                await process.wait()
        except TimeoutError:
            pass
        await self._kill()
        if self._running is not None:  # stopped mid-task (Ctrl+C): its copy goes too
            await self._forget(self._running)

    async def _forget(self, task: Task) -> None:
        """The copy of `task`, whose worker was killed, removed."""
        self._running = None
        await asyncio.to_thread(remove, task, self._scratch)

    async def start(self) -> None:
        """Start the worker now rather than with the first task, so that it loads while its
        owner does something else; the first `run` waits for it to be ready. A start that
        fails is tried again, and told, by that `run`."""
        if self._process is None:
            with contextlib.suppress(OSError):
                await self._spawn()

    async def _ready(self) -> asyncio.subprocess.Process:
        process = self._process
        if process is None or (self._loaded and process.returncode is not None):
            process = await self._spawn()  # none yet, or the last one died between tasks
        if not self._loaded:
            assert process.stdout is not None
            async with asyncio.timeout(START_TIMEOUT):
                ready = await process.stdout.readline()
            if ready != READY:
                raise ValueError("it exited before it was ready")
            self._loaded = True
        return process

    async def _spawn(self) -> asyncio.subprocess.Process:
        self._scratch.mkdir(parents=True, exist_ok=True)
        self._loaded = False
        with self._log().open("ab") as stderr:
            self._process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "paicli.cli.batch_worker",
                str(self._scratch),
                # It contains itself first thing (`contain`): no code between fork and exec
                # here, so the spawn is a vfork, not a copy of this (maybe large: a Ray
                # actor's) process, ~15 ms each.
                str(os.getpid()),
                *([] if self._memory is None else [str(self._memory)]),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=stderr,
                start_new_session=True,
                limit=RESULT_LIMIT,
                env=self._child_environment(),
            )
        self.started += 1
        return self._process

    def _child_environment(self) -> dict[str, str] | None:
        """The worker's variables; with a memory limit, glibc's per-thread malloc arenas
        (64 MiB of address space each) capped, so the limit counts memory, not threads."""
        if self._memory is None:
            return self._environ
        return {**(self._environ or os.environ), "MALLOC_ARENA_MAX": "2"}

    async def _kill(self) -> int | None:
        """The worker's process group killed, and the worker reaped; its exit code."""
        process, self._process = self._process, None
        if process is None:
            return None
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        return await process.wait()

    def _death(self, code: int | None, why: str) -> str:
        if code is not None and code < 0:
            how = f"killed by {signal.Signals(-code).name}"
        else:
            how = f"exited with {code}"
        said = self._tail()
        parts = [f"the worker died ({how})", why, f"its last words: {said}" if said else ""]
        return "; ".join(filter(None, parts))

    def _log(self) -> Path:
        return self._scratch / f"worker-{self._number}.log"

    def _tail(self) -> str:
        try:
            with self._log().open("rb") as file:
                file.seek(0, os.SEEK_END)
                file.seek(max(0, file.tell() - STDERR_TAIL))
                text = file.read().decode("utf-8", errors="replace")
        except OSError:
            return ""
        return " | ".join(line for line in text.splitlines()[-5:] if line.strip())


def contain(owner: int, memory: int | None) -> None:
    """In a worker, before anything else: it dies with the thread that started it (its
    owner killed, or the Ray actor's node gone, must not leave it running its task
    unowned), and its address space is limited (`--task-memory`); its MCP servers and
    commands inherit both. ValueError when the limit is above the hard one (`memory_problem`)."""
    if sys.platform == "linux":
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != owner:  # the owner died before the line above
            os._exit(1)
    if memory is not None:
        if (problem := memory_problem(memory)) is not None:
            raise ValueError(problem)  # every task of this worker would fail alike
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))


def memory_problem(memory: int) -> str | None:
    """Why this process cannot limit itself to `memory` bytes (None: it can): a hard limit
    on address space below it (`ulimit -Hv`), which only root may raise."""
    hard = resource.getrlimit(resource.RLIMIT_AS)[1]
    if hard == resource.RLIM_INFINITY or memory <= hard:
        return None
    mib = 1024 * 1024
    return (
        f"--task-memory {memory // mib}M is above this machine's hard limit on address "
        f"space ({hard // mib}M, ulimit -Hv)"
    )


def _failure(task: Task, why: str, status: str) -> dict[str, Any]:
    """`results.failure`, imported when a task fails only: this module is what a Ray actor
    loads before it starts its worker, and the result shapes bring in the agent's events."""
    from paicli.batch.results import failure  # noqa: PLC0415 - see above

    return failure(task, why, status)
