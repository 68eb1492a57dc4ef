"""`/rewind` at the REPL without a terminal to pick in (in process, the model in memory):
the turns listed, a rewind said at once, bad arguments and a file changed since each one
line, and nothing restored over the user's work without `--force`. The lists themselves are
tested in a real terminal (test_rewind_repl.py)."""

from __future__ import annotations

import json
from pathlib import Path

from paicli.permissions.approval import Mode
from tests.ui.repl_in_process import repl_in_process


async def test_rewind_without_a_terminal_lists_and_rewinds_by_number(tmp_path: Path) -> None:
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    (project / "a.txt").write_text("one\n")
    call = {"id": "w", "name": "write_file"}
    call["arguments"] = json.dumps({"path": "a.txt", "content": "two\n"})
    script: list[dict[str, object]] = [{"tool_calls": [call]}, {"text": "Made it two."}]
    async with repl_in_process(project, home, script=script, mode=Mode.ACCEPT_EDITS) as repl:
        repl.line("/rewind")
        await repl.expect("No checkpoints yet: each prompt you send makes one.")
        repl.line("make it two")
        await repl.expect("Made it two.")
        repl.line("/rewind")
        await repl.expect("1. make it two · 1 file(s): a.txt")
        await repl.expect("Rewind with /rewind N [both|conversation|code] [--force]")
        repl.line("/rewind 7")
        await repl.expect("No turn 7 (turns 1-1).")
        repl.line("/rewind 1 sideways")
        await repl.expect("Rewind what? /rewind N")
        (project / "a.txt").write_text("my own work\n")
        repl.line("/rewind 1 code")
        await repl.expect("1 file(s) changed since paicli last changed them:")
        await repl.expect("Nothing was restored; /rewind 1 code --force overwrites them.")
        assert (project / "a.txt").read_text() == "my own work\n"
        repl.line("/rewind 1 both --force")
        await repl.expect("Restored 1 file(s) to before turn 1: a.txt")
        await repl.expect("Conversation rewound to before turn 1.")
        await repl.expect("› make it two")  # noqa: RUF001 - the prompt, offered again
        repl.send_keys("ctrl-c")  # (clears that line)
        repl.line("/rewind")
        await repl.expect("No checkpoints yet")
        repl.send_keys("ctrl-d")
        assert await repl.exit_code() == 0
    assert (project / "a.txt").read_text() == "one\n"
