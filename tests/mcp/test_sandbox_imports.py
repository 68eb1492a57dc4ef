"""Probing the sandbox and preparing one import nothing once their names are imported, so a
program may do either in one thread while another imports (Python 3.11's import locks can
fail imports made in two threads at once, gh-91351). Each check runs in a fresh
interpreter, with an audit hook noting every module loaded after the names were. And a probe
may fork while another thread starts the event loop's thread pool (whose module registers
fork hooks)."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from tests.imports import fresh_python

pytestmark = [pytest.mark.real, pytest.mark.skipif(sys.platform != "linux", reason="Linux")]

WATCHED = """
import asyncio, concurrent.futures.thread, json, sys  # the event loop's thread pool
from paicli.mcp import Sandbox, SandboxUnavailable, check_sandbox, sandbox_command
loaded = []
sys.addaudithook(lambda event, args: event == "import" and loaded.append(args[0]))
{body}
print(json.dumps(loaded))
"""


def imports_of(body: str, cwd: Path) -> list[str]:
    """The modules `body` loads, in a fresh interpreter, after the sandbox's names."""
    printed = fresh_python(WATCHED.format(body=textwrap.dedent(body)), cwd)
    loaded: list[str] = json.loads(printed.splitlines()[-1])
    return loaded


def test_probing_the_sandbox_imports_nothing(tmp_path: Path) -> None:
    assert imports_of("print(check_sandbox().describe())", tmp_path) == []


def test_preparing_a_command_sandbox_imports_nothing(tmp_path: Path) -> None:
    body = """
    async def main():
        profile = Sandbox.for_project(".", network=("example.com",))  # with its proxy
        try:
            command = await sandbox_command(["true"], profile, cwd=".", env={})
        except SandboxUnavailable:
            return
        await command.aclose()
    asyncio.run(main())
    """
    assert imports_of(body, tmp_path) == []


# The probe's first fork with a preexec_fn is held in its first `before` hook (the last
# registered), the hooks already listed, until the main thread has made its first
# `asyncio.to_thread` (which starts the event loop's thread pool).
FORK_DURING_THE_FIRST_TO_THREAD = """
import asyncio, json, os, sys, threading
before = "concurrent.futures.thread" in sys.modules
from paicli.mcp import check_sandbox
caught, holding = [], []
sys.unraisablehook = lambda hook: caught.append(f"{hook.exc_type.__name__}: {hook.exc_value}")
reached, go = threading.Event(), threading.Event()

def hold():
    if threading.current_thread().name == "probe" and not reached.is_set():
        holding.append(True)
        reached.set()
        go.wait()

def probe():
    check_sandbox()
    reached.set()  # no probe forked with a preexec_fn: nothing was held

os.register_at_fork(before=hold)
thread = threading.Thread(target=probe, name="probe")
thread.start()
reached.wait()
try:
    asyncio.run(asyncio.to_thread(int))
except RuntimeError as exc:
    caught.append(f"to_thread: {exc}")
go.set()
thread.join()
print(json.dumps({"loaded before": before, "held": bool(holding), "caught": caught}))
"""


def test_a_probe_may_fork_while_another_thread_starts_its_first_thread_pool(
    tmp_path: Path,
) -> None:
    """The pool's module registers fork hooks (a lock taken before a fork, released after);
    registered during a probe's fork, the release came without the take: `release unlocked
    lock`, raised in whichever thread held that lock (the event loop's, in `submit`)."""
    printed = fresh_python(FORK_DURING_THE_FIRST_TO_THREAD, tmp_path)
    seen = json.loads(printed.splitlines()[-1])
    assert not seen["loaded before"]  # else this test could not fail
    if not seen["held"]:
        pytest.skip("no probe forks with a preexec_fn here (neither Landlock nor seccomp)")
    assert seen["caught"] == []
