"""Bridged tools and toolsets pickle as their servers' descriptions and options, never a
session; unpickled, they open one session per process on first use and reuse it. The
official SDK's server runs in this process (in-memory tier); tests/langchain/
test_pickling_processes.py and test_ray.py send them to other processes for real."""

from __future__ import annotations

import ast
import copy
import io
import json
import pickle
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import ToolException

import paicli.langchain
from paicli.langchain import MCPTool, McpToolset
from paicli.langchain._shared import close_shared
from paicli.mcp import ClientHandlers, ClientSession, EraCache, HttpServer, StdioServer
from paicli.permissions.approval import ApprovalRequest
from tests.conftest import sdk_server
from tests.memory_connect import memory_connector

SECRET = "sk-live-pickled-secret-456"
# The labels of the sessions `counting_connector` opened, in order.
opened: list[str] = []


@asynccontextmanager
async def counting_connector(
    spec: StdioServer | HttpServer,
    /,
    *,
    name: str,
    handlers: ClientHandlers | None,
    era_cache: EraCache,
) -> AsyncIterator[ClientSession]:
    """`memory_connector`, counting what it opens (module-level: pickled by its name)."""
    opened.append(spec.label)
    async with memory_connector(spec, name=name, handlers=handlers, era_cache=era_cache) as s:
        yield s


def deny(request: ApprovalRequest) -> bool:
    return False


@pytest.fixture(autouse=True)
def fresh_sessions() -> Iterator[None]:
    opened.clear()
    yield
    close_shared()


def toolset(**options: Any) -> McpToolset:
    server = sdk_server(env={"API_TOKEN": SECRET}, name="sdk")
    return McpToolset([server], include=["echo", "add"], connector=counting_connector, **options)


def total(text: str) -> int:
    return int(json.loads(text)["total"])


def by_name(tools: list[MCPTool]) -> dict[str, MCPTool]:
    return {t.name: t for t in tools}


class _Recording(pickle.Unpickler):
    """Unpickles, writing down every class and function the pickle names."""

    def __init__(self, data: bytes) -> None:
        super().__init__(io.BytesIO(data))
        self.named: set[str] = set()

    def find_class(self, module: str, name: str) -> Any:
        self.named.add(f"{module}.{name}")
        return super().find_class(module, name)


async def test_a_pickled_tool_is_its_server_s_description_and_options_never_a_session() -> None:
    async with toolset(timeout=7.0) as tools:
        data = pickle.dumps(tools)
    reader = _Recording(data)
    revived = by_name(reader.load())
    # Classes and functions only: no session, process, lock or loop could be in it.
    assert reader.named == {
        "paicli.langchain.tool._unpickled",
        "paicli.langchain.tool.MCPTool",
        "paicli.langchain._shared.SharedServer",
        "paicli.mcp._server_spec.StdioServer",
        "tests.langchain.test_pickling.counting_connector",
    }
    # The server's secrets travel with it, as they must for the receiver to start it.
    assert SECRET.encode() in data
    echo = revived["echo"]
    assert echo.link_spec() == sdk_server(env={"API_TOKEN": SECRET}, name="sdk")
    assert (echo.remote_name, echo.server, echo.timeout) == ("echo", "sdk", 7.0)
    assert echo.description == by_name(tools)["echo"].description
    assert opened == ["sdk"]  # the sender's own session; unpickling opened nothing
    assert await echo.ainvoke({"text": "over the wire"}) == "over the wire"


async def test_tools_unpickled_in_one_process_share_one_session_opened_on_first_use() -> None:
    async with toolset() as tools:
        data = pickle.dumps(tools)
    opened.clear()
    first, second = by_name(pickle.loads(data)), by_name(pickle.loads(data))
    assert opened == []
    assert await first["echo"].ainvoke({"text": "one"}) == "one"
    assert total(await second["add"].ainvoke({"a": 1, "b": 2})) == 3
    assert second["echo"].invoke({"text": "sync"}) == "sync"
    second["echo"].close()  # a received tool leaves the process's session to the next task
    assert total(await first["add"].ainvoke({"a": 2, "b": 2})) == 4
    assert opened == ["sdk"]


async def test_a_toolset_sent_unopened_opens_on_the_process_s_shared_session() -> None:
    data = pickle.dumps(toolset(timeout=5.0))
    assert SECRET.encode() in data
    for _ in range(2):  # two tasks in one worker
        async with pickle.loads(data) as tools:
            echo = by_name(tools)["echo"]
            assert echo.timeout == 5.0
            assert await echo.ainvoke({"text": "task"}) == "task"
    with pickle.loads(data) as tools:
        assert sorted(t.name for t in tools) == ["add", "echo"]
    assert opened == ["sdk"]


async def test_a_toolset_sent_open_keeps_its_tools_and_lists_nothing_again() -> None:
    sent = toolset()
    async with sent:
        data = pickle.dumps(sent)
    received = pickle.loads(data)
    assert sorted(t.name for t in received) == ["add", "echo"]  # usable before any open
    assert total(await received.by_name()["add"].ainvoke({"a": 2, "b": 3})) == 5
    async with received as tools:
        assert tools is received.tools
    await received.aclose()
    assert opened == ["sdk", "sdk"]  # the sender's, then this process's one (by the call)
    assert received.by_name()["echo"].invoke({"text": "still open"}) == "still open"


async def test_approval_and_audit_go_with_the_tools_one_guard_for_those_sent_together(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PAICLI_HOME", str(tmp_path / "home"))
    folder = tmp_path / "audit"
    async with toolset(approve=deny, audit=folder) as tools:
        data = pickle.dumps(tools)
    opened.clear()
    revived = by_name(pickle.loads(data))
    with pytest.raises(ToolException, match="The user denied this tool call"):
        await revived["echo"].ainvoke({"text": f"token {SECRET}"})
    with pytest.raises(ToolException, match="The user denied this tool call"):
        await revived["add"].ainvoke({"a": 1, "b": 2})
    (day_file,) = folder.iterdir()
    records = [json.loads(line) for line in day_file.read_text().splitlines()]
    calls = [r for r in records if not str(r.get("event", "")).startswith("session_")]
    assert [r["decision"] for r in calls] == ["denied", "denied"]
    assert len({r["session"] for r in calls}) == 1  # one guard, as in the sending process
    assert SECRET not in day_file.read_text()
    assert opened == []  # denied calls never reached a server


async def test_a_copied_tool_keeps_its_session_and_guard(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PAICLI_HOME", str(tmp_path / "home"))
    async with toolset(audit=tmp_path / "audit") as tools:
        revived = by_name(pickle.loads(pickle.dumps(tools)))
        for tool in (by_name(tools)["echo"], revived["echo"]):
            assert await copy.deepcopy(tool).ainvoke({"text": "copied"}) == "copied"
    assert opened == ["sdk", "sdk"]  # the sender's, and this process's shared one
    (day_file,) = (tmp_path / "audit").iterdir()
    assert day_file.read_text().count('"outcome": "ok"') == 2


def test_the_bridge_never_imports_ray() -> None:
    folder = Path(paicli.langchain.__file__).parent
    for module in folder.glob("*.py"):
        for node in ast.walk(ast.parse(module.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            assert not any(n == "ray" or n.startswith("ray.") for n in names), module
