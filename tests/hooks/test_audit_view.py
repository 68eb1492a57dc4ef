"""`/audit` shows a hook run's record as one line: its event, command and how it ended."""

from __future__ import annotations

import json
from pathlib import Path

from tests.ui.repl_in_process import repl_in_process


async def test_audit_lists_a_hook_run(tmp_path: Path) -> None:
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    audit = home / ".paicli" / "audit"
    audit.mkdir(parents=True)
    record = {
        "time": "2026-12-04T10:00:00.000+00:00",
        "event": "hook",
        "hook_event": "PreToolUse",
        "command": "guard.py \x1b[2J",
        "outcome": "blocked",
        "duration_ms": 12,
    }
    (audit / "2026-12-04.jsonl").write_text(json.dumps(record) + "\n")
    async with repl_in_process(project, home) as repl:
        repl.line("/audit 1")
        await repl.expect("2026-12-04T10:00:00 hook PreToolUse guard.py")
        await repl.expect("blocked 12 ms")
        repl.send_keys("ctrl-d")
        assert await repl.exit_code() == 0
    assert "\x1b[2J" not in repl.screen.getvalue()
