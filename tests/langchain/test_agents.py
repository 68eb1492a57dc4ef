"""LangChain's own agents drive bridged tools unchanged: `create_agent` and LangGraph's
prebuilt ReAct agent, with `ChatOpenAI` talking to our scripted OpenAI-compatible server over
real HTTP on 127.0.0.1, calling a tool of a real stdio MCP server; async and sync."""

from __future__ import annotations

import asyncio
import json
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool
from pydantic import SecretStr

from paicli.langchain import load_tools
from tests.langchain.conftest import tool_server
from tests.llm_server import ScriptedLlm

if TYPE_CHECKING:
    from langchain_openai import ChatOpenAI

# The agent libraries (langchain.agents, langgraph, langchain_openai with the openai SDK) are
# about 1 s of CPU to import: they load in the tests, not when every pytest worker collects
# this module, and the tests share one worker.
pytestmark = [pytest.mark.real, pytest.mark.xdist_group("langchain-agents")]

SCRIPT: list[dict[str, Any]] = [
    {"tool_calls": [{"name": "weather", "arguments": '{"city": "Oslo"}', "id": "call_1"}]},
    {"text": "It is 21 degrees in Oslo."},
]


def model(llm: ScriptedLlm) -> ChatOpenAI:
    from langchain_openai import ChatOpenAI  # noqa: PLC0415 - see pytestmark

    return ChatOpenAI(
        model="scripted-model", base_url=llm.base_url, api_key=SecretStr("sk-test"), max_retries=0
    )


def ask(text: str) -> Any:
    """An agent's input (typed loosely: each agent declares its own state type)."""
    return {"messages": [HumanMessage(text)]}


def check_run(llm: ScriptedLlm, result: dict[str, Any]) -> None:
    messages = result["messages"]
    tool_message = next(m for m in messages if isinstance(m, ToolMessage))
    assert tool_message.artifact == {"city": "Oslo", "celsius": 21}
    assert isinstance(messages[-1], AIMessage)
    assert messages[-1].content == "It is 21 degrees in Oslo."
    # The model was offered the server's schema, and read the server's answer.
    first, second = llm.requests
    offered = {t["function"]["name"]: t["function"] for t in first["tools"]}
    assert offered["weather"]["parameters"]["properties"] == {"city": {"type": "string"}}
    answer = next(m for m in second["messages"] if m["role"] == "tool")
    assert json.loads(answer["content"]) == {"city": "Oslo", "celsius": 21}


async def test_create_agent_calls_an_mcp_tool_async() -> None:
    from langchain.agents import create_agent  # noqa: PLC0415 - see pytestmark

    async with ScriptedLlm(SCRIPT) as llm, load_tools(tool_server()) as tools:
        agent = create_agent(model(llm), tools)
        result = await agent.ainvoke(ask("Weather in Oslo?"))
        check_run(llm, result)


async def test_create_agent_calls_an_mcp_tool_from_synchronous_code() -> None:
    from langchain.agents import create_agent  # noqa: PLC0415 - see pytestmark
    from langchain_openai import ChatOpenAI  # noqa: PLC0415

    def run_sync(base_url: str) -> dict[str, Any]:
        # A plain thread with no event loop: tools on the private loop, agent.invoke blocking.
        with load_tools(tool_server(), include=["weather"]) as tools:
            chat = ChatOpenAI(
                model="scripted-model", base_url=base_url, api_key=SecretStr("sk-test")
            )
            agent = create_agent(chat, tools)
            result: dict[str, Any] = agent.invoke(ask("Weather in Oslo?"))
            return result

    async with ScriptedLlm(SCRIPT) as llm:
        result = await asyncio.to_thread(run_sync, llm.base_url)
        check_run(llm, result)


async def test_langgraph_prebuilt_react_agent_calls_an_mcp_tool() -> None:
    from langgraph.prebuilt import create_react_agent  # noqa: PLC0415 - see pytestmark

    with warnings.catch_warnings():
        # create_react_agent is deprecated in favour of create_agent, and still widely used.
        warnings.simplefilter("ignore")
        async with ScriptedLlm(SCRIPT) as llm, load_tools(tool_server()) as tools:
            listed: Sequence[BaseTool] = tools
            agent = create_react_agent(model(llm), listed)
            result = await agent.ainvoke(ask("Weather in Oslo?"))
    check_run(llm, result)


async def test_a_tool_error_reaches_the_model_when_the_tool_handles_errors() -> None:
    script: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "fail", "arguments": '{"reason": "no key"}', "id": "c1"}]},
        {"text": "The tool failed."},
    ]
    from langchain.agents import create_agent  # noqa: PLC0415 - see pytestmark

    async with ScriptedLlm(script) as llm, load_tools(tool_server(), include=["fail"]) as tools:
        tools[0].handle_tool_error = True
        agent = create_agent(model(llm), tools)
        result = await agent.ainvoke(ask("Try it"))
        answer = next(m for m in llm.requests[1]["messages"] if m["role"] == "tool")
        assert answer["content"] == "failed: no key"
        assert result["messages"][-1].content == "The tool failed."
