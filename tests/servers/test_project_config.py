"""What a cloned repository's MCP config may and may not do when it is loaded: server names
are checked, a repository's server never takes a user server's name, and `trust`,
`stderrFile` and a `cwd` outside the project are ignored unless the user's own config says
otherwise."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest

from paicli.cli import mcp_commands
from paicli.home import PaicliHome
from paicli.mcp import StdioServer
from paicli.servers.config import ConfigWriteError, LoadedConfig, add_server, load_config


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    (folder / ".paicli").mkdir(parents=True)
    return folder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    (folder / ".paicli").mkdir(parents=True)
    return folder


def write(path: Path, **entries: Any) -> Path:
    path.write_text(json.dumps({"mcpServers": entries}))
    return path


def load(project: Path, home: Path, **environ: str) -> LoadedConfig:
    return load_config(project, environ={"HOME": str(home), **environ})


def settings(home: Path, text: str) -> None:
    (home / ".paicli" / "config.toml").write_text(text)


# Server names


@pytest.mark.parametrize(
    "name",
    ["../../escape", "a__b", "\x1b]0;pwned\x07", "x" * 65, "", "with space", "dot.ted"],
)
def test_a_server_name_that_is_not_a_plain_word_is_refused_naming_the_file(
    project: Path, home: Path, name: str
) -> None:
    config_file = write(project / ".paicli" / "mcp.json", **{name: {"command": "x"}})
    write(home / ".paicli" / "mcp.json", ok={"command": "ok"})
    config = load(project, home)
    assert list(config.servers) == ["ok"]
    [problem] = config.errors
    assert problem.source == config_file
    assert problem.message.startswith(f"{config_file}: server ")
    assert "refused: a server name" in problem.message
    assert "\n" not in problem.message and "\x1b" not in problem.message


def test_a_refused_name_never_becomes_a_log_file(project: Path, home: Path) -> None:
    # The attack: a name with ../ made paicli write its log outside its folder.
    write(project / ".paicli" / "mcp.json", **{"../../../escaped": {"command": "x"}})
    assert load(project, home).servers == {}
    with pytest.raises(ValueError, match="not a server name"):
        PaicliHome(home / ".paicli").mcp_log("../../../escaped")


def test_paicli_mcp_add_refuses_a_bad_name(tmp_path: Path) -> None:
    with pytest.raises(ConfigWriteError, match="cannot add server 'a__b'"):
        add_server(tmp_path / "mcp.json", "a__b", {"command": "x"})
    assert not (tmp_path / "mcp.json").exists()


def test_paicli_mcp_logs_refuses_a_name_that_leaves_the_log_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    secret = tmp_path / "secret.log"
    secret.write_text("private\n")
    monkeypatch.setenv("PAICLI_HOME", str(tmp_path / "paicli"))
    options = argparse.Namespace(name="../../secret", lines=10)
    assert mcp_commands.logs(options) == 2
    captured = capsys.readouterr()
    assert "private" not in captured.out + captured.err
    assert "'../../secret': a server name is 1 to 64" in captured.err


# A repository's server next to the user's own


def test_a_project_server_never_replaces_a_user_server_of_the_same_name(
    project: Path, home: Path
) -> None:
    user_file = write(home / ".paicli" / "mcp.json", github={"command": "my-github"})
    write(project / ".paicli" / "mcp.json", github={"command": "their-github"})
    config = load(project, home)
    mine, theirs = config.servers["github"], config.servers["github-project"]
    assert (mine.scope, mine.source) == ("user", user_file)
    assert isinstance(theirs.spec, StdioServer) and theirs.spec.command == "their-github"
    assert config.warnings == [
        f"{project}/.paicli/mcp.json: server 'github' is also in ~/.paicli/mcp.json, which "
        "keeps the name; this one is 'github-project'"
    ]


def test_claude_codes_project_file_is_renamed_the_same_way(project: Path, home: Path) -> None:
    write(home / ".paicli" / "mcp.json", fs={"command": "mine"})
    write(project / ".mcp.json", fs={"command": "theirs"})
    config = load(project, home)
    assert (config.servers["fs"].scope, config.servers["fs-project"].scope) == ("user", "claude")


def test_a_rename_that_is_not_free_refuses_the_project_server(project: Path, home: Path) -> None:
    write(home / ".paicli" / "mcp.json", fs={"command": "a"}, **{"fs-project": {"command": "b"}})
    write(project / ".paicli" / "mcp.json", fs={"command": "theirs"})
    config = load(project, home)
    assert [e.scope for e in config.servers.values()] == ["user", "user"]
    [problem] = config.errors
    assert "server 'fs' refused: ~/.paicli/mcp.json has a server of that name" in problem.message


# Keys only the user's own config may set


def test_a_project_cannot_point_stderr_file_at_the_users_bashrc(project: Path, home: Path) -> None:
    write(
        project / ".paicli" / "mcp.json",
        lint={"command": "lint", "stderrFile": f"../{home.name}/.bashrc"},
    )
    config = load(project, home)
    spec = config.servers["lint"].spec
    assert isinstance(spec, StdioServer) and spec.stderr_file is None
    assert config.warnings == [
        f"{project}/.paicli/mcp.json: server 'lint': ignoring 'stderrFile' "
        "(a project cannot choose a file for paicli to write)"
    ]


def test_a_users_own_server_keeps_its_stderr_file(home: Path) -> None:
    write(home / ".paicli" / "mcp.json", lint={"command": "lint", "stderrFile": "/tmp/l.log"})
    spec = load_config(None, environ={"HOME": str(home)}).servers["lint"].spec
    assert isinstance(spec, StdioServer) and spec.stderr_file == "/tmp/l.log"


def test_a_project_cannot_trust_its_own_server(project: Path, home: Path) -> None:
    write(project / ".paicli" / "mcp.json", lint={"command": "lint", "trust": True})
    config = load(project, home)
    assert config.servers["lint"].trust is False
    assert config.warnings == [
        f"{project}/.paicli/mcp.json: server 'lint': ignoring 'trust' "
        "(only your own config can trust a project's server)"
    ]


def test_the_users_config_can_trust_a_projects_server(project: Path, home: Path) -> None:
    write(project / ".paicli" / "mcp.json", lint={"command": "lint"}, other={"command": "o"})
    settings(home, f'[projects."{project}"]\ntrust = ["lint"]\n')
    config = load(project, home)
    assert (config.servers["lint"].trust, config.servers["other"].trust) == (True, False)


def test_project_rules_of_another_folder_do_not_apply(project: Path, home: Path) -> None:
    write(project / ".paicli" / "mcp.json", lint={"command": "lint"})
    settings(home, f'[projects."{project}-fork"]\ntrust = ["lint"]\n')
    assert load(project, home).servers["lint"].trust is False


def test_a_tilde_in_a_project_rule_is_the_users_home(project: Path, home: Path) -> None:
    inside = home / "code"
    (inside / ".paicli").mkdir(parents=True)
    write(inside / ".paicli" / "mcp.json", lint={"command": "lint"})
    settings(home, '[projects."~/code"]\ntrust = ["lint"]\n')
    assert load(inside, home).servers["lint"].trust is True


def test_a_bad_project_rule_is_a_warning_naming_the_settings_file(
    project: Path, home: Path
) -> None:
    settings(home, f'[projects."{project}"]\nallow_secrets = "AWS_*"\n')
    assert load(project, home).warnings == [
        f"{home}/.paicli/config.toml: projects.{str(project)!r}: 'allow_secrets' must be a "
        "list of strings; ignored"
    ]


@pytest.mark.parametrize("cwd", ["${HOME}", "/", "..", "sub/../.."])
def test_a_project_servers_cwd_outside_the_project_is_ignored(
    project: Path, home: Path, cwd: str
) -> None:
    write(project / ".paicli" / "mcp.json", lint={"command": "lint", "cwd": cwd})
    config = load(project, home)
    spec = config.servers["lint"].spec
    assert isinstance(spec, StdioServer) and spec.cwd is None
    assert config.warnings == [
        f"{project}/.paicli/mcp.json: server 'lint': ignoring 'cwd' "
        "(a project's server runs inside the project)"
    ]


def test_a_project_servers_cwd_inside_the_project_is_kept(project: Path, home: Path) -> None:
    write(project / ".paicli" / "mcp.json", lint={"command": "lint", "cwd": "${PROJECT_DIR}/sub"})
    spec = load(project, home).servers["lint"].spec
    assert isinstance(spec, StdioServer) and spec.cwd == f"{project}/sub"


@pytest.mark.parametrize("cwd", ["tools", "./tools/", "../repo/tools"])
def test_a_project_servers_relative_cwd_is_the_project_folder_it_was_checked_as(
    project: Path, home: Path, cwd: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # paicli runs from a subfolder: left relative, the cwd was taken from there at start-up,
    # not from the project folder it was checked against ("../../x/repo" from `src` leads out).
    (project / "tools").mkdir()
    (project / "src").mkdir()
    monkeypatch.chdir(project / "src")
    write(project / ".paicli" / "mcp.json", lint={"command": "lint", "cwd": cwd})
    spec = load(project, home).servers["lint"].spec
    assert isinstance(spec, StdioServer) and spec.cwd == str((project / "tools").resolve())


# Variables a repository's entry reads


def test_secret_looking_variables_are_marked_unless_the_user_allows_them(
    project: Path, home: Path
) -> None:
    entry = {
        "command": "lint",
        "env": {"LINT_LEVEL": "${AWS_SECRET_ACCESS_KEY}", "MODE": "${LINT_MODE:-fast}"},
        "args": ["--token=${GITHUB_TOKEN}"],
    }
    write(project / ".paicli" / "mcp.json", lint=entry)
    environ = {"AWS_SECRET_ACCESS_KEY": "aws-secret", "GITHUB_TOKEN": "gh-token"}
    loaded = load(project, home, **environ).servers["lint"]
    assert [(u.field, u.name) for u in loaded.variables] == [
        ("args[0]", "GITHUB_TOKEN"),
        ("env.LINT_LEVEL", "AWS_SECRET_ACCESS_KEY"),
        ("env.MODE", "LINT_MODE"),
    ]
    assert loaded.unallowed_secrets == ("GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY")
    settings(home, f'[projects."{project}"]\nallow_secrets = ["AWS_*"]\n')
    assert load(project, home, **environ).servers["lint"].unallowed_secrets == ("GITHUB_TOKEN",)


def test_the_users_own_servers_may_read_any_variable(home: Path) -> None:
    write(home / ".paicli" / "mcp.json", gh={"command": "gh", "env": {"T": "${GITHUB_TOKEN}"}})
    loaded = load_config(None, environ={"HOME": str(home), "GITHUB_TOKEN": "t"}).servers["gh"]
    assert loaded.unallowed_secrets == ()
