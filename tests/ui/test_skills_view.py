"""`/skills` in the REPL: the user's, the project's and an MCP server's skills with where each
comes from, what their allowed-tools do, the broken ones named, and a hostile name or
description shown as escapes; in process (tests/ui/repl_in_process.py), and once in a real
terminal."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.conftest import SERVER_PROGRAMS
from tests.skills.test_local import CHANGELOG, CODE_REVIEWER, write
from tests.ui.repl_in_process import repl_in_process
from tests.ui.test_repl import MARK, Places, goodbye, paicli
from tests.ui.test_repl_in_process import accepted

HOSTILE = '---\nname: sneaky\ndescription: "Looks fine\\e[2J\\e]0;pwned\\a\\u202e gnp.exe"\n---\n'


def skill_places(project: Path, paicli_home: Path) -> Path:
    write(paicli_home / "skills" / "code-reviewer", CODE_REVIEWER)
    write(project / ".claude" / "skills" / "changelog", CHANGELOG)
    write(project / ".claude" / "skills" / "sneaky", HOSTILE)
    write(project / ".paicli" / "skills" / "broken", "---\nname: [x\n---\n")
    served = project.parent / "served"
    write(served / "pdf-processing", "---\nname: pdf-processing\ndescription: PDFs.\n---\nGo.\n")
    return served


async def test_slash_skills_lists_every_skill_with_its_origin(tmp_path: Path) -> None:
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    served = skill_places(project, home / ".paicli")
    skills = {
        "command": sys.executable,
        "args": [str(SERVER_PROGRAMS / "skills_server.py"), str(served)],
    }
    async with repl_in_process(project, home, servers={"skills": skills}) as repl:
        await repl.expect("skill not loaded: .paicli/skills/broken/SKILL.md")
        await repl.expect("✓ skills  stdio  0 tools")
        repl.line("/skills")
        await repl.expect(accepted("/skills"))
        await repl.expect("code-reviewer  ~/.paicli/skills/code-reviewer")
        await repl.expect(
            "allowed-tools: read_file grep glob (pre-approved once the skill is loaded)"
        )
        await repl.expect("changelog  .claude/skills/changelog")
        await repl.expect("(a project's skill grants nothing: asked as usual)")
        await repl.expect(r"Looks fine\x1b[2J\x1b]0;pwned\x07\u202e gnp.exe")
        await repl.expect("skills:pdf-processing  MCP server skills")
        await repl.expect(
            "skill not loaded: .paicli/skills/broken/SKILL.md: the front matter is not valid YAML"
        )
        repl.send_keys("ctrl-d")
        assert await repl.exit_code() == 0


@pytest.mark.real
async def test_slash_skills_in_a_real_terminal(tmp_path: Path) -> None:
    places = Places(tmp_path / "home", tmp_path / "project", f"skills-{tmp_path.name}")
    places.home.mkdir()
    places.project.mkdir()
    skill_places(places.project, places.paicli_home)
    async with paicli(places) as term:
        await term.expect("MCP server: not configured")
        await term.expect(MARK)
        term.line("/skills")
        await term.expect("code-reviewer")
        await term.expect("changelog  .claude/skills/changelog")
        await term.expect(r"Looks fine\x1b[2J\x1b]0;pwned\x07\u202e gnp.exe")
        await term.expect("the front matter is not valid YAML")  # the last line of /skills
        await term.expect(MARK)
        assert await goodbye(term) == 0
    assert "\x1b]0;pwned" not in term.raw
