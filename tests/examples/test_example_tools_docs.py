"""docs/tools-any-language.md: each "smallest tool" on the page is taken from the page as it is
written, run as a real subprocess, recognised in the minimal dialect and called."""

from __future__ import annotations

import asyncio
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from paicli.mcp import StdioServer, connect
from tests.conftest import REPO

# Real processes, sockets or terminals are the point here (not the in-memory tier).
pytestmark = pytest.mark.real

PAGE = REPO / "docs" / "tools-any-language.md"
# A block is marked on the page by `<!-- smallest: LANGUAGE -->` just above its fence.
BLOCK = re.compile(r"<!-- smallest: (\w+) -->\n```\w+\n(.*?)\n```", re.DOTALL)
# Generous: a cold start on a loaded machine, never a real wait.
TIMEOUT = 30


def smallest(language: str) -> str:
    blocks: dict[str, str] = dict(BLOCK.findall(PAGE.read_text(encoding="utf-8")))
    return blocks[language]


def runnable(language: str, folder: Path, source: str) -> list[str]:
    """Write `source` into `folder` and return the command that runs it."""
    suffix = {"python": "py", "node": "js", "sh": "sh", "c": "c"}[language]
    path = folder / f"tool.{suffix}"
    path.write_text(source, encoding="utf-8")
    if language == "python":
        return [sys.executable, str(path)]
    if language == "node":
        if shutil.which("node") is None:
            pytest.skip("no node on this machine")
        return ["node", str(path)]
    if language == "sh":
        return ["/bin/sh", str(path)]
    if shutil.which("cc") is None:
        pytest.skip("no C compiler (cc) on this machine")
    binary = folder / "tool"
    subprocess.run(
        ["cc", "-Wall", "-Wextra", "-Werror", "-o", str(binary), str(path)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return [str(binary)]


def test_the_page_has_one_smallest_tool_per_language() -> None:
    found = [language for language, _ in BLOCK.findall(PAGE.read_text(encoding="utf-8"))]
    assert found == ["python", "node", "sh", "c"]


@pytest.mark.parametrize("language", ["python", "node", "sh", "c"])
async def test_each_smallest_tool_on_the_page_works(language: str, tmp_path: Path) -> None:
    argv = runnable(language, tmp_path, smallest(language))
    async with asyncio.timeout(TIMEOUT), connect(StdioServer(argv[0], args=argv[1:])) as session:
        assert session.dialect == "minimal"
        tools = await session.list_tools()
        called = await session.call_tool("echo", {"text": "hello world"})
    assert [tool.name for tool in tools] == ["echo"]
    assert called.text == "hello world" and not called.is_error


async def test_a_tool_that_ends_its_lines_with_crlf_works_too(tmp_path: Path) -> None:
    source = smallest("python").replace("flush=True)", 'end="\\r\\n", flush=True)')
    assert 'end="\\r\\n"' in source
    argv = runnable("python", tmp_path, source)
    async with asyncio.timeout(TIMEOUT), connect(StdioServer(argv[0], args=argv[1:])) as session:
        assert (await session.call_tool("echo", {"text": "crlf"})).text == "crlf"
