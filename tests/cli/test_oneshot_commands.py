"""`paicli -p "/name args"` runs a custom command for real (a subprocess, the scripted model
on 127.0.0.1): its body is the prompt, the user's command's allowed-tools let its calls run,
a project's grant nothing, and its model answers that turn only."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.audit_records import audit_records
from tests.cli.test_oneshot import paicli
from tests.llm_server import ScriptedLlm

pytestmark = pytest.mark.real

WRITER = """---
description: Write the notes
allowed-tools: Write, Bash(git status:*)
model: scripted-large
---
Write $0 into notes.txt.
"""


def write_call(content: str) -> dict[str, Any]:
    arguments = json.dumps({"path": "notes.txt", "content": content})
    return {"tool_calls": [{"id": "call_1", "name": "write_file", "arguments": arguments}]}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    return root


async def test_a_users_command_runs_with_its_tools_and_model_for_that_turn(
    project: Path,
) -> None:
    commands = project.parent / "home" / ".paicli" / "commands"
    commands.mkdir(parents=True)
    (commands / "notes.md").write_text(WRITER)
    script = [write_call("hello\n"), {"text": "Written."}]
    async with ScriptedLlm(script) as llm:
        run = await paicli(project, "-p", "/notes hello", llm=llm)
    assert run.code == 0, run.stderr
    assert (project / "notes.txt").read_text() == "hello\n"
    first = llm.requests[0]
    assert first["messages"][-1] == {"role": "user", "content": "Write hello into notes.txt.\n"}
    assert {r["model"] for r in llm.requests} == {"scripted-large"}
    assert "/notes uses the model scripted-large for this turn" in run.stderr
    audit = project.parent / "home" / ".paicli" / "audit"
    records = audit_records(audit)
    assert [(r["tool"], r["decided_by"]) for r in records] == [("write_file", "command")]


async def test_a_project_commands_allowed_tools_grant_nothing(project: Path) -> None:
    commands = project / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "notes.md").write_text(WRITER.replace("scripted-large", "openai"))
    script = [write_call("pwned\n"), {"text": "Could not."}]
    async with ScriptedLlm(script) as llm:
        run = await paicli(project, "-p", "/notes pwned", llm=llm)
    assert run.code == 0, run.stderr
    assert not (project / "notes.txt").exists()
    assert "its allowed-tools (Write, Bash(git status:*)) grant nothing" in run.stderr
    assert "its model 'openai' would switch the provider" in run.stderr
    assert {r["model"] for r in llm.requests} == {"scripted"}
    answer = llm.requests[1]["messages"][-1]["content"]
    assert "paicli -p does not ask for approval" in answer


async def test_a_prompt_that_names_no_command_is_sent_as_it_is(project: Path) -> None:
    async with ScriptedLlm([{"text": "It is a path."}]) as llm:
        run = await paicli(project, "-p", "/etc/hosts: what is this file?", llm=llm)
    assert run.code == 0, run.stderr
    sent = llm.requests[0]["messages"][-1]["content"]
    assert sent == "/etc/hosts: what is this file?"
