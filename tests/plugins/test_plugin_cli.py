"""`paicli plugin ...` in process (`main()` with a temporary PAICLI_HOME): installing shows
what a plugin adds and asks, copies it safely into ~/.paicli/plugins/NAME, and records it;
what it refuses, it refuses in one line and leaves nothing behind."""

from __future__ import annotations

import io
import json
import os
import stat
from pathlib import Path

import pytest

from paicli.cli import main
from paicli.plugins.registry import Registry, enabled_plugins
from tests.plugins.builders import write_plugin


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_installing_shows_everything_asks_and_copies_privately(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    source = write_plugin(tmp_path / "demo")
    servers = {"files": {"command": "srv", "sandbox": False, "trust": True}}
    (source / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    manifest = source / ".claude-plugin" / "plugin.json"
    manifest.write_text(json.dumps({"name": "demo", "description": "nice \x1b]0;pwned\x07 one"}))
    monkeypatch.setattr("sys.stdin", Terminal("y\n"))
    assert main(["plugin", "add", str(source)]) == 0
    shown = capsys.readouterr()
    assert "/demo:hello" in shown.err and "demo:reviewer" in shown.err
    assert "demo:changelog" in shown.err
    assert "${CLAUDE_PLUGIN_ROOT}/scripts/fmt.sh" in shown.err  # the hook as written
    assert "plugin_demo_files: srv" in shown.err
    assert 'also: {"sandbox": false, "trust": true}' in shown.err
    assert "\x1b" not in shown.err and "\x07" not in shown.err
    assert "Installed plugin demo" in shown.out
    installed = home / "plugins" / "demo"
    assert stat.S_IMODE(installed.stat().st_mode) == 0o700
    assert stat.S_IMODE((installed / "commands" / "hello.md").stat().st_mode) == 0o600
    assert stat.S_IMODE((installed / "scripts" / "fmt.sh").stat().st_mode) == 0o700
    assert stat.S_IMODE((home / "plugins.json").stat().st_mode) == 0o600
    plugins, problems = enabled_plugins(home, Path.cwd())
    assert [p.name for p in plugins] == ["demo"] and problems == []


def test_without_a_terminal_or_yes_nothing_is_installed(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("y\n"))
    assert main(["plugin", "add", str(write_plugin(tmp_path / "demo"))]) == 1
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last == "paicli plugin add: demo not installed: no terminal to ask (pass --yes)"
    assert not (home / "plugins" / "demo").exists()
    assert Registry(home).plugins() == []


def test_a_no_installs_nothing(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin", Terminal("\n"))
    assert main(["plugin", "add", str(write_plugin(tmp_path / "demo"))]) == 1
    assert not (home / "plugins" / "demo").exists()
    assert list((home / "plugins" / ".staging").iterdir()) == []


@pytest.mark.parametrize(
    ("source", "words"),
    [
        ("ext::sh -c touch% /tmp/pwned", "not a folder nor a git URL"),
        ("fd::3", "not a folder nor a git URL"),
        ("--upload-pack=touch /tmp/x", "not a folder nor a git URL"),
        ("git://127.0.0.1/x.git", "not a folder nor a git URL"),
        ("/no/such/folder", "no such folder"),
    ],
)
def test_sources_that_are_no_folder_nor_an_allowed_git_url_are_refused(
    home: Path, source: str, words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        main(
            ["plugin", "add", "--yes", "--", source]
            if source.startswith("-")
            else ["plugin", "add", "--yes", source]
        )
        == 1
    )
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and words in lines[0]


def test_a_link_out_of_the_plugin_refuses_the_install(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = write_plugin(tmp_path / "demo")
    os.symlink(Path.home() / ".ssh" / "id_ed25519", source / "commands" / "key.md")
    assert main(["plugin", "add", "--yes", str(source)]) == 1
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines == ["paicli plugin add: commands/key.md: a symbolic link out of the plugin"]
    assert not (home / "plugins" / "demo").exists()


def test_a_file_name_with_an_escape_refuses_the_install(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = write_plugin(tmp_path / "demo")
    (source / "commands" / "x\x1b[2J.md").write_text("hi")
    assert main(["plugin", "add", "--yes", str(source)]) == 1
    assert "not a file name paicli copies" in capsys.readouterr().err
    assert "\x1b" not in capsys.readouterr().err


def test_list_disable_enable_project_scope_and_remove(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = Path.cwd()
    assert (
        main(["plugin", "add", "--yes", "--scope", "project", str(write_plugin(tmp_path / "demo"))])
        == 0
    )
    settings = json.loads((project / ".paicli" / "settings.json").read_text())
    assert settings == {"enabledPlugins": {"demo": True}}
    assert [p.name for p in enabled_plugins(home, project)[0]] == ["demo"]
    assert enabled_plugins(home, tmp_path)[0] == []  # another folder: not its project
    capsys.readouterr()
    assert main(["plugin", "add", "--yes", str(tmp_path / "demo")]) == 0  # added again
    assert f"(it replaces the installed demo, from {tmp_path / 'demo'})" in capsys.readouterr().err
    assert main(["plugin", "add", "--yes", "--scope", "project", str(tmp_path / "demo")]) == 0
    assert main(["plugin", "disable", "--scope", "project", "demo"]) == 0
    assert enabled_plugins(home, project)[0] == []
    capsys.readouterr()
    assert main(["plugin", "list"]) == 0
    assert f"demo 1.0.0  project ({project})  disabled" in capsys.readouterr().out
    assert main(["plugin", "enable", "--scope", "project", "demo"]) == 0
    assert [p.name for p in enabled_plugins(home, project)[0]] == ["demo"]
    assert main(["plugin", "remove", "demo"]) == 0
    assert not (home / "plugins" / "demo").exists() and Registry(home).plugins() == []


def test_a_marketplace_lists_plugins_that_install_by_name(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    market = tmp_path / "market"
    write_plugin(market / "plugins" / "formatter", "formatter")
    (market / ".claude-plugin").mkdir()
    index = {
        "name": "team-tools",
        "owner": {"name": "Team"},
        "plugins": [
            {"name": "formatter", "source": "./plugins/formatter", "description": "Format"},
            {"name": "escape", "source": "../../etc"},
            {"name": "npm-one", "source": {"source": "npm", "package": "x"}},
        ],
    }
    (market / ".claude-plugin" / "marketplace.json").write_text(json.dumps(index))
    assert main(["plugin", "marketplace", "add", str(market)]) == 0
    assert main(["plugin", "marketplace", "list"]) == 0
    listed = capsys.readouterr().out
    assert "formatter@team-tools  Format" in listed
    assert "escape@team-tools  plugin escape: '../../etc' is not a path inside the plugin" in listed
    assert main(["plugin", "add", "--yes", "npm-one@team-tools"]) == 1
    assert "is not one paicli fetches" in capsys.readouterr().err
    assert main(["plugin", "add", "--yes", "formatter@team-tools"]) == 0
    (installed,) = Registry(home).plugins()
    assert installed.key == "formatter@team-tools"
    assert main(["plugin", "marketplace", "remove", "team-tools"]) == 0
    assert not (home / "marketplaces" / "team-tools").exists()
