"""Sub-agents and the todo list through `paicli -p` for real: a subprocess, the real openai
client against the scripted model on 127.0.0.1 (the main agent's and the sub-agent's requests
answered in turn), an agent defined in `.claude/agents/` as Claude Code's docs write one, and
the audit log read back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.audit_records import audit_records
from tests.cli.test_oneshot import paicli
from tests.llm_server import Json, ScriptedLlm

pytestmark = pytest.mark.real

TEST_RUNNER = """---
name: test-runner
description: Runs the test suite and reports failures. Use after code changes.
tools: Bash, Read, Grep
model: haiku
color: green
---
Run `pytest -q`, then summarise each failure with file:line. RUNNER-PROMPT-MARK
"""


def call(name: str, arguments: dict[str, Any], call_id: str) -> Json:
    return {"id": call_id, "name": name, "arguments": json.dumps(arguments)}


def offered(request: Json) -> set[str]:
    return {tool["function"]["name"] for tool in request.get("tools", [])}


def tool_results(request: Json) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in request["messages"] if m["role"] == "tool"}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".claude" / "agents").mkdir(parents=True)
    (root / ".claude" / "agents" / "test-runner.md").write_text(TEST_RUNNER)
    (root / ".git").mkdir()
    (root / "notes.txt").write_text("alpha\n")
    return root


async def test_p_runs_a_sub_agent_within_the_runs_rules_and_audits_it_by_name(
    project: Path,
) -> None:
    task = {"description": "Run tests", "prompt": "Run the suite", "subagent_type": "test-runner"}
    todos = [{"content": "Run the tests", "status": "in_progress", "activeForm": "Running tests"}]
    script: list[Json] = [
        {"tool_calls": [call("todo_write", {"todos": todos}, "t1"), call("Agent", task, "a1")]},
        {
            "tool_calls": [
                call("read_file", {"path": "notes.txt"}, "r1"),
                call("grep", {"pattern": "alpha"}, "g1"),
                call("execute_command", {"command": "echo sub-agent-ran"}, "x1"),
                call("write_file", {"path": "evil.txt", "content": "x"}, "w1"),
            ]
        },
        {"text": "1 passed; notes.txt says alpha."},
        {"text": "All good."},
    ]
    async with ScriptedLlm(script) as llm:
        run = await paicli(
            project, "-p", "test it", "--allow", "execute_command", "--deny", "grep", llm=llm
        )
    assert run.code == 0, run.stderr
    assert run.stdout == "All good.\n"
    parent, sub, sub_after, parent_after = llm.requests
    assert {"Agent", "todo_write", "write_file"} <= offered(parent)
    # The sub-agent's own conversation, prompt and tools (Claude Code's names mapped).
    assert "RUNNER-PROMPT-MARK" in sub["messages"][0]["content"]
    assert sub["messages"][1] == {"role": "user", "content": "Run the suite"}
    assert offered(sub) == {"execute_command", "read_file"}  # grep: denied outright
    assert sub["model"] == "scripted"  # `haiku` is Claude Code's: the main agent's model
    results = tool_results(sub_after)
    assert "alpha" in results["r1"]
    assert "--deny" in results["g1"]  # the run's deny rule holds inside
    assert "sub-agent-ran" in results["x1"]  # and so does its --allow
    assert "was not given" in results["w1"]
    assert not (project / "evil.txt").exists()
    assert tool_results(parent_after)["a1"] == "1 passed; notes.txt says alpha."
    # stderr shows the list and what the sub-agent did, marked with its name.
    assert "→ todo list\n  [~] Running tests\n" in run.stderr
    assert "  ↳ test-runner → read_file" in run.stderr
    assert "  ↳ test-runner ✗ write_file" in run.stderr
    audit_dir = project.parent / "home" / ".paicli" / "audit"
    records = audit_records(audit_dir)
    by_tool = {r["tool"]: r for r in records}
    assert {r["tool"] for r in records if r.get("agent") == "test-runner"} == {
        "read_file",
        "grep",
        "execute_command",
        "write_file",
    }
    assert (by_tool["grep"]["decision"], by_tool["grep"]["decided_by"]) == ("denied", "flag")
    assert by_tool["write_file"]["decision"] == "refused"
    assert by_tool["Agent"]["outcome"] == "ok" and "agent" not in by_tool["Agent"]


async def test_stream_json_carries_the_todo_list_and_the_sub_agents_events(
    project: Path,
) -> None:
    todos = [{"content": "Look", "status": "pending", "activeForm": "Looking"}]
    script: list[Json] = [
        {"tool_calls": [call("Agent", {"description": "d", "prompt": "look"}, "a1")]},
        {"tool_calls": [call("todo_write", {"todos": todos}, "t1")]},
        {"text": "seen"},
        {"text": "done"},
    ]
    async with ScriptedLlm(script) as llm:
        run = await paicli(project, "-p", "go", "--output-format", "stream-json", llm=llm)
    assert run.code == 0, run.stderr
    events = [json.loads(line) for line in run.stdout.splitlines()]
    # As Claude Code streams a sub-agent: its replies and tool results with the Agent call's
    # id as parent_tool_use_id; the todo list is the todo_write call's own tool_use block.
    inner = [e for e in events if e.get("parent_tool_use_id") == "a1"]
    blocks = [b for e in inner if e["type"] == "assistant" for b in e["message"]["content"]]
    todo = next(b for b in blocks if b["type"] == "tool_use")
    assert (todo["name"], todo["input"]) == ("todo_write", {"todos": todos})
    assert any(b == {"type": "text", "text": "seen"} for b in blocks)
    results = [e for e in inner if e["type"] == "user"]
    assert [r["message"]["content"][0]["tool_use_id"] for r in results] == ["t1"]
    outer = [e for e in events if e.get("parent_tool_use_id") is None and e["type"] == "user"]
    assert [r["message"]["content"][0]["tool_use_id"] for r in outer] == ["a1"]
    assert events[-1]["type"] == "result" and events[-1]["result"] == "done"
