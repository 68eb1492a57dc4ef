"""How long a tool call may run: the timeout restarts with each progress notification, up
to a maximum; the limits come from the server's entry, the environment or config.toml; a
timed-out call names the limit it hit and how to raise it. In memory, scaled down (tenths of
a second stand for the minutes a real tool takes): the config files are real, the fault
server runs on an in-memory transport behind the real manager."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from paicli.home import PaicliHome
from paicli.mcp import Progress
from paicli.servers.call_limits import (
    CallDefaults,
    call_defaults,
    limits_by_server,
    limits_for,
)
from paicli.servers.config import load_config
from paicli.servers.errors import ServerCallFailed
from paicli.servers.manager import ServerManager
from paicli.user_config import UserConfig
from tests.conftest import SERVER_PROGRAMS
from tests.memory_connect import memory_connector

FAULT = str(SERVER_PROGRAMS / "fault_server.py")


async def call_progress(
    tmp_path: Path,
    entry: dict[str, Any],
    arguments: dict[str, Any],
    defaults: CallDefaults | None = None,
    on_progress: Any = None,
) -> str:
    """Call the fault server's `progress` tool as configured by `entry`; its text."""
    home = PaicliHome(tmp_path / "home")
    home.root.mkdir(parents=True, exist_ok=True)
    server = {"command": sys.executable, "args": [FAULT], **entry}
    home.mcp_config.write_text(json.dumps({"mcpServers": {"slow": server}}))
    config = load_config(None, home=home, environ={"HOME": str(tmp_path)})
    assert not config.warnings, config.warnings
    entries = list(config.servers.values())
    limits = limits_by_server(entries, defaults or CallDefaults())
    async with (
        asyncio.timeout(20),
        ServerManager(entries, connector=memory_connector, call_limits=limits) as manager,
    ):
        await manager.wait_ready()
        result = await manager.call_tool("slow", "progress", arguments, on_progress=on_progress)
    return result.text


async def test_progress_keeps_a_call_alive_past_its_timeout(tmp_path: Path) -> None:
    # The 75 s tool reporting every second, scaled: 8 reports 0.1 s apart past a 0.3 s
    # timeout. Nobody watches the progress: it is asked for on every call all the same.
    text = await call_progress(tmp_path, {"timeout": 0.3}, {"steps": 8, "interval": 0.1})
    assert text == "done"


async def test_a_call_shows_its_progress_to_whoever_watches(tmp_path: Path) -> None:
    seen: list[Progress] = []
    await call_progress(tmp_path, {}, {"steps": 2, "interval": 0.01}, on_progress=seen.append)
    assert [(p.progress, p.total, p.message) for p in seen] == [
        (1.0, 2.0, "step 1"),
        (2.0, 2.0, "step 2"),
    ]


async def test_a_call_stopped_at_its_maximum_says_so_and_how_to_raise_it(tmp_path: Path) -> None:
    with pytest.raises(ServerCallFailed) as caught:
        await call_progress(
            tmp_path, {"timeout": 0.3, "maxTimeout": 0.6}, {"steps": 50, "interval": 0.1}
        )
    message = str(caught.value)
    assert "progress kept it going, up to its maximum of 0.6s" in message
    assert "timed out after 0.3s" not in message  # it ran 0.6 s, and was let to
    assert "The limit hit is the maximum of 0.6s" in message
    assert "(\"maxTimeout\" of server 'slow')" in message
    assert "PAICLI_MCP_MAX_TIMEOUT" in message


async def test_a_call_silent_after_some_progress_names_its_timeout(tmp_path: Path) -> None:
    with pytest.raises(ServerCallFailed) as caught:
        await call_progress(
            tmp_path,
            {},
            {"steps": 2, "interval": 0.1, "then_sleep": 30},
            CallDefaults(0.3, "PAICLI_MCP_TIMEOUT"),
        )
    message = str(caught.value)
    assert "no answer or progress for 0.3s" in message
    assert "The limit hit is the timeout of 0.3s without an answer or progress" in message
    assert "(PAICLI_MCP_TIMEOUT)" in message
    assert '"timeout" in the server\'s entry, PAICLI_MCP_TIMEOUT, or mcp_timeout' in message


def test_the_server_entry_beats_the_environment_which_beats_config_toml() -> None:
    config = UserConfig(
        values={"mcp_timeout": 5, "mcp_max_timeout": 50}, source=Path("/h/config.toml")
    )
    defaults, problems = call_defaults({"PAICLI_MCP_TIMEOUT": "7"}, config)
    assert problems == []
    assert (defaults.timeout, defaults.timeout_from) == (7.0, "PAICLI_MCP_TIMEOUT")
    assert (defaults.maximum, defaults.maximum_from) == (50.0, "mcp_max_timeout in /h/config.toml")
    own = limits_for("s", {"timeout": 2}, 2.0, defaults)
    assert (own.timeout, own.maximum) == (2.0, 50.0)
    unset = limits_for("s", {}, 60.0, CallDefaults())
    assert (unset.timeout, unset.maximum) == (60.0, 600.0)


@pytest.mark.parametrize("bad", ["0", "-1", "soon", "inf", "nan"])
def test_a_bad_default_is_one_problem_line_and_ignored(bad: str) -> None:
    defaults, problems = call_defaults({"PAICLI_MCP_TIMEOUT": bad}, UserConfig())
    assert defaults.timeout is None
    assert problems == ["PAICLI_MCP_TIMEOUT: expected a positive number of seconds; ignored"]
