"""MCP prompts as slash commands, above the wire: the index of a server's prompts, arguments
positional or by name, problems in one line, the messages handed over, and completions
asked of the server. The fault server (`features` mode) runs in memory."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from paicli.asks.server_asks import ServerAsks
from paicli.audit.log import AuditLog
from paicli.redact import Redactor
from paicli.servers.manager import ServerManager
from paicli.servers.prompts import PromptIndex, PromptProblem, split_command
from tests.server_programs.fault_server import HOSTILE_PROMPT
from tests.servers.test_manager import fault, in_memory, load


async def index_of(manager: ServerManager) -> PromptIndex:
    await manager.wait_ready()
    index = PromptIndex(manager)
    await index.refresh("fault")
    return index


async def test_typable_prompts_become_commands_and_others_are_kept_aside(tmp_path: Path) -> None:
    entries = load(tmp_path, {"fault": fault("features")})
    async with asyncio.timeout(30), in_memory(entries) as manager:
        index = await index_of(manager)
        names = [c.name for c in index.commands()]
        assert names == ["/mcp__fault__review", "/mcp__fault__chat"]
        assert index.untypable == {"fault": [HOSTILE_PROMPT]}
        review = index.find("/mcp__fault__review")
        assert review is not None and review.usage() == "/mcp__fault__review file [focus]"


async def test_prompts_asked_for_at_once_wait_for_the_listing_under_way(tmp_path: Path) -> None:
    # A server just ready: its listing has been scheduled, not run, when `/help` or the
    # prompt's command is typed. They wait for it instead of finding nothing.
    entries = load(tmp_path, {"fault": fault("features")})
    async with asyncio.timeout(30), in_memory(entries) as manager:
        await manager.wait_ready()
        index = PromptIndex(manager)
        await index.settled()  # nothing under way: returns at once
        index.refresh_soon("fault")
        assert index.commands() == []
        await index.settled()
        assert index.find("/mcp__fault__review") is not None


async def test_arguments_are_positional_in_order_or_by_name(tmp_path: Path) -> None:
    entries = load(tmp_path, {"fault": fault("features")})
    async with asyncio.timeout(30), in_memory(entries) as manager:
        index = await index_of(manager)
        review = index.find("/mcp__fault__review")
        assert review is not None
        assert index.arguments(review, ["a.py", "speed"]) == {"file": "a.py", "focus": "speed"}
        assert index.arguments(review, ["focus=x", "b.py"]) == {"focus": "x", "file": "b.py"}
        # `=` in a value that names no argument is just text.
        assert index.arguments(review, ["a=b"]) == {"file": "a=b"}
        with pytest.raises(PromptProblem, match=r"missing required argument: file \(usage"):
            index.arguments(review, ["focus=x"])
        with pytest.raises(PromptProblem, match="too many arguments"):
            index.arguments(review, ["a", "b", "c"])
        turn = await index.get(review, {"file": "two words.py"})
        assert turn.prior == () and turn.question == "Please review two words.py"


def test_quoted_arguments_keep_their_spaces_and_a_stray_quote_is_one_line() -> None:
    assert split_command('/mcp__s__p "two words" x') == ("/mcp__s__p", ["two words", "x"])
    with pytest.raises(PromptProblem, match="cannot read the arguments"):
        split_command('/mcp__s__p "open')


async def test_completions_come_from_the_server_for_the_argument_being_typed(
    tmp_path: Path,
) -> None:
    entries = load(tmp_path, {"fault": fault("features"), "plain": fault()})
    async with asyncio.timeout(30), in_memory(entries) as manager:
        index = await index_of(manager)
        review = index.find("/mcp__fault__review")
        assert review is not None
        assert await index.complete(review, [], "src/") == [
            "src/app.py",
            "src/cli.py",
            "src/bad\x1b[2Jname.py",
        ]
        assert await index.complete(review, ["a.py"], "s") == ["speed", "security", "style"]
        assert await index.complete(review, [], "focus=st") == ["style"]
        assert await index.complete(review, ["a.py", "x"], "") == []  # no argument left
        await index.refresh("plain")
        assert index.prompts["plain"] == []  # no prompts capability: nothing asked


async def test_every_server_is_given_the_project_folder_as_its_root(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    asks = ServerAsks(
        project,
        AuditLog(tmp_path / "audit", Redactor()),
        session_id="s",
        elicit=None,
        approve_sampling=None,
        model=None,
    )
    entries = load(tmp_path, {"fault": fault()})
    async with asyncio.timeout(30), in_memory(entries, handlers=asks.handlers) as manager:
        await manager.wait_ready(["fault"])
        result = await manager.call_tool("fault", "ask_roots", {})
    answer = json.loads(result.text)
    assert answer["result"] == {"roots": [{"uri": project.resolve().as_uri(), "name": "project"}]}
