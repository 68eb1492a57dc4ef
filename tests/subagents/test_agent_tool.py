"""The `Agent` tool in memory: the real openai client against the scripted model (each
sub-agent request answered by its own scripted reply, in order), our fault server behind MCP
tools, the run's real approval and audit wrappers, and the audit file read back."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from paicli.agent.events import (
    AgentEvent,
    SubAgentEvent,
    TodoUpdated,
    ToolFinished,
    ToolStarted,
    TurnEnded,
)
from paicli.permissions.approval import Answer, ApprovalRequest, Choice, Mode
from paicli.runtime import Runtime
from tests.audit_records import audit_records
from tests.conftest import SERVER_PROGRAMS
from tests.llm_memory import MemoryLlm
from tests.llm_server import Json
from tests.memory_connect import memory_connector
from tests.runtimes import runtime_for

REVIEWER = """---
name: reviewer
description: Reviews code for problems. Use after a change.
tools: Read, Grep, mcp__fault__echo
---
You are a careful reviewer. REVIEWER-PROMPT-MARK
"""


@dataclass
class Asked:
    """An approver that answers from a list and keeps what it was asked."""

    answers: list[Answer] = field(default_factory=list)
    requests: list[ApprovalRequest] = field(default_factory=list)

    async def __call__(self, request: ApprovalRequest) -> Answer:
        self.requests.append(request)
        return self.answers.pop(0) if self.answers else Answer(Choice.DENY)


@dataclass
class Events:
    items: list[AgentEvent] = field(default_factory=list)

    def __call__(self, event: AgentEvent) -> None:
        self.items.append(event)

    def inner(self) -> list[AgentEvent]:
        return [e.event for e in self.items if isinstance(e, SubAgentEvent)]


def agent_call(agent: str | None, prompt: str, call_id: str = "a1") -> Json:
    arguments: dict[str, str] = {"description": "a side task", "prompt": prompt}
    if agent is not None:
        arguments["subagent_type"] = agent
    return {"id": call_id, "name": "Agent", "arguments": json.dumps(arguments)}


def call(name: str, arguments: Mapping[str, object], call_id: str) -> Json:
    return {"id": call_id, "name": name, "arguments": json.dumps(arguments)}


def offered(request: Json) -> set[str]:
    return {tool["function"]["name"] for tool in request.get("tools", [])}


def tool_results(request: Json) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in request["messages"] if m["role"] == "tool"}


def audit(runtime: Runtime) -> list[dict[str, Any]]:
    return audit_records(runtime.home.audit_dir)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".claude" / "agents").mkdir(parents=True)
    (root / ".claude" / "agents" / "reviewer.md").write_text(REVIEWER)
    (root / "notes.txt").write_text("alpha\n")
    servers = {
        "fault": {"command": sys.executable, "args": [str(SERVER_PROGRAMS / "fault_server.py")]}
    }
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    return root


@asynccontextmanager
async def running(
    project: Path,
    llm: MemoryLlm,
    approver: Asked | None = None,
    *,
    deny: tuple[str, ...] = (),
    mode: Mode | None = None,
) -> AsyncIterator[Runtime]:
    home = project.parent / "home"
    environ = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "PAICLI_HOME": str(home / ".paicli"),
        "PAICLI_API_KEY": "sk-test-subagents-0123456789",
    }
    async with runtime_for(
        root=project,
        flags={"base_url": llm.base_url, "model": "scripted", "provider": None},
        approver=approver,
        flag_deny=deny,
        mode=mode,
        trust_project=True,
        environ=environ,
        connector=memory_connector,
        http_client=llm.http_client(),
    ) as runtime:
        async with asyncio.timeout(30):
            await runtime.manager.wait_ready()
        yield runtime


async def test_a_sub_agent_works_in_its_own_conversation_with_its_own_prompt_and_tools(
    project: Path,
) -> None:
    script: list[Json] = [
        {"tool_calls": [agent_call("reviewer", "Review notes.txt and report.")]},
        {"tool_calls": [call("read_file", {"path": "notes.txt"}, "r1")]},
        {"text": "notes.txt holds one word: alpha. No problems."},
        {"text": "The reviewer found no problems."},
    ]
    async with MemoryLlm(script) as llm, running(project, llm) as runtime:
        assert runtime.agent is not None
        events = Events()
        ended = await runtime.agent.run("please review", events)
    assert ended.text == "The reviewer found no problems."
    parent, sub, sub_after, parent_after = llm.requests
    # The sub-agent's conversation: its own system prompt, the task, nothing of the parent's.
    system, task = sub["messages"]
    assert system["role"] == "system" and "REVIEWER-PROMPT-MARK" in system["content"]
    assert 'sub-agent "reviewer"' in system["content"]
    assert task == {"role": "user", "content": "Review notes.txt and report."}
    assert "please review" not in json.dumps(sub["messages"])
    # Only the tools its definition lists, among the parent's; never the Agent tool.
    assert {"Agent", "read_file", "execute_command", "mcp__fault__echo"} <= offered(parent)
    assert offered(sub) == {"read_file", "grep", "mcp__fault__echo"}
    assert "alpha" in tool_results(sub_after)["r1"]
    # Its final answer is the Agent call's result in the parent's conversation.
    assert tool_results(parent_after)["a1"] == "notes.txt holds one word: alpha. No problems."
    # Its events reach the UI wrapped, with the call and its name.
    wrapped = [e for e in events.items if isinstance(e, SubAgentEvent)]
    assert {(e.call_id, e.agent) for e in wrapped} == {("a1", "reviewer")}
    assert [e.name for e in events.inner() if isinstance(e, ToolStarted)] == ["read_file"]
    assert [e.reason for e in events.inner() if isinstance(e, TurnEnded)] == ["done"]
    records = audit(runtime)
    by_tool = {r["tool"]: r for r in records}
    assert by_tool["read_file"]["agent"] == "reviewer"
    assert "agent" not in by_tool["Agent"]  # the main agent's own call
    assert by_tool["Agent"]["outcome"] == "ok"


async def test_without_a_type_the_general_purpose_agent_gets_all_the_parents_tools(
    project: Path,
) -> None:
    script: list[Json] = [
        {"tool_calls": [agent_call(None, "Find the notes.")]},
        {"text": "found"},
        {"text": "ok"},
    ]
    async with MemoryLlm(script) as llm, running(project, llm) as runtime:
        assert runtime.agent is not None
        await runtime.agent.run("go", Events())
    parent, sub, _ = llm.requests
    assert offered(sub) == offered(parent) - {"Agent", "search_tools"}
    assert "general-purpose" in sub["messages"][0]["content"]
    description = next(
        t["function"]["description"] for t in parent["tools"] if t["function"]["name"] == "Agent"
    )
    assert "- reviewer: Reviews code for problems." in description
    assert "- general-purpose:" in description


async def test_a_tool_the_sub_agent_was_not_given_is_refused_and_audited_under_its_name(
    project: Path,
) -> None:
    script: list[Json] = [
        {"tool_calls": [agent_call("reviewer", "Delete everything.")]},
        {"tool_calls": [call("execute_command", {"command": "rm -rf ."}, "x1")]},
        {"tool_calls": [call("Agent", {"description": "d", "prompt": "again"}, "x2")]},
        {"text": "I could not."},
        {"text": "done"},
    ]
    approver = Asked([Answer(Choice.ALLOW_ONCE)] * 3)
    async with MemoryLlm(script) as llm, running(project, llm, approver) as runtime:
        assert runtime.agent is not None
        await runtime.agent.run("go", Events())
    results = tool_results(llm.requests[3])
    assert "was not given" in results["x1"] and "not run" in results["x1"]
    assert "was not given" in results["x2"]
    assert approver.requests == []  # nothing was even asked
    refused = [r for r in audit(runtime) if r["tool"] in ("execute_command", "Agent")]
    assert [(r["tool"], r.get("agent"), r["decision"]) for r in refused] == [
        ("execute_command", "reviewer", "refused"),
        ("Agent", "reviewer", "refused"),
        ("Agent", None, "allowed"),
    ]
    assert (project / "notes.txt").exists()


async def test_a_denied_tool_stays_denied_inside_and_the_question_names_the_sub_agent(
    project: Path,
) -> None:
    script: list[Json] = [
        {"tool_calls": [agent_call(None, "Look around.")]},
        {
            "tool_calls": [
                call("grep", {"pattern": "alpha"}, "g1"),
                call("write_file", {"path": "out.txt", "content": "x"}, "w1"),
            ]
        },
        {"tool_calls": [call("mcp__fault__echo", {"text": "hi"}, "e1")]},
        {"text": "report"},
        {"text": "done"},
    ]
    approver = Asked([Answer(Choice.DENY), Answer(Choice.ALLOW_ONCE)])
    async with (
        MemoryLlm(script) as llm,
        running(project, llm, approver, deny=("grep",)) as runtime,
    ):
        assert runtime.agent is not None
        await runtime.agent.run("go", Events())
    assert "grep" not in offered(llm.requests[1])  # denied outright: not even offered
    assert "write_file" in offered(llm.requests[1])
    first = tool_results(llm.requests[2])
    assert "--deny" in first["g1"]  # and denied all the same when called
    assert "denied" in first["w1"].lower()  # the user said no
    assert not (project / "out.txt").exists()
    assert tool_results(llm.requests[3])["e1"].count("hi") >= 1
    asked = [request.agent for request in approver.requests]
    assert asked == ["general-purpose", "general-purpose"]
    assert approver.requests[0].display().startswith("Asked by the sub-agent general-purpose")
    records = {r["tool"]: r for r in audit(runtime)}
    assert records["grep"]["decided_by"] == "flag" and records["grep"]["agent"] == "general-purpose"
    assert records["write_file"]["decided_by"] == "user"


async def test_plan_mode_holds_inside_a_sub_agent(project: Path) -> None:
    script: list[Json] = [
        {"tool_calls": [agent_call(None, "Write a file.")]},
        {"tool_calls": [call("write_file", {"path": "out.txt", "content": "x"}, "w1")]},
        {"text": "could not"},
        {"text": "done"},
    ]
    approver = Asked([Answer(Choice.ALLOW_ONCE)])
    async with MemoryLlm(script) as llm, running(project, llm, approver, mode=Mode.PLAN) as rt:
        assert rt.agent is not None
        await rt.agent.run("go", Events())
    assert "plan mode" in tool_results(llm.requests[2])["w1"]
    assert approver.requests == [] and not (project / "out.txt").exists()


async def test_a_long_report_is_cut_and_a_failing_model_is_an_error_result(
    project: Path,
) -> None:
    script: list[Json] = [
        {"tool_calls": [agent_call(None, "Talk a lot.", "a1"), agent_call(None, "Fail.", "a2")]},
        {"text": "y" * 40_000},
        {"status": 400, "error": {"message": "the sub-agent's request was refused"}},
        {"text": "done"},
    ]
    async with MemoryLlm(script) as llm, running(project, llm) as runtime:
        assert runtime.agent is not None
        ended = await runtime.agent.run("go", Events())
    assert ended.text == "done"
    # The two run at once: which asked the model first, and got the long answer, may vary.
    long, failed = sorted(tool_results(llm.requests[-1]).values(), key=len, reverse=True)
    assert len(long) < 31_000 and "The report was cut: 10,000 more characters" in long
    assert failed.startswith("Error: the agent general-purpose failed:")
    assert "the sub-agent's request was refused" in failed


async def test_the_todo_list_is_an_event_and_a_sub_agents_is_wrapped(project: Path) -> None:
    todos = {
        "todos": [
            {"content": "Read notes", "status": "completed", "activeForm": "Reading notes"},
            {"content": "Fix \x1b[2J it", "status": "in_progress", "activeForm": "Fixing it"},
        ]
    }
    script: list[Json] = [
        {"tool_calls": [call("todo_write", todos, "t1"), agent_call(None, "Plan.", "a1")]},
        {"tool_calls": [call("todo_write", {"todos": []}, "t2")]},
        {"text": "planned"},
        {"tool_calls": [call("todo_write", {"todos": [{"content": "x"}]}, "t3")]},
        {"text": "done"},
    ]
    async with MemoryLlm(script) as llm, running(project, llm) as runtime:
        assert runtime.agent is not None
        events = Events()
        await runtime.agent.run("go", events)
    (update,) = [e for e in events.items if isinstance(e, TodoUpdated)]
    assert update.call_id == "t1"
    assert [(i.content, i.status, i.active_form) for i in update.items] == [
        ("Read notes", "completed", "Reading notes"),
        ("Fix \x1b[2J it", "in_progress", "Fixing it"),
    ]
    (inner,) = [e for e in events.inner() if isinstance(e, TodoUpdated)]
    assert inner.items == ()
    results = tool_results(llm.requests[-1])
    assert "2 items, 1 completed, 1 in progress" in results["t1"]
    assert "input schema" in results["t3"]
    bad = [e for e in events.items if isinstance(e, ToolFinished) and e.call_id == "t3"]
    assert bad[0].outcome.is_error


async def test_cancelling_the_turn_stops_the_sub_agent_and_the_conversation_goes_on(
    project: Path,
) -> None:
    script: list[Json] = [
        {"tool_calls": [agent_call(None, "Think for ever.")]},
        {"hang": True},
        {"text": "fresh start"},
    ]
    async with MemoryLlm(script) as llm, running(project, llm) as runtime:
        assert runtime.agent is not None
        events = Events()
        turn = asyncio.create_task(runtime.agent.run("go", events))
        async with asyncio.timeout(10):
            await llm.wait_for_requests(2)  # the sub-agent is waiting on its model
            turn.cancel()
            with pytest.raises(asyncio.CancelledError):
                await turn
            await llm.disconnected.wait()  # its request was given up, not left running
        ended = await runtime.agent.run("again", Events())
    assert ended.text == "fresh start"
    last = events.items[-1]
    assert isinstance(last, TurnEnded) and last.reason == "cancelled"
    assert "Cancelled" in tool_results(llm.requests[2])["a1"]
    (record,) = audit(runtime)
    assert (record["tool"], record["outcome"]) == ("Agent", "cancelled")


async def test_a_users_agent_runs_on_the_model_its_definition_names(project: Path) -> None:
    agents = project.parent / "home" / ".paicli" / "agents"
    agents.mkdir(parents=True)
    (agents / "cheap.md").write_text(
        "---\nname: cheap\ndescription: d\nmodel: small-model\n---\nBe brief.\n"
    )
    (agents / "elsewhere.md").write_text(
        "---\nname: elsewhere\ndescription: d\nmodel: deepseek\n---\n"
    )
    script: list[Json] = [
        {"tool_calls": [agent_call("cheap", "Sum up.", "a1"), agent_call("elsewhere", "x", "a2")]},
        {"text": "brief"},
        {"text": "done"},
    ]
    async with MemoryLlm(script) as llm, running(project, llm) as runtime:
        assert runtime.agent is not None
        await runtime.agent.run("go", Events())
    parent, sub, after = llm.requests
    assert (parent["model"], sub["model"], after["model"]) == (
        "scripted",
        "small-model",
        "scripted",
    )
    results = tool_results(after)
    assert results["a1"] == "brief"
    assert "could not run" in results["a2"] and "DEEPSEEK_API_KEY" in results["a2"]


async def test_a_definition_cannot_give_a_tool_the_main_agent_may_not_use(project: Path) -> None:
    (project / ".claude" / "agents" / "greedy.md").write_text(
        "---\nname: greedy\ndescription: wants it all\n"
        "tools: Read, NotebookEdit, mcp__ghost__*, mcp__fault__echo\npermissionMode: bypass\n---\n"
    )
    script: list[Json] = [
        {"tool_calls": [agent_call("greedy", "Take over.", "a1")]},
        {"tool_calls": [call("read_file", {"path": "notes.txt"}, "x1")]},
        {"text": "no luck"},
        {"text": "done"},
    ]
    async with MemoryLlm(script) as llm, running(project, llm, deny=("read_file",)) as rt:
        assert rt.agent is not None
        ended = await rt.agent.run("go", Events())
    assert ended.text == "done"
    # Only the one tool of its list the main agent may use; read_file is denied outright.
    assert offered(llm.requests[1]) == {"mcp__fault__echo"}
    assert "--deny" in tool_results(llm.requests[2])["x1"]
    assert rt.approvals.mode.value == "default"  # its permissionMode changed nothing
    assert tool_results(llm.requests[3])["a1"] == "no luck"


async def test_an_agent_left_with_none_of_its_tools_does_not_start(project: Path) -> None:
    (project / ".claude" / "agents" / "lost.md").write_text(
        "---\nname: lost\ndescription: d\ntools: NotebookEdit, mcp__ghost__*\n---\n"
    )
    script: list[Json] = [{"tool_calls": [agent_call("lost", "Go.", "a1")]}, {"text": "ok"}]
    async with MemoryLlm(script) as llm, running(project, llm) as runtime:
        assert runtime.agent is not None
        await runtime.agent.run("go", Events())
    assert len(llm.requests) == 2  # the sub-agent never asked the model
    assert "given none of the tools it lists" in tool_results(llm.requests[1])["a1"]
