"""`paicli mcp probe` as a user runs it: a real subprocess against a real server."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests import zygote_process
from tests.conftest import SERVER_PROGRAMS

# Real processes, sockets or terminals are the point here (not the in-memory tier).
pytestmark = pytest.mark.real


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return zygote_process.run(
        [sys.executable, "-m", "paicli.cli", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_probe_lists_the_tools_of_a_server() -> None:
    done = run_cli("mcp", "probe", "--", sys.executable, str(SERVER_PROGRAMS / "fault_server.py"))
    assert done.returncode == 0, done.stderr
    assert "✓ fault-normal 1.0  legacy 2025-11-25" in done.stdout
    assert "  echo " in done.stdout


def test_probe_calls_a_tool_with_json_arguments() -> None:
    server = [sys.executable, str(SERVER_PROGRAMS / "fault_server.py")]
    done = run_cli("mcp", "probe", "--call", "echo", "--args", '{"text": "hi"}', "--", *server)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "hi"


def test_probe_reports_a_dead_server_in_one_line() -> None:
    server = [
        sys.executable,
        str(SERVER_PROGRAMS / "fault_server.py"),
        "--mode",
        "exit_during_handshake",
    ]
    done = run_cli("mcp", "probe", "--", *server)
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1
    assert "exit code 2" in done.stderr
    assert "cannot start: missing API key" in done.stderr
