"""Helpers for the sandbox tests: each mechanism in turn, a user's home, a command run.

Every attack is run twice: first without the sandbox, where it must succeed (so the test
proves something on this machine), then inside it, where it must fail.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from paicli.mcp import Sandbox
from paicli.mcp._sandbox.prepare import PreparedSandbox
from paicli.mcp._sandbox.support import _Cache, check_sandbox

MECHANISMS = ("bubblewrap", "landlock")
TIMEOUT = 30.0
KEY = "-----BEGIN OPENSSH PRIVATE KEY----- not a real one\n"
BASHRC = "# the user's own\n"


@pytest.fixture(params=MECHANISMS)
def mechanism(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each Linux mechanism in turn, the others left out; skipped (with why) where it
    does not work."""
    support = check_sandbox()
    name: str = request.param
    why = support.bubblewrap if name == "bubblewrap" else support.landlock or support.seccomp
    if why is not None:
        pytest.skip(f"{name} does not work here: {why}")
    if name == "landlock":
        left_out = dataclasses.replace(support, bubblewrap="left out by the test")
        monkeypatch.setattr(_Cache, "support", left_out)
    return name


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A user's home with a private key, a .bashrc and a project, as HOME. It is made in
    /var/tmp: a real home is outside /tmp, which bubblewrap replaces and Landlock leaves
    writable."""
    if not os.access("/var/tmp", os.W_OK):
        pytest.skip("/var/tmp is not writable here")
    folder = Path(tempfile.mkdtemp(prefix="paicli-home-", dir="/var/tmp"))
    (folder / ".ssh").mkdir(mode=0o700)
    (folder / ".ssh" / "id_ed25519").write_text(KEY)
    (folder / ".bashrc").write_text(BASHRC)
    (folder / "project").mkdir()
    monkeypatch.setenv("HOME", str(folder))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def python(code: str) -> list[str]:
    return [sys.executable, "-I", "-c", code]


async def run(
    argv: list[str],
    sandbox: Sandbox | None,
    *,
    cwd: Path,
    aliases: Mapping[str, str] | None = None,
    env: Mapping[str, str] | None = None,
) -> tuple[int, str]:
    """Exit status and merged output of `argv`, in `sandbox` (None: as it is), with `env`
    (default: this process's environment) as its environment."""
    prepared = None if sandbox is None else await PreparedSandbox.open(sandbox, aliases=aliases)
    env = os.environ if env is None else env
    try:
        launch = prepared.launch(argv, env, cwd=cwd) if prepared else None
        process = await asyncio.create_subprocess_exec(
            *(launch.argv if launch else argv),
            env=launch.env if launch else env,
            cwd=cwd,
            preexec_fn=launch.preexec if launch else None,
            pass_fds=launch.pass_fds if launch else (),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        if launch is not None:
            launch.close()
        async with asyncio.timeout(TIMEOUT):
            output, _ = await process.communicate()
        code = process.returncode
        assert code is not None
        return (prepared.exit_status(code) if prepared else code), output.decode()
    finally:
        if prepared is not None:
            await prepared.aclose()


@asynccontextmanager
async def listener() -> AsyncIterator[tuple[int, list[str]]]:
    """A tiny HTTP server on 127.0.0.1: its port, and the request lines it saw."""
    seen: list[str] = []

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            seen.append(head.decode().split("\r\n")[0])
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello")
            await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            seen.append("(connected)")
        finally:
            writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    async with server:
        yield server.sockets[0].getsockname()[1], seen
