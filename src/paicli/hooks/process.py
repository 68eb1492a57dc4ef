"""One hook command run: the event's JSON on stdin, stdout and stderr read apart and bounded,
ended at its timeout with every process it started.

It runs as `execute_command` does: in a new process group under the reaper (Linux), which
reaps every descendant and ends the group's leftovers when the hook exits; inside the
command sandbox when one is given (`paicli.mcp.sandbox_command`: the project writable, the
rest read-only, no network). At the timeout (or on cancellation) the group gets SIGTERM, then
SIGKILL. What a hook writes past the caps is read and dropped, so it never blocks on a full
pipe and never fills paicli's memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from paicli.mcp import Sandbox, SandboxUnavailable
from paicli.tools.builtin.command import start_contained, stop_group

__all__ = ["HookRun", "run_hook"]

# A JSON answer (an `updatedInput` may carry a file's content) fits; more is a broken hook.
STDOUT_LIMIT = 1024 * 1024
STDERR_LIMIT = 64 * 1024
READ_CHUNK = 64 * 1024


@dataclass(frozen=True)
class HookRun:
    """How one hook run ended. `failed`: it could not start (why); `exit_code` None with
    `timed_out`: killed at its timeout."""

    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool = False
    failed: str | None = None
    duration_ms: int = 0
    cut: bool = False  # stdout passed its cap (so it is no answer)


class _Bounded:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.data = bytearray()
        self.cut = False

    async def drain(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(READ_CHUNK):
            room = self.limit - len(self.data)
            if len(chunk) > room:
                self.cut = True
            self.data += chunk[: max(room, 0)]

    def text(self) -> str:
        return self.data.decode("utf-8", errors="replace")


async def run_hook(
    argv: Sequence[str],
    *,
    stdin: bytes,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
    sandbox: Sandbox | None = None,
) -> HookRun:
    """Run `argv` with `stdin` until it exits or `timeout` passes (see the module)."""
    started = time.monotonic()
    try:
        process, contained = await start_contained(
            argv,
            cwd=cwd,
            env=env,
            sandbox=sandbox,
            stdin=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
    except (OSError, SandboxUnavailable) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return HookRun(None, "", "", failed=f"could not start: {reason}")
    out, err = _Bounded(STDOUT_LIMIT), _Bounded(STDERR_LIMIT)
    timed_out = False
    try:
        try:
            async with asyncio.timeout(timeout):
                await _exchange(process, stdin, out, err)
        except TimeoutError:
            timed_out = True
            await _stop(process)
        except BaseException:
            await _stop(process)
            raise
    finally:
        if contained is not None:
            await contained.aclose()
    code = process.returncode
    if contained is not None and code is not None:
        code = contained.exit_status(code)
    return HookRun(
        None if timed_out else code,
        out.text(),
        err.text(),
        timed_out=timed_out,
        duration_ms=round((time.monotonic() - started) * 1000),
        cut=out.cut,
    )


async def _exchange(
    process: asyncio.subprocess.Process, stdin: bytes, out: _Bounded, err: _Bounded
) -> None:
    assert process.stdin is not None and process.stdout is not None
    assert process.stderr is not None

    async def feed(pipe: asyncio.StreamWriter) -> None:
        # A hook may exit without reading its input: that is its choice, not a failure.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            pipe.write(stdin)
            await pipe.drain()
        pipe.close()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            await pipe.wait_closed()

    async with asyncio.TaskGroup() as group:
        group.create_task(feed(process.stdin))
        group.create_task(out.drain(process.stdout))
        group.create_task(err.drain(process.stderr))
    await process.wait()


async def _stop(process: asyncio.subprocess.Process) -> None:
    """End the hook's process group (SIGTERM, then SIGKILL; bounded, as execute_command)."""
    if await stop_group(process):
        raise asyncio.CancelledError
