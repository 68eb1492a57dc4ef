"""The agent loop end to end, in memory: the real openai client against the scripted model
(tests/llm_memory.py, through the HTTP client the runtime is given), our fault server and the
official SDK's test server behind the tools (tests/memory_connect.py, through the manager's
connector), the real approval and audit wrappers, and the audit file read back."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

import pytest

from paicli.agent.events import (
    AgentEvent,
    ModelReplied,
    Notice,
    Retrying,
    TextDelta,
    ToolFinished,
    ToolProgress,
    ToolRetrying,
    ToolStarted,
    TurnEnded,
)
from paicli.agent.loop import Agent
from paicli.mcp import TextContent
from paicli.permissions.approval import Answer, ApprovalRequest, Choice
from paicli.runtime import Runtime
from paicli.servers.manager import ManagedServer, ServerState
from tests.conftest import SERVER_PROGRAMS
from tests.llm_memory import MemoryLlm
from tests.llm_server import Json
from tests.runtimes import memory_runtime

SECRET = "tok-very-secret-4711"
API_KEY = "sk-test-KEY0123456789"
EventT = TypeVar("EventT", bound=AgentEvent)


@dataclass
class Approvals:
    """An injected approver: answers from a list, records what it was shown."""

    answers: list[Answer] = field(default_factory=list)
    shown: list[str] = field(default_factory=list)
    hook: Callable[[], None] | None = None  # runs while the user "reads" the prompt

    async def __call__(self, request: ApprovalRequest) -> Answer:
        self.shown.append(request.display())
        if self.hook is not None:
            self.hook()
        return self.answers.pop(0) if self.answers else Answer(Choice.DENY)


@dataclass
class Events:
    items: list[AgentEvent] = field(default_factory=list)
    started: asyncio.Event = field(default_factory=asyncio.Event)

    def __call__(self, event: AgentEvent) -> None:
        self.items.append(event)
        if isinstance(event, ToolStarted):
            self.started.set()

    def of(self, kind: type[EventT]) -> list[EventT]:
        return [e for e in self.items if isinstance(e, kind)]


def project(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    root = tmp_path / "project"
    (root / ".paicli").mkdir(parents=True)
    (root / "notes.txt").write_text("alpha\nbeta\n")
    servers = {
        "fault": {
            "command": sys.executable,
            "args": [str(SERVER_PROGRAMS / "fault_server.py")],
            "env": {"API_TOKEN": SECRET},
        },
        "sdk": {"command": sys.executable, "args": [str(SERVER_PROGRAMS / "sdk_server.py")]},
    }
    (root / ".paicli" / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    home = tmp_path / "home"
    environ = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "PAICLI_HOME": str(home / ".paicli"),
        "PAICLI_API_KEY": API_KEY,
    }
    return root, environ


class StartRuntime(Protocol):
    """What `runtime_for` gives a test: open a runtime on the scripted model, with its
    servers ready; returns it and its agent."""

    async def __call__(self, llm: MemoryLlm, approvals: Approvals) -> tuple[Runtime, Agent]: ...


@pytest.fixture
async def runtime_for(tmp_path: Path) -> AsyncIterator[StartRuntime]:
    async with contextlib.AsyncExitStack() as runtimes:

        async def start(llm: MemoryLlm, approvals: Approvals) -> tuple[Runtime, Agent]:
            root, environ = project(tmp_path)
            runtime = await runtimes.enter_async_context(
                memory_runtime(root, environ, llm, approvals)
            )
            async with asyncio.timeout(30):
                await runtime.manager.wait_ready()
            assert runtime.agent is not None  # a model is configured
            return runtime, runtime.agent

        yield start


def audit_lines(runtime: Runtime) -> list[dict[str, object]]:
    """The tool call records (and tool changes), not the session start and end."""
    files = sorted(runtime.home.audit_dir.glob("*.jsonl"))
    records = [json.loads(line) for f in files for line in f.read_text().splitlines()]
    return [r for r in records if not str(r.get("event", "")).startswith("session_")]


async def cancelled_ids(runtime: Runtime) -> list[object]:
    """The request ids the fault server saw cancelled. A cancelled call's task ends only
    after its notifications/cancelled is sent, and the server reads its input in order, so
    a call made afterwards sees every earlier notice."""
    async with asyncio.timeout(10):
        seen = await runtime.manager.call_tool("fault", "cancelled_ids", {})
    (content,) = seen.content
    assert isinstance(content, TextContent)
    ids = json.loads(content.text)
    assert isinstance(ids, list)
    return ids


def request_sent(
    runtime: Runtime, server: str, method: str, monkeypatch: pytest.MonkeyPatch
) -> asyncio.Event:
    """An event set once `server`'s transport has written a `method` request to the server."""
    session = runtime.manager.get(server).session
    assert session is not None
    transport = session.transport
    send = transport.send
    sent = asyncio.Event()

    async def observed(message: dict[str, object]) -> None:
        await send(message)
        if message.get("method") == method:
            sent.set()

    monkeypatch.setattr(transport, "send", observed)
    return sent


def tool_messages(request: Json) -> list[dict[str, Any]]:
    return [m for m in request["messages"] if m["role"] == "tool"]


async def test_a_plain_answer_streams_in_pieces_and_ends_the_turn(
    runtime_for: StartRuntime,
) -> None:
    async with MemoryLlm([{"text": "Hello there, how can I help?"}]) as llm:
        _, agent = await runtime_for(llm, Approvals())
        events = Events()
        ended = await agent.run("hi", events)
    assert ended.reason == "done"
    assert ended.text == "Hello there, how can I help?"
    assert len(events.of(TextDelta)) > 1
    assert "".join(e.text for e in events.of(TextDelta)) == ended.text
    assert llm.authorizations[0] == f"Bearer {API_KEY}"
    offered = {t["function"]["name"] for t in llm.requests[0]["tools"]}
    assert {"read_file", "mcp__fault__echo", "mcp__sdk__add"} <= offered


async def test_a_read_only_builtin_runs_without_asking_and_its_result_goes_back(
    runtime_for: StartRuntime,
) -> None:
    script: list[Json] = [
        {"tool_calls": [{"id": "c1", "name": "read_file", "arguments": '{"path": "notes.txt"}'}]},
        {"text": "The file says alpha and beta."},
    ]
    async with MemoryLlm(script) as llm:
        approvals = Approvals()
        _, agent = await runtime_for(llm, approvals)
        ended = await agent.run("what is in notes.txt?", Events())
    assert ended.reason == "done"
    assert approvals.shown == []
    (result,) = tool_messages(llm.requests[1])
    assert result["tool_call_id"] == "c1"
    assert "alpha" in result["content"] and "beta" in result["content"]


async def test_parallel_mcp_calls_run_together_and_answer_in_call_order(
    runtime_for: StartRuntime,
) -> None:
    script: list[Json] = [
        {
            "tool_calls": [
                {"id": "slow", "name": "mcp__fault__sleep", "arguments": '{"seconds": 0.3}'},
                {"id": "fast", "name": "mcp__sdk__add", "arguments": '{"a": 2, "b": 3}'},
            ]
        },
        {"text": "done"},
    ]
    async with MemoryLlm(script) as llm:
        approvals = Approvals([Answer(Choice.ALLOW_ONCE), Answer(Choice.ALLOW_ONCE)])
        _, agent = await runtime_for(llm, approvals)
        events = Events()
        ended = await agent.run("go", events)
    assert ended.reason == "done"
    finished = [e.call_id for e in events.of(ToolFinished)]
    assert finished == ["fast", "slow"]  # the quick call finished first ...
    results = tool_messages(llm.requests[1])
    assert [m["tool_call_id"] for m in results] == ["slow", "fast"]  # ... but answers in order
    assert "5" in results[1]["content"]
    assert len(approvals.shown) == 2


async def test_malformed_tool_arguments_become_an_error_the_model_reads(
    runtime_for: StartRuntime,
) -> None:
    script: list[Json] = [
        {"tool_calls": [{"id": "bad", "name": "mcp__sdk__add", "arguments": '{"a": 2, "b":'}]},
        {"text": "Sorry, let me fix that."},
    ]
    async with MemoryLlm(script) as llm:
        approvals = Approvals()
        _, agent = await runtime_for(llm, approvals)
        ended = await agent.run("add", Events())
    assert ended.reason == "done"
    (result,) = tool_messages(llm.requests[1])
    assert "not valid JSON" in result["content"]
    assert approvals.shown == []  # nothing to approve: the call never ran


async def test_arguments_that_break_the_server_schema_never_reach_the_server(
    runtime_for: StartRuntime,
) -> None:
    script: list[Json] = [
        {"tool_calls": [{"id": "c", "name": "mcp__sdk__add", "arguments": '{"a": "two"}'}]},
        {"text": "ok"},
    ]
    async with MemoryLlm(script) as llm:
        approvals = Approvals()
        runtime, agent = await runtime_for(llm, approvals)
        await agent.run("add", Events())
    (result,) = tool_messages(llm.requests[1])
    assert "input schema" in result["content"]
    assert approvals.shown == []
    (record,) = audit_lines(runtime)
    assert record["decided_by"] == "validation"


async def test_an_unknown_tool_name_is_answered_with_the_tools_on_offer(
    runtime_for: StartRuntime,
) -> None:
    script: list[Json] = [
        {"tool_calls": [{"id": "c", "name": "delete_everything", "arguments": "{}"}]},
        {"text": "ok"},
    ]
    async with MemoryLlm(script) as llm:
        _, agent = await runtime_for(llm, Approvals())
        await agent.run("x", Events())
    (result,) = tool_messages(llm.requests[1])
    assert "no tool named 'delete_everything'" in result["content"]
    assert "read_file" in result["content"]


async def test_a_rate_limit_is_retried_and_the_user_sees_it(runtime_for: StartRuntime) -> None:
    script: list[Json] = [{"status": 429, "retry_after": 0.05}, {"text": "made it"}]
    async with MemoryLlm(script) as llm:
        _, agent = await runtime_for(llm, Approvals())
        events = Events()
        ended = await agent.run("hi", events)
    assert ended.reason == "done" and ended.text == "made it"
    assert len(events.of(Retrying)) == 1


async def test_a_rejected_key_ends_the_turn_with_one_line_and_no_secret(
    runtime_for: StartRuntime,
) -> None:
    script: list[Json] = [
        {"status": 401, "error": {"message": f"Incorrect API key provided: {API_KEY}"}}
    ]
    async with MemoryLlm(script) as llm:
        _, agent = await runtime_for(llm, Approvals())
        before = list(agent.messages)
        ended = await agent.run("hi", Events())
    assert ended.reason == "error"
    assert ended.error is not None and "\n" not in ended.error
    assert API_KEY not in ended.error
    assert agent.messages == before  # the failed turn left no trace


async def test_a_denial_with_a_message_reaches_the_model_and_the_audit_log(
    runtime_for: StartRuntime,
) -> None:
    arguments = json.dumps({"text": f"Authorization: Bearer {SECRET}"})
    script: list[Json] = [
        {"tool_calls": [{"id": "c", "name": "mcp__fault__echo", "arguments": arguments}]},
        {"text": "understood"},
    ]
    async with MemoryLlm(script) as llm:
        approvals = Approvals([Answer(Choice.DENY_WITH_MESSAGE, "use the notes file instead")])
        runtime, agent = await runtime_for(llm, approvals)
        events = Events()
        await agent.run("echo", events)
    (result,) = tool_messages(llm.requests[1])
    assert "use the notes file instead" in result["content"]
    (finished,) = events.of(ToolFinished)
    assert finished.outcome.decision == "denied"
    (record,) = audit_lines(runtime)
    assert record["tool"] == "mcp__fault__echo" and record["server"] == "fault"
    assert record["decision"] == "denied" and record["decided_by"] == "user"
    raw = b"".join(p.read_bytes() for p in runtime.home.audit_dir.glob("*.jsonl"))
    assert SECRET.encode() not in raw and API_KEY.encode() not in raw


async def test_an_allowed_call_is_audited_with_its_outcome_and_duration(
    runtime_for: StartRuntime,
) -> None:
    script: list[Json] = [
        {"tool_calls": [{"id": "c", "name": "mcp__sdk__echo", "arguments": '{"text": "hey"}'}]},
        {"text": "ok"},
    ]
    async with MemoryLlm(script) as llm:
        runtime, agent = await runtime_for(llm, Approvals([Answer(Choice.ALLOW_ONCE)]))
        await agent.run("echo", Events())
    (record,) = audit_lines(runtime)
    assert record["decision"] == "allowed" and record["decided_by"] == "user"
    assert record["outcome"] == "ok"
    assert isinstance(record["duration_ms"], int | float)
    assert record["arguments"] == {"text": "hey"}


async def test_the_step_budget_stops_a_model_that_never_finishes(runtime_for: StartRuntime) -> None:
    call = {"tool_calls": [{"name": "list_dir", "arguments": "{}"}]}
    async with MemoryLlm([call, call, call]) as llm:
        _, agent = await runtime_for(llm, Approvals())
        agent.max_steps = 2
        events = Events()
        ended = await agent.run("loop forever", events)
    assert ended.reason == "step_budget" and ended.steps == 2
    assert events.of(Notice)
    assert len(llm.requests) == 2


async def test_cancelling_a_turn_cancels_the_mcp_call_and_the_conversation_goes_on(
    runtime_for: StartRuntime, monkeypatch: pytest.MonkeyPatch
) -> None:
    script: list[Json] = [
        {"tool_calls": [{"id": "s", "name": "mcp__fault__sleep", "arguments": '{"seconds": 60}'}]},
        {"text": "fresh start"},
    ]
    async with MemoryLlm(script) as llm:
        runtime, agent = await runtime_for(llm, Approvals([Answer(Choice.ALLOW_ONCE)]))
        sent = request_sent(runtime, "fault", "tools/call", monkeypatch)
        events = Events()
        turn = asyncio.create_task(agent.run("sleep", events))
        async with asyncio.timeout(10):
            await events.started.wait()  # the assistant's call is in the history
            await sent.wait()  # and its request has been written to the server
            turn.cancel()
            with pytest.raises(asyncio.CancelledError):
                await turn
        assert events.of(TurnEnded)[-1].reason == "cancelled"
        assert await cancelled_ids(runtime)  # the server was told
        ended = await agent.run("again", Events())
    assert ended.text == "fresh start"
    (result,) = tool_messages(llm.requests[1])
    assert result["tool_call_id"] == "s" and "Cancelled" in result["content"]
    (record,) = [r for r in audit_lines(runtime) if r["tool"] == "mcp__fault__sleep"]
    assert (record["outcome"], record["decision"], record["decided_by"]) == (
        "cancelled",
        "allowed",
        "user",
    )
    assert isinstance(record["waited_ms"], int)


async def test_a_running_mcp_call_reports_its_progress_after_approval(
    runtime_for: StartRuntime,
) -> None:
    arguments = json.dumps({"steps": 3, "interval": 0.01})
    script: list[Json] = [
        {"tool_calls": [{"id": "p", "name": "mcp__fault__progress", "arguments": arguments}]},
        {"text": "finished"},
    ]
    async with MemoryLlm(script) as llm:
        _, agent = await runtime_for(llm, Approvals([Answer(Choice.ALLOW_ONCE)]))
        events = Events()
        ended = await agent.run("go", events)
    assert ended.text == "finished"
    reports = events.of(ToolProgress)
    assert [(r.call_id, r.progress, r.total, r.message) for r in reports] == [
        ("p", None, None, None),  # approved: running now
        ("p", 1.0, 3.0, "step 1"),
        ("p", 2.0, 3.0, "step 2"),
        ("p", 3.0, 3.0, "step 3"),
    ]
    assert [r.seconds for r in reports] == sorted(r.seconds for r in reports)
    kinds = [type(e).__name__ for e in events.items if not isinstance(e, TextDelta)]
    assert kinds[0] == "ModelReplied"  # the model's reply comes before its calls start
    kinds = [k for k in kinds if k != "ModelReplied"]
    assert kinds.index("ToolStarted") < kinds.index("ToolProgress")
    assert kinds.index("ToolFinished") > len(kinds) - 3


async def test_old_tool_results_are_trimmed_when_the_context_fills(
    runtime_for: StartRuntime,
) -> None:
    big = "x" * 6000
    script: list[Json] = [
        *[
            {
                "tool_calls": [
                    {
                        "id": f"c{i}",
                        "name": "mcp__sdk__echo",
                        "arguments": json.dumps({"text": big}),
                    }
                ]
            }
            for i in range(6)
        ],
        {"text": "done"},
    ]
    async with MemoryLlm(script) as llm:
        _, agent = await runtime_for(llm, Approvals([Answer(Choice.ALLOW_SESSION)]))
        agent.context_window = 12_000
        events = Events()
        ended = await agent.run("echo a lot", events)
    assert ended.reason == "done"
    assert any("trimmed" in e.text for e in events.of(Notice))
    last = tool_messages(llm.requests[-1])
    assert any("trimmed to save context" in m["content"] for m in last)
    assert big in last[-1]["content"]  # the newest result is whole


async def test_older_turns_are_summarised_when_trimming_is_not_enough(
    runtime_for: StartRuntime,
) -> None:
    long = "A" * 8000
    script: list[Json] = [
        {"text": "first answer"},
        {"text": "second answer"},
        {"text": "SUMMARY: the user sent three long messages"},
        {"text": "third answer"},
    ]
    async with MemoryLlm(script) as llm:
        _, agent = await runtime_for(llm, Approvals())
        agent.context_window = 8000
        for text in (long, "B" * 8000):
            await agent.run(text, Events())
        events = Events()
        ended = await agent.run("C" * 8000, events)
    assert ended.text == "third answer"
    summary_request = llm.requests[2]
    assert "tools" not in summary_request
    assert long in summary_request["messages"][-1]["content"]
    sent = json.dumps(llm.requests[3]["messages"])
    assert "SUMMARY: the user sent three long messages" in sent
    assert long not in sent and "B" * 8000 in sent
    assert any("summarised" in e.text for e in events.of(Notice))


CODE_WORD = "The code word is PELICAN-42."


async def three_long_turns(agent: Agent, last: Events) -> TurnEnded:
    """Turn 1 carries the code word; the third turn's context check must summarise."""
    for text in (f"{CODE_WORD} " + "A" * 8000, "B" * 8000):
        await agent.run(text, Events())
    return await agent.run("C" * 8000, last)


@pytest.mark.parametrize(
    "summary_reply",
    [{"status": 400, "error": {"message": "context length exceeded"}}, {"text": "  "}],
    ids=["http-400", "empty-summary"],
)
async def test_a_failed_summary_keeps_the_whole_conversation_and_says_so(
    runtime_for: StartRuntime, summary_reply: Json
) -> None:
    script: list[Json] = [{"text": "one"}, {"text": "two"}, summary_reply, {"text": "three"}]
    async with MemoryLlm(script) as llm:
        _, agent = await runtime_for(llm, Approvals())
        agent.context_window = 9000  # over 80% of it, below the whole
        events = Events()
        ended = await three_long_turns(agent, events)
    assert ended.reason == "done" and ended.text == "three"
    assert "Summarise the conversation" in llm.requests[2]["messages"][0]["content"]
    assert CODE_WORD in json.dumps(llm.requests[3]["messages"])
    assert CODE_WORD in json.dumps(agent.messages)
    notices = [e.text for e in events.of(Notice)]
    assert len(notices) == 1, notices
    assert "summarising the 1 oldest turns failed" in notices[0]
    assert "the whole conversation is kept" in notices[0]
    assert "dropped" not in notices[0] and "summarised" not in notices[0]


async def test_turns_are_dropped_only_past_the_whole_window_and_each_is_named(
    runtime_for: StartRuntime,
) -> None:
    script: list[Json] = [
        {"text": "one"},
        {"text": "two"},
        {"status": 400, "error": {"message": "context length exceeded"}},
        {"text": "three"},
    ]
    async with MemoryLlm(script) as llm:
        _, agent = await runtime_for(llm, Approvals())
        agent.context_window = 8000
        await agent.run(f"{CODE_WORD} " + "A" * 8000, Events())
        await agent.run("B" * 8000, Events())
        agent.context_window = 5000  # now smaller than the conversation itself
        events = Events()
        ended = await agent.run("C" * 8000, events)
    assert ended.text == "three"
    assert CODE_WORD not in json.dumps(llm.requests[3]["messages"])
    assert "B" * 8000 in json.dumps(llm.requests[3]["messages"])
    (dropped,) = (e.text for e in events.of(Notice))
    assert "summarising the 1 oldest turns failed (" in dropped
    assert "context length exceeded" in dropped
    assert "its 1 oldest turns were dropped: 1. 'The code word is PELICAN-42. AAAA" in dropped
    assert "(2 messages)" in dropped


async def test_an_empty_answer_is_kept_as_empty_text_not_null(runtime_for: StartRuntime) -> None:
    async with MemoryLlm([{"text": ""}, {"text": "ok"}]) as llm:
        _, agent = await runtime_for(llm, Approvals())
        await agent.run("say nothing", Events())
        await agent.run("now say ok", Events())
    answer = llm.requests[1]["messages"][-2]
    assert answer == {"role": "assistant", "content": ""}


async def test_a_model_failure_after_summarising_restores_the_history_exactly(
    runtime_for: StartRuntime,
) -> None:
    echo = {"name": "mcp__sdk__echo", "arguments": '{"text": "hi"}'}
    script: list[Json] = [
        {"text": "one"},
        {"text": "two"},
        {"tool_calls": [{"id": "c1", **echo}, {"id": "c2", **echo}]},
        {"text": "SUMMARY"},
        {"status": 400, "error": {"message": "bad request"}},
    ]
    async with MemoryLlm(script) as llm:
        approvals = Approvals([Answer(Choice.ALLOW_ONCE), Answer(Choice.ALLOW_ONCE)])
        _, agent = await runtime_for(llm, approvals)
        agent.offer = None  # every tool offered: a small window must not defer them instead
        for text in ("A" * 8000, "B" * 8000):
            await agent.run(text, Events())
        before = json.dumps(agent.messages)

        def shrink() -> None:
            agent.context_window = 8000  # the next step must summarise

        approvals.hook = shrink
        events = Events()
        ended = await agent.run("C", events)
    assert ended.reason == "error"
    assert any("summarised" in e.text for e in events.of(Notice))
    assert json.dumps(agent.messages) == before


async def test_arguments_with_an_unpaired_surrogate_are_refused(runtime_for: StartRuntime) -> None:
    script: list[Json] = [
        {"tool_calls": [{"id": "c", "name": "read_file", "arguments": '{"path": "a\\ud800"}'}]},
        {"text": "ok"},
    ]
    async with MemoryLlm(script) as llm:
        _, agent = await runtime_for(llm, Approvals())
        ended = await agent.run("read", Events())
    assert ended.reason == "done"
    (result,) = tool_messages(llm.requests[1])
    assert "unpaired surrogate" in result["content"]


async def test_a_retried_call_shows_each_attempt_and_audits_each_one(tmp_path: Path) -> None:
    """`sleep` is listed in retryTools; every attempt outlasts the 0.2 s timeout."""
    root, environ = project(tmp_path)
    fault = {
        "command": sys.executable,
        "args": [str(SERVER_PROGRAMS / "fault_server.py")],
        "timeout": 0.2,
        "retry": {"attempts": 2, "backoff": 0.01, "on": ["timeout"]},
        "retryTools": ["sleep"],
    }
    (root / ".paicli" / "mcp.json").write_text(json.dumps({"mcpServers": {"fault": fault}}))
    call = {"id": "c1", "name": "mcp__fault__sleep", "arguments": '{"seconds": 30}'}
    script: list[Json] = [{"tool_calls": [call]}, {"text": "gave up"}]
    async with MemoryLlm(script) as llm:
        approvals = Approvals([Answer(Choice.ALLOW_ONCE)])
        async with memory_runtime(root, environ, llm, approvals) as runtime:
            async with asyncio.timeout(30):
                await runtime.manager.wait_ready()
            assert runtime.agent is not None
            events = Events()
            await runtime.agent.run("go", events)
            records = audit_lines(runtime)
    assert [(e.call_id, e.line) for e in events.of(ToolRetrying)] == [
        ("c1", "retry 2/2 after timeout")
    ]
    shown = (TextDelta, ToolProgress, ModelReplied)
    kinds = [type(e).__name__ for e in events.items if not isinstance(e, shown)]
    assert kinds[:3] == ["ToolStarted", "ToolRetrying", "ToolFinished"]
    (finished,) = events.of(ToolFinished)
    assert finished.outcome.is_error and "timed out after 0.2s" in finished.outcome.text
    calls = [r for r in records if r.get("tool") == "mcp__fault__sleep"]
    assert [(r["outcome"], r.get("attempt")) for r in calls] == [("error", 1), ("error", 2)]
    assert approvals.shown and len(approvals.shown) == 1  # asked once, for the whole call


async def test_a_crashed_server_is_said_so_then_started_again_by_the_next_call(
    tmp_path: Path,
) -> None:
    """The fault server exits mid-call (restart: never, the default); the model reads that
    the server crashed and the call was not repeated, then calls one of its tools again,
    which starts the server again. Both calls are in the audit log."""
    crash = {"id": "c1", "name": "mcp__fault__exit", "arguments": '{"code": 3}'}
    again = {"id": "c2", "name": "mcp__fault__echo", "arguments": '{"text": "hi"}'}
    script: list[Json] = [
        {"tool_calls": [crash]},
        {"text": "it died"},
        {"tool_calls": [again]},
        {"text": "back"},
    ]
    root, environ = project(tmp_path)
    crashed = asyncio.Event()

    def watch(server: ManagedServer) -> None:
        if server.name == "fault" and server.state is ServerState.ERROR:
            crashed.set()

    async with MemoryLlm(script) as llm:
        approvals = Approvals([Answer(Choice.ALLOW_ONCE), Answer(Choice.ALLOW_ONCE)])
        runtime_ = memory_runtime(root, environ, llm, approvals, on_server_change=watch)
        async with runtime_ as runtime, asyncio.timeout(30):
            await runtime.manager.wait_ready()
            assert runtime.agent is not None
            await runtime.agent.run("crash it", Events())
            await crashed.wait()
            await runtime.agent.run("try again", Events())
            records = audit_lines(runtime)
    (first,) = tool_messages(llm.requests[1])
    assert "the server crashed during the call" in first["content"]
    assert "the call was not repeated" in first["content"]
    offered = {t["function"]["name"] for t in llm.requests[2]["tools"]}
    assert "mcp__fault__echo" in offered  # still offered after the crash
    _, result = tool_messages(llm.requests[3])
    assert "hi" in result["content"] and "Error" not in result["content"]
    calls = [(r["tool"], r["decision"]) for r in records]
    assert ("mcp__fault__exit", "allowed") in calls
    assert ("mcp__fault__echo", "allowed") in calls


async def test_the_system_prompt_carries_the_memory_file_and_each_servers_instructions(
    tmp_path: Path,
) -> None:
    root, environ = project(tmp_path)
    (root / "PAICLI.md").write_text("The code word is PINEAPPLE. Tests run with make check.")
    script: list[Json] = [{"text": "ok"}, {"text": "still ok"}]
    async with MemoryLlm(script) as llm:
        async with memory_runtime(root, environ, llm, Approvals()) as runtime:
            async with asyncio.timeout(30):
                await runtime.manager.wait_ready()
            assert runtime.agent is not None
            await runtime.agent.run("hi", Events())
            (root / "PAICLI.md").write_text("The code word is now MANGO.")
            await runtime.agent.run("again", Events())
    first, second = (request["messages"][0]["content"] for request in llm.requests)
    assert '<memory file="PAICLI.md">' in first and "PINEAPPLE" in first
    assert '<server-instructions server="sdk">' in first
    assert "Test server for paicli interop." in first
    assert "MANGO" in second and "PINEAPPLE" not in second  # re-read between requests
    assert second.startswith("You are paicli")
