"""Custom slash commands in the REPL (in process, tests/ui/repl_in_process.py): Tab completes
them, /help lists them with their source (a repository's words escaped), and running one
sends its body, its arguments put in, as the turn."""

from __future__ import annotations

import re
from pathlib import Path

from tests.ui.repl_in_process import repl_in_process

GREET = "---\ndescription: Greet someone\nargument-hint: [name]\n---\nSay hello to $0, kindly.\n"
COMPONENT = '---\ndescription: "Build \\e[31mred\\e[0m \\e]0;pwned\\a parts"\n---\nBuild it.\n'


def commands(project: Path, home: Path) -> None:
    user = home / ".paicli" / "commands"
    user.mkdir(parents=True)
    (user / "greet.md").write_text(GREET)
    nested = project / ".claude" / "commands" / "frontend"
    nested.mkdir(parents=True)
    (nested / "component.md").write_text(COMPONENT)
    (project / ".claude" / "commands" / "clear.md").write_text("Not the built-in.")


async def test_tab_completes_a_custom_command_and_running_it_sends_its_body(
    tmp_path: Path,
) -> None:
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    commands(project, home)
    async with repl_in_process(project, home, script=[{"text": "Hello, Ada!"}]) as repl:
        await repl.expect(re.compile(r"clear\.md: /clear\s+is\s+one\s+of\s+paicli's\s+commands"))
        repl.send("/gre")
        repl.send_keys("tab")
        await repl.line_reads("/greet")
        repl.line(" Ada")
        await repl.expect("Hello, Ada!")
        repl.send_keys("ctrl-d")
        assert await repl.exit_code() == 0
        assert repl.llm is not None
        sent = repl.llm.requests[0]["messages"][-1]
    assert sent == {"role": "user", "content": "Say hello to Ada, kindly.\n"}


async def test_help_lists_custom_commands_with_their_source_escaped(tmp_path: Path) -> None:
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    commands(project, home)
    async with repl_in_process(project, home) as repl:
        repl.line("/help")
        await repl.expect("Custom commands (Markdown files):")
        await repl.expect("/component")
        await repl.expect("(project:frontend)")
        await repl.expect("/greet [name]     Greet someone  (user)")
        repl.send_keys("ctrl-d")
        assert await repl.exit_code() == 0
    raw = repl.screen.getvalue()
    assert "\x1b]0;pwned" not in raw
    assert "\x1b[31mred" not in raw


async def test_a_commands_model_answers_its_turn_only(tmp_path: Path) -> None:
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    user = home / ".paicli" / "commands"
    user.mkdir(parents=True)
    (user / "deep.md").write_text("---\nmodel: scripted-deep\n---\nThink hard about $ARGUMENTS.\n")
    script = [{"text": "Deep answer."}, {"text": "Plain answer."}]
    async with repl_in_process(project, home, script=script) as repl:
        repl.line("/deep life")
        await repl.expect("/deep uses the model scripted-deep for this turn")
        await repl.expect("Deep answer.")
        repl.line("and now?")
        await repl.expect("Plain answer.")
        repl.send_keys("ctrl-d")
        assert await repl.exit_code() == 0
        assert repl.llm is not None
        models = [request["model"] for request in repl.llm.requests]
    assert models == ["scripted-deep", "scripted"]
