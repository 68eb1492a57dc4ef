"""MCP prompts as slash commands, above the wire: the index of a server's prompts, arguments
positional or by name, problems in one line, the messages handed over, and completions
asked of the server. The fault server (`features` mode) runs in memory."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, cast

import pytest
from rich.console import Console

from paicli.asks.server_asks import ServerAsks
from paicli.audit.log import AuditLog
from paicli.redact import Redactor
from paicli.servers.manager import ServerManager
from paicli.servers.prompts import (
    HELP_WAIT,
    LIST_TIMEOUT,
    PromptIndex,
    PromptProblem,
    split_command,
)
from paicli.ui.commands import BY_NAME, SlashContext
from paicli.ui.slash_turns import mcp_prompt_turn
from tests.server_programs.fault_server import HOSTILE_PROMPT
from tests.servers.test_manager import fault, in_memory, load

if TYPE_CHECKING:
    from paicli.runtime import Runtime


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


@contextlib.asynccontextmanager
async def listing_silently(tmp_path: Path) -> AsyncIterator[PromptIndex]:
    """`fault`'s prompts listed; the listing of `silent` (which never answers prompts/list)
    under way throughout, as just after the start."""
    silent = fault("features")
    silent["args"] = [*silent["args"], "--silent-prompts"]
    entries = load(tmp_path, {"fault": fault("features"), "silent": silent})
    async with asyncio.timeout(30), in_memory(entries) as manager:
        await manager.wait_ready()
        index = PromptIndex(manager)
        await index.refresh("fault")
        listing = index.refresh_soon("silent")
        yield index
        assert not listing.done()
        listing.cancel()


async def test_help_waits_a_moment_only_for_a_listing_that_never_answers(tmp_path: Path) -> None:
    # `/help` right after the start, one server silent on prompts/list: it shows what is
    # listed after HELP_WAIT, not after the whole list timeout of the silent one.
    async with listing_silently(tmp_path) as index:
        screen = io.StringIO()
        context = SlashContext(
            runtime=cast("Runtime", None),  # `/help` reads no runtime
            console=Console(file=screen, width=200),
            leave=lambda: None,
            prompts=index,
        )
        loop = asyncio.get_running_loop()
        began = loop.time()
        await BY_NAME["/help"].run(context, [])
        assert loop.time() - began < HELP_WAIT + 1 < LIST_TIMEOUT
        assert "/mcp__fault__review" in screen.getvalue()


async def test_a_listed_prompt_runs_at_once_beside_a_silent_listing(tmp_path: Path) -> None:
    # A prompt already listed need not wait for another server's listing (which may take
    # the list timeout): it is sent at once.
    async with listing_silently(tmp_path) as index:
        console = Console(file=io.StringIO(), width=120)
        async with asyncio.timeout(HELP_WAIT):
            turn = await mcp_prompt_turn(index, console, "/mcp__fault__review a.py")
        assert turn is not None and "Please review a.py" in str(turn[0])


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
