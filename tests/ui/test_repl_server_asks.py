"""MCP features in the REPL as a user meets them, in a real pseudo-terminal: a form asking for
a secret (what is typed is hidden on the terminal). The fault server in `features` mode. The
REPL's logic for a server's prompts, forms and sampling requests is tested in process
(test_server_asks_in_process.py)."""

from __future__ import annotations

import json
import re
import sys
from typing import Any

import pytest

from tests.llm_server import ScriptedLlm
from tests.model_view import unfenced

from .terminal import Terminal
from .test_repl import FAULT, MARK, Places, goodbye, paicli, places

pytestmark = pytest.mark.real

__all__ = ["places"]  # the fixture, used by name


def add_features_server(places: Places) -> None:
    args = [FAULT, "--mode", "features", "--initial-stderr", places.marker]
    servers = {"fault": {"command": sys.executable, "args": args}}
    folder = places.project / ".paicli"
    folder.mkdir(exist_ok=True)
    (folder / "mcp.json").write_text(json.dumps({"mcpServers": servers}))


async def ready(term: Terminal) -> None:
    await term.expect(re.compile(r"✓ fault  stdio  13 tools|MCP servers: 1/1 ready"))
    await term.expect(MARK)


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
    # The server got what was typed; its log (like the screen) redacts the secret field.
    assert f'"password": "[REDACTED]", "pin": "{pin}"' in log and typed not in log
    reply = json.loads(unfenced(llm.requests[1]["messages"][-1]["content"]))
    hidden = {"user": "ada", "password": "[REDACTED]", "pin": "[REDACTED]"}
    assert reply["result"]["content"] == hidden
    assert typed not in json.dumps(llm.requests) and pin not in json.dumps(llm.requests)
