"""Sub-agent definition files as users (and repositories) write them: Claude Code's format,
where each is found and which wins, and every way a file can be broken or hostile."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from paicli.subagents.definitions import DEFAULT_AGENT, AgentCatalog, load_agents
from paicli.subagents.front_matter import FrontMatterError, split_front_matter
from tests.no_hang import without_hanging

# Written as Claude Code's sub-agents page shows a definition.
CLAUDE_CODE_EXAMPLE = """---
name: code-reviewer
description: Expert code review specialist. Proactively reviews code for quality, security, \
and maintainability. Use immediately after writing or modifying code.
tools: Read, Grep, Glob, Bash
model: inherit
---

You are a senior code reviewer ensuring high standards of code quality and security.

When invoked:
1. Run git diff to see recent changes
2. Focus on modified files
3. Begin review immediately
"""


def agent_file(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.md"
    path.write_text(text)
    return path


def definition(name: str, description: str = "does things", body: str = "", **keys: str) -> str:
    extra = "".join(f"{key}: {value}\n" for key, value in keys.items())
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\n{body}\n"


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path]:
    project, home = tmp_path / "project", tmp_path / "home" / ".paicli"
    project.mkdir()
    home.mkdir(parents=True)
    return project, home


def load(places: tuple[Path, Path], root: Path | None = None) -> AgentCatalog:
    project, home = places
    return load_agents(root or project, project, home)


def test_a_claude_code_definition_loads_with_its_tools_under_paicli_names(
    places: tuple[Path, Path],
) -> None:
    project, _ = places
    agent_file(project / ".claude" / "agents", "code-reviewer", CLAUDE_CODE_EXAMPLE)
    catalog = load(places)
    assert catalog.problems == ()
    assert list(catalog.agents) == [DEFAULT_AGENT, "code-reviewer"]
    reviewer = catalog.agents["code-reviewer"]
    assert reviewer.description.startswith("Expert code review specialist.")
    assert reviewer.prompt.startswith("You are a senior code reviewer")
    assert reviewer.tools == ("read_file", "grep", "glob", "execute_command")
    assert reviewer.model is None and reviewer.scope == "project"
    assert reviewer.allows("grep") and reviewer.allows("execute_command")
    assert not reviewer.allows("write_file") and not reviewer.allows("mcp__github__create")
    assert not reviewer.allows("Agent")  # one level of sub-agents, whatever a file says


def test_tool_lists_name_servers_patterns_and_exclusions(places: tuple[Path, Path]) -> None:
    project, _ = places
    folder = project / ".paicli" / "agents"
    agent_file(folder, "a", definition("a", tools="mcp__github, read_file, Task, Agent"))
    agent_file(folder, "b", "---\nname: b\ndescription: d\ndisallowedTools: [Bash, mcp__x]\n---\n")
    agent_file(folder, "c", "---\nname: c\ndescription: d\nmcpServers: [fs, {evil: 1}]\n---\n")
    agent_file(folder, "d", definition("d", tools="'execute_command(git *), bad name'"))
    catalog = load(places)
    a, b, c, d = (catalog.agents[n] for n in "abcd")
    assert a.allows("mcp__github__create_issue") and a.allows("read_file")
    assert not a.allows("mcp__githubber__x") and not a.allows("Agent")
    assert b.allows("write_file") and b.allows("mcp__y__t")
    assert not b.allows("execute_command") and not b.allows("mcp__x__t")
    assert c.allows("read_file") and c.allows("mcp__fs__read") and not c.allows("mcp__evil__run")
    assert any("never started" in note for note in c.notes)
    assert d.tools == ()  # nothing it names is a tool name: it is given nothing
    assert len(d.notes) == 2


def test_the_closest_folder_wins_then_paicli_over_claude_then_the_users(
    places: tuple[Path, Path],
) -> None:
    project, home = places
    sub = project / "src" / "deep"
    sub.mkdir(parents=True)
    (project / ".git").mkdir()
    agent_file(home / "agents", "x", definition("x", "user's"))
    agent_file(home / "agents", "only-user", definition("only-user", "user's"))
    agent_file(project / ".claude" / "agents", "x", definition("x", "project claude"))
    agent_file(project / ".paicli" / "agents", "x", definition("x", "project paicli"))
    agent_file(project / "src" / ".claude" / "agents", "x", definition("x", "closest"))
    agent_file(project / ".claude" / "agents" / "team", "y", definition("y", "in a subfolder"))
    agent_file(project / ".claude" / "agents", "gp", definition(DEFAULT_AGENT, "replaced"))
    assert load(places, sub).agents["x"].description == "closest"
    catalog = load(places)
    assert catalog.agents["x"].description == "project paicli"
    assert catalog.agents["only-user"].scope == "user"
    assert catalog.agents["y"].description == "in a subfolder"
    assert catalog.agents[DEFAULT_AGENT].description == "replaced"
    assert next(iter(catalog.agents)) == DEFAULT_AGENT
    assert catalog.problems == ()


def test_documentation_beside_definitions_is_skipped_quietly(places: tuple[Path, Path]) -> None:
    project, _ = places
    folder = project / ".claude" / "agents"
    agent_file(folder, "README", "# Our agents\n\nSee below.\n")
    agent_file(folder, "draft", "---\ndescription: no name yet\n---\nbody\n")
    (folder / "notes.txt").write_text("---\nname: txt\ndescription: not markdown\n---\n")
    catalog = load(places)
    assert list(catalog.agents) == [DEFAULT_AGENT] and catalog.problems == ()


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("---\nname: [unclosed\ndescription: d\n---\n", "invalid YAML front matter at line"),
        ("---\nname: a\ndescription: d\n", "never closed"),
        ("---\n- a list\n---\n", "not a mapping"),
        ("---\nname: a\nname: b\ndescription: d\n---\n", "'name' is given twice"),
        ("---\nname: Bad Name\ndescription: d\n---\n", "name 'Bad Name': use lowercase"),
        ("---\nname: -x\ndescription: d\n---\n", "use lowercase"),
        ("---\nname: a:b\ndescription: d\n---\n", "use lowercase"),
        ("---\nname: a\n---\n", "has no description"),
        ("---\nname: a\ndescription: d\ntools: {x: 1}\n---\n", "tools must be"),
        ("---\nname: a\ndescription: d\nmaxTurns: 0\n---\n", "maxTurns must be"),
        ("---\nname: a\ndescription: d\nmodel: 'x y'\n---\n", "is not a model name"),
        ("---\nname: a\ndescription: d\nmcpServers: fs\n---\n", "mcpServers must be"),
        ("---\n" + "[" * 5000 + "\n---\n", "invalid YAML front matter"),
        ("---\n!!python/object/apply:os.system ['true']\n---\n", "invalid YAML front matter"),
    ],
)
def test_a_broken_definition_is_one_line_naming_its_file_and_the_others_load(
    places: tuple[Path, Path], text: str, problem: str
) -> None:
    project, _ = places
    folder = project / ".claude" / "agents"
    broken = agent_file(folder, "broken", text)
    agent_file(folder, "good", definition("good"))
    catalog = load(places)
    assert "good" in catalog.agents
    (line,) = catalog.problems
    assert line.startswith(f"{broken}: ") and problem in line
    assert "\n" not in line and "Traceback" not in line


def test_hostile_files_neither_hang_nor_leave_the_project(
    places: tuple[Path, Path], tmp_path: Path
) -> None:
    project, _ = places
    folder = project / ".claude" / "agents"
    folder.mkdir(parents=True)
    outside = tmp_path / "secret.md"
    outside.write_text(definition("stolen", "from outside the project"))
    (folder / "link.md").symlink_to(outside)
    fifo = folder / "fifo.md"
    os.mkfifo(fifo)
    (folder / "huge.md").write_bytes(b"---\nname: huge\n" + b"x" * (300 * 1024))
    (folder / "latin.md").write_bytes(b"---\nname: caf\xe9\n---\n")
    catalog = without_hanging(lambda: load(places), fifo)
    assert list(catalog.agents) == [DEFAULT_AGENT]
    problems = "\n".join(catalog.problems)
    assert "a symbolic link out of the project" in problems
    assert "not a regular file (a FIFO)" in problems
    assert "larger than" in problems and "not UTF-8" in problems
    assert len(catalog.problems) == 4


def test_a_project_agents_folder_linked_out_of_the_project_is_not_read(
    places: tuple[Path, Path], tmp_path: Path
) -> None:
    project, _ = places
    elsewhere = tmp_path / "elsewhere"
    agent_file(elsewhere, "x", definition("x"))
    (project / ".claude").mkdir()
    (project / ".claude" / "agents").symlink_to(elsewhere)
    catalog = load(places)
    assert "x" not in catalog.agents
    (line,) = catalog.problems
    assert "a symbolic link out of the project" in line


def test_a_projects_agent_cannot_switch_provider_but_the_users_can(
    places: tuple[Path, Path],
) -> None:
    project, home = places
    agent_file(project / ".claude" / "agents", "p", definition("p", model="openrouter"))
    agent_file(project / ".claude" / "agents", "q", definition("q", model="gpt-4.1-mini"))
    agent_file(project / ".claude" / "agents", "h", definition("h", model="haiku"))
    agent_file(home / "agents", "u", definition("u", model="openrouter"))
    catalog = load(places)
    assert catalog.agents["p"].model is None
    (line,) = catalog.problems
    assert "p.md: model openrouter would switch provider" in line
    assert catalog.agents["q"].model == "gpt-4.1-mini"  # a model of the provider in use
    assert catalog.agents["h"].model is None and "Claude Code's" in catalog.agents["h"].notes[0]
    assert catalog.agents["u"].model == "openrouter"


def test_the_same_name_twice_in_one_folder_keeps_the_first(places: tuple[Path, Path]) -> None:
    project, _ = places
    folder = project / ".claude" / "agents"
    agent_file(folder, "a-first", definition("same", "first"))
    agent_file(folder, "b-second", definition("same", "second"))
    catalog = load(places)
    assert catalog.agents["same"].description == "first"
    (line,) = catalog.problems
    assert "b-second.md: the agent same is also defined in" in line


def test_front_matter_is_plain_data_and_the_body_follows_it() -> None:
    assert split_front_matter("no front matter") is None
    assert split_front_matter("---\n---\nbody") == ({}, "body")
    meta, body = split_front_matter("---\nname: a\ntools: [x, y]\n...\nthe body\n") or ({}, "")
    assert meta == {"name": "a", "tools": ["x", "y"]} and body == "the body\n"
    with pytest.raises(FrontMatterError, match="not text"):
        split_front_matter("---\n1: a\n---\n")
    # Aliases are references, never copies: a "billion laughs" stays small.
    laughs = "---\na: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + n)}: &{chr(98 + n)} [*{chr(97 + n)}, *{chr(97 + n)}, *{chr(97 + n)}]\n"
        for n in range(20)
    )
    meta, _ = split_front_matter(laughs + "---\n") or ({}, "")
    assert len(meta) == 21
