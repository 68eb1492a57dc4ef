"""Hooks in the REPL, in a real terminal (a pty): a project's hooks are shown as written
(escaped) and asked about before they may run, `--trust-project` notwithstanding; once
approved, a PreToolUse hook matched on an MCP server's tools (`mcp__fault__.*`) blocks a
call; the user's Notification hook runs before an approval question."""

from __future__ import annotations

import json
import re
import sys
from typing import Any

import pytest

from tests.hooks.test_hooks_oneshot import HOOK
from tests.llm_server import ScriptedLlm
from tests.ui.test_repl import MARK, Places, add_servers, goodbye, paicli, places

pytestmark = pytest.mark.real

__all__ = ["places"]  # the fixture, used by name


def hook(mode: str, *more: str) -> dict[str, Any]:
    command = " ".join([f'"{sys.executable}"', f'"{HOOK}"', mode, *more])
    return {"type": "command", "command": command}


async def test_a_projects_hooks_are_asked_about_then_block_an_mcp_call(places: Places) -> None:
    add_servers(places, "fault")
    project_hooks = {
        "PreToolUse": [
            {"matcher": "mcp__fault__.*", "hooks": [hook("block", "'\x1b]0;pwned\x07'")]}
        ]
    }
    claude = places.project / ".claude"
    claude.mkdir()
    (claude / "settings.json").write_text(json.dumps({"hooks": project_hooks}))
    user_hooks = {
        "Notification": [{"matcher": "permission_prompt", "hooks": [hook("log")]}],
        "SessionStart": [{"hooks": [hook("log")]}],
        "SessionEnd": [{"hooks": [hook("log")]}],
    }
    places.paicli_home.mkdir(parents=True)
    (places.paicli_home / "settings.json").write_text(json.dumps({"hooks": user_hooks}))
    echo = {"id": "call_1", "name": "mcp__fault__echo", "arguments": json.dumps({"text": "hi"})}
    write = {
        "id": "call_2",
        "name": "write_file",
        "arguments": json.dumps({"path": "notes.txt", "content": "x\n"}),
    }
    script: list[dict[str, Any]] = [
        {"tool_calls": [echo]},
        {"tool_calls": [write]},
        {"text": "All done."},
    ]
    async with ScriptedLlm(script) as llm, paicli(places, llm) as term:
        await term.expect("This project configures 1 hooks")
        await term.expect(r"\u001b]0;pwned\u0007")  # as written, escaped
        await term.expect("Run these hooks?")
        term.line("y")
        await term.expect(MARK)
        term.line("echo hi, then write the notes")
        await term.expect("Allow?")  # the write: the echo was blocked unasked
        term.line("n")
        await term.expect("All done.")
        await term.expect(MARK)
        term.line("/clear")
        await term.expect("Started a new conversation.")
        await term.expect(MARK)
        assert await goodbye(term) == 0
    assert "\x1b]0;pwned" not in term.raw
    blocked = llm.requests[1]["messages"][-1]
    assert blocked["tool_call_id"] == "call_1"
    assert "no writes in this project" in blocked["content"]
    events = [
        (
            e["hook_event_name"],
            e.get("tool_name") or e.get("notification_type") or e.get("source") or e.get("reason"),
        )
        for e in map(json.loads, (places.project / "hook-log.jsonl").read_text().splitlines())
    ]
    assert events == [
        ("SessionStart", "startup"),
        ("PreToolUse", "mcp__fault__echo"),
        ("Notification", "permission_prompt"),
        ("SessionEnd", "clear"),
        ("SessionStart", "clear"),
        ("SessionEnd", "other"),
    ]
    approvals = places.paicli_home / "approved-hooks.json"
    assert approvals.stat().st_mode & 0o777 == 0o600
    assert re.fullmatch(
        r"[0-9a-f]{64}", next(iter(json.loads(approvals.read_text()).values()))["approved"]
    )
