"""MCP tasks with tests/server_programs/task_server.py as a real process."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from paicli.mcp import StdioServer, connect
from tests.conftest import SERVER_PROGRAMS
from tests.mcp.test_tasks import started

pytestmark = pytest.mark.real


async def test_a_real_task_server_process_in_the_2025_11_25_era(tmp_path: Path) -> None:
    log = tmp_path / "methods"
    script = str(SERVER_PROGRAMS / "task_server.py")
    spec = StdioServer(sys.executable, args=[script, "--log", str(log)], protocol="2025-11-25")
    async with connect(spec) as session:
        await session.list_tools()
        handle = await started(session, "real")
        assert (await handle.result(timeout=30)).text == "done: real"
        cancelled = await started(session, "never")
        await cancelled.cancel()
    assert "tasks/result" in log.read_text().splitlines()
    assert "tasks/cancel" in log.read_text().splitlines()
