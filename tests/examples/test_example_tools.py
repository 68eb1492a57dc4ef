"""The example tools (examples/tools): echo, word_count and now in Python and Node (full MCP),
POSIX shell and C (the minimal JSON-RPC dialect), each run as a real subprocess through the
library, `paicli mcp call` and the one-shot agent (the scripted model on 127.0.0.1).

The C tool is built with the machine's `cc` through its own Makefile, in a copy of its
folder (tests never write into the repository). There is no Go example: the machines this
runs on have no Go toolchain.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from paicli.mcp import StdioServer, connect
from tests.cli.test_oneshot import paicli as oneshot
from tests.conftest import REPO
from tests.in_process import Run, run_paicli
from tests.llm_server import Json, ScriptedLlm
from tests.model_view import unfenced

# Real processes, sockets or terminals are the point here (not the in-memory tier).
pytestmark = pytest.mark.real

TOOLS = REPO / "examples" / "tools"
LANGUAGES = ("python", "node", "shell", "c")
DIALECTS = {"python": "mcp", "node": "mcp", "shell": "minimal", "c": "minimal"}
# Generous: a cold start on a loaded machine, never a real wait.
TIMEOUT = 30
# Quotes, backslashes, a newline, a tab, non-ASCII and an emoji: what JSON escaping must carry.
TRICKY = 'say "hi" \\ back\nslash\tand é 😀'
STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


@pytest.fixture(scope="module")
def c_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """examples/tools/c built by its Makefile with the machine's C compiler, in a copy."""
    if shutil.which("cc") is None or shutil.which("make") is None:
        pytest.skip("no C compiler (cc) or make on this machine")
    folder = tmp_path_factory.mktemp("c-tools")
    for name in ("Makefile", "tools.c"):
        shutil.copy(TOOLS / "c" / name, folder / name)
    built = subprocess.run(
        ["make", "-C", str(folder), "CFLAGS=-O2 -Wall -Wextra -Werror -std=c99"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    return folder / "tools"


def command(language: str, c_build: Path) -> list[str]:
    """The command line that runs the example in `language`."""
    if language == "node" and shutil.which("node") is None:
        pytest.skip("no node on this machine")
    return {
        "python": [sys.executable, str(TOOLS / "python" / "tools.py")],
        "node": ["node", str(TOOLS / "node" / "tools.js")],
        "shell": ["/bin/sh", str(TOOLS / "shell" / "tools.sh")],
        "c": [str(c_build)],
    }[language]


def in_the_last_minutes(stamp: str, before: datetime) -> bool:
    moment = datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    return before.replace(microsecond=0) <= moment <= datetime.now(UTC)


@pytest.mark.parametrize("language", LANGUAGES)
async def test_each_example_offers_and_runs_the_same_three_tools(
    language: str, c_build: Path
) -> None:
    argv = command(language, c_build)
    before = datetime.now(UTC)
    async with asyncio.timeout(TIMEOUT), connect(StdioServer(argv[0], args=argv[1:])) as session:
        assert session.dialect == DIALECTS[language]
        tools = {tool.name: tool for tool in await session.list_tools()}
        echoed = await session.call_tool("echo", {"text": TRICKY})
        counted = await session.call_tool("word_count", {"text": "one two\nthree \t four"})
        empty = await session.call_tool("word_count", {"text": ""})
        now = await session.call_tool("now", {})
    assert set(tools) == {"echo", "word_count", "now"}
    assert tools["echo"].input_schema["required"] == ["text"]
    assert all(tool.description for tool in tools.values())
    assert echoed.text == TRICKY and not echoed.is_error
    assert counted.structured_content == {"words": 4}
    assert json.loads(counted.text) == {"words": 4}
    assert empty.structured_content == {"words": 0}
    assert STAMP.fullmatch(now.text) and in_the_last_minutes(now.text, before)


@pytest.mark.parametrize("language", LANGUAGES)
async def test_an_unknown_tool_is_a_tool_error_and_the_example_goes_on(
    language: str, c_build: Path
) -> None:
    argv = command(language, c_build)
    async with asyncio.timeout(TIMEOUT), connect(StdioServer(argv[0], args=argv[1:])) as session:
        missing = await session.call_tool("teleport", {})
        assert (await session.call_tool("echo", {"text": "still here"})).text == "still here"
    assert missing.is_error


@pytest.mark.parametrize("language", LANGUAGES)
async def test_each_example_exits_at_the_end_of_its_input(language: str, c_build: Path) -> None:
    argv = command(language, c_build)
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    first = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
    async with asyncio.timeout(TIMEOUT):
        # The last line has no newline and ends with a carriage return, as a careless or a
        # Windows client may send it.
        out, _ = await process.communicate(json.dumps(first).encode() + b"\r")
    assert process.returncode == 0
    reply = json.loads(out)  # one line, and nothing else on stdout
    assert reply["id"] == 1 and "result" in reply


def paicli_mcp(home: Path, *args: str) -> Run:
    """`paicli mcp ARGS`, in this process (tests/in_process.py)."""
    env = {"PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin", "PAICLI_HOME": str(home)}
    return run_paicli(["mcp", *args], cwd=home, environ=env)


@pytest.mark.parametrize("language", LANGUAGES)
def test_paicli_mcp_call_runs_each_tool(language: str, c_build: Path, tmp_path: Path) -> None:
    argv = command(language, c_build)
    added = paicli_mcp(tmp_path, "add", "ex", "--", *argv)
    assert added.returncode == 0, added.stderr
    echoed = paicli_mcp(tmp_path, "call", "ex", "echo", json.dumps({"text": "hello there"}))
    counted = paicli_mcp(tmp_path, "call", "ex", "word_count", '{"text": "a b c"}')
    now = paicli_mcp(tmp_path, "call", "ex", "now", "{}")
    assert echoed.returncode == 0, echoed.stderr
    assert echoed.stdout.strip() == "hello there"
    assert json.loads(counted.stdout) == {"words": 3}
    assert STAMP.fullmatch(now.stdout.strip())


async def test_the_agent_calls_every_example_tool_in_every_language(
    c_build: Path, tmp_path: Path
) -> None:
    languages = [name for name in LANGUAGES if name != "node" or shutil.which("node")]
    project = tmp_path / "project"
    (project / ".paicli").mkdir(parents=True)
    # A project's servers run sandboxed, with a /tmp of their own under bubblewrap: the C
    # tool built in pytest's temporary folder goes into the project.
    c_tool = project / "tools"
    shutil.copy(c_build, c_tool)
    servers = {}
    for language in languages:
        argv = command(language, c_tool)
        servers[language] = {"command": argv[0], "args": argv[1:]}
    (project / ".paicli" / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    calls = []
    for language in languages:
        for tool, arguments in (("echo", {"text": language}), ("word_count", {"text": "x y"})):
            name = f"mcp__{language}__{tool}"
            calls.append({"id": name, "name": name, "arguments": json.dumps(arguments)})
        now = f"mcp__{language}__now"
        calls.append({"id": now, "name": now, "arguments": "{}"})
    script: list[Json] = [{"tool_calls": calls}, {"text": "all done"}]
    async with ScriptedLlm(script) as llm:
        run = await oneshot(project, "--trust-project", "--yes", "-p", "use them all", llm=llm)
    assert run.code == 0, run.stderr
    assert run.stdout.strip() == "all done"
    answers = {
        m["tool_call_id"]: unfenced(m["content"])
        for m in llm.requests[1]["messages"]
        if m["role"] == "tool"
    }
    for language in languages:
        assert answers[f"mcp__{language}__echo"] == language
        assert json.loads(answers[f"mcp__{language}__word_count"]) == {"words": 2}
        assert STAMP.fullmatch(answers[f"mcp__{language}__now"])
