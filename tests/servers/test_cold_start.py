"""Cold starts: which commands are package runners whose first start may install the server
(npx, uvx, pipx run, ...), the per-server `firstStartTimeout`, the longer first start and how
it is shown; the start budget from config.toml and the environment. In memory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from paicli.home import PaicliHome
from paicli.mcp import HttpServer, StdioServer
from paicli.servers.call_limits import DEFAULT_START_BUDGET, call_defaults
from paicli.servers.cold_start import DEFAULT_FIRST_START, first_start, package_runner
from paicli.servers.config import LoadedConfig, load_config
from paicli.servers.server_record import ServerRecord
from paicli.servers.server_view import ServerState
from paicli.user_config import UserConfig


@pytest.mark.parametrize(
    ("command", "args", "runner"),
    [
        ("npx", ["-y", "@modelcontextprotocol/server-memory"], "npx"),
        ("/usr/local/bin/npx", ["pkg"], "npx"),
        ("uvx", ["mcp-server-fetch"], "uvx"),
        ("bunx", ["pkg"], "bunx"),
        ("pipx", ["run", "mcp-server-git"], "pipx run"),
        ("uv", ["tool", "run", "mcp-server-time"], "uv tool run"),
        ("npm", ["exec", "pkg"], "npm exec"),
        ("pnpm", ["dlx", "pkg"], "pnpm dlx"),
        ("pipx", ["install", "x"], None),
        ("uv", ["run", "server.py"], None),
        ("node", ["server.js"], None),
        ("python3", ["-m", "npx"], None),
    ],
)
def test_package_runners_are_recognised(command: str, args: list[str], runner: str | None) -> None:
    assert package_runner(StdioServer(command, args)) == runner


def test_an_http_server_has_no_runner() -> None:
    assert package_runner(HttpServer("https://example.test/mcp")) is None


def test_only_a_first_start_through_a_runner_gets_the_longer_timeout() -> None:
    spec = StdioServer("npx", ["-y", "pkg"], handshake_timeout=30)
    longer, runner = first_start(spec, 120.0, first=True)
    assert runner == "npx" and isinstance(longer, StdioServer)
    assert longer.handshake_timeout == 120.0
    assert first_start(spec, 120.0, first=False) == (spec, None)
    plain = StdioServer("node", ["s.js"])
    assert first_start(plain, 120.0, first=True) == (plain, None)
    # A startup timeout already longer is kept.
    slow = StdioServer("uvx", ["pkg"], handshake_timeout=300)
    assert first_start(slow, 120.0, first=True)[0].handshake_timeout == 300


def load_entry(tmp_path: Path, entry: dict[str, object]) -> LoadedConfig:
    home = PaicliHome(tmp_path / "home")
    home.root.mkdir(parents=True)
    home.mcp_config.write_text(json.dumps({"mcpServers": {"s": entry}}))
    config = load_config(None, home=home, environ={"HOME": str(tmp_path)})
    return config


def test_first_start_timeout_is_read_per_server_and_defaults_to_120(tmp_path: Path) -> None:
    config = load_entry(tmp_path, {"command": "npx", "args": ["pkg"], "firstStartTimeout": 300})
    assert config.servers["s"].first_start_timeout == 300.0
    assert not config.warnings  # a key paicli knows
    other = load_entry(tmp_path / "b", {"command": "npx", "args": ["pkg"]})
    assert other.servers["s"].first_start_timeout == DEFAULT_FIRST_START


@pytest.mark.parametrize("bad", ["soon", 0, -5, True, 1e9])
def test_a_bad_first_start_timeout_names_the_server_and_the_key(
    tmp_path: Path, bad: object
) -> None:
    config = load_entry(tmp_path, {"command": "npx", "firstStartTimeout": bad})
    entry = config.servers["s"]
    assert entry.spec is None
    assert "'s'" in (entry.error or "")
    assert "'firstStartTimeout' must be a positive number of seconds, at most 1800" in (
        entry.error or ""
    )


def test_an_installing_server_says_so_with_the_time_it_has_taken(tmp_path: Path) -> None:
    config = load_entry(tmp_path, {"command": "npx", "args": ["pkg"]})
    record = ServerRecord(config.servers["s"])
    now = [100.0]
    record.clock = lambda: now[0]
    record.state, record.installing, record.start_began = ServerState.STARTING, "npx", 88.0
    assert record.installing_note() == "installing s (npx)… 12s"
    record.state = ServerState.READY
    assert record.installing_note() is None


def test_the_start_budget_comes_from_the_environment_or_config_toml() -> None:
    assert call_defaults({}, UserConfig())[0].start_budget == DEFAULT_START_BUDGET == 3.0
    config = UserConfig(values={"mcp_start_budget": 1.5}, source=Path("/h/config.toml"))
    assert call_defaults({}, config)[0].start_budget == 1.5
    assert call_defaults({"PAICLI_MCP_START_BUDGET": "8"}, config)[0].start_budget == 8.0
    bad = UserConfig(values={"mcp_start_budget": "soon"}, source=Path("/h/config.toml"))
    defaults, problems = call_defaults({}, bad)
    assert defaults.start_budget == DEFAULT_START_BUDGET
    assert problems == [
        "/h/config.toml: mcp_start_budget must be a positive number of seconds; ignored"
    ]
