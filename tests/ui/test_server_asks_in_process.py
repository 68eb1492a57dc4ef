"""MCP features in the REPL, in process (tests/ui/repl_in_process.py): a server's prompts as
slash commands, an elicitation form filled in or declined, a sampling request approved and
answered by the scripted model. The fault server in `features` mode runs in memory; the pty
test of a form (test_repl_server_asks.py) keeps what only a terminal shows."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.audit_records import audit_records as read_audit
from tests.conftest import SERVER_PROGRAMS
from tests.model_view import unfenced
from tests.ui.repl_in_process import ReplInProcess, repl_in_process
from tests.ui.test_repl_in_process import places

__all__ = ["places"]  # the fixture, used by name

FEATURES = {
    "command": sys.executable,
    "args": [str(SERVER_PROGRAMS / "fault_server.py"), "--mode", "features"],
}


# Escapes a hostile server might put in a form's message.
HOSTILE = "Who are you?\x1b[2J\x1b]0;pwned\x07\u202e"


async def ready(repl: ReplInProcess) -> None:
    await repl.expect(re.compile(r"✓ fault  stdio  13 tools|MCP servers: 1/1 ready"))
    await repl.line_reads("")


async def goodbye(repl: ReplInProcess) -> int:
    repl.send_keys("ctrl-d")
    await repl.expect("Bye.")
    return await repl.exit_code()


def requests(repl: ReplInProcess) -> list[dict[str, Any]]:
    assert repl.llm is not None
    return repl.llm.requests


def audit_records(home: Path) -> list[dict[str, Any]]:
    return read_audit(home / ".paicli" / "audit")


async def test_a_prompt_runs_as_a_slash_command_with_tab_completion_from_the_server(
    places: tuple[Path, Path],
) -> None:
    project, home = places
    script: list[dict[str, Any]] = [{"text": "Reviewed."}, {"text": "Styled."}]
    async with repl_in_process(project, home, servers={"fault": FEATURES}, script=script) as repl:
        await ready(repl)
        repl.line("/help")
        await repl.expect("MCP prompts")
        await repl.expect("/mcp__fault__review file [focus]  Review a file")
        # The description's escapes and the untypable name are shown escaped.
        await repl.expect(r"/mcp__fault__chat  A conversation \x1b[31mwith an image\x1b[0m")
        await repl.expect(r"cannot be typed")
        await repl.line_reads("")
        repl.send("/mcp__fault__rev")
        repl.send_keys("tab")
        await repl.line_reads("/mcp__fault__review")
        repl.send(" src/a")
        repl.send_keys("tab")  # one candidate from the server: completed
        await repl.line_reads("/mcp__fault__review src/app.py")
        repl.send(" sec")  # the second argument, `focus`: the server's candidate
        repl.send_keys("tab")
        await repl.line_reads("/mcp__fault__review src/app.py security")
        repl.send_keys("enter")
        await repl.expect("sending the prompt /mcp__fault__review")
        await repl.expect("Reviewed.")
        await repl.line_reads("")
        # Missing required arguments: one line naming them, nothing sent.
        repl.line("/mcp__fault__review")
        await repl.expect("missing required argument: file")
        await repl.line_reads("")
        # name=value, and a prompt whose image is described, not sent.
        repl.line("/mcp__fault__review focus=style file=README.md")
        await repl.expect("Styled.")
        await repl.line_reads("")
        assert await goodbye(repl) == 0
    asked = requests(repl)[0]["messages"][-1]
    assert asked == {"role": "user", "content": "Please review src/app.py, focusing on security"}
    assert requests(repl)[1]["messages"][-1]["content"] == (
        "Please review README.md, focusing on style"
    )
    # The file name with an escape the server offered never reached the screen as itself.
    assert "\x1b[2J" not in repl.screen.getvalue()
    assert "\x1b[31mwith" not in repl.screen.getvalue()


async def test_a_prompt_with_earlier_messages_and_an_image_hands_them_over_in_order(
    places: tuple[Path, Path],
) -> None:
    project, home = places
    script: list[dict[str, Any]] = [{"text": "A picture."}]
    async with repl_in_process(project, home, servers={"fault": FEATURES}, script=script) as repl:
        await ready(repl)
        repl.line("/mcp__fault__chat")
        await repl.expect("left out: image content (image/png) (text only)")
        await repl.expect("A picture.")
        await repl.line_reads("")
        assert await goodbye(repl) == 0
    sent = [m for m in requests(repl)[0]["messages"] if m["role"] != "system"]
    assert sent == [
        {"role": "user", "content": "Hello"},
        {"role": "assistant", "content": "Hi! What now?"},
        {"role": "user", "content": "Describe it."},
    ]


async def test_an_elicitation_form_is_filled_in_checked_and_sent(
    places: tuple[Path, Path],
) -> None:
    project, home = places
    call = {"id": "c1", "name": "mcp__fault__form", "arguments": json.dumps({"message": HOSTILE})}
    script: list[dict[str, Any]] = [{"tool_calls": [call]}, {"text": "Thanks."}]
    async with repl_in_process(project, home, servers={"fault": FEATURES}, script=script) as repl:
        await ready(repl)
        repl.line("ask me")
        await repl.expect("Allow?")
        repl.line("y")
        await repl.expect("MCP server fault asks for input")
        await repl.expect(r"Who are you?\x1b[2J\x1b]0;pwned\x07\u202e")
        await repl.expect("Fill in the form?")
        repl.line("y")
        await repl.expect("name (string, 2.. characters):")
        repl.line("A")  # too short: said, and asked again
        await repl.expect("name: at least 2 characters")
        await repl.expect("name (string")
        repl.line("Ada")
        await repl.expect("age (integer, 0..150):")
        repl.line("old")
        await repl.expect("age: not a whole number")
        await repl.expect("age (integer")
        repl.line("36")
        await repl.expect("2. Green")
        await repl.expect("colour (one of the numbers):")
        repl.line("2")
        await repl.expect("subscribe (y/n) [false]:")
        repl.line("")
        await repl.expect("city (string) [")
        repl.line("")
        await repl.expect('city: "Paris"')
        await repl.expect("Send these answers?")
        repl.line("y")
        await repl.expect("Thanks.")
        await repl.line_reads("")
        assert await goodbye(repl) == 0
    raw = repl.screen.getvalue()
    assert "\x1b[2J" not in raw and "\u202e" not in raw and "pwned\x07" not in raw
    reply = json.loads(unfenced(requests(repl)[1]["messages"][-1]["content"]))
    assert reply["result"] == {
        "action": "accept",
        "content": {"name": "Ada", "age": 36, "colour": "g", "subscribe": False, "city": "Paris"},
    }
    [asked] = [r for r in audit_records(home) if r["tool"] == "elicitation/create"]
    assert asked["server"] == "fault" and asked["outcome"] == "accept"
    assert asked["decided_by"] == "user" and "Ada" not in json.dumps(asked)


async def test_an_elicitation_can_be_declined_at_once(places: tuple[Path, Path]) -> None:
    project, home = places
    call = {"id": "c1", "name": "mcp__fault__form", "arguments": "{}"}
    script: list[dict[str, Any]] = [{"tool_calls": [call]}, {"text": "Fine."}]
    async with repl_in_process(project, home, servers={"fault": FEATURES}, script=script) as repl:
        await ready(repl)
        repl.line("ask me")
        await repl.expect("Allow?")
        repl.line("y")
        await repl.expect("Fill in the form?")
        repl.line("d")
        await repl.expect("Fine.")
        await repl.line_reads("")
        assert await goodbye(repl) == 0
    reply = json.loads(unfenced(requests(repl)[1]["messages"][-1]["content"]))
    assert reply["result"] == {"action": "decline"}


@pytest.mark.parametrize(("approve", "send"), [(True, True), (False, False), (True, False)])
async def test_a_sampling_request_is_shown_and_answered_by_the_model_when_approved(
    places: tuple[Path, Path], approve: bool, send: bool
) -> None:
    project, home = places
    arguments = {"text": "Say hi\x1b[2J", "max_tokens": 42}
    call = {"id": "c1", "name": "mcp__fault__ask_model", "arguments": json.dumps(arguments)}
    script: list[dict[str, Any]] = [{"tool_calls": [call]}]
    script += [{"text": "hi from the model"}] if approve else []
    script += [{"text": "Done."}]
    async with repl_in_process(project, home, servers={"fault": FEATURES}, script=script) as repl:
        await ready(repl)
        repl.line("sample")
        await repl.expect("Allow?")
        repl.line("y")
        await repl.expect("MCP server fault asks your model (sampling)")
        await repl.expect("Up to 42 tokens from your model")
        await repl.expect("system: Answer briefly.")
        await repl.expect(r"user: Say hi\x1b[2J")
        await repl.expect("Let your model answer it?")
        repl.line("y" if approve else "n")
        if approve:  # the model's answer is shown before it goes to the server
            await repl.expect("Your model's answer for fault")
            await repl.expect("hi from the model")
            await repl.expect("Send this answer to the server?")
            repl.line("y" if send else "n")
        await repl.expect("Done.")
        await repl.line_reads("")
        assert await goodbye(repl) == 0
    assert "\x1b[2J" not in repl.screen.getvalue()
    sent = requests(repl)
    reply = json.loads(unfenced(sent[-1]["messages"][-1]["content"]))
    [record] = [r for r in audit_records(home) if r["tool"] == "sampling/createMessage"]
    if approve and not send:
        assert reply["error"]["code"] == -1
        assert record["outcome"] == "withheld" and record["decision"] == "denied"
    elif approve:
        sample = sent[1]
        assert sample["max_tokens"] == 42 and "tools" not in sample
        assert sample["messages"] == [
            {"role": "system", "content": "Answer briefly."},
            {"role": "user", "content": "Say hi\x1b[2J"},
        ]
        assert reply["result"] == {
            "role": "assistant",
            "content": {"type": "text", "text": "hi from the model"},
            "model": "scripted",
            "stopReason": "endTurn",
        }
        assert record["outcome"] == "ok" and record["decision"] == "allowed"
    else:
        assert len(sent) == 2
        assert reply["error"]["code"] == -1
        assert record["outcome"] == "denied" and record["decided_by"] == "user"
