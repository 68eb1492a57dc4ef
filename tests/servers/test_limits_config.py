"""Resource limits in config: a server's `"limits"`, the user's `[limits]` defaults in
config.toml, and what a cloned repository may do with them (tighten, never loosen)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from paicli.mcp import Limits, ServerConfigError, StdioServer, server_from_dict
from paicli.servers.config import LoadedConfig, load_config
from tests.servers.test_project_config import home, project

__all__ = ["home", "project"]  # the fixtures, shared with the project config tests

MiB = 1024 * 1024


def write(path: Path, **entries: Any) -> None:
    path.write_text(json.dumps({"mcpServers": entries}))


def load(home: Path, project: Path | None = None) -> LoadedConfig:
    return load_config(project, environ={"HOME": str(home)})


def limits_of(config: LoadedConfig, name: str) -> Limits | None:
    spec = config.servers[name].spec
    assert isinstance(spec, StdioServer), config.servers[name].error
    return spec.limits


# The library's form


@pytest.mark.parametrize(
    ("written", "size"),
    [
        ("512M", 512 * MiB),
        ("2G", 2048 * MiB),
        ("64MiB", 64 * MiB),
        ("1g", 1024 * MiB),
        (8 * MiB, 8 * MiB),
    ],
)
def test_memory_takes_a_size_with_a_unit_or_bytes(written: object, size: int) -> None:
    spec = server_from_dict({"command": "x", "limits": {"memory": written}}, name="s")
    assert isinstance(spec, StdioServer) and spec.limits == Limits(memory=size)


def test_every_limit_reads_from_a_config_dict() -> None:
    limits = {"memory": "512M", "cpu": 30, "files": 256, "processes": 64, "strict": False}
    spec = server_from_dict({"command": "x", "limits": limits}, name="s")
    assert isinstance(spec, StdioServer)
    assert spec.limits == Limits(512 * MiB, 30, 256, 64, strict=False)


@pytest.mark.parametrize(
    ("limits", "message"),
    [
        ({"memory": "lots"}, "server 's': limits: 'memory' must be a size such as \"512M\""),
        ({"memory": "1K"}, "server 's': limits: 'memory' must be at least 4M"),
        ({"cpu": 0}, "server 's': limits: 'cpu' must be a whole number >= 1"),
        ({"files": "many"}, "server 's': limits: 'files' must be a whole number >= 1"),
        ({"processes": True}, "server 's': limits: 'processes' must be a whole number >= 1"),
        ({"strict": "no"}, "server 's': limits: 'strict' must be true or false"),
        ({"memroy": "1G"}, "server 's': limits: unknown key 'memroy'"),
        ([], "server 's': 'limits' must be an object"),
    ],
)
def test_a_bad_limit_is_one_line_naming_server_and_key(limits: object, message: str) -> None:
    """A misspelt limit is an error, not a warning: it would otherwise limit nothing."""
    with pytest.raises(ServerConfigError) as caught:
        server_from_dict({"command": "x", "limits": limits}, name="s")
    assert str(caught.value).startswith(message)
    assert "\n" not in str(caught.value)


def test_a_limit_reads_as_its_kind_and_value() -> None:
    limits = Limits(memory=512 * MiB, cpu=30, files=256, processes=64)
    assert [limits.describe(k) for k in ("memory", "cpu", "files", "processes")] == [
        "memory limit (512M)",
        "CPU limit (30 s)",
        "files limit (256)",
        "processes limit (64)",
    ]


# The user's defaults


def test_the_users_defaults_apply_to_every_stdio_server(home: Path) -> None:
    (home / ".paicli" / "config.toml").write_text('[limits]\nmemory = "1G"\ncpu = 60\n')
    write(
        home / ".paicli" / "mcp.json",
        plain={"command": "a"},
        own={"command": "b", "limits": {"memory": "2G", "files": 100}},
    )
    config = load(home)
    assert limits_of(config, "plain") == Limits(memory=1024 * MiB, cpu=60)
    # The user's own server sets what it sets, and keeps the other defaults.
    assert limits_of(config, "own") == Limits(memory=2048 * MiB, cpu=60, files=100)


def test_without_defaults_or_limits_a_server_runs_unlimited(home: Path) -> None:
    write(home / ".paicli" / "mcp.json", plain={"command": "a"})
    assert limits_of(load(home), "plain") is None


def test_broken_defaults_keep_every_stdio_server_from_starting(home: Path) -> None:
    (home / ".paicli" / "config.toml").write_text('[limits]\nmemory = "huge"\n')
    write(home / ".paicli" / "mcp.json", a={"command": "a"}, web={"url": "http://127.0.0.1:1"})
    config = load(home)
    error = config.servers["a"].error
    assert error is not None and "[limits]: limits: 'memory' must be a size" in error
    assert "no stdio server starts until it is fixed" in error
    assert config.servers["web"].error is None


# A repository's servers


def test_a_project_may_tighten_the_users_limits_but_not_loosen_them(
    project: Path, home: Path
) -> None:
    (home / ".paicli" / "config.toml").write_text('[limits]\nmemory = "1G"\ncpu = 60\n')
    write(
        project / ".paicli" / "mcp.json",
        tight={"command": "a", "limits": {"memory": "256M"}},
        loose={"command": "b", "limits": {"memory": "8G", "cpu": 100000, "files": 50}},
    )
    config = load(home, project)
    assert limits_of(config, "tight") == Limits(memory=256 * MiB, cpu=60)
    assert limits_of(config, "loose") == Limits(memory=1024 * MiB, cpu=60, files=50)


def test_a_project_cannot_turn_strictness_off(project: Path, home: Path) -> None:
    write(
        project / ".paicli" / "mcp.json",
        lint={"command": "lint", "limits": {"processes": 8, "strict": False}},
    )
    config = load(home, project)
    assert limits_of(config, "lint") == Limits(processes=8, strict=True)
    assert config.warnings == [
        f"{project}/.paicli/mcp.json: server 'lint': ignoring limits.strict "
        "(only your own config can loosen limits)"
    ]


def test_the_users_own_config_may_turn_strictness_off(home: Path) -> None:
    write(
        home / ".paicli" / "mcp.json", lint={"command": "l", "limits": {"cpu": 5, "strict": False}}
    )
    assert limits_of(load(home), "lint") == Limits(cpu=5, strict=False)
