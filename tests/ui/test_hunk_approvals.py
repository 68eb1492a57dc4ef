"""An edit of several hunks approved hunk by hunk in a real terminal (issue 27): `h` at the
question, then one key per hunk; the file holds only the hunks approved."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from paicli.permissions.hunks import merge
from tests.llm_server import ScriptedLlm

from .test_single_key_approvals import bye, repl

# Real processes, sockets or terminals are the point here (not the in-memory tier).
pytestmark = pytest.mark.real

BEFORE = "".join(f"line {n}\n" for n in range(1, 31))
AFTER = BEFORE.replace("line 2\n", "LINE 2\n").replace("line 20\n", "LINE 20\n")
AFTER = AFTER.replace("line 29\n", "")


async def test_each_hunk_is_shown_and_answered_with_one_key(tmp_path: Path) -> None:
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "notes.txt").write_text(BEFORE)
    arguments = json.dumps({"path": "notes.txt", "content": AFTER})
    call = {"id": "call_1", "name": "write_file", "arguments": arguments}
    script: list[dict[str, object]] = [{"tool_calls": [call]}, {"text": "Done with it."}]
    async with ScriptedLlm(script) as llm, repl(tmp_path, llm) as term:
        term.line("tidy the notes")
        await term.expect("[h] hunk by")  # (the question wraps at 120 columns)
        term.send("h")
        await term.expect("Hunk 1 of 3:")
        await term.expect("+LINE 2")
        await term.expect("Apply it?")
        term.send("y")
        await term.expect("Hunk 2 of 3:")
        await term.expect("+LINE 20")
        await term.expect("Apply it?")
        term.send("n")
        await term.expect("Hunk 3 of 3:")
        await term.expect("Apply it?")
        term.send("\r")  # Enter: yes
        await term.expect("Done with it.")
        await bye(term)
    assert (tmp_path / "project" / "notes.txt").read_text() == merge(BEFORE, AFTER, {0, 2})
    told = llm.requests[1]["messages"][-1]["content"]
    assert "applied 2 of the 3 hunks of this edit and rejected hunk 2" in told
