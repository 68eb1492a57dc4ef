"""`paicli mcp add-json NAME JSON`: the entry is checked the way loading checks it, every
problem is one line naming it, and nothing malformed is ever written. In process: `main()`
with a temporary PAICLI_HOME, the file read back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from paicli.cli import main
from paicli.servers.config import load_config


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PAICLI_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    return tmp_path / "home"


def test_an_entry_is_saved_as_written_and_loads(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    entry = {"command": "npx", "args": ["-y", "server"], "env": {"TOKEN": "${GH_TOKEN_UNSET}"}}
    assert main(["mcp", "add-json", "gh", json.dumps(entry)]) == 0, capsys.readouterr().err
    assert "Added stdio server 'gh'" in capsys.readouterr().out
    assert json.loads((home / "mcp.json").read_text())["mcpServers"] == {"gh": entry}
    remote = {"type": "http", "url": "https://example.test/mcp", "headers": {"X-Key": "k"}}
    assert main(["mcp", "add-json", "-s", "project", "remote", json.dumps(remote)]) == 0
    saved = json.loads(Path(".paicli/mcp.json").read_text())["mcpServers"]
    assert saved == {"remote": remote}
    assert "Added http server 'remote'" in capsys.readouterr().out


def test_an_existing_name_needs_force(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mcp", "add-json", "x", '{"command": "old"}']) == 0
    assert main(["mcp", "add-json", "x", '{"command": "new"}']) == 1
    assert "already has a server named 'x'" in capsys.readouterr().err
    assert main(["mcp", "add-json", "x", "-f", '{"command": "new"}']) == 0
    servers = load_config(None).servers
    assert servers["x"].raw == {"command": "new"}


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("x", '{"command": "x",}', "the JSON: invalid JSON at line 1, column 17"),
        ("x", '{"command": "a", "command": "b"}', "the JSON: duplicate key 'command'"),
        ("x", "[1, 2]", "must be one server entry"),
        ("x", '{"mcpServers": {"x": {"command": "c"}}}', "not an mcpServers object"),
        ("x", '{"command": 3}', "server 'x': 'command' must be a non-empty string"),
        ("x", '{"args": ["a"]}', "server 'x': missing 'command'"),
        ("x", '{"command": "c", "args": "a b"}', "'args' must be a list of strings"),
        ("x", '{"type": "pigeon", "url": "u"}', "unknown 'type' 'pigeon'"),
        ("x", '{"command": "c", "restart": "always"}', "'restart' must be"),
        ("x", '{"command": "c", "disabled": "yes"}', "'disabled' must be true or false"),
        ("x", "[" * 100_000, "nested deeper than 64 levels"),
        ("../../etc/passwd", '{"command": "c"}', "'../../etc/passwd': a server name is"),
        ("a\x1b]0;owned\x07", '{"command": "c"}', "'a\\x1b]0;owned\\x07': a server name is"),
    ],
)
def test_a_malformed_entry_writes_nothing_and_is_one_line(
    home: Path, name: str, text: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["mcp", "add-json", name, text]) == 2
    shown = capsys.readouterr().err
    assert message in shown
    assert len(shown.strip().splitlines()) == 1, shown
    assert "Traceback" not in shown and "\x1b" not in shown and "\x07" not in shown
    assert not (home / "mcp.json").exists()
    assert not (home.parent / "etc").exists()


def test_an_unknown_key_is_a_warning_as_loading_says_it(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["mcp", "add-json", "x", '{"command": "c", "comand": "typo"}']) == 0
    assert "warning: ~/home/mcp.json: server 'x': ignoring unknown key 'comand'" in (
        capsys.readouterr().err
    )
