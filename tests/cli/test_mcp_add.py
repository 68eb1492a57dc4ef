"""`paicli mcp add` parses its command line the way users type it (options anywhere before
`--`, Claude Code's short flags, a URL meaning HTTP) and never writes a malformed entry or
silently replaces one. In process: `main()` with a temporary PAICLI_HOME, the file read back."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest

from paicli.cli import main

FILE_BEFORE = {"mcpServers": {"memory": {"command": "old", "env": {"TOKEN": "keep-me"}}}}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PAICLI_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    return tmp_path / "home"


def saved(home: Path) -> dict[str, Any]:
    document = json.loads((home / "mcp.json").read_text())
    servers = document["mcpServers"]
    assert isinstance(servers, dict)
    return servers


@pytest.mark.parametrize(
    ("argv", "entry"),
    [
        (
            ["memory", "--env", "K=V", "--", "npx", "-y", "server-memory"],
            {"command": "npx", "args": ["-y", "server-memory"], "env": {"K": "V"}},
        ),
        (
            ["-e", "A=1", "memory", "-e", "B=2=3", "--", "cmd", "--env", "X=Y"],
            {"command": "cmd", "args": ["--env", "X=Y"], "env": {"A": "1", "B": "2=3"}},
        ),
        (["memory", "cmd"], {"command": "cmd", "args": []}),
        (
            ["memory", "--", "py", "x.py", "--mode", "a", "--", "b"],
            {"command": "py", "args": ["x.py", "--mode", "a", "--", "b"]},
        ),
        (
            ["memory", "--transport", "http", "https://example.test/mcp"],
            {"type": "http", "url": "https://example.test/mcp"},
        ),
        (
            ["memory", "http://127.0.0.1:9/mcp", "-H", "Authorization: Bearer t"],
            {
                "type": "http",
                "url": "http://127.0.0.1:9/mcp",
                "headers": {"Authorization": "Bearer t"},
            },
        ),
        (
            ["-t", "sse", "memory", "--header", "X-Key: 1", "https://example.test/sse"],
            {"type": "sse", "url": "https://example.test/sse", "headers": {"X-Key": "1"}},
        ),
        (
            ["memory", "--protocol", "legacy", "--", "npx", "-y", "@openai/codex-shell-tool-mcp"],
            {
                "command": "npx",
                "args": ["-y", "@openai/codex-shell-tool-mcp"],
                "protocol": "legacy",
            },
        ),
        (
            ["memory", "https://example.test/mcp", "--protocol", "2025-06-18"],
            {"type": "http", "url": "https://example.test/mcp", "protocol": "2025-06-18"},
        ),
        (["memory", "--protocol", "auto", "--", "cmd"], {"command": "cmd", "args": []}),
    ],
    ids=[
        "env-after-name",
        "short-flags-both-sides",
        "bare-command",
        "options-after-the-double-dash",
        "transport-after-name",
        "url-means-http",
        "sse-short",
        "protocol-legacy",
        "protocol-version",
        "protocol-auto-is-the-default",
    ],
)
def test_options_anywhere_before_the_double_dash(
    home: Path, argv: list[str], entry: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["mcp", "add", *argv]) == 0, capsys.readouterr().err
    assert saved(home) == {"memory": entry}
    assert stat.S_IMODE((home / "mcp.json").stat().st_mode) == 0o600
    assert stat.S_IMODE(home.stat().st_mode) == 0o700


def test_scope_project_with_the_short_flag(home: Path) -> None:
    assert main(["mcp", "add", "x", "-s", "project", "--", "cmd"]) == 0
    assert json.loads(Path(".paicli/mcp.json").read_text())["mcpServers"] == {
        "x": {"command": "cmd", "args": []}
    }
    assert not (home / "mcp.json").exists()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["x"], "give the command after --"),
        (["x", "-e", "K=V"], "give the command after --"),
        (["x", "npx", "-y", "server"], "unrecognized arguments: -y"),
        (["x", "stray", "--", "cmd"], "unexpected 'stray' before --"),
        (["x", "-e", "NOVALUE", "--", "cmd"], "--env 'NOVALUE' is not NAME=VALUE"),
        (["x", "-e", "BAD NAME=1", "--", "cmd"], "is not NAME=VALUE"),
        (["x", "-t", "stdio", "http://h/mcp"], "is a URL"),
        (["x", "-t", "http", "not-a-url"], "is not an http:// or https:// URL"),
        (["x", "http://"], "is not an http:// or https:// URL with a host"),
        (["x", "-t", "http", "http://h/a", "http://h/b"], "takes one URL, got 2"),
        (["x", "-e", "K=V", "http://h/mcp"], "--env is for stdio servers"),
        (["x", "-H", "K: V", "--", "cmd"], "--header is for HTTP servers"),
        (["x", "-H", "no colon", "http://h/mcp"], "is not 'Name: value'"),
        (["x", "-H", "K: a\r\nEvil: 1", "http://h/mcp"], "is not 'Name: value'"),
        (["x", "--transport", "carrier-pigeon", "--", "cmd"], "invalid choice"),
        (["x", "--protocol", "2019-01-01", "--", "cmd"], "'protocol' must be one of auto, legacy"),
        (["bad/../name", "--", "cmd"], "'bad/../name': a server name is 1 to 64"),
    ],
)
def test_a_malformed_command_line_writes_nothing_and_says_why(
    home: Path, argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["mcp", "add", *argv]) == 2
    shown = capsys.readouterr().err
    assert message in shown
    assert "Traceback" not in shown
    assert len(shown.strip().splitlines()) == 1, shown
    assert not (home / "mcp.json").exists()


def test_an_existing_name_is_refused_without_force_and_kept_whole(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home.mkdir(mode=0o700)
    (home / "mcp.json").write_text(json.dumps(FILE_BEFORE))
    before = (home / "mcp.json").read_bytes()
    assert main(["mcp", "add", "memory", "--", "new"]) == 1
    shown = capsys.readouterr().err
    assert "already has a server named 'memory'; nothing changed (--force replaces it)" in shown
    assert "keep-me" not in shown
    assert (home / "mcp.json").read_bytes() == before
    assert main(["mcp", "add", "memory", "--force", "--", "new"]) == 0
    assert "Replaced stdio server 'memory'" in capsys.readouterr().out
    assert saved(home) == {"memory": {"command": "new", "args": []}}


@pytest.mark.parametrize("linked", [".paicli", ".paicli/mcp.json"])
@pytest.mark.parametrize(
    "argv",
    [
        ["add", "-s", "project", "x", "--", "cmd"],
        ["add-json", "-s", "project", "x", '{"command": "cmd"}'],
        ["remove", "-s", "project", "x"],
    ],
)
def test_a_project_file_linked_out_of_the_project_is_not_written(
    home: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    linked: str,
    argv: list[str],
) -> None:
    # A cloned repository's `.paicli` (or its mcp.json) may lead anywhere: the edit wrote
    # there (making the folders), and the loader then refused the file as out of the project.
    project, outside = home.parent / "repo", home.parent / "outside"
    (project / ".git").mkdir(parents=True)
    outside.mkdir()
    (outside / "mcp.json").write_text(json.dumps({"mcpServers": {"x": {"command": "cmd"}}}))
    if linked == ".paicli/mcp.json":
        (project / ".paicli").mkdir()
    (project / linked).symlink_to(outside if linked == ".paicli" else outside / "mcp.json")
    before = (outside / "mcp.json").read_bytes()
    monkeypatch.chdir(project)
    assert main(["mcp", *argv]) == 1
    shown = capsys.readouterr().err
    assert shown.count("\n") == 1
    assert "mcp.json: not changing it: a symbolic link out of the project" in shown
    assert (outside / "mcp.json").read_bytes() == before
    assert sorted(p.name for p in outside.iterdir()) == ["mcp.json"]


@pytest.mark.parametrize("command", ["./run.sh", "bin/run"])
def test_a_relative_command_of_your_own_is_saved_as_its_full_path(
    home: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    # Saved as typed, it ran whatever file of that name the folder paicli runs in has: in a
    # cloned repository, the repository's (as one of your own servers, never asked about).
    assert main(["mcp", "add", "mine", "--", command, "-v"]) == 0
    full = str(Path.cwd() / command.removeprefix("./"))
    assert saved(home) == {"mine": {"command": full, "args": ["-v"]}}
    assert f"is saved as its full path, {full!r}" in capsys.readouterr().err
    # A project's server runs from its project: there the path stays as typed.
    assert main(["mcp", "add", "-s", "project", "theirs", "--", command]) == 0
    project_file = json.loads(Path(".paicli/mcp.json").read_text())
    assert project_file["mcpServers"]["theirs"]["command"] == command
    # A program looked up on PATH is left alone.
    assert main(["mcp", "add", "npx", "--", "npx", "-y", "server"]) == 0
    assert saved(home)["npx"]["command"] == "npx"
