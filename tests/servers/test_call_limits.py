"""How long a tool call may run: the timeout restarts with each progress notification, up
to a maximum; the limits come from the server's entry, the environment or config.toml; a
timed-out call names the limit it hit and how to raise it. In memory on a virtual clock, in
the minutes a real tool takes (they cost no real time, and the machine's load changes
nothing): the config files are real, the official SDK's server runs on an in-memory transport
behind the real manager."""

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

# The SDK's `count` logs each step, which it deprecates in the 2026 era.
pytestmark = pytest.mark.filterwarnings("ignore:The logging capability is deprecated")

SDK = str(SERVER_PROGRAMS / "sdk_server.py")
# Longer than any call here runs, in virtual seconds: a hang fails at once, in real time.
GUARD = 3600


class Timed:
    """The virtual seconds a call took, set when it ends (as it returns or raises)."""

    seconds: float | None = None


async def call_counting(
    tmp_path: Path,
    entry: dict[str, Any],
    arguments: dict[str, Any],
    *,
    defaults: CallDefaults | None = None,
    on_progress: Any = None,
    timed: Timed | None = None,
) -> str:
    """Call the SDK server's `count` tool as configured by `entry`; its text."""
    home = PaicliHome(tmp_path / "home")
    home.root.mkdir(parents=True, exist_ok=True)
    server = {"command": sys.executable, "args": [SDK], **entry}
    home.mcp_config.write_text(json.dumps({"mcpServers": {"slow": server}}))
    config = load_config(None, home=home, environ={"HOME": str(tmp_path)})
    assert not config.warnings, config.warnings
    entries = list(config.servers.values())
    limits = limits_by_server(entries, defaults or CallDefaults())
    loop = asyncio.get_running_loop()
    async with (
        asyncio.timeout(GUARD),
        ServerManager(entries, connector=memory_connector, call_limits=limits) as manager,
    ):
        await manager.wait_ready()
        started = loop.time()
        try:
            result = await manager.call_tool("slow", "count", arguments, on_progress=on_progress)
        finally:
            if timed is not None:
                timed.seconds = loop.time() - started
    return result.text


@pytest.mark.virtual_time
async def test_progress_keeps_a_call_alive_past_its_timeout(tmp_path: Path) -> None:
    # A 75 s tool reporting every second, past a 60 s timeout. Nobody watches the progress:
    # it is asked for on every call all the same.
    timed = Timed()
    arguments = {"steps": 75, "interval": 1}
    text = await call_counting(tmp_path, {"timeout": 60}, arguments, timed=timed)
    assert text == "counted to 75"
    assert timed.seconds == 75


@pytest.mark.virtual_time
async def test_a_call_shows_its_progress_to_whoever_watches(tmp_path: Path) -> None:
    seen: list[Progress] = []
    await call_counting(tmp_path, {}, {"steps": 2, "interval": 1}, on_progress=seen.append)
    assert [(p.progress, p.total, p.message) for p in seen] == [
        (1.0, 2.0, "step 1"),
        (2.0, 2.0, "step 2"),
    ]


@pytest.mark.virtual_time
async def test_a_call_stopped_at_its_maximum_says_so_and_how_to_raise_it(tmp_path: Path) -> None:
    timed = Timed()
    with pytest.raises(ServerCallFailed) as caught:
        await call_counting(
            tmp_path,
            {"timeout": 30, "maxTimeout": 60},
            {"steps": 500, "interval": 1},
            timed=timed,
        )
    assert timed.seconds == 60  # not a moment sooner, though progress came every second
    message = str(caught.value)
    assert "progress kept it going, up to its maximum of 60s" in message
    assert "timed out after 30s" not in message  # it ran 60 s, and was let to
    assert "The limit hit is the maximum of 60s" in message
    assert "(\"maxTimeout\" of server 'slow')" in message
    assert "PAICLI_MCP_MAX_TIMEOUT" in message


@pytest.mark.virtual_time
async def test_a_call_silent_after_some_progress_names_its_timeout(tmp_path: Path) -> None:
    timed = Timed()
    with pytest.raises(ServerCallFailed) as caught:
        await call_counting(
            tmp_path,
            {},
            {"steps": 2, "interval": 1, "then_sleep": 600},
            defaults=CallDefaults(30, "PAICLI_MCP_TIMEOUT"),
            timed=timed,
        )
    assert timed.seconds == 2 + 30  # the timeout restarted at the last progress
    message = str(caught.value)
    assert "no answer or progress for 30s" in message
    assert "The limit hit is the timeout of 30s without an answer or progress" in message
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
