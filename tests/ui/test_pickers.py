"""The REPL's pickers and `/doctor` in a real terminal (issue 27): `/resume` lists this
folder's conversations and a key picks one, `/model` picks a model the endpoint lists or a
provider preset, and `/doctor`
examines the configured server as `paicli mcp doctor` does."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.conftest import SERVER_PROGRAMS
from tests.llm_server import ScriptedLlm

from .test_single_key_approvals import MARK, bye, repl

# Real processes, sockets or terminals are the point here (not the in-memory tier).
pytestmark = pytest.mark.real


async def test_resume_picks_a_saved_conversation_with_one_key(tmp_path: Path) -> None:
    """An earlier conversation in this folder (saved as a run saves one; that a run saves it
    is test_repl.py's), then a new run, `/resume` and one key."""
    from paicli.agent.sessions import SessionStore  # noqa: PLC0415

    (tmp_path / "project").mkdir()
    sessions = tmp_path / "home" / ".paicli" / "sessions"
    sessions.mkdir(parents=True)
    SessionStore(sessions, tmp_path / "project").save(
        SessionStore.new_id(),
        [
            {"role": "user", "content": "remember the word pelican"},
            {"role": "assistant", "content": "Noted."},
        ],
    )
    script = [{"text": "Other."}, {"text": "It was pelican."}]
    async with ScriptedLlm(script) as llm:
        async with repl(tmp_path, llm) as term:
            term.line("something else")
            await term.expect("Other.")
            await term.expect(MARK)
            term.line("/resume")
            await term.expect("Resume which conversation?")
            await term.expect("remember the word pelican")
            term.send("1")
            await term.expect("Resumed ")
            await term.expect("(1 turns): remember the word pelican")
            await term.expect(MARK)
            term.line("what was the word?")
            await term.expect("It was pelican.")
            await bye(term)
    said = [m.get("content") for m in llm.requests[-1]["messages"] if m["role"] == "user"]
    assert said == ["remember the word pelican", "what was the word?"]


async def test_model_picks_one_the_endpoint_offers_and_esc_picks_none(tmp_path: Path) -> None:
    async with ScriptedLlm([]) as llm, repl(tmp_path, llm) as term:
        llm.model_ids = ["alpha-1", "beta-2", "scripted"]
        term.line("/model")
        await term.expect("Switch to which model?")
        await term.expect("(in use)")
        await term.expect("preset ollama")
        term.send("\x1b")  # Esc: nothing changes
        await term.expect("Model unchanged.")
        await term.expect(MARK)
        term.line("/model")
        await term.expect("Switch to which model?")
        term.send("2")  # beta-2, the second model the endpoint lists
        await term.expect("Model: ")
        await term.expect("beta-2")
        await bye(term)


async def test_model_falls_back_to_presets_when_the_endpoint_lists_none(tmp_path: Path) -> None:
    async with ScriptedLlm([]) as llm, repl(tmp_path, llm) as term:
        llm.models_answer = (401, "no")
        term.line("/model")
        await term.expect("No model list: authentication failed for ")
        await term.expect("Switch to which model?")
        term.send("7")  # ollama, the seventh preset: needs no key
        await term.expect("Model: ")
        await term.expect("ollama")
        await bye(term)


async def test_doctor_examines_the_configured_server(tmp_path: Path) -> None:
    (tmp_path / "home" / ".paicli").mkdir(parents=True)
    server = {"command": sys.executable, "args": [str(SERVER_PROGRAMS / "fault_server.py")]}
    config = {"mcpServers": {"fault": server}}
    (tmp_path / "home" / ".paicli" / "mcp.json").write_text(json.dumps(config))
    async with ScriptedLlm([]) as llm, repl(tmp_path, llm) as term:
        term.line("/doctor")
        await term.expect("Model: ")
        await term.expect("fault (stdio)")
        await term.expect("handshake")
        await bye(term)


async def test_a_hostile_saved_title_is_shown_escaped_in_the_picker(tmp_path: Path) -> None:
    """A conversation file's title is text like any other: escaped, never obeyed."""
    from paicli.agent.sessions import SessionStore  # noqa: PLC0415

    (tmp_path / "project").mkdir()
    store = SessionStore(tmp_path / "home" / ".paicli" / "sessions", tmp_path / "project")
    (tmp_path / "home" / ".paicli" / "sessions").mkdir(parents=True)
    hostile = "look\x1b]0;owned\x07 here\x1b[2J"
    store.save(SessionStore.new_id(), [{"role": "user", "content": hostile}])
    async with ScriptedLlm([]) as llm, repl(tmp_path, llm) as term:
        term.line("/resume")
        await term.expect("Resume which conversation?")
        await term.expect(r"look\x1b]0;owned\x07 here\x1b[2J")
        term.send("\x1b")
        await term.expect("No conversation chosen.")
        await bye(term)
    assert "\x1b]0;owned" not in term.raw
