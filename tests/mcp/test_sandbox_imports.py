"""Probing the sandbox and preparing one import nothing once their names are imported, so a
program may do either in one thread while another imports (Python 3.11's import locks can
fail imports made in two threads at once, gh-91351). Each check runs in a fresh
interpreter, with an audit hook noting every module loaded after the names were."""

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
