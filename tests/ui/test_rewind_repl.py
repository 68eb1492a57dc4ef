"""`/rewind` and Esc Esc in a real terminal (issue 27): the turns listed with their files,
code and conversation brought back, the prompt offered again, a file the user changed since
asked about, a shell command's changes undone."""

from __future__ import annotations

import json
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import pytest

from tests.llm_server import ScriptedLlm

from .terminal import Terminal
from .test_single_key_approvals import MARK, bye
from .test_single_key_approvals import repl as terminal_repl

pytestmark = pytest.mark.real


def repl(tmp_path: Path, llm: ScriptedLlm) -> AbstractAsyncContextManager[Terminal]:
    """The REPL, edits accepted and commands uncontained."""
    return terminal_repl(tmp_path, llm, "--permission-mode", "accept-edits", "--sandbox", "off")


async def turn(term: Terminal, prompt: str, answer: str) -> None:
    term.line(prompt)
    await term.expect(answer)
    await term.expect(MARK)


def writes(content: str, answer: str) -> list[dict[str, Any]]:
    call = {"id": "w", "name": "write_file"}
    call["arguments"] = json.dumps({"path": "a.txt", "content": content})
    return [{"tool_calls": [call]}, {"text": answer}]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "a.txt").write_text("one\n")
    return tmp_path / "project"


async def test_rewind_restores_code_and_conversation_and_offers_the_prompt_again(
    tmp_path: Path, project: Path
) -> None:
    script = [*writes("two\n", "Made it two."), *writes("three\n", "Made it three.")]
    script.append({"text": "Asked again."})
    async with ScriptedLlm(script) as llm, repl(tmp_path, llm) as term:
        await turn(term, "make it two", "Made it two.")
        await turn(term, "make it three", "Made it three.")
        term.line("/rewind")
        await term.expect("Rewind to before which prompt?")
        await term.expect("2. make it three · 1 file(s): a.txt")
        term.send("2")
        await term.expect("Restore code and conversation")
        term.send("1")
        await term.expect("Restored 1 file(s) to before turn 2: a.txt")
        await term.expect("Conversation rewound to before turn 2.")
        await term.expect(f"{MARK} make it three")  # the prompt waits, to send or edit
        assert (project / "a.txt").read_text() == "two\n"
        term.send("\r")
        await term.expect("Asked again.")
        await bye(term)
    said = [m["content"] for m in llm.requests[-1]["messages"] if m["role"] == "user"]
    assert said == ["make it two", "make it three"]
    assert (project / "a.txt").read_text() == "two\n"  # (the answer wrote nothing)


async def test_esc_esc_clears_a_line_and_at_an_empty_prompt_opens_the_rewind_menu(
    tmp_path: Path, project: Path
) -> None:
    async with ScriptedLlm(writes("two\n", "Made it two.")) as llm, repl(tmp_path, llm) as term:
        await turn(term, "make it two", "Made it two.")
        term.send("half a thought")
        await term.expect("half a thought")
        term.send("\x1b\x1b")  # a line with text: cleared, nothing opens
        term.send("\x1b\x1b")  # now empty: the rewind menu
        await term.expect("Rewind to before which prompt?")
        assert "Unknown command" not in term.text
        term.send("\x1b")  # Esc in the list: nothing
        await term.expect("Nothing rewound.")
        await bye(term)
    assert (project / "a.txt").read_text() == "two\n"
    assert len(llm.requests) == 2  # the cleared line was never sent


async def test_a_file_changed_since_is_asked_about_and_can_be_kept(
    tmp_path: Path, project: Path
) -> None:
    async with ScriptedLlm(writes("two\n", "Made it two.")) as llm, repl(tmp_path, llm) as term:
        await turn(term, "make it two", "Made it two.")
        (project / "a.txt").write_text("my own work\n")
        term.line("/rewind 1 code")
        await term.expect("1 file(s) changed since paicli last changed them:")
        await term.expect("Keep them as they are, restore the rest")
        term.send("2")
        await term.expect("Left alone: a.txt (changed since paicli last changed it)")
        await bye(term)
    assert (project / "a.txt").read_text() == "my own work\n"


async def test_what_a_shell_line_changed_is_rewound_and_the_rest_is_said(
    tmp_path: Path, project: Path
) -> None:
    async with ScriptedLlm([]) as llm, repl(tmp_path, llm) as term:
        await term.expect("/help for commands")
        await term.expect(MARK)
        term.line("!echo made > made.txt; echo changed > a.txt")
        await term.expect("[exit code 0]")
        await term.expect(MARK)
        term.line("/rewind")
        await term.expect("1. !echo made > made.txt; echo changed > a.txt · 2 file(s)")
        term.send("1")
        await term.expect("Restore code")
        term.send("3")  # code only
        await term.expect("Restored 2 file(s) to before turn 1")
        await term.expect("Not undone: turn 1 ran commands")
        await bye(term)
    assert (project / "a.txt").read_text() == "one\n"
    assert not (project / "made.txt").exists()
