"""MCP features in the REPL as a user meets them, in a real pseudo-terminal: a server's prompts
as slash commands (Tab completion asks the server), an elicitation form filled in, a sampling
request approved and answered by the scripted model. The fault server in `features` mode."""

from __future__ import annotations

import json
import re
import sys
from typing import Any

import pytest

from tests.llm_server import ScriptedLlm
from tests.model_view import unfenced

from .terminal import Terminal
from .test_repl import FAULT, MARK, Places, accepted, audit_records, goodbye, paicli, places

pytestmark = pytest.mark.real

__all__ = ["places"]  # the fixture, used by name

# Escapes a hostile server might put in a form's message.
HOSTILE = "Who are you?\x1b[2J\x1b]0;pwned\x07\u202e"


def add_features_server(places: Places) -> None:
    args = [FAULT, "--mode", "features", "--initial-stderr", places.marker]
    servers = {"fault": {"command": sys.executable, "args": args}}
    folder = places.project / ".paicli"
    folder.mkdir(exist_ok=True)
    (folder / "mcp.json").write_text(json.dumps({"mcpServers": servers}))


async def ready(term: Terminal) -> None:
    await term.expect(re.compile(r"✓ fault  stdio  13 tools|MCP servers: 1/1 ready"))
    await term.expect(MARK)


async def test_a_prompt_runs_as_a_slash_command_with_tab_completion_from_the_server(
    places: Places,
) -> None:
    add_features_server(places)
    script: list[dict[str, Any]] = [{"text": "Reviewed."}, {"text": "Styled."}]
    async with ScriptedLlm(script) as llm, paicli(places, llm) as term:
        await ready(term)
        term.line("/help")
        await term.expect("MCP prompts")
        await term.expect("/mcp__fault__review file [focus]  Review a file")
        # The description's escapes and the untypable name are shown escaped.
        await term.expect(r"/mcp__fault__chat  A conversation \x1b[31mwith an image\x1b[0m")
        await term.expect(r"cannot be typed")
        await term.expect(MARK)
        term.send("/mcp__fault__rev")
        term.send_keys("tab")
        await term.expect("iew")
        term.send(" src/a")
        term.send_keys("tab")  # one candidate from the server: completed
        await term.expect("pp.py")
        term.send(" sec")  # the second argument, `focus`: the server's candidate
        term.send_keys("tab")
        await term.expect("urity")
        term.send_keys("enter")
        await term.expect(accepted("/mcp__fault__review src/app.py security"))
        await term.expect("sending the prompt /mcp__fault__review")
        await term.expect("Reviewed.")
        await term.expect(MARK)
        # Missing required arguments: one line naming them, nothing sent.
        term.line("/mcp__fault__review")
        await term.expect("missing required argument: file")
        await term.expect(MARK)
        # name=value, and a prompt whose image is described, not sent.
        term.line("/mcp__fault__review focus=style file=README.md")
        await term.expect("Styled.")
        await term.expect(MARK)
        assert await goodbye(term) == 0
    asked = llm.requests[0]["messages"][-1]
    assert asked == {"role": "user", "content": "Please review src/app.py, focusing on security"}
    assert llm.requests[1]["messages"][-1]["content"] == (
        "Please review README.md, focusing on style"
    )
    # The file name with an escape the server offered never reached the screen as itself.
    assert "\x1b[2J" not in term.raw
    assert "\x1b[31mwith" not in term.raw


async def test_a_prompt_with_earlier_messages_and_an_image_hands_them_over_in_order(
    places: Places,
) -> None:
    add_features_server(places)
    async with ScriptedLlm([{"text": "A picture."}]) as llm, paicli(places, llm) as term:
        await ready(term)
        term.line("/mcp__fault__chat")
        await term.expect("left out: image content (image/png) (text only)")
        await term.expect("A picture.")
        await term.expect(MARK)
        assert await goodbye(term) == 0
    sent = [m for m in llm.requests[0]["messages"] if m["role"] != "system"]
    assert sent == [
        {"role": "user", "content": "Hello"},
        {"role": "assistant", "content": "Hi! What now?"},
        {"role": "user", "content": "Describe it."},
    ]


async def test_an_elicitation_form_is_filled_in_checked_and_sent(places: Places) -> None:
    add_features_server(places)
    call = {"id": "c1", "name": "mcp__fault__form", "arguments": json.dumps({"message": HOSTILE})}
    script: list[dict[str, Any]] = [{"tool_calls": [call]}, {"text": "Thanks."}]
    async with ScriptedLlm(script) as llm, paicli(places, llm) as term:
        await ready(term)
        term.line("ask me")
        await term.expect("Allow?")
        term.line("y")
        await term.expect("MCP server fault asks for input")
        await term.expect(r"Who are you?\x1b[2J\x1b]0;pwned\x07\u202e")
        await term.expect("Fill in the form?")
        term.line("y")
        await term.expect("name (string, 2.. characters):")
        term.line("A")  # too short: said, and asked again
        await term.expect("name: at least 2 characters")
        await term.expect("name (string")
        term.line("Ada")
        await term.expect("age (integer, 0..150):")
        term.line("old")
        await term.expect("age: not a whole number")
        await term.expect("age (integer")
        term.line("36")
        await term.expect("2. Green")
        await term.expect("colour (one of the numbers):")
        term.line("2")
        await term.expect("subscribe (y/n) [false]:")
        term.line("")
        await term.expect("city (string) [")
        term.line("")
        await term.expect('city: "Paris"')
        await term.expect("Send these answers?")
        term.line("y")
        await term.expect("Thanks.")
        await term.expect(MARK)
        assert await goodbye(term) == 0
    assert "\x1b[2J" not in term.raw and "\u202e" not in term.raw and "pwned\x07" not in term.raw
    reply = json.loads(unfenced(llm.requests[1]["messages"][-1]["content"]))
    assert reply["result"] == {
        "action": "accept",
        "content": {"name": "Ada", "age": 36, "colour": "g", "subscribe": False, "city": "Paris"},
    }
    [asked] = [r for r in audit_records(places) if r["tool"] == "elicitation/create"]
    assert asked["server"] == "fault" and asked["outcome"] == "accept"
    assert asked["decided_by"] == "user" and "Ada" not in json.dumps(asked)


async def test_an_elicitation_can_be_declined_at_once(places: Places) -> None:
    add_features_server(places)
    call = {"id": "c1", "name": "mcp__fault__form", "arguments": "{}"}
    script: list[dict[str, Any]] = [{"tool_calls": [call]}, {"text": "Fine."}]
    async with ScriptedLlm(script) as llm, paicli(places, llm) as term:
        await ready(term)
        term.line("ask me")
        await term.expect("Allow?")
        term.line("y")
        await term.expect("Fill in the form?")
        term.line("d")
        await term.expect("Fine.")
        await term.expect(MARK)
        assert await goodbye(term) == 0
    reply = json.loads(unfenced(llm.requests[1]["messages"][-1]["content"]))
    assert reply["result"] == {"action": "decline"}


@pytest.mark.parametrize(("approve", "send"), [(True, True), (False, False), (True, False)])
async def test_a_sampling_request_is_shown_and_answered_by_the_model_when_approved(
    places: Places, approve: bool, send: bool
) -> None:
    add_features_server(places)
    arguments = {"text": "Say hi\x1b[2J", "max_tokens": 42}
    call = {"id": "c1", "name": "mcp__fault__ask_model", "arguments": json.dumps(arguments)}
    script: list[dict[str, Any]] = [{"tool_calls": [call]}]
    script += [{"text": "hi from the model"}] if approve else []
    script += [{"text": "Done."}]
    async with ScriptedLlm(script) as llm, paicli(places, llm) as term:
        await ready(term)
        term.line("sample")
        await term.expect("Allow?")
        term.line("y")
        await term.expect("MCP server fault asks your model (sampling)")
        await term.expect("Up to 42 tokens from your model")
        await term.expect("system: Answer briefly.")
        await term.expect(r"user: Say hi\x1b[2J")
        await term.expect("Let your model answer it?")
        term.line("y" if approve else "n")
        if approve:  # the model's answer is shown before it goes to the server
            await term.expect("Your model's answer for fault")
            await term.expect("hi from the model")
            await term.expect("Send this answer to the server?")
            term.line("y" if send else "n")
        await term.expect("Done.")
        await term.expect(MARK)
        assert await goodbye(term) == 0
    assert "\x1b[2J" not in term.raw
    reply = json.loads(unfenced(llm.requests[-1]["messages"][-1]["content"]))
    records = [r for r in audit_records(places) if r["tool"] == "sampling/createMessage"]
    [record] = records
    if approve and not send:
        assert reply["error"]["code"] == -1
        assert record["outcome"] == "withheld" and record["decision"] == "denied"
    elif approve:
        sample = llm.requests[1]
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
        assert len(llm.requests) == 2
        assert reply["error"]["code"] == -1
        assert record["outcome"] == "denied" and record["decided_by"] == "user"


async def test_a_form_asking_for_a_secret_warns_and_hides_what_is_typed(places: Places) -> None:
    """A server asking for a password: a warning names the fields, the typed value shows as
    stars and never on screen, the server gets it, and when the server echoes it into its tool
    result the model reads [REDACTED]."""
    add_features_server(places)
    typed, pin = "Typed-Pa55word-0451", "90817263"
    arguments = {"message": "Log in to the service", "fields": "user,password,pin"}
    call = {"id": "c1", "name": "mcp__fault__form", "arguments": json.dumps(arguments)}
    script: list[dict[str, Any]] = [{"tool_calls": [call]}, {"text": "Logged in."}]
    async with ScriptedLlm(script) as llm, paicli(places, llm) as term:
        await ready(term)
        term.line("log me in")
        await term.expect("Allow?")
        term.line("y")
        await term.expect("MCP server fault asks for input")
        await term.expect("fault asks for a secret (password, pin)")
        await term.expect("Fill in the form?")
        term.line("y")
        await term.expect("user (string):")
        term.line("ada")
        await term.expect("password (string, hidden):")
        term.line(typed)
        await term.expect("*" * len(typed))
        await term.expect("pin (string, hidden):")
        term.line(pin)
        await term.expect('user: "ada"')
        await term.expect("pin: (hidden)")  # (the screen's own net shows password: [REDACTED])
        await term.expect("Send these answers?")
        term.line("y")
        await term.expect("Logged in.")
        await term.expect(MARK)
        assert await goodbye(term) == 0
    assert typed not in term.raw and pin not in term.raw
    log = (places.paicli_home / "logs" / "mcp" / "fault.log").read_text()
    assert f'"password": "{typed}", "pin": "{pin}"' in log  # the server got what was typed
    reply = json.loads(unfenced(llm.requests[1]["messages"][-1]["content"]))
    hidden = {"user": "ada", "password": "[REDACTED]", "pin": "[REDACTED]"}
    assert reply["result"]["content"] == hidden
    assert typed not in json.dumps(llm.requests) and pin not in json.dumps(llm.requests)
