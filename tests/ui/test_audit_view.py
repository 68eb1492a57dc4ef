"""`/audit` in the REPL (in process): a call whose approval was interrupted reads "not
decided", not `None/None` (issue 27)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from paicli.ui.audit_view import audit_line
from tests.ui.repl_in_process import repl_in_process


async def test_an_approval_interrupted_by_ctrl_c_shows_as_not_decided(tmp_path: Path) -> None:
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    # Two calls in one reply: Ctrl+C at the first's question denies it and cancels the
    # turn, and with it the second, which was waiting for its own question.
    writes = [
        {
            "id": f"call_{n}",
            "name": "write_file",
            "arguments": json.dumps({"path": f"notes{n}.txt", "content": "new\n"}),
        }
        for n in (1, 2)
    ]
    script: list[dict[str, Any]] = [{"tool_calls": writes}]
    async with repl_in_process(project, home, script=script) as repl:
        repl.line("write the notes")
        await repl.expect("Allow?")
        repl.send_keys("ctrl-c")
        await repl.expect("Interrupted")
        repl.line("/audit")
        await repl.expect(re.compile(r"write_file\s+denied/user\s+denied"))
        await repl.expect(re.compile(r"write_file\s+not decided\s+cancelled\s+\d+ ms"))
        repl.send_keys("ctrl-d")
        assert await repl.exit_code() == 0
    assert "None" not in repl.screen.text
    assert not list(project.glob("notes*"))


def test_a_decided_call_names_its_decision_and_who_made_it() -> None:
    record = {"time": "2026-12-04T10:00:00.000", "tool": "read_file", "duration_ms": 3}
    allowed = {**record, "decision": "allowed", "decided_by": "user", "outcome": "ok"}
    assert audit_line(allowed) == "2026-12-04T10:00:00  read_file  allowed/user  ok  3 ms"
