"""Config files for MCP servers: layering, variable expansion, errors as data, and editing."""

from __future__ import annotations

import json
import logging
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from paicli.home import PaicliHome
from paicli.mcp import HttpServer, StdioServer
from paicli.servers.config import (
    ConfigWriteError,
    LoadedConfig,
    ServerEntry,
    ServerExists,
    add_server,
    load_config,
    remove_server,
)


@pytest.fixture
def user_home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    return home


@pytest.fixture
def project(user_home: Path) -> Path:
    project = user_home / "code" / "app"
    project.mkdir(parents=True)
    return project


def write(path: Path, document: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(document if isinstance(document, str) else json.dumps(document))
    return path


def servers(**entries: Any) -> dict[str, Any]:
    return {"mcpServers": entries}


def load(project: Path | None, user_home: Path, **environ: str) -> LoadedConfig:
    return load_config(project, environ={"HOME": str(user_home), **environ})


def user_file(user_home: Path) -> Path:
    return user_home / ".paicli" / "mcp.json"


def only(config: LoadedConfig) -> ServerEntry:
    assert not config.errors
    [entry] = config.servers.values()
    return entry


# Files and precedence


def test_missing_files_give_an_empty_config(project: Path, user_home: Path) -> None:
    assert load(project, user_home) == LoadedConfig()


def test_user_file_servers_become_typed_specs(user_home: Path) -> None:
    write(
        user_file(user_home),
        servers(
            files={"command": "npx", "args": ["-y", "fs"], "env": {"A": "1"}, "timeout": 5},
            remote={"url": "https://example.com/mcp", "headers": {"X-Key": "k"}},
        ),
    )
    config = load(None, user_home)
    files, remote = config.servers["files"], config.servers["remote"]
    assert files.spec == StdioServer(
        "npx", args=("-y", "fs"), env={"A": "1"}, name="files", request_timeout=5
    )
    assert remote.spec == HttpServer(
        "https://example.com/mcp", headers={"X-Key": "k"}, name="remote"
    )
    assert (files.scope, files.source, files.error) == ("user", user_file(user_home), None)
    assert config.errors == [] and config.warnings == []


def test_paicli_home_environment_variable_moves_the_user_file(
    tmp_path: Path, user_home: Path
) -> None:
    write(tmp_path / "elsewhere" / "mcp.json", servers(a={"command": "a"}))
    config = load(None, user_home, PAICLI_HOME=str(tmp_path / "elsewhere"))
    assert only(config).source == tmp_path / "elsewhere" / "mcp.json"


def test_home_argument_overrides_paicli_home(tmp_path: Path, user_home: Path) -> None:
    write(tmp_path / "h" / "mcp.json", servers(a={"command": "a"}))
    config = load_config(None, home=PaicliHome(tmp_path / "h"), environ={"HOME": str(user_home)})
    assert only(config).name == "a"


def test_the_project_file_replaces_claude_codes_and_the_user_keeps_a_name_both_use(
    project: Path, user_home: Path
) -> None:
    write(project / ".mcp.json", servers(a={"command": "claude"}, b={"command": "claude"}))
    write(user_file(user_home), servers(b={"command": "user"}))
    write(project / ".paicli" / "mcp.json", servers(a={"command": "project"}))
    config = load(project, user_home)
    found = {
        name: (e.scope, e.spec.command)
        for name, e in config.servers.items()
        if isinstance(e.spec, StdioServer)
    }
    assert found == {
        "a": ("project", "project"),
        "b": ("user", "user"),
        "b-project": ("claude", "claude"),
    }
    assert config.servers["b-project"].source == project / ".mcp.json"


def test_an_overriding_entry_replaces_the_whole_entry(project: Path, user_home: Path) -> None:
    write(project / ".mcp.json", servers(a={"command": "claude", "args": ["x"], "timeout": 9}))
    write(project / ".paicli" / "mcp.json", servers(a={"command": "project"}))
    entry = only(load(project, user_home))
    assert isinstance(entry.spec, StdioServer)
    assert (entry.spec.command, tuple(entry.spec.args), entry.spec.request_timeout) == (
        "project",
        (),
        60.0,
    )


def test_a_broken_higher_entry_still_overrides_a_working_lower_one(
    project: Path, user_home: Path
) -> None:
    write(project / ".mcp.json", servers(a={"command": "claude"}))
    write(project / ".paicli" / "mcp.json", servers(a={"command": 5}))
    entry = only(load(project, user_home))
    assert entry.scope == "project" and entry.spec is None and entry.error


def test_without_a_project_only_the_user_file_is_read(project: Path, user_home: Path) -> None:
    write(project / ".mcp.json", servers(a={"command": "a"}))
    assert load(None, user_home).servers == {}


def test_project_at_the_home_folder_reads_the_shared_file_once_as_user(user_home: Path) -> None:
    write(user_file(user_home), servers(a={"command": "a"}))
    assert only(load(user_home, user_home)).scope == "user"


# Variables


def test_variables_expand_in_command_args_env_cwd_url_and_headers(user_home: Path) -> None:
    write(
        user_file(user_home),
        servers(
            local={
                "command": "${BIN}/run",
                "args": ["--token=${TOKEN}", "${TOKEN}${TOKEN}"],
                "env": {"KEY": "${TOKEN}"},
                "cwd": "${BIN}",
            },
            remote={"url": "https://${HOST}/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
        ),
    )
    config = load(None, user_home, BIN="/opt", TOKEN="t", HOST="h.example")
    local, remote = config.servers["local"].spec, config.servers["remote"].spec
    assert isinstance(local, StdioServer) and isinstance(remote, HttpServer)
    assert (local.command, tuple(local.args), local.cwd) == (
        "/opt/run",
        ("--token=t", "tt"),
        "/opt",
    )
    assert local.env == {"KEY": "t"}
    assert (remote.url, remote.headers) == ("https://h.example/mcp", {"Authorization": "Bearer t"})


@pytest.mark.parametrize(
    ("environ", "expected"),
    [({}, "fallback"), ({"MODE": ""}, "fallback"), ({"MODE": "set"}, "set")],
    ids=["unset", "empty", "set"],
)
def test_a_default_applies_when_the_variable_is_unset_or_empty(
    user_home: Path, environ: dict[str, str], expected: str
) -> None:
    write(user_file(user_home), servers(a={"command": "run", "args": ["${MODE:-fallback}"]}))
    spec = only(load(None, user_home, **environ)).spec
    assert isinstance(spec, StdioServer) and tuple(spec.args) == (expected,)


def test_an_empty_variable_without_default_expands_to_nothing(user_home: Path) -> None:
    write(user_file(user_home), servers(a={"command": "run", "args": ["x${EMPTY}"]}))
    spec = only(load(None, user_home, EMPTY="")).spec
    assert isinstance(spec, StdioServer) and tuple(spec.args) == ("x",)


def test_project_dir_and_home_expand_to_the_project_root_and_home_folder(
    project: Path, user_home: Path
) -> None:
    write(
        project / ".paicli" / "mcp.json",
        servers(a={"command": "${HOME}/bin/fs", "args": ["${PROJECT_DIR}/src"]}),
    )
    spec = only(load(project, user_home, PROJECT_DIR="/ignored")).spec
    assert isinstance(spec, StdioServer)
    assert (spec.command, tuple(spec.args)) == (f"{user_home}/bin/fs", (f"{project}/src",))


def test_a_missing_variable_fails_that_server_naming_file_server_field_and_variable(
    user_home: Path,
) -> None:
    write(
        user_file(user_home),
        servers(
            github={"command": "gh", "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}},
            other={"command": "ok"},
        ),
    )
    config = load(None, user_home)
    github = config.servers["github"]
    assert github.spec is None
    assert github.error == (
        "~/.paicli/mcp.json: server 'github': ${GITHUB_TOKEN} is not set (in env.GITHUB_TOKEN)"
    )
    assert config.servers["other"].spec is not None
    assert config.errors == []


def test_every_missing_variable_of_a_server_is_named(user_home: Path) -> None:
    write(user_file(user_home), servers(a={"url": "https://${HOST}/", "headers": {"K": "${KEY}"}}))
    error = only(load(None, user_home)).error
    assert error == (
        "~/.paicli/mcp.json: server 'a': ${HOST} is not set (in url); "
        "${KEY} is not set (in headers.K)"
    )


def test_project_dir_is_not_set_without_a_project(user_home: Path) -> None:
    write(user_file(user_home), servers(a={"command": "fs", "args": ["${PROJECT_DIR}"]}))
    assert only(load(None, user_home)).error == (
        "~/.paicli/mcp.json: server 'a': ${PROJECT_DIR} is not set (in args[0])"
    )


def test_variables_do_not_expand_in_keys_or_other_fields(user_home: Path) -> None:
    entry = {"command": "run", "env": {"${K}": "v"}, "description": "${K}"}
    write(user_file(user_home), servers(a=entry))
    loaded = only(load(None, user_home, K="expanded"))
    assert isinstance(loaded.spec, StdioServer) and loaded.spec.env == {"${K}": "v"}
    assert loaded.raw["description"] == "${K}"


def test_expanded_values_are_not_expanded_again(user_home: Path) -> None:
    write(user_file(user_home), servers(a={"command": "${A}"}))
    spec = only(load(None, user_home, A="${B}", B="no")).spec
    assert isinstance(spec, StdioServer) and spec.command == "${B}"


def test_text_that_is_not_a_variable_reference_stays_literal(user_home: Path) -> None:
    write(user_file(user_home), servers(a={"command": "run", "args": ["$HOME", "${}", "${1X}"]}))
    spec = only(load(None, user_home)).spec
    assert isinstance(spec, StdioServer) and tuple(spec.args) == ("$HOME", "${}", "${1X}")


def test_raw_holds_the_entry_as_written_never_expanded(user_home: Path) -> None:
    write(user_file(user_home), servers(a={"command": "run", "env": {"T": "${T}"}, "trust": True}))
    loaded = only(load(None, user_home, T="secret"))
    assert loaded.raw == {"command": "run", "env": {"T": "${T}"}, "trust": True}
    assert isinstance(loaded.spec, StdioServer) and loaded.spec.env == {"T": "secret"}


# File-level errors


def test_invalid_json_names_file_line_and_column(user_home: Path) -> None:
    write(user_file(user_home), '{\n  "mcpServers": {\n    "a": {"command": "x",}\n  }\n}\n')
    config = load(None, user_home)
    [problem] = config.errors
    assert problem.source == user_file(user_home)
    assert str(problem) == (
        "~/.paicli/mcp.json: invalid JSON at line 3, column 26: "
        "Expecting property name enclosed in double quotes"
    )
    assert "\n" not in problem.message and config.servers == {}


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ("[]", "expected a JSON object at the top, got an array"),
        ('"x"', "expected a JSON object at the top, got a string"),
        ('{"mcpServers": []}', "'mcpServers' must be an object of servers, got an array"),
        ('{"mcpServers": null}', "'mcpServers' must be an object of servers, got null"),
    ],
)
def test_a_file_whose_root_or_servers_is_not_an_object_is_one_error(
    project: Path, user_home: Path, document: str, message: str
) -> None:
    write(project / ".mcp.json", document)
    [problem] = load(project, user_home).errors
    assert problem.message == f"~/code/app/.mcp.json: {message}"


def test_a_broken_file_does_not_hide_the_other_files(project: Path, user_home: Path) -> None:
    write(user_file(user_home), "{")
    write(project / ".paicli" / "mcp.json", servers(a={"command": "a"}))
    config = load(project, user_home)
    assert [p.source for p in config.errors] == [user_file(user_home)]
    assert config.servers["a"].spec is not None


def test_an_unreadable_file_is_a_file_error(user_home: Path) -> None:
    user_file(user_home).mkdir(parents=True)
    [problem] = load(None, user_home).errors
    assert problem.message.startswith("~/.paicli/mcp.json: cannot read: ")


def test_a_file_outside_the_home_folder_is_shown_by_full_path(tmp_path: Path) -> None:
    write(tmp_path / "p" / ".mcp.json", "nope")
    [problem] = load(tmp_path / "p", tmp_path / "home").errors
    assert problem.message.startswith(f"{tmp_path}/p/.mcp.json: invalid JSON at line 1, column 1")


def test_an_empty_file_means_no_servers(user_home: Path) -> None:
    write(user_file(user_home), "\n")
    assert load(None, user_home) == LoadedConfig()


def test_a_byte_order_mark_is_accepted(user_home: Path) -> None:
    user_file(user_home).parent.mkdir(parents=True)
    user_file(user_home).write_bytes(
        b"\xef\xbb\xbf" + json.dumps(servers(a={"command": "a"})).encode()
    )
    assert only(load(None, user_home)).spec is not None


def test_a_file_without_mcp_servers_warns_about_the_keys_it_has(user_home: Path) -> None:
    write(user_file(user_home), {"servers": {"a": {"command": "a"}}})
    config = load(None, user_home)
    assert config.servers == {} and config.errors == []
    assert config.warnings == [
        "~/.paicli/mcp.json: no 'mcpServers' object (found 'servers'); no servers read"
    ]


# Server-level errors and warnings


def test_a_bad_field_fails_only_that_server_naming_the_file(user_home: Path) -> None:
    write(user_file(user_home), servers(bad={"command": "x", "args": "-v"}, good={"command": "y"}))
    config = load(None, user_home)
    assert config.servers["bad"].error == (
        "~/.paicli/mcp.json: server 'bad': 'args' must be a list of strings"
    )
    assert config.servers["good"].spec is not None


@pytest.mark.parametrize(
    "entry",
    [
        ["command"],
        "npx",
        {},
        {"command": ""},
        {"command": None},
        {"command": "x", "env": {"A": 1}},
        {"command": "x", "env": ["A=1"]},
        {"command": "x", "args": [1]},
        {"command": "x", "cwd": 3},
        {"command": "x", "timeout": "30"},
        {"command": "x", "startupTimeout": -1},
        {"command": "x", "protocol": []},
        {"command": "x", "type": {"a": 1}},
        {"url": "ftp://x"},
        {"url": ["https://x"]},
        {"url": "https://x", "headers": {"A": None}},
        {"url": "https://x", "headers": "A: b"},
        {"type": "http"},
        {"type": "websocket", "url": "wss://x"},
    ],
)
def test_a_malformed_entry_becomes_an_error_on_that_server(user_home: Path, entry: Any) -> None:
    write(user_file(user_home), servers(s=entry))
    loaded = only(load(None, user_home))
    assert loaded.spec is None
    assert loaded.error and loaded.error.startswith("~/.paicli/mcp.json: server 's': ")


def test_unknown_keys_warn_naming_file_and_server_without_logging(
    user_home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    write(user_file(user_home), servers(a={"command": "x", "comand": "y"}))
    with caplog.at_level(logging.DEBUG):
        config = load(None, user_home)
    assert config.servers["a"].spec is not None
    assert config.warnings == ["~/.paicli/mcp.json: server 'a': ignoring unknown key 'comand'"]
    assert caplog.records == []


# paicli's own options


def test_options_default_to_enabled_unfiltered_untrusted_and_never_restarted(
    user_home: Path,
) -> None:
    write(user_file(user_home), servers(a={"command": "x"}))
    entry = only(load(None, user_home))
    assert (entry.disabled, entry.trust, entry.restart, entry.max_restarts) == (
        False,
        False,
        "never",
        3,
    )
    assert entry.include_tools is None and entry.exclude_tools is None


def test_disabled_trust_and_tool_filters_are_parsed(user_home: Path) -> None:
    entry = {
        "command": "x",
        "disabled": True,
        "trust": True,
        "includeTools": ["read_*", "list"],
        "excludeTools": [],
    }
    write(user_file(user_home), servers(a=entry))
    loaded = only(load(None, user_home))
    assert (loaded.disabled, loaded.trust) == (True, True)
    assert (loaded.include_tools, loaded.exclude_tools) == (("read_*", "list"), ())
    assert loaded.spec is not None and loaded.error is None


@pytest.mark.parametrize(
    ("restart", "expected"),
    [
        ("never", ("never", 3)),
        ("on-failure", ("on-failure", 3)),
        ({"policy": "on-failure", "maxRestarts": 5}, ("on-failure", 5)),
        ({"maxRestarts": 0}, ("on-failure", 0)),
        ({"policy": "never"}, ("never", 3)),
    ],
)
def test_restart_accepts_a_policy_name_or_an_object_with_a_maximum(
    user_home: Path, restart: Any, expected: tuple[str, int]
) -> None:
    write(user_file(user_home), servers(a={"command": "x", "restart": restart}))
    entry = only(load(None, user_home))
    assert (entry.restart, entry.max_restarts) == expected


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"disabled": "yes"}, "'disabled' must be true or false, got a string"),
        ({"trust": 1}, "'trust' must be true or false, got a number"),
        (
            {"includeTools": "read_*"},
            "'includeTools' must be a list of tool names or glob patterns",
        ),
        (
            {"excludeTools": ["ok", 3]},
            "'excludeTools' must be a list of tool names or glob patterns",
        ),
        ({"excludeTools": [""]}, "'excludeTools' must be a list of tool names or glob patterns"),
        ({"restart": "always"}, '\'restart\' must be "never", "on-failure" or {"policy": ..., '),
        ({"restart": True}, "'restart' must be"),
        ({"restart": {"policy": "sometimes"}}, "'restart' must be"),
        ({"restart": {"maxRestarts": -1}}, "restart.maxRestarts must be a whole number >= 0"),
        ({"restart": {"maxRestarts": 2.5}}, "restart.maxRestarts must be a whole number >= 0"),
        ({"restart": {"maxRestarts": True}}, "restart.maxRestarts must be a whole number >= 0"),
    ],
)
def test_a_bad_option_value_fails_that_server(
    user_home: Path, options: dict[str, Any], message: str
) -> None:
    write(user_file(user_home), servers(a={"command": "x", **options}))
    entry = only(load(None, user_home))
    assert entry.spec is None
    assert entry.error is not None
    assert entry.error.startswith(f"~/.paicli/mcp.json: server 'a': {message}")


def test_unknown_keys_in_the_restart_object_warn(user_home: Path) -> None:
    write(user_file(user_home), servers(a={"command": "x", "restart": {"backoff": 2}}))
    config = load(None, user_home)
    assert config.servers["a"].restart == "on-failure"
    assert config.warnings == [
        "~/.paicli/mcp.json: server 'a': restart: ignoring unknown key 'backoff'"
    ]


def test_a_disabled_server_with_a_missing_variable_still_reads_as_disabled(
    user_home: Path,
) -> None:
    write(user_file(user_home), servers(a={"command": "${NOPE}", "disabled": True}))
    entry = only(load(None, user_home))
    assert entry.disabled and entry.error and entry.raw == {"command": "${NOPE}", "disabled": True}


# Editing a file


def test_add_server_creates_the_folder_and_writes_indented_json(tmp_path: Path) -> None:
    path = tmp_path / "new" / ".paicli" / "mcp.json"
    add_server(path, "fs", {"command": "npx", "args": ["-y", "fs"]})
    assert path.read_text() == (
        '{\n  "mcpServers": {\n    "fs": {\n      "command": "npx",\n'
        '      "args": [\n        "-y",\n        "fs"\n      ]\n    }\n  }\n}\n'
    )
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert os.listdir(path.parent) == ["mcp.json"]


def test_add_and_remove_keep_other_servers_and_unknown_top_level_keys(tmp_path: Path) -> None:
    path = write(tmp_path / "mcp.json", {"$schema": "s", "mcpServers": {"a": {"command": "a"}}})
    path.chmod(0o644)
    add_server(path, "b", {"url": "https://b/", "headers": {"K": "${K}"}})
    with pytest.raises(ServerExists, match="already has a server named 'a'"):
        add_server(path, "a", {"command": "a2"})
    add_server(path, "a", {"command": "a2"}, replace=True)  # replacing keeps its place
    assert json.loads(path.read_text()) == {
        "$schema": "s",
        "mcpServers": {
            "a": {"command": "a2"},
            "b": {"url": "https://b/", "headers": {"K": "${K}"}},
        },
    }
    assert list(json.loads(path.read_text())["mcpServers"]) == ["a", "b"]
    assert remove_server(path, "a") is True
    assert json.loads(path.read_text()) == {
        "$schema": "s",
        "mcpServers": {"b": {"url": "https://b/", "headers": {"K": "${K}"}}},
    }
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    assert os.listdir(tmp_path) == ["mcp.json"]


def test_an_added_server_loads_back_unexpanded_in_the_file(user_home: Path) -> None:
    add_server(user_file(user_home), "gh", {"command": "gh", "env": {"T": "${T}"}})
    assert "${T}" in user_file(user_home).read_text()
    spec = only(load(None, user_home, T="tok")).spec
    assert isinstance(spec, StdioServer) and spec.env == {"T": "tok"}


def test_remove_server_reports_false_when_there_is_nothing_to_remove(tmp_path: Path) -> None:
    assert remove_server(tmp_path / "absent.json", "a") is False
    path = write(tmp_path / "mcp.json", servers(a={"command": "a"}))
    before = path.read_text()
    assert remove_server(path, "b") is False
    assert path.read_text() == before


@pytest.mark.parametrize("text", ["{not json", "[]", '{"mcpServers": 3}'])
def test_editing_a_file_that_is_not_a_config_leaves_it_untouched(tmp_path: Path, text: str) -> None:
    path = write(tmp_path / "mcp.json", text)
    with pytest.raises(ConfigWriteError, match="not changing the file"):
        add_server(path, "a", {"command": "a"})
    with pytest.raises(ConfigWriteError, match="not changing the file"):
        remove_server(path, "a")
    assert path.read_text() == text


def test_editing_through_a_symlink_updates_the_linked_file(tmp_path: Path) -> None:
    real = write(tmp_path / "dotfiles" / "mcp.json", servers())
    link = tmp_path / "home" / "mcp.json"
    link.parent.mkdir()
    link.symlink_to(real)
    add_server(link, "a", {"command": "a"})
    assert link.is_symlink()
    assert json.loads(real.read_text()) == servers(a={"command": "a"})


def test_a_write_failure_is_a_config_write_error(tmp_path: Path) -> None:
    # A dangling symlink where the folder should be: nothing to read, and no folder to create.
    (tmp_path / "config").symlink_to(tmp_path / "missing")
    with pytest.raises(ConfigWriteError, match="cannot write: File exists"):
        add_server(tmp_path / "config" / "mcp.json", "a", {"command": "a"})


# OAuth settings of HTTP servers


def test_an_http_server_gets_oauth_with_its_settings_and_the_private_token_file(
    user_home: Path,
) -> None:
    oauth = {
        "clientId": "paicli-app",
        "clientSecret": "${DOCS_SECRET}",
        "scopes": ["read", "write"],
        "callbackPort": 8765,
    }
    write(user_file(user_home), servers(docs={"url": "https://docs.example/mcp", "oauth": oauth}))
    entry = only(load(None, user_home, DOCS_SECRET="s3cret"))
    assert isinstance(entry.spec, HttpServer) and entry.spec.auth is not None
    auth = entry.spec.auth
    assert (auth.client_id, auth.client_secret, tuple(auth.scopes or ())) == (
        "paicli-app",
        "s3cret",
        ("read", "write"),
    )
    assert entry.oauth is not None and entry.oauth.callback_port == 8765
    assert "s3cret" not in repr(entry.spec)


def test_a_server_with_its_own_authorization_header_gets_no_oauth(user_home: Path) -> None:
    headers = {"Authorization": "Bearer ${TOKEN}"}
    write(user_file(user_home), servers(docs={"url": "https://d.example/mcp", "headers": headers}))
    entry = only(load(None, user_home, TOKEN="t"))
    assert isinstance(entry.spec, HttpServer) and entry.spec.auth is None


@pytest.mark.parametrize(
    ("oauth", "complaint"),
    [
        ("yes", "'oauth' must be an object"),
        ({"clientId": 7}, "'oauth.clientId' must be a non-empty string"),
        ({"scopes": "read"}, "'oauth.scopes' must be a list of scope names"),
        ({"callbackPort": 70000}, "'oauth.callbackPort' must be a port number"),
        ({"callbackPort": True}, "'oauth.callbackPort' must be a port number"),
        ({"redirectUri": "x"}, "'oauth' has unknown keys: redirectUri"),
    ],
)
def test_a_wrong_oauth_setting_is_one_error_naming_the_server_and_key(
    user_home: Path, oauth: object, complaint: str
) -> None:
    write(user_file(user_home), servers(docs={"url": "https://d.example/mcp", "oauth": oauth}))
    [entry] = load(None, user_home).servers.values()
    assert entry.spec is None and entry.error is not None
    assert "server 'docs'" in entry.error and complaint in entry.error


@pytest.mark.parametrize(
    ("entry", "warned"),
    [
        ({"command": "./run.sh"}, True),
        ({"command": "bin/run", "cwd": "sub"}, True),
        ({"command": "bin/run", "cwd": "/opt/tool"}, False),
        ({"command": "/usr/bin/run"}, False),
        ({"command": "npx"}, False),
        ({"command": "${HOME}/bin/run"}, False),
    ],
)
def test_a_relative_command_in_your_own_file_is_a_warning(
    user_home: Path, entry: dict[str, Any], warned: bool
) -> None:
    # It runs whatever file of that name the folder paicli runs in has: a repository's.
    write(user_file(user_home), servers(mine=entry))
    config = load(None, user_home)
    assert config.servers["mine"].spec is not None
    warning = (
        f"~/.paicli/mcp.json: server 'mine': 'command' {entry['command']!r} is a path from "
        "the folder paicli runs in, where a repository can put a file of that name; give its "
        "full path"
    )
    assert config.warnings == ([warning] if warned else [])
