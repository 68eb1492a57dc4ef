"""The zygote (tests/zygote.py): a forked child is its own process, as a fresh start would
make it (argv, environment, folder, stdio, session and terminal), its exit code and the
signal that ended it come back, and nothing outlives a zygote. The child here runs a probe
module written into its working folder (`python -m zygote_probe`: sys.path[0] is that
folder, as for `python -m`), since paicli itself shows little of its process."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import zygote_process
from tests.conftest import SERVER_PROGRAMS
from tests.http_servers import stop_process
from tests.processes import alive, gone, parent_of, until
from tests.ui.terminal import Terminal
from tests.zygote import ZygoteChild, Zygotes, spawn_on_fds, zygote_pids

# One worker starts the module's own zygotes (about a second of CPU each), not every one.
pytestmark = [pytest.mark.real, pytest.mark.xdist_group("zygote")]

PROBE = """\
import json, os, signal, sys, threading
how = sys.argv[1]
if how == "wait":
    print("waiting", flush=True)
    sys.stdin.read()
if how == "signal":
    os.kill(os.getpid(), signal.SIGTERM)
print(json.dumps({
    "argv": sys.argv, "cwd": os.getcwd(), "path0": sys.path[0], "name": __name__,
    "env": dict(os.environ), "threads": threading.active_count(),
    "tty": sys.stdout.isatty(), "line_buffered": sys.stdout.line_buffering,
    "leader": os.getsid(0) == os.getpid(),
    "foreground": sys.stdin.isatty() and os.tcgetpgrp(0) == os.getpgrp(),
    "fds": sorted(int(fd) for fd in os.listdir("/proc/self/fd")),
    "signals": {
        signal.Signals(sig).name: str(signal.getsignal(sig))
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGPIPE, signal.SIGUSR1)
    },
}))
sys.exit(int(sys.argv[2]) if len(sys.argv) > 2 else 0)
"""


@pytest.fixture(scope="module")
def zygotes() -> Iterator[Zygotes]:
    """Zygotes of this module's own (a zygote's start costs about a second of CPU)."""
    own = Zygotes()
    yield own
    own.close()


@pytest.fixture
def own_zygotes() -> Iterator[Zygotes]:
    """Zygotes for one test, which ends them."""
    own = Zygotes()
    yield own
    own.close()


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "zygote_probe.py").write_text(PROBE)
    return tmp_path


def spawn(
    zygotes: Zygotes, folder: Path, env: dict[str, str], fds: tuple[int, int, int], *args: str
) -> ZygoteChild:
    argv = [sys.executable, "-m", "zygote_probe", *args]
    child = spawn_on_fds(
        argv, cwd=folder, env=env, fds=fds, modules=("zygote_probe",), zygotes=zygotes
    )
    assert child is not None
    return child


def probe(zygotes: Zygotes, folder: Path, env: dict[str, str], *args: str) -> tuple[int, str]:
    """Run the probe on pipes: its exit code and stdout."""
    read, write = os.pipe()
    null = os.open(os.devnull, os.O_RDWR)
    try:
        child = spawn(zygotes, folder, env, (null, write, null), *args)
    finally:
        os.close(write)
        os.close(null)
    with open(read, "rb") as out:
        text = out.read().decode()
    return child.wait_blocking(30), text


def test_a_child_has_its_own_argv_environment_folder_and_stdio(
    zygotes: Zygotes, folder: Path
) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(folder), "MARK": "one"}
    code, out = probe(zygotes, folder, env, "show", "3")
    seen = json.loads(out)
    assert code == 3
    assert seen["argv"] == [str(folder / "zygote_probe.py"), "show", "3"]
    assert seen["cwd"] == seen["path0"] == str(folder)
    assert seen["name"] == "__main__"
    assert {k: v for k, v in seen["env"].items() if k != "LC_CTYPE"} == env
    assert seen["threads"] == 1
    assert not seen["tty"] and not seen["line_buffered"]  # a pipe: block-buffered
    assert not seen["leader"]
    assert seen["fds"][:3] == [0, 1, 2] and len(seen["fds"]) == 4  # and the listing's own
    # The next child, with other values, sees only its own (one zygote serves both).
    started = zygotes.pids()
    code, out = probe(zygotes, folder, {**env, "MARK": "two", "HOME": "/nowhere"}, "show")
    assert code == 0
    assert json.loads(out)["env"]["MARK"] == "two" and zygotes.pids() == started


def test_signals_are_as_a_fresh_start_from_here_would_have_them(
    zygotes: Zygotes, folder: Path
) -> None:
    """What this process ignores, a child started now ignores too; the rest as a start sets
    them (whatever the zygote had when it started)."""
    probe(zygotes, folder, {}, "show")  # the zygote started while SIGUSR1 was the default
    before = signal.signal(signal.SIGUSR1, signal.SIG_IGN)
    try:
        code, out = probe(zygotes, folder, {}, "show")
    finally:
        signal.signal(signal.SIGUSR1, before)
    assert code == 0
    assert json.loads(out)["signals"] == {
        "SIGINT": str(signal.default_int_handler),
        "SIGTERM": str(signal.SIG_DFL),
        "SIGPIPE": str(signal.SIG_IGN),
        "SIGUSR1": str(signal.SIG_IGN),
    }
    assert json.loads(probe(zygotes, folder, {}, "show")[1])["signals"]["SIGUSR1"] == str(
        signal.SIG_DFL
    )


def test_a_start_variable_chooses_a_zygote_of_its_own(zygotes: Zygotes, folder: Path) -> None:
    env = {"PATH": "/usr/bin:/bin"}
    probe(zygotes, folder, env, "show")
    started = set(zygotes.pids())
    code, out = probe(zygotes, folder, {**env, "PYTHONUNBUFFERED": "1"}, "show")
    assert code == 0 and json.loads(out)["env"]["PYTHONUNBUFFERED"] == "1"
    assert len(set(zygotes.pids()) - started) == 1


async def test_on_a_pty_it_leads_a_session_with_the_terminal_as_a_fresh_start_would(
    zygotes: Zygotes, folder: Path
) -> None:
    master, slave = os.openpty()
    env = {"PATH": "/usr/bin:/bin"}
    try:
        child = spawn_on_fds(
            [sys.executable, "-m", "zygote_probe", "show"],
            cwd=folder,
            env=env,
            fds=(slave, slave, slave),
            session=True,
            terminal=True,
            modules=("zygote_probe",),
            zygotes=zygotes,
        )
    finally:
        os.close(slave)
    assert child is not None
    term = Terminal(child, master)
    try:
        await term.expect('"fds"')
        assert await term.exit_code() == 0
        seen = json.loads(term.text[term.text.index("{") :])
        assert seen["tty"] and seen["line_buffered"] and seen["leader"] and seen["foreground"]
    finally:
        await term.aclose()


async def test_exit_codes_and_signals_come_back(zygotes: Zygotes, folder: Path) -> None:
    assert probe(zygotes, folder, {}, "signal")[0] == -signal.SIGTERM
    read, write = os.pipe()
    child = spawn(zygotes, folder, {}, (read, write, write), "wait")
    os.close(read)
    os.close(write)
    async with asyncio.timeout(30):
        assert child.returncode is None
        child.send_signal(signal.SIGKILL)
        assert await child.wait() == -signal.SIGKILL
    assert child.returncode == -signal.SIGKILL and child.cpu_seconds is not None
    child.kill()  # after its end: nothing (as Popen)


@pytest.mark.parametrize("how", ["killed", "closed"])
async def test_a_zygote_that_ends_leaves_no_child_behind(
    own_zygotes: Zygotes, folder: Path, how: str
) -> None:
    zygotes = own_zygotes
    read, write = os.pipe()
    child = spawn(zygotes, folder, {}, (read, write, write), "wait")
    os.close(read)
    [zygote] = zygotes.pids()
    assert alive(child.pid)
    if how == "killed":
        os.kill(zygote, signal.SIGKILL)  # its children die with it (PR_SET_PDEATHSIG)
    else:
        zygotes.close()  # stdin closed: it kills and reaps them, then ends
    await until(lambda: gone(child.pid), timeout=10)
    with pytest.raises(RuntimeError, match="lost child"):  # it ended unreported
        child.wait_blocking(10)
    os.close(write)
    zygotes.close()
    assert gone(zygote)


@pytest.mark.fresh_paicli
def test_a_test_marked_fresh_starts_paicli_fresh(folder: Path) -> None:
    argv = [sys.executable, "-m", "paicli.cli", "--version"]
    assert spawn_on_fds(argv, cwd=folder, env={}, fds=(0, 1, 2)) is None


async def test_our_http_test_servers_are_forked_and_others_start_fresh(tmp_path: Path) -> None:
    """A server of tests/server_programs/ (as tests/http_servers.py starts them) is forked
    from the run's `servers` zygote, in a session of its own; any other script is a fresh
    process."""
    ours = await zygote_process.create_subprocess_exec(
        sys.executable,
        str(SERVER_PROGRAMS / "http_fault_server.py"),
        stdout=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    try:
        assert isinstance(ours, zygote_process.ZygoteProcess)
        assert parent_of(ours.pid) in zygote_pids()
        assert ours.stdout is not None
        assert (await ours.stdout.readline()).startswith(b"LISTENING http://127.0.0.1:")
        assert os.getsid(ours.pid) == ours.pid  # by now it has become the server
    finally:
        await stop_process(ours)
    script = tmp_path / "other.py"
    script.write_text("print('fresh')\n")
    other = await zygote_process.create_subprocess_exec(
        sys.executable, str(script), stdout=asyncio.subprocess.PIPE
    )
    assert not isinstance(other, zygote_process.ZygoteProcess)
    assert (await other.communicate())[0] == b"fresh\n"
