"""Sub-agents and the todo list in the REPL as a user meets them: `paicli` in a real
pseudo-terminal, the scripted model on 127.0.0.1, the sub-agent's command a real process."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.llm_server import Json, ScriptedLlm
from tests.processes import processes_with, until
from tests.ui.test_repl import MARK, Places, answer, audit_records, goodbye, paicli, places

pytestmark = pytest.mark.real

__all__ = ["places"]  # the fixture, shared with test_repl.py


def napping(marker: str) -> bool:
    """Whether the command `nap` (below) runs: its own process, past any sandbox set-up."""
    for pid in processes_with(marker):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv[1:3] == [b"-c", b"import time; time.sleep(300)"]:
            return True
    return False


def call(name: str, arguments: dict[str, Any], call_id: str) -> Json:
    return {"id": call_id, "name": name, "arguments": json.dumps(arguments)}


async def test_ctrl_c_stops_a_sub_agent_and_its_command_and_the_session_goes_on(
    places: Places,
) -> None:
    nap = [sys.executable, "-c", "import time; time.sleep(300)", places.marker]
    script: list[Json] = [
        {"tool_calls": [call("Agent", {"description": "nap", "prompt": "Wait."}, "a1")]},
        {"tool_calls": [call("execute_command", {"argv": nap, "timeout": 280}, "x1")]},
        {"text": "fresh start"},
    ]
    async with ScriptedLlm(script) as llm, paicli(places, llm) as term:
        await term.expect(MARK)
        term.line("hand it over")
        await term.expect("Asked by the sub-agent general-purpose")
        await answer(term, "y", "execute_command")
        # The command itself, not only the sandbox around it still starting: cancelling
        # bwrap while it sets up is a race of bwrap's own (see the integrator's notes).
        await until(lambda: napping(places.marker))
        term.send_keys("ctrl-c")
        await term.expect("Interrupted.", timeout=10)
        await term.expect(MARK)
        # Only the turn stopped: its command with it, not paicli.
        await until(lambda: processes_with(places.marker) == [])
        term.line("again")
        await term.expect("fresh start")
        await term.expect(MARK)
        assert await goodbye(term) == 0
    again = llm.requests[2]["messages"]
    answered = [m for m in again if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in answered] == ["a1"]
    assert "Cancelled" in answered[0]["content"]
    records = {r["tool"]: r for r in audit_records(places)}
    assert records["Agent"]["outcome"] == "cancelled"
    command = records["execute_command"]
    assert (command["agent"], command["decided_by"], command["outcome"]) == (
        "general-purpose",
        "user",
        "cancelled",
    )


async def test_the_todo_list_is_drawn_as_a_checklist(places: Places) -> None:
    todos = [
        {"content": "Read the code", "status": "completed", "activeForm": "Reading the code"},
        {"content": "Run the tests", "status": "in_progress", "activeForm": "Running the tests"},
        {"content": "Fix \x1b[31mred", "status": "pending", "activeForm": "Fixing"},
    ]
    script: list[Json] = [
        {"tool_calls": [call("todo_write", {"todos": todos}, "t1")]},
        {"text": "Working on it."},
    ]
    async with ScriptedLlm(script) as llm, paicli(places, llm) as term:
        await term.expect(MARK)
        term.line("make a plan")
        await term.expect("⏺ Todo list")
        await term.expect("☒ Read the code")
        await term.expect("◼ Running the tests")
        await term.expect("☐ Fix \\x1b[31mred")
        await term.expect("Working on it.")
        await term.expect(MARK)
        assert await goodbye(term) == 0
