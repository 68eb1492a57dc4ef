"""A server stopped by its resource limit, end to end with real processes: the error the
model reads, the audit record, the manager's state and the `/mcp` table all name the limit;
the server restarts by its policy while its neighbour never stops serving."""

from __future__ import annotations

import asyncio
import io
import sys
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from paicli.audit.log import AuditingToolbox, AuditLog
from paicli.redact import Redactor
from paicli.servers.manager import ManagedServer, ServerManager, ServerState
from paicli.tools.mcp.toolbox import McpToolbox
from paicli.ui.mcp_view import server_table
from tests.conftest import SERVER_PROGRAMS
from tests.servers.test_manager import fault, load

pytestmark = [pytest.mark.real, pytest.mark.skipif(sys.platform != "linux", reason="Linux")]


def hog(**extra: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(SERVER_PROGRAMS / "hog_server.py")], **extra}


async def test_a_server_stopped_by_its_cpu_limit_is_reported_so_and_restarted(
    tmp_path: Path,
) -> None:
    entries = load(
        tmp_path,
        {
            "hog": hog(limits={"cpu": 1}, restart={"policy": "on-failure", "maxRestarts": 1}),
            "other": fault(),
        },
    )
    stopped, back = asyncio.Event(), asyncio.Event()

    def watch(server: ManagedServer) -> None:
        if server.name == "hog" and server.state is ServerState.ERROR:
            stopped.set()
        if stopped.is_set() and server.name == "hog" and server.state is ServerState.READY:
            back.set()

    log = AuditLog(tmp_path / "audit", Redactor())
    async with asyncio.timeout(60), ServerManager(entries, on_change=watch) as manager:
        await manager.wait_ready()
        first_pid = manager.get("hog").pid
        toolbox = AuditingToolbox(
            McpToolbox(manager, results_dir=tmp_path / "results"), log, session_id="s"
        )
        specs = {spec.name: spec for spec in toolbox.specs()}
        outcome = await toolbox.call(specs["mcp__hog__spin"], {})
        assert outcome.is_error
        assert "hog: stopped by its CPU limit (1 s)" in outcome.text
        (record,) = log.tail(1)
        assert record["outcome"] == "error"
        assert "CPU limit (1 s)" in str(record["error"])

        await stopped.wait()
        table = io.StringIO()
        Console(file=table, width=200).print(server_table(manager.servers(), []))
        row = next(line for line in table.getvalue().splitlines() if " hog " in line)
        assert "✗" in row and "CPU limit (1 s)" in row

        reply = await manager.call_tool("other", "echo", {"text": "still here"})
        assert reply.text == "still here"
        await back.wait()
        assert manager.get("hog").pid not in (None, first_pid)
        assert (await manager.call_tool("hog", "echo", {"text": "back"})).text == "back"
