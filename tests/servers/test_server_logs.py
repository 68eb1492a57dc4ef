"""A server's private stderr log (`~/.paicli/logs/mcp/NAME.log`) goes through the redactor
the screen uses: the server's env secrets and secret shapes never reach the file."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from paicli.servers.manager import ServerManager
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
