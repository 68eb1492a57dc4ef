"""Retries with real server processes: a crash restarts the server before the call runs
again, a hang is timed out and tried again, each attempt is one audit record and is heard
by the caller (the agent's tool line), and a call that is not safe to repeat never is."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from paicli.audit.log import AuditingToolbox, AuditLog
from paicli.redact import Redactor
from paicli.servers.manager import ServerManager
from paicli.servers.retry import Attempt, listening
from paicli.tools.base import ToolOutcome
from paicli.tools.mcp.toolbox import McpToolbox
from tests.conftest import SERVER_PROGRAMS
from tests.servers.test_manager import load

pytestmark = pytest.mark.real

FAST = {"attempts": 3, "backoff": 0.05}


def hog(**extra: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(SERVER_PROGRAMS / "hog_server.py")], **extra}


async def call(
    tmp_path: Path, entry: dict[str, Any], tool: str
) -> tuple[ToolOutcome, list[str], list[dict[str, object]], list[int | None]]:
    """Call `tool` of server `s` through the audit; what came back, the retry lines heard,
    the audit records, and the server's pid before and after."""
    entries = load(tmp_path, {"s": entry})
    log = AuditLog(tmp_path / "audit", Redactor())
    heard: list[Attempt] = []
    async with asyncio.timeout(60), ServerManager(entries) as manager:
        await manager.wait_ready()
        pids = [manager.get("s").pid]
        toolbox = AuditingToolbox(
            McpToolbox(manager, results_dir=tmp_path / "results"), log, session_id="x"
        )
        spec = next(s for s in toolbox.specs() if s.tool == tool)
        with listening(heard.append):
            outcome = await toolbox.call(spec, {"flag": str(tmp_path / "flag")})
        pids.append(manager.get("s").pid)
    return outcome, [a.line for a in heard], log.tail(10), pids


async def test_a_crash_restarts_the_server_and_the_call_runs_again(tmp_path: Path) -> None:
    entry = hog(retry=FAST, retryTools=["crash_once"])  # restart: never, yet it comes back
    outcome, heard, records, pids = await call(tmp_path, entry, "crash_once")
    assert not outcome.is_error and outcome.text == "ok after crash"
    assert heard == ["retry 2/3 after crash"]
    assert [(r["outcome"], r.get("attempt")) for r in records] == [("error", 1), ("ok", 2)]
    assert records[0]["then"] == "retry 2/3 after crash"
    assert "server exited" in str(records[0]["error"])
    assert pids[1] not in (None, pids[0])


async def test_a_hang_is_timed_out_and_tried_again(tmp_path: Path) -> None:
    entry = hog(retry=FAST, retryTools=["hang_*"], timeout=1)
    outcome, heard, records, pids = await call(tmp_path, entry, "hang_once")
    assert outcome.text == "ok after hang"
    assert heard == ["retry 2/3 after timeout"]
    assert "timed out after 1s" in str(records[0]["error"])
    assert pids[0] == pids[1]  # a timeout needs no restart


async def test_a_call_not_safe_to_repeat_is_never_retried(tmp_path: Path) -> None:
    """crash_once is neither in retryTools nor read-only: it may have had effects."""
    entry = hog(retry=FAST, retryTools=["get_*"], restart="on-failure")
    outcome, heard, records, _ = await call(tmp_path, entry, "crash_once")
    assert outcome.is_error and "server exited" in outcome.text
    assert heard == []
    assert len(records) == 1 and "attempt" not in records[0]
