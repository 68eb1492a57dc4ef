"""The "local" scope: one project's servers for this user alone, kept in PAICLI_HOME (never
in the repository), keyed by the project's root folder; they win a name over the user's,
keep it against the repository's, and never need approval. Plus `paicli mcp add|add-json|
remove -s local` and the scope shown by `mcp list`/`mcp get`."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from paicli.cli import main
from paicli.home import PaicliHome
from paicli.servers.config import LoadedConfig, load_config
from paicli.servers.trust import needs_approval


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "home"
    (folder / ".paicli").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(folder))
    monkeypatch.delenv("PAICLI_HOME", raising=False)
    return folder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    (folder / ".git").mkdir(parents=True)
    return folder


def write(path: Path, **entries: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": entries}))
    return path


def local_file(home: Path, project: Path) -> Path:
    return PaicliHome(home / ".paicli").local_mcp_config(project)


def load(project: Path | None, home: Path) -> LoadedConfig:
    return load_config(project, environ={"HOME": str(home)})


def test_local_servers_load_for_their_project_only_and_need_no_approval(
    project: Path, home: Path, tmp_path: Path
) -> None:
    write(local_file(home, project), mine={"command": "mine"})
    config = load(project, home)
    entry = config.servers["mine"]
    assert entry.scope == "local" and not needs_approval(entry)
    other = tmp_path / "other"
    other.mkdir()
    assert "mine" not in load(other, home).servers
    assert "mine" not in load(None, home).servers


def test_local_wins_a_name_over_user_and_keeps_it_against_the_repository(
    project: Path, home: Path
) -> None:
    write(home / ".paicli" / "mcp.json", fs={"command": "user-fs"}, db={"command": "user-db"})
    write(project / ".paicli" / "mcp.json", fs={"command": "repo-fs"})
    write(local_file(home, project), fs={"command": "local-fs"})
    config = load(project, home)
    assert config.servers["fs"].scope == "local" and config.servers["fs"].raw["command"] == (
        "local-fs"
    )
    assert config.servers["fs-project"].scope == "project"
    assert config.servers["db"].scope == "user"


@pytest.mark.parametrize(
    "name", ["../../x", "with\x1b[2Jescape", "a\nb", "..", "-", "x" * 300, "/", "C:\\evil"]
)
def test_a_hostile_project_path_never_becomes_a_path_of_its_own(tmp_path: Path, name: str) -> None:
    paicli_home = PaicliHome(tmp_path / ".paicli")
    where = paicli_home.local_mcp_config(Path("/work") / name)
    assert where.parent.parent == tmp_path / ".paicli" / "local"
    assert re.fullmatch(r"[A-Za-z0-9_.-]{1,93}", where.parent.name)
    assert not where.parent.name.startswith(".")


def test_two_paths_that_read_alike_get_two_files(tmp_path: Path) -> None:
    paicli_home = PaicliHome(tmp_path)
    assert paicli_home.local_mcp_config(Path("/a/b c")) != paicli_home.local_mcp_config(
        Path("/a/b-c")
    )


def test_add_add_json_list_and_remove_with_the_local_scope(
    project: Path, home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    deep = project / "src" / "pkg"
    deep.mkdir(parents=True)
    monkeypatch.chdir(deep)  # from a subfolder: the project is the folder with .git
    assert main(["mcp", "add", "-s", "local", "one", "--", "echo"]) == 0
    assert main(["mcp", "add-json", "-s", "local", "two", '{"command": "echo"}']) == 0
    written = json.loads(local_file(home, project).read_text())["mcpServers"]
    assert set(written) == {"one", "two"}
    assert not (project / ".paicli").exists() and not (deep / ".paicli").exists()
    capsys.readouterr()
    assert main(["mcp", "remove", "two"]) == 0  # no scope: local is looked in first
    assert "Removed server 'two'" in capsys.readouterr().out
    assert main(["mcp", "remove", "-s", "local", "two"]) == 1
    assert "no server named 'two' in local config" in capsys.readouterr().err
    assert set(json.loads(local_file(home, project).read_text())["mcpServers"]) == {"one"}


@pytest.mark.real
def test_list_and_get_show_the_local_scope(
    project: Path, home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import sys  # noqa: PLC0415

    from tests.conftest import SERVER_PROGRAMS  # noqa: PLC0415

    monkeypatch.chdir(project)
    fault = {"command": sys.executable, "args": [str(SERVER_PROGRAMS / "fault_server.py")]}
    write(local_file(home, project), fault=fault)
    assert main(["mcp", "list", "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert (row["name"], row["scope"], row["state"]) == ("fault", "local", "ready")
    assert main(["mcp", "get", "fault"]) == 0
    assert re.search(r"^scope:\s+local$", capsys.readouterr().out, re.M)
    assert main(["mcp", "list"]) == 0
    table = capsys.readouterr().out  # plain columns in a pipe: SCOPE after NAME
    assert re.search(r"(?m)^fault +local +ready ", table)


def test_mcp_config_files_are_the_users_and_their_names_are_checked_like_any(
    project: Path, home: Path, tmp_path: Path
) -> None:
    extra = tmp_path / "extra.json"
    servers = {
        "fs": {"command": "cli-fs", "env": {"TOKEN": "sk-cli-secret-123456"}},
        "../../evil": {"command": "x"},
        "esc\x1b]0;t\x07": {"command": "x"},
    }
    extra.write_text(json.dumps({"mcpServers": servers}))
    write(home / ".paicli" / "mcp.json", fs={"command": "user-fs"}, db={"command": "db"})
    config = load_config(project, environ={"HOME": str(home)}, extra_files=[extra])
    fs = config.servers["fs"]
    assert (fs.scope, fs.raw["command"], needs_approval(fs)) == ("cli", "cli-fs", False)
    assert "db" in config.servers
    errors = [str(e) for e in config.errors]
    assert len(errors) == 2 and all("refused: a server name is" in e for e in errors)
    assert any("'esc\\x1b]0;t\\x07'" in e for e in errors)
    assert not any("\x1b" in e or "\x07" in e for e in errors)
    strict = load_config(project, environ={"HOME": str(home)}, extra_files=[extra], only_extra=True)
    assert list(strict.servers) == ["fs"]
