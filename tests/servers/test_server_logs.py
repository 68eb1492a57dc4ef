"""A server's private stderr log (`~/.paicli/logs/mcp/NAME.log`) goes through the redactor
the screen uses: the server's env secrets and secret shapes never reach the file. A server
killed with SIGKILL is logged, marked in that file, and shown as its last exit."""

from __future__ import annotations

import asyncio
import io
import logging
from pathlib import Path

import pytest
from rich.console import Console

from paicli.servers.manager import ServerManager
from paicli.ui.mcp_shell import summary
from paicli.ui.mcp_view import server_table
from tests.servers.test_manager import fault, load

SECRET = "s3cr3t-value-from-the-env-4242"
TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


@pytest.mark.real
async def test_a_secret_the_server_prints_never_reaches_its_log(tmp_path: Path) -> None:
    entries = load(tmp_path, {"leaky": fault(env={"SERVICE_KEY": SECRET})})
    logs = tmp_path / "logs"
    async with asyncio.timeout(30), ServerManager(entries, log_dir=logs) as manager:
        await manager.wait_ready()
        for _ in range(3):
            await manager.call_tool("leaky", "stderr", {"text": f"using {SECRET} and {TOKEN}"})
        await manager.call_tool("leaky", "echo", {"text": "x"})  # its stderr is in by now
    text = (logs / "leaky.log").read_text()
    assert text.count("using [REDACTED] and [REDACTED]") == 3
    assert SECRET not in text and TOKEN not in text


@pytest.mark.real
async def test_a_server_killed_with_sigkill_says_so_in_the_log_and_in_the_listing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    entries = load(tmp_path, {"stubborn": fault("ignore_sigterm")})
    logs = tmp_path / "logs"
    async with asyncio.timeout(30), ServerManager(entries, log_dir=logs) as manager:
        await manager.wait_ready()
        await manager.disable("stubborn")
        server = manager.get("stubborn")
        assert server.last_exit == "killed with SIGKILL: still running 2 s after SIGTERM"
        screen = io.StringIO()
        Console(file=screen, width=300).print(server_table([server], []))
        assert "last exit: killed with SIGKILL" in screen.getvalue()
        assert summary(server)["last_exit"] == server.last_exit
    assert "killed with SIGKILL" in (logs / "stubborn.log").read_text()
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("killed with SIGKILL" in w for w in warnings)
