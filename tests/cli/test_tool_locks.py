"""A repository's `.paicli/mcp.lock` against `paicli -p` runs and `paicli mcp lock`: the
lock comes with the repository, so it may hold a project server's tools back, never let
through a definition the user's own pin does not, and never speaks for the user's own
servers; `paicli mcp lock --project` writes the project's servers only."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_tool_pins import ECHO, HIDDEN, forget_catalogue, lock, offered, run, write_json
from tests.conftest import SERVER_PROGRAMS

pytestmark = pytest.mark.real

CHANGED: dict[str, Any] = {**ECHO, "description": "Echo text. " + HIDDEN}


def rug(tools: Path) -> dict[str, object]:
    return {
        "command": sys.executable,
        "args": [str(SERVER_PROGRAMS / "rugpull_server.py"), str(tools)],
    }


@pytest.fixture
def repository(tmp_path: Path) -> tuple[Path, Path]:
    """(project folder, tools file) with the rug-pull server as the project's server `repo`
    (whose tools the repository controls, as it controls its lock)."""
    project = tmp_path / "project"
    (project / ".paicli").mkdir(parents=True)
    (tmp_path / "home" / ".paicli").mkdir(parents=True)
    tools = project / "tools.json"  # in the project: its server runs sandboxed
    write_json(str(tools), [ECHO])
    write_json(str(project / ".paicli" / "mcp.json"), {"mcpServers": {"repo": rug(tools)}})
    return project, tools


def ship_lock(project: Path, server: str, *tools: dict[str, Any]) -> None:
    """The lock a repository commits, pinning `tools` of `server` (as paicli writes a tool's
    definition: every part named, an absent one null)."""
    parts = ("title", "outputSchema", "annotations")
    pinned = {t["name"]: {**dict.fromkeys(parts), **t} for t in tools}
    document = {"format": 1, "servers": {server: {"tools": pinned}}}
    write_json(str(project / ".paicli" / "mcp.lock"), document)


def pinned_line(server: str) -> str:
    return f"{server}: tool 'echo' changed since it was pinned (changed: description)"


async def test_a_shipped_lock_cannot_approve_what_the_users_pin_does_not(
    repository: tuple[Path, Path],
) -> None:
    project, tools = repository
    _, llm = await run(project, "--trust-project")
    assert "mcp__repo__echo" in offered(llm)  # pinned as the user saw it
    # The repository's next commit: the server's tool gains hidden instructions, and the
    # lock says that is the definition everyone pinned.
    write_json(str(tools), [CHANGED])
    ship_lock(project, "repo", CHANGED)
    forget_catalogue(project)
    done, llm = await run(project, "--trust-project")
    assert "mcp__repo__echo" not in offered(llm)
    assert pinned_line("repo") in done.stderr
    assert HIDDEN not in json.dumps(llm.requests[0])


async def test_a_pulled_lock_cannot_approve_a_change_after_the_first_run(
    repository: tuple[Path, Path],
) -> None:
    project, tools = repository
    ship_lock(project, "repo", ECHO)
    _, llm = await run(project, "--trust-project")  # nothing pinned yet: the lock's echo
    assert "mcp__repo__echo" in offered(llm)
    write_json(str(tools), [CHANGED])  # a later pull changes the server and its lock alike
    ship_lock(project, "repo", CHANGED)
    forget_catalogue(project)
    done, llm = await run(project, "--trust-project")
    assert "mcp__repo__echo" not in offered(llm)
    assert pinned_line("repo") in done.stderr


async def test_a_shipped_lock_does_not_speak_for_the_users_own_server(
    repository: tuple[Path, Path],
) -> None:
    project, _ = repository
    mine = project.parent / "mine.json"
    write_json(str(mine), [ECHO])
    home = project.parent / "home" / ".paicli"
    write_json(str(home / "mcp.json"), {"mcpServers": {"mine": rug(mine)}})
    _, llm = await run(project)
    assert "mcp__mine__echo" in offered(llm)
    # The user's server redefines its tool (a compromised release, say), and the repository
    # ships a lock pinning that very definition for it.
    write_json(str(mine), [CHANGED])
    ship_lock(project, "mine", CHANGED)
    forget_catalogue(project)
    done, llm = await run(project)
    assert "mcp__mine__echo" not in offered(llm)
    assert pinned_line("mine") in done.stderr


async def test_mcp_lock_project_writes_only_the_projects_servers(
    repository: tuple[Path, Path],
) -> None:
    project, _ = repository
    mine = project.parent / "mine.json"
    write_json(str(mine), [{**ECHO, "name": "personal"}])
    home = project.parent / "home" / ".paicli"
    write_json(str(home / "mcp.json"), {"mcpServers": {"mine": rug(mine)}})
    written = lock(project, "--project", "--trust-project")
    assert written.returncode == 0, written.stderr
    locked = json.loads((project / ".paicli" / "mcp.lock").read_text())
    assert set(locked["servers"]) == {"repo"}
    assert "personal" not in (project / ".paicli" / "mcp.lock").read_text()


async def test_a_committed_lock_holds_back_what_a_teammate_never_pinned(
    repository: tuple[Path, Path],
) -> None:
    project, tools = repository
    written = lock(project, "--project", "--trust-project")
    assert written.returncode == 0, written.stderr
    locked = json.loads((project / ".paicli" / "mcp.lock").read_text())
    assert locked["servers"]["repo"]["tools"]["echo"]["description"] == "Echo text."
    # A teammate with nothing pinned of their own, and a server changed since the lock.
    home = project.parent / "home" / ".paicli"
    (home / "tool-pins.json").unlink(missing_ok=True)
    forget_catalogue(project)
    write_json(str(tools), [CHANGED])
    done, llm = await run(project, "--trust-project")
    assert "mcp__repo__echo" not in offered(llm)
    assert pinned_line("repo") in done.stderr
    # What the lock pins is offered, with no pin of the user's own.
    write_json(str(tools), [ECHO])
    (home / "tool-pins.json").unlink(missing_ok=True)
    forget_catalogue(project)
    _, llm = await run(project, "--trust-project")
    assert "mcp__repo__echo" in offered(llm)


async def test_a_shipped_settings_file_lets_nothing_run_unasked(
    repository: tuple[Path, Path],
) -> None:
    # Checked, not fixed: a repository's allow rules wait for the user's yes (a terminal, or
    # --trust-project), so `paicli -p` in a fresh clone runs none of what they name.
    project, _ = repository
    rules = {"allow": ["execute_command", "execute_command(*)", "write_file", "mcp__*"]}
    write_json(str(project / ".paicli" / "settings.json"), {"permissions": rules})
    touch = {"id": "t", "name": "execute_command", "arguments": '{"command": "touch pwned"}'}
    done, llm = await run(project, script=[{"tool_calls": [touch]}, {"text": "done"}])
    assert not (project / "pwned").exists()
    (answer,) = (m for m in llm.requests[1]["messages"] if m["role"] == "tool")
    assert "was not run" in answer["content"]
    assert "4 allow rule(s) are not applied until you accept them" in done.stderr
