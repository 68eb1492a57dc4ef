"""`paicli mcp import`: Claude Desktop's and Claude Code's servers copied into paicli's
config, shown first (secrets masked), names already there kept, nothing written without a
yes. In process with HOME pointed at a temporary folder, plus one real terminal."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from paicli.cli import main
from paicli.home import PaicliHome
from paicli.servers.claude_import import claude_desktop_file, found

GITHUB_TOKEN = "ghp_AAAAbbbbCCCCddddEEEEffff0000111122"
BEARER = "bearer-value-never-shown-4f9a"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """HOME (Claude's files), with PAICLI_HOME inside it, and a project as cwd."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("PAICLI_HOME", raising=False)
    monkeypatch.delenv("APPDATA", raising=False)
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    return tmp_path


def write(path: Path, document: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document))


def desktop(home: Path, servers: dict[str, Any]) -> None:
    write(home / ".config" / "Claude" / "claude_desktop_config.json", {"mcpServers": servers})


def claude_code(home: Path, servers: dict[str, Any], project: dict[str, Any]) -> None:
    document = {
        "numStartups": 12,
        "mcpServers": servers,
        "projects": {
            str(home / "project"): {"mcpServers": project, "allowedTools": []},
            "/elsewhere": {"mcpServers": {"other": {"command": "not-this-one"}}},
        },
    }
    write(home / ".claude.json", document)


def saved(home: Path) -> dict[str, Any]:
    servers = json.loads((home / ".paicli" / "mcp.json").read_text())["mcpServers"]
    assert isinstance(servers, dict)
    return servers


GH = {"command": "npx", "args": ["-y", "server-github"], "env": {"GITHUB_TOKEN": GITHUB_TOKEN}}
REMOTE = {"type": "http", "url": "https://example.test/mcp", "headers": {"X-Auth": BEARER}}
LOCAL = {"type": "stdio", "command": "node", "args": ["server.js"]}


def test_both_programs_servers_are_shown_masked_and_imported_with_yes(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    desktop(home, {"github": GH})
    claude_code(home, {"remote": REMOTE}, {"local-one": LOCAL})
    assert main(["mcp", "import", "--yes"]) == 0
    shown = capsys.readouterr()
    screen = shown.out + shown.err
    assert "github: GITHUB_TOKEN=*** npx -y server-github" in screen
    assert "remote: https://example.test/mcp  [X-Auth: ***]" in screen
    assert "local-one: node server.js" in screen
    assert GITHUB_TOKEN not in screen and BEARER not in screen
    assert "not-this-one" not in screen  # another project's servers stay there
    assert saved(home) == {"github": GH, "remote": REMOTE, "local-one": LOCAL}


def test_from_picks_one_program(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    desktop(home, {"github": GH})
    claude_code(home, {"remote": REMOTE}, {})
    assert main(["mcp", "import", "--from", "claude-code", "-s", "project", "--yes"]) == 0
    written = json.loads(Path(".paicli/mcp.json").read_text())["mcpServers"]
    assert written == {"remote": REMOTE}


def test_names_already_configured_are_kept_and_said(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(home / ".paicli" / "mcp.json", {"mcpServers": {"github": {"command": "mine"}}})
    desktop(home, {"github": GH, "fresh": {"command": "fresh"}})
    assert main(["mcp", "import", "--yes"]) == 0
    screen = capsys.readouterr().out
    assert "'github' (~/.config/Claude/claude_desktop_config.json): " in screen
    assert "already has a server of that name; kept as it is" in screen
    assert GITHUB_TOKEN not in screen
    assert saved(home) == {"github": {"command": "mine"}, "fresh": {"command": "fresh"}}


def test_without_a_terminal_nothing_is_written_unless_yes(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    desktop(home, {"github": GH})
    assert main(["mcp", "import"]) == 1
    assert "not a terminal to confirm in; pass --yes" in capsys.readouterr().err
    assert not (home / ".paicli" / "mcp.json").exists()


def test_hostile_names_and_entries_are_left_out_escaped(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    desktop(
        home,
        {
            "../../escape": {"command": "x"},
            "red\x1b[31mname\x07": {"command": "x"},
            "n" * 5000: {"command": "x"},
            "broken": {"command": 7, "env": {"API_KEY": "sk-live-broken-entry-secret"}},
            "fine": {"command": "ok", "args": ["--api-key=sk-live-arg-secret-123456"]},
        },
    )
    assert main(["mcp", "import", "--yes"]) == 0
    shown = capsys.readouterr()
    screen = shown.out + shown.err
    assert "'../../escape' (" in screen and "a server name is 1 to 64" in screen
    assert "'red\\x1b[31mname\\x07'" in screen
    assert "\x1b" not in screen and "\x07" not in screen
    assert "n" * 65 not in screen  # a huge name is cut
    assert "server 'broken': 'command' must be a non-empty string" in screen
    assert "sk-live-broken-entry-secret" not in screen
    assert "sk-live-arg-secret-123456" not in screen
    assert saved(home) == {
        "fine": {"command": "ok", "args": ["--api-key=sk-live-arg-secret-123456"]}
    }
    assert not (home / "escape").exists() and not (home / ".paicli" / "logs").exists()


@pytest.mark.parametrize(
    "text", ["{not json", "[]", '{"mcpServers": []}', '{"a": 1, "a": 2}'], ids=str
)
def test_an_unreadable_file_is_one_line_and_the_other_still_imports(
    home: Path, text: str, capsys: pytest.CaptureFixture[str]
) -> None:
    (home / ".claude.json").write_text(text)
    desktop(home, {"github": GH})
    assert main(["mcp", "import", "--yes"]) == 0
    errors = capsys.readouterr().err
    assert errors.count("~/.claude.json") == 1 and "Traceback" not in errors
    assert list(saved(home)) == ["github"]


def test_nothing_to_import_says_so(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mcp", "import"]) == 0
    assert "Nothing to import." in capsys.readouterr().out


def test_claude_desktop_lives_where_each_platform_keeps_it(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "APPDATA": str(tmp_path / "roaming")}
    assert (
        claude_desktop_file(env, "linux") == tmp_path / ".config/Claude/claude_desktop_config.json"
    )
    assert claude_desktop_file(env, "darwin") == (
        tmp_path / "Library/Application Support/Claude/claude_desktop_config.json"
    )
    assert (
        claude_desktop_file(env, "win32") == tmp_path / "roaming/Claude/claude_desktop_config.json"
    )
    servers, problem = found("claude-desktop", env, tmp_path, "linux")
    assert (servers, problem) == ([], None)  # no file: nothing, and no complaint


@pytest.mark.real
async def test_at_a_terminal_the_user_is_asked_first(home: Path) -> None:
    from tests.ui.terminal import Terminal  # noqa: PLC0415 - only this test needs a pty

    desktop(home, {"github": GH})
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "TERM": "dumb"}
    env |= {k: v for k, v in os.environ.items() if k == "PYTHONPATH"}
    for reply, code in (("n", 1), ("y", 0)):
        term = await Terminal.spawn(
            [sys.executable, "-m", "paicli.cli", "mcp", "import"], cwd=home / "project", env=env
        )
        try:
            await term.expect("Import 1 server(s) into")
            term.line(reply)
            assert await term.exit_code() == code
        finally:
            await term.aclose()
        assert (home / ".paicli" / "mcp.json").exists() is (reply == "y")
    assert saved(home) == {"github": GH}


def test_import_into_the_local_scope_writes_nothing_into_the_project(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (home / "project" / ".git").mkdir()
    desktop(home, {"github": GH})
    assert main(["mcp", "import", "-s", "local", "--yes"]) == 0
    local = PaicliHome(home / ".paicli").local_mcp_config(home / "project")
    assert json.loads(local.read_text())["mcpServers"] == {"github": GH}
    assert not (home / "project" / ".paicli").exists()
    assert not (home / ".paicli" / "mcp.json").exists()
