"""Run the HTTP test servers in tests/server_programs/ as subprocesses for the length of a test.

Each server prints one `LISTENING <url>` line once it accepts connections; waiting for that
line (rather than sleeping or polling the port) is what makes startup both fast and reliable.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from pathlib import Path

from tests import zygote_process

SERVER_PROGRAMS = Path(__file__).parent / "server_programs"
STARTUP_TIMEOUT = 20.0
STOP_TIMEOUT = 5.0
READY_PREFIX = b"LISTENING "


# The official SDK 1.x in a venv of its own (`make setup` makes it; the main venv has 2.x).
SDK1_PYTHON = Path(__file__).parent.parent / ".venv-sdk1" / "bin" / "python"


def sdk1_python() -> str:
    """The SDK 1.x venv's interpreter; a clear failure when `make setup` has not made it."""
    if not SDK1_PYTHON.exists():
        raise RuntimeError(f"{SDK1_PYTHON} is missing: run `make setup` (it makes .venv-sdk1)")
    return str(SDK1_PYTHON)


@asynccontextmanager
async def run_http_server(
    script: str | Path, *args: str, python: str = sys.executable
) -> AsyncIterator[str]:
    """Start `script` (a path, or a file name in tests/server_programs/) with `args` under `python`;
    yield its URL.

    For example `run_http_server("http_fault_server.py", "--mode", "json")`. Servers pick a
    free port unless `args` include `--port`.
    """
    path = SERVER_PROGRAMS / script  # an absolute `script` replaces SERVER_PROGRAMS
    # In a test, one of ours is forked from a zygote that has imported what they import
    # (tests/zygote.py: a server's start is never what is tested); others start fresh.
    process = await zygote_process.create_subprocess_exec(
        python,
        str(path),
        *args,
        stdout=asyncio.subprocess.PIPE,
        # Its own process group, so stopping it also stops anything it spawned.
        start_new_session=True,
    )
    try:
        yield await _wait_until_listening(process, path)
    finally:
        await stop_process(process)


async def _wait_until_listening(
    process: asyncio.subprocess.Process | zygote_process.ZygoteProcess, path: Path
) -> str:
    assert process.stdout is not None
    async with asyncio.timeout(STARTUP_TIMEOUT):
        line = await process.stdout.readline()
    if not line.startswith(READY_PREFIX):
        # An empty line means the server exited; its traceback is already on stderr.
        raise RuntimeError(f"{path.name} did not start (printed {line!r})")
    return line[len(READY_PREFIX) :].decode().strip()


async def stop_process(process: asyncio.subprocess.Process | zygote_process.ZygoteProcess) -> None:
    """SIGTERM the process group, then SIGKILL it if it is still there after 5 s."""
    if process.returncode is not None:
        return
    # It may have exited and been reaped on its own; then there is nothing left to signal.
    with suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        async with asyncio.timeout(STOP_TIMEOUT):
            await process.wait()
    except TimeoutError:
        with suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        await process.wait()
