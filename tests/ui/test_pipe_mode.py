"""`paicli` with stdin not a terminal: one prompt, slash command or approval answer per line
(`printf 'do it\\ny\\n' | paicli`), so scripts and `make run` without a terminal still work.
`paicli` runs in the test process (tests/in_process.py) with a real pipe as its stdin; one test
starts a real process."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from pathlib import Path

import pytest

from tests import zygote_process
from tests.in_process import run_paicli_async
from tests.llm_server import Json, ScriptedLlm

# Real processes, sockets or terminals are the point here (not the in-memory tier).
pytestmark = pytest.mark.real

BENCH_SERVER = Path(__file__).parent.parent.parent / "bench" / "servers" / "echo_server.py"


async def piped(
    project: Path, llm: ScriptedLlm, lines: str, *flags: str, process: bool = False
) -> tuple[int, str]:
    """`paicli` with `lines` piped into it: the exit code and stdout with stderr. In this
    process (tests/in_process.py, stdin a real pipe there too) unless `process`."""
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(project.parent),
        "PAICLI_HOME": str(project.parent / ".paicli"),
    }
    args = ["--base-url", llm.base_url, "--model", "scripted", *flags]
    if not process:
        run = await run_paicli_async(args, cwd=project, environ=env, stdin=lines, merged=True)
        return run.code, run.stdout
    started = await zygote_process.create_subprocess_exec(
        sys.executable,
        "-m",
        "paicli.cli",
        *args,
        cwd=project,
        env=env,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    async with asyncio.timeout(60):
        out, _ = await started.communicate(lines.encode())
    assert started.returncode is not None
    return started.returncode, out.decode()


async def test_piped_lines_are_prompts_and_approval_answers(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    script: list[Json] = [
        {"tool_calls": [{"name": "write_file", "arguments": '{"path": "a.txt", "content": "x"}'}]},
        {"text": "Written."},
    ]
    async with ScriptedLlm(script) as llm:
        code, out = await piped(project, llm, "write a.txt\ny\n/audit\n", process=True)
    assert code == 0, out
    assert (project / "a.txt").read_text() == "x"
    assert "Written." in out
    assert "write_file allowed/user ok" in out  # /audit read the call back


async def test_the_end_of_input_exits_cleanly(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    async with ScriptedLlm([]) as llm:
        code, out = await piped(project, llm, "/help\n")
    assert code == 0
    assert "/mcp" in out and "Bye." in out


async def test_a_prompt_sent_while_a_server_starts_waits_for_its_tools(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".paicli").mkdir(parents=True)
    slow = [str(BENCH_SERVER), "--handshake-delay", "1.0"]
    servers = {"slow": {"command": sys.executable, "args": slow}}
    (project / ".paicli" / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    async with ScriptedLlm([{"text": "hi"}]) as llm:
        code, out = await piped(project, llm, "hello\n", "--trust-project")
    assert code == 0, out
    offered = {t["function"]["name"] for t in llm.requests[0]["tools"]}
    assert "mcp__slow__echo" in offered


async def test_text_that_looks_like_rich_markup_is_printed_literally(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    async with ScriptedLlm([]) as llm:
        code, out = await piped(project, llm, "/model odd[/]name[bold]\n")
    assert code == 0, out
    assert "odd[/]name[bold]" in out


async def test_a_secret_typed_into_a_form_from_a_pipe_is_not_echoed(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".paicli").mkdir(parents=True)
    fault = str(Path(__file__).parent.parent / "server_programs" / "fault_server.py")
    servers = {"fault": {"command": sys.executable, "args": [fault, "--mode", "features"]}}
    (project / ".paicli" / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    arguments = json.dumps({"fields": "user,password"})
    call = {"id": "c", "name": "mcp__fault__form", "arguments": arguments}
    typed = "Piped-Pa55word-0451"
    async with ScriptedLlm([{"tool_calls": [call]}, {"text": "Logged in."}]) as llm:
        lines = f"log me in\ny\ny\nada\n{typed}\ny\n"
        code, out = await piped(project, llm, lines, "--trust-project")
    assert code == 0, out
    assert re.search(r"password \(string, hidden\): ?\(hidden\)\n", out), out
    assert re.search(r"user \(string\): ?ada\n", out)  # an ordinary answer is echoed
    assert typed not in out and "Logged in." in out
