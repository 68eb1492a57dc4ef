"""Approvals answered by one key in a real terminal (issue 27): `y` without Enter, Enter for
the default (once), and a key typed before the question showed answers nothing (it waits for
the next prompt)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from paicli.ui.prompt_line import PROMPT
from tests.llm_server import ScriptedLlm

from .terminal import Terminal

# Real processes, sockets or terminals are the point here (not the in-memory tier).
pytestmark = pytest.mark.real

MARK = PROMPT.strip()


def environment(tmp_path: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path / "home"),
        "PAICLI_HOME": str(tmp_path / "home" / ".paicli"),
        "PAICLI_API_KEY": "sk-test-single-key-0123456789",
        "TERM": "xterm-256color",
        "PROMPT_TOOLKIT_NO_CPR": "1",
        **({"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {}),
    }


@asynccontextmanager
async def repl(tmp_path: Path, llm: ScriptedLlm, *more: str) -> AsyncIterator[Terminal]:
    """The REPL in `tmp_path/project` on the scripted model (`more`: more flags)."""
    (tmp_path / "project").mkdir(exist_ok=True)
    (tmp_path / "home").mkdir(exist_ok=True)
    flags = ["--base-url", llm.base_url, "--model", "scripted", *more]
    term = await Terminal.spawn(
        [sys.executable, "-m", "paicli.cli", *flags],
        cwd=tmp_path / "project",
        env=environment(tmp_path),
    )
    try:
        await term.expect(MARK)
        yield term
    finally:
        await term.aclose()


def writing(name: str, **reply: Any) -> list[dict[str, Any]]:
    call = {"id": "call_1", "name": "write_file"}
    call["arguments"] = json.dumps({"path": name, "content": "written\n"})
    return [{"tool_calls": [call], **reply}, {"text": "Done with it."}]


async def bye(term: Terminal) -> None:
    await term.expect(MARK)
    term.send_keys("ctrl-d")
    await term.expect("Bye.")
    assert await term.exit_code() == 0


@pytest.mark.parametrize("key", ["y", "\r"])
async def test_one_key_without_enter_answers_and_enter_is_once(tmp_path: Path, key: str) -> None:
    async with ScriptedLlm(writing("notes.txt")) as llm, repl(tmp_path, llm) as term:
        term.line("write the notes")
        await term.expect("Allow? [y] once (Enter)")
        term.send(key)  # no Enter after it
        await term.expect("Done with it.")
        await bye(term)
    assert (tmp_path / "project" / "notes.txt").read_text() == "written\n"
    assert llm.requests[1]["messages"][-1]["role"] == "tool"


async def test_a_key_typed_before_the_question_does_not_answer_it(tmp_path: Path) -> None:
    held = asyncio.Event()  # the model's reply waits until the key is typed
    async with ScriptedLlm(writing("notes.txt", after=held)) as llm, repl(tmp_path, llm) as term:
        term.line("write the notes")
        await llm.wait_for_requests(1)
        term.send("y")  # typed while the model is still answering
        held.set()
        await term.expect("Allow?")
        term.send("n")
        await term.expect("Done with it.")
        await term.expect(f"{MARK} y")  # not lost either: it waits at the next prompt
        term.send("\x15")  # Ctrl+U clears it; Ctrl+D at the empty prompt leaves
        term.send_keys("ctrl-d")
        await term.expect("Bye.")
        assert await term.exit_code() == 0
    assert not (tmp_path / "project" / "notes.txt").exists()
    assert "denied" in llm.requests[1]["messages"][-1]["content"]
