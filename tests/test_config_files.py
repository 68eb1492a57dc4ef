"""Hostile config files before any approval: whatever a cloned repository puts at the path of
a config file, paicli reads it without hanging, exhausting memory or crashing, says what is
wrong in one line naming the file, and still loads the other files."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from paicli.config_files import MAX_CONFIG_BYTES, ConfigFileError, parse_json, read_config_text
from paicli.home import PaicliHome
from paicli.servers.config import LoadedConfig, load_config
from paicli.user_config import load_user_config
from tests.no_hang import without_hanging


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path]:
    """(home folder, project) with a working user server `mine`."""
    home, project = tmp_path / "home", tmp_path / "project"
    (home / ".paicli").mkdir(parents=True)
    (project / ".paicli").mkdir(parents=True)
    servers = {"mcpServers": {"mine": {"command": "mine"}}}
    (home / ".paicli" / "mcp.json").write_text(json.dumps(servers))
    return home, project


def load(places: tuple[Path, Path]) -> LoadedConfig:
    home, project = places
    return load_config(project, environ={"HOME": str(home)})


def problems(config: LoadedConfig) -> list[str]:
    return [problem.message for problem in config.errors]


def test_a_fifo_as_project_config_is_refused_without_blocking(places: tuple[Path, Path]) -> None:
    fifo = places[1] / ".mcp.json"
    os.mkfifo(fifo)
    config = without_hanging(lambda: load(places), fifo)
    assert problems(config) == [f"{fifo}: cannot read: not a regular file (a FIFO)"]
    assert list(config.servers) == ["mine"]  # the other files still load


def test_a_project_config_linked_to_dev_zero_is_refused(places: tuple[Path, Path]) -> None:
    link = places[1] / ".paicli" / "mcp.json"
    link.symlink_to("/dev/zero")
    config = load(places)
    assert problems(config) == [f"{link}: cannot read: a symbolic link out of the project"]
    assert list(config.servers) == ["mine"]


def test_the_users_own_config_linked_to_a_device_is_refused(tmp_path: Path) -> None:
    # The user's own file may be a symlink (dotfiles), but only to a regular file.
    (tmp_path / ".paicli").mkdir()
    (tmp_path / ".paicli" / "mcp.json").symlink_to("/dev/zero")
    config = load_config(None, environ={"HOME": str(tmp_path)})
    assert problems(config) == ["~/.paicli/mcp.json: cannot read: not a regular file (a device)"]


def test_a_project_config_linked_to_a_users_file_is_not_read(places: tuple[Path, Path]) -> None:
    home, project = places
    (project / ".mcp.json").symlink_to(home / ".paicli" / "mcp.json")
    config = load(places)
    assert problems(config) == [
        f"{project}/.mcp.json: cannot read: a symbolic link out of the project"
    ]
    assert [e.scope for e in config.servers.values()] == ["user"]


def test_a_link_inside_the_project_is_followed(places: tuple[Path, Path]) -> None:
    project = places[1]
    (project / "shared.json").write_text(json.dumps({"mcpServers": {"s": {"command": "s"}}}))
    (project / ".mcp.json").symlink_to("shared.json")
    assert load(places).servers["s"].scope == "claude"


def test_a_file_over_a_mebibyte_is_refused(places: tuple[Path, Path]) -> None:
    big = places[1] / ".mcp.json"
    big.write_text('{"mcpServers": {}, "pad": "' + "x" * MAX_CONFIG_BYTES + '"}')
    config = load(places)
    assert problems(config) == [f"{big}: cannot read: larger than 1 MiB"]
    assert list(config.servers) == ["mine"]


def test_json_nested_100000_deep_is_one_problem_not_a_crash(places: tuple[Path, Path]) -> None:
    deep = places[1] / ".paicli" / "mcp.json"
    deep.write_text('{"mcpServers": {"x": ' + "[" * 100_000 + "]" * 100_000 + "}}")
    config = load(places)
    assert problems(config) == [f"{deep}: nested deeper than 64 levels (at line 1)"]
    assert list(config.servers) == ["mine"]


def test_nesting_up_to_the_limit_and_brackets_inside_strings_are_fine() -> None:
    assert isinstance(parse_json("[" * 64 + "]" * 64, "f"), list)
    assert parse_json('{"a": "[[[[\\"{{{{"}', "f") == {"a": '[[[["{{{{'}
    with pytest.raises(ConfigFileError, match="nested deeper than 64"):
        parse_json("[" * 65 + "]" * 65, "f")


def test_a_repeated_key_is_an_error_naming_the_key_and_the_file(places: tuple[Path, Path]) -> None:
    twice = places[1] / ".paicli" / "mcp.json"
    twice.write_text(
        '{"mcpServers": {"lint": {"command": "lint", "args": ["--safe"],'
        ' "args": ["--exfiltrate"]}}}'
    )
    config = load(places)
    assert problems(config) == [f"{twice}: duplicate key 'args'"]
    assert list(config.servers) == ["mine"]


def test_a_missing_file_or_a_dangling_link_is_no_file(tmp_path: Path) -> None:
    assert read_config_text(tmp_path / "absent.json", "absent.json") is None
    (tmp_path / "dangling.json").symlink_to(tmp_path / "nowhere")
    assert read_config_text(tmp_path / "dangling.json", "dangling.json") is None


# The user's settings file (config.toml or config.json)


def test_a_fifo_as_the_settings_file_is_refused_without_blocking(tmp_path: Path) -> None:
    home = PaicliHome(tmp_path)
    fifo = home.settings_files[0]
    os.mkfifo(fifo)
    config = without_hanging(lambda: load_user_config(home), fifo)
    assert config.problems == (f"{fifo}: cannot read: not a regular file (a FIFO)",)
    assert config.values == {}


def test_deeply_nested_toml_is_one_problem_not_a_crash(tmp_path: Path) -> None:
    home = PaicliHome(tmp_path)
    home.settings_files[0].write_text("a = " + "[" * 100_000 + "]" * 100_000 + "\n")
    config = load_user_config(home)
    assert config.problems == (f"{home.settings_files[0]}: invalid TOML: nested too deeply",)


def test_toml_nested_past_the_limit_is_refused(tmp_path: Path) -> None:
    home = PaicliHome(tmp_path)
    home.settings_files[0].write_text("a = " + "[" * 70 + "]" * 70 + "\n")
    config = load_user_config(home)
    assert config.problems == (f"{home.settings_files[0]}: nested deeper than 64 levels",)


def test_a_repeated_key_in_the_json_settings_file_is_an_error(tmp_path: Path) -> None:
    home = PaicliHome(tmp_path)
    home.settings_files[1].write_text('{"model": "a", "model": "b"}')
    assert load_user_config(home).problems == (f"{home.settings_files[1]}: duplicate key 'model'",)
