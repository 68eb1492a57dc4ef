"""`@path` mentions in the REPL, in process (tests/ui/repl_in_process.py): a
secret file is asked about as read_file would be, names are escaped on screen."""

from __future__ import annotations

from pathlib import Path

from tests.ui.repl_in_process import repl_in_process


def places(tmp_path: Path) -> tuple[Path, Path]:
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    return project, home


async def test_a_mentioned_secret_file_is_asked_about_and_a_no_keeps_it_out(
    tmp_path: Path,
) -> None:
    project, home = places(tmp_path)
    (project / ".env").write_text("API_TOKEN=tok-0123456789abcdef\n")
    async with repl_in_process(project, home, script=[{"text": "ok"}]) as repl:
        repl.line("check @.env please")
        await repl.expect("Tool: read_file")
        await repl.expect("Allow?")
        repl.line("n")
        await repl.expect("@.env: not attached")
        await repl.expect("ok")
        repl.send_keys("ctrl-d")
        assert await repl.exit_code() == 0
        assert repl.llm is not None
        sent = repl.llm.requests[0]["messages"][-1]
    assert sent == {"role": "user", "content": "check @.env please"}


async def test_a_hostile_file_name_is_escaped_and_its_content_sent_verbatim(
    tmp_path: Path,
) -> None:
    project, home = places(tmp_path)
    name = "a\u202eb.txt"  # a right-to-left override: the screen shows it escaped
    (project / name).write_text("\x1b[2Jwiped\n")
    async with repl_in_process(project, home, script=[{"text": "seen"}]) as repl:
        repl.line(f'read @"{name}"')
        await repl.expect("attached @a\\u202eb.txt")
        await repl.expect("seen")
        repl.send_keys("ctrl-d")
        assert await repl.exit_code() == 0
        assert repl.llm is not None
        sent = repl.llm.requests[0]["messages"][-1]["content"]
    assert "\u202e" not in repl.screen.getvalue().replace(f'@"{name}"', "")  # (as typed)
    assert "     1\t\x1b[2Jwiped\n" in sent
