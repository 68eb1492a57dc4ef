"""The todo list and sub-agents in the REPL, in process (tests/ui/repl_in_process.py): the
checklist as the model changes it, a sub-agent's calls marked with its name, its approval
question naming it, and `/agents`; everything a model or a definition file says escaped."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from paicli.ui.prompt_line import PROMPT
from tests.ui.repl_in_process import repl_in_process

MARK = PROMPT.strip()
HOSTILE = "clear\x1b[2Jscreen\u202e"
SHOWN = "clear\\x1b[2Jscreen\\u202e"  # what the screen must show of it


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path]:
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    return project, home


def call(name: str, arguments: dict[str, Any], call_id: str) -> dict[str, Any]:
    return {"id": call_id, "name": name, "arguments": json.dumps(arguments)}


def todo(content: str, status: str, active: str) -> dict[str, str]:
    return {"content": content, "status": status, "activeForm": active}


async def test_the_todo_list_shows_as_a_checklist_each_time_it_changes(
    places: tuple[Path, Path],
) -> None:
    project, home = places
    first = [
        todo("Read the code", "in_progress", "Reading the code"),
        todo(HOSTILE, "pending", "x"),
    ]
    second = [todo("Read the code", "completed", "Reading the code"), todo(HOSTILE, "pending", "x")]
    script: list[dict[str, Any]] = [
        {"tool_calls": [call("todo_write", {"todos": first}, "t1")]},
        {"tool_calls": [call("todo_write", {"todos": second}, "t2")]},
        {"text": "All planned."},
    ]
    async with repl_in_process(project, home, script=script) as repl:
        repl.line("plan it")
        await repl.expect("⏺ Todo list")
        await repl.expect("◼ Reading the code")
        await repl.expect(f"☐ {SHOWN}")
        await repl.expect("⏺ Todo list")
        await repl.expect("☒ Read the code")
        await repl.expect("All planned.")
        await repl.expect(MARK)
        repl.send_keys("ctrl-d")
        assert await repl.exit_code() == 0
    screen = repl.screen.text
    assert "todo_write(" not in screen  # the checklist stands for the call
    assert "\x1b[2J" not in screen.replace("\\x1b[2J", "")


async def test_a_sub_agents_calls_and_question_carry_its_name(places: tuple[Path, Path]) -> None:
    project, home = places
    agents = project / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "writer.md").write_text(
        '---\nname: writer\ndescription: "Writes files. clear\\e[2Jscreen\\u202e"\n'
        "tools: Write, Read\n---\n"
        "You write files.\n"
    )
    write = call("write_file", {"path": "out.txt", "content": "hello\n"}, "w1")
    script: list[dict[str, Any]] = [
        {
            "tool_calls": [
                call(
                    "Agent",
                    {"description": "d", "prompt": "write", "subagent_type": "writer"},
                    "a1",
                )
            ]
        },
        {"tool_calls": [call("read_file", {"path": HOSTILE}, "r1"), write]},
        {"text": "wrote it"},
        {"text": "The writer wrote out.txt."},
    ]
    async with repl_in_process(project, home, script=script) as repl:
        repl.line("/agents")
        await repl.expect("writer  (project:")
        await repl.expect(f"Writes files. {SHOWN}")
        await repl.expect("tools: write_file, read_file")
        repl.line("delegate")
        await repl.expect('↳ writer read_file(path="clear\\u001b[2Jscreen\\u202e")')  # JSON
        await repl.expect("↳ writer write_file(")
        await repl.expect("Asked by the sub-agent writer")
        await repl.expect("Allow?")
        repl.line("y")
        await repl.expect("The writer wrote out.txt.")
        await repl.expect(MARK)
        repl.line("/audit")
        await repl.expect(re.compile(r"writer: write_file\s+allowed/user"))
        repl.send_keys("ctrl-d")
        assert await repl.exit_code() == 0
    assert (project / "out.txt").read_text() == "hello\n"
