"""The example tools of examples/tools through the LangChain bridge: the POSIX shell tool and
the C tool (compiled here with the machine's `cc`) speak the minimal JSON-RPC dialect, the
Python one full MCP; each is made with `MCPTool.from_executable`, called sync and async, and
used by `create_agent` with `ChatOpenAI` against the scripted model on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import ToolException
from pydantic import SecretStr

from paicli.langchain import MCPTool, load_tools
from paicli.mcp import StdioServer
from tests.conftest import REPO, SERVER_PROGRAMS
from tests.llm_server import ScriptedLlm

# The agent libraries load in the one test that uses them, and it shares a worker with
# tests/langchain/test_agents.py (see there).
pytestmark = [pytest.mark.real, pytest.mark.xdist_group("langchain-agents")]

TOOLS = REPO / "examples" / "tools"
TEXT = 'say "hi" \\ and é'


def test_the_shell_tool_in_the_minimal_dialect_by_its_relative_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(REPO)
    with MCPTool.from_executable(
        name="word_count", executable_path="examples/tools/shell/tools.sh"
    ) as count:
        assert count.tool_call_schema["properties"].keys() == {"text"}  # type: ignore[index]
        call = {"type": "tool_call", "id": "c1", "name": "word_count", "args": {"text": "a b c"}}
        message = count.invoke(call)
        assert isinstance(message, ToolMessage)
        assert message.artifact == {"words": 3}
        assert json.loads(str(message.content)) == {"words": 3}


def test_the_compiled_c_build_answers_sync_and_async(c_build: Path) -> None:
    with MCPTool.from_executable(name="echo", executable_path=c_build) as echo:
        assert echo.invoke({"text": TEXT}) == TEXT
        assert asyncio.run(echo.ainvoke({"text": "async"})) == "async"


def test_a_fragile_minimal_tool_gets_only_calls_and_its_errors_raise_tool_exception() -> None:
    # This tool exits on any message that is not a call of one of its tools (a notification,
    # a list, a ping, a cancellation): every call below would fail after such a message.
    argv = [str(SERVER_PROGRAMS / "minimal_tool.py"), "--crash-on-unexpected"]
    with load_tools(StdioServer(sys.executable, argv), timeout=0.3) as tools:
        by_name = {t.name: t for t in tools}
        assert by_name["nothing"].args == {}  # no input_schema: an object of no properties
        with pytest.raises(ToolException, match="this tool always fails"):
            by_name["fail"].invoke({})
        with pytest.raises(TimeoutError):
            by_name["sleep"].invoke({"seconds": 0.6})
        by_name["echo"].timeout = 10
        assert by_name["echo"].invoke({"text": TEXT}) == TEXT
        stats = by_name["stats"].invoke(
            {"type": "tool_call", "id": "s", "name": "stats", "args": {"text": "a b"}}
        )
        assert stats.artifact == {"length": 3, "words": ["a", "b"]}


@pytest.mark.parametrize("language", ["python", "shell", "c"])
async def test_create_agent_calls_each_example_tool(language: str, c_build: Path) -> None:
    from langchain.agents import create_agent  # noqa: PLC0415 - see pytestmark
    from langchain_openai import ChatOpenAI  # noqa: PLC0415

    argv = {
        "python": [sys.executable, str(TOOLS / "python" / "tools.py")],
        "shell": ["/bin/sh", str(TOOLS / "shell" / "tools.sh")],
        "c": [str(c_build)],
    }[language]
    script: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "word_count", "arguments": '{"text": "one two"}', "id": "w"}]},
        {"text": "Two words."},
    ]
    server = StdioServer(argv[0], argv[1:])
    async with ScriptedLlm(script) as llm, load_tools(server, include=["word_count"]) as tools:
        chat = ChatOpenAI(model="scripted-model", base_url=llm.base_url, api_key=SecretStr("k"))
        agent = create_agent(chat, tools)
        ask: Any = {"messages": [HumanMessage("How many words in 'one two'?")]}
        result = await agent.ainvoke(ask)
        answer = next(m for m in llm.requests[1]["messages"] if m["role"] == "tool")
        assert json.loads(answer["content"]) == {"words": 2}
        assert result["messages"][-1].content == "Two words."
