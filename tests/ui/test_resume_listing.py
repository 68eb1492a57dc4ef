"""`paicli --resume` with no terminal to choose in: the saved conversations are listed with
the ids `paicli --resume ID` takes, and nothing is resumed."""

from __future__ import annotations

import argparse
import io
import os
from pathlib import Path

from paicli.ui.console import SafeConsole
from paicli.ui.repl_start import pick_session
from tests.runtimes import runtime_for


async def test_resume_without_a_terminal_lists_the_ids_to_choose_from(tmp_path: Path) -> None:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path),
        "PAICLI_HOME": str(tmp_path / ".paicli"),
    }
    screen = io.StringIO()
    console = SafeConsole(file=screen, width=200)
    options = argparse.Namespace(resume="", continue_session=False)
    async with runtime_for(root=tmp_path, flags={}, approver=None, environ=env) as runtime:
        saved = runtime.sessions.new_id()
        runtime.sessions.save(saved, [{"role": "user", "content": "fix the parser"}])
        chosen = await pick_session(runtime, options, console, interactive=False)
    assert chosen is None
    text = screen.getvalue()
    assert f" {saved} " in text and "fix the parser" in text
    assert "paicli --resume ID" in text


async def test_a_conversation_of_another_folder_says_where_it_belongs(tmp_path: Path) -> None:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path),
        "PAICLI_HOME": str(tmp_path / ".paicli"),
    }
    other = tmp_path / "other project"
    other.mkdir()
    here = tmp_path / "here"
    here.mkdir()
    screen = io.StringIO()
    console = SafeConsole(file=screen, width=300)
    async with runtime_for(root=other, flags={}, approver=None, environ=env) as runtime:
        saved = runtime.sessions.new_id()
        runtime.sessions.save(saved, [{"role": "user", "content": "fix the parser"}])
    options = argparse.Namespace(resume=saved, continue_session=False)
    async with runtime_for(root=here, flags={}, approver=None, environ=env) as runtime:
        assert await pick_session(runtime, options, console, interactive=False) is None
        assert runtime.session_id == ""  # not resumed, so never saved over here
    text = screen.getvalue()
    assert f"belongs to {other.resolve()}" in text
    assert f"paicli -C '{other.resolve()}' --resume {saved}" in text
