"""Tool search end to end, in memory: with more tools than `max_tools`, the model's requests
carry the built-ins and `search_tools`; a search makes the tools it found callable for the
rest of the turn, a called tool stays offered in the next turns, and the search is audited.
The real openai client talks to the scripted model; the tools are our fault server's and the
official SDK's test server's, reached through the runtime's manager."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from paicli.agent.events import Notice
from paicli.permissions.approval import Answer, Choice
from paicli.runtime import Runtime
from paicli.tools.search.offer import CHARS_PER_TOKEN, budget_tokens
from tests.agent.test_loop import Approvals, Events, audit_lines, project, tool_messages
from tests.conftest import SERVER_PROGRAMS
from tests.llm_memory import MemoryLlm
from tests.llm_server import Json
from tests.runtimes import memory_runtime

BUILTINS = {"read_file", "write_file", "edit_file", "list_dir", "glob", "grep", "execute_command"}
BUILTINS |= {"web_fetch"}  # web_search only with a provider configured
# The agent's own tools are offered like the built-ins: never deferred.
BUILTINS |= {"todo_write", "Agent"}

Start = Callable[[MemoryLlm, Approvals, str], contextlib.AbstractAsyncContextManager[Runtime]]


def write_settings(home: Path, config: str) -> None:
    home.mkdir(parents=True, mode=0o700)
    (home / "config.toml").write_text(config)


@pytest.fixture
def start(tmp_path: Path) -> Start:
    @contextlib.asynccontextmanager
    async def opened(llm: MemoryLlm, approvals: Approvals, config: str) -> AsyncIterator[Runtime]:
        root, environ = project(tmp_path)
        write_settings(Path(environ["PAICLI_HOME"]), config)
        async with memory_runtime(root, environ, llm, approvals) as runtime:
            async with asyncio.timeout(30):
                await runtime.manager.wait_ready()
            yield runtime

    return opened


def offered(request: Json) -> set[str]:
    return {t["function"]["name"] for t in request.get("tools", [])}


def call(call_id: str, name: str, arguments: str) -> Json:
    return {"tool_calls": [{"id": call_id, "name": name, "arguments": arguments}]}


def notices(events: Events) -> Sequence[str]:
    return [e.text for e in events.of(Notice)]


async def test_a_search_offers_what_it_found_for_the_rest_of_the_turn(start: Start) -> None:
    script: list[Json] = [
        call("s", "search_tools", '{"query": "add two numbers"}'),
        call("a", "mcp__sdk__add", '{"a": 2, "b": 40}'),
        {"text": "42"},
        {"text": "next turn"},
    ]
    async with MemoryLlm(script) as llm:
        approvals = Approvals([Answer(Choice.ALLOW_ONCE)])
        async with start(llm, approvals, "max_tools = 3\n") as runtime:
            assert runtime.agent is not None
            events = Events()
            ended = await runtime.agent.run("what is 2 + 40?", events)
            await runtime.agent.run("thanks", Events())
            records = audit_lines(runtime)
    assert ended.text == "42"
    first, second, _, next_turn = llm.requests
    # Deferred: the built-ins and the search tool only, and the user is told once.
    assert offered(first) == {*BUILTINS, "search_tools"}
    (told,) = [n for n in notices(events) if n.startswith("Tool search:")]
    assert "MCP tools are left out" in told
    # The search returned the tool's whole definition, and the next request carries it.
    (found,) = tool_messages(second)
    assert '"name": "mcp__sdk__add"' in found["content"]
    assert '"parameters"' in found["content"]
    assert "mcp__sdk__add" in offered(second)
    assert "42" in tool_messages(llm.requests[2])[-1]["content"]
    # A tool the model called stays offered in the next turn; the search results do not.
    assert offered(next_turn) == {*BUILTINS, "search_tools", "mcp__sdk__add"}
    # The search is a read-only call: audited, never asked about.
    assert [r["tool"] for r in records] == ["search_tools", "mcp__sdk__add"]
    assert records[0]["decision"] == "allowed"
    assert len(approvals.shown) == 1


async def test_a_deferred_tool_called_by_name_still_runs_through_approval(start: Start) -> None:
    script: list[Json] = [call("e", "mcp__fault__echo", '{"text": "hi"}'), {"text": "done"}]
    async with MemoryLlm(script) as llm:
        approvals = Approvals([Answer(Choice.DENY)])
        async with start(llm, approvals, "max_tools = 3\n") as runtime:
            assert runtime.agent is not None
            await runtime.agent.run("echo hi", Events())
    assert "mcp__fault__echo" not in offered(llm.requests[0])
    assert len(approvals.shown) == 1  # asked, like any MCP call
    (result,) = tool_messages(llm.requests[1])
    assert "denied" in result["content"]


async def test_a_server_of_thousands_of_tools_costs_a_request_little(tmp_path: Path) -> None:
    """The crowded fault server lists 2,000 tools more (its default of 20,000, 3.6 MB of
    definitions, costs seconds of listing and pinning that prove nothing more here): the
    first request carries the built-ins and search_tools, and after a search the found
    tools, within the budget (10% of the default 32k window)."""
    root, environ = project(tmp_path)
    crowd = {
        "command": sys.executable,
        "args": [str(SERVER_PROGRAMS / "fault_server.py"), "--mode", "crowded", "--tools", "2000"],
    }
    (root / ".paicli" / "mcp.json").write_text(json.dumps({"mcpServers": {"crowd": crowd}}))
    write_settings(Path(environ["PAICLI_HOME"]), "")
    script: list[Json] = [
        call("s", "search_tools", '{"query": "fetch record 17", "limit": 10}'),
        {"text": "found"},
    ]
    async with MemoryLlm(script) as llm:
        async with memory_runtime(root, environ, llm, Approvals()) as runtime:
            async with asyncio.timeout(30):
                await runtime.manager.wait_ready()
            assert runtime.agent is not None
            events = Events()
            await runtime.agent.run("fetch record 17", events)
    first, second = llm.requests
    assert offered(first) == {*BUILTINS, "search_tools"}
    assert len(json.dumps(first["tools"])) < 10_000
    (told,) = [n for n in notices(events) if n.startswith("Tool search:")]
    assert "2011 of 2011 MCP tools are left out" in told
    (found,) = tool_messages(second)
    assert '"name": "mcp__crowd__record_17"' in found["content"]
    mcp_tools = [t for t in second["tools"] if t["function"]["name"].startswith("mcp__")]
    assert "mcp__crowd__record_17" in offered(second)
    assert len(json.dumps(mcp_tools)) <= budget_tokens(32_768) * CHARS_PER_TOKEN


@pytest.mark.parametrize("config", ["", "tool_search = false\nmax_tools = 3\n"])
async def test_few_tools_or_search_turned_off_offer_everything(start: Start, config: str) -> None:
    async with MemoryLlm([{"text": "hi"}]) as llm:
        async with start(llm, Approvals(), config) as runtime:
            assert runtime.agent is not None
            events = Events()
            await runtime.agent.run("hello", events)
    names = offered(llm.requests[0])
    assert "search_tools" not in names
    assert {"mcp__sdk__add", "mcp__fault__echo"} <= names
    assert not [n for n in notices(events) if n.startswith("Tool search:")]


@pytest.mark.parametrize(
    ("arguments", "error"),
    [
        ('{"query": ""}', "needs a 'query'"),
        ('{"query": "x", "limit": 1000}', "'limit' must be"),
        ('{"query": "zzzqqq nothing"}', "No tool matches"),
        ('{"query": "echo text", "server": "fault"}', '"name": "mcp__fault__echo"'),
    ],
)
async def test_bad_or_empty_searches_are_results_the_model_reads(
    start: Start, arguments: str, error: str
) -> None:
    script: list[Json] = [call("s", "search_tools", arguments), {"text": "ok"}]
    async with MemoryLlm(script) as llm:
        async with start(llm, Approvals(), "max_tools = 3\n") as runtime:
            assert runtime.agent is not None
            await runtime.agent.run("find", Events())
    (result,) = tool_messages(llm.requests[1])
    content: Any = result["content"]
    assert error in content
    assert "mcp__sdk__" not in content  # the fault server's only, when it is named


async def test_a_bad_setting_is_one_problem_line_and_search_stays_on(start: Start) -> None:
    async with MemoryLlm([]) as llm:
        async with start(llm, Approvals(), 'max_tools = "many"\ntool_search = 3\n') as runtime:
            problems = runtime.problems
            assert runtime.offer.enabled
            assert runtime.offer.max_tools is None
    assert any("max_tools must be a positive whole number" in p for p in problems)
    assert any("tool_search must be true or false" in p for p in problems)
