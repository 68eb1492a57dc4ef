"""`paicli --trace FILE`, `PAICLI_TRACE`, per-server `"trace": true` and `paicli mcp trace`, as
a user runs them (in the test process, tests/in_process.py): real config files, real servers."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SERVER_PROGRAMS
from tests.in_process import Run, run_paicli

pytestmark = pytest.mark.real

FAULT = str(SERVER_PROGRAMS / "fault_server.py")
SECRET = "env-secret-value-123"
SHAPED = "sk-proj-abcdefghijklmnopqrstuvwx1234"


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path]:
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    return home, project


def write_config(home: Path, servers: dict[str, Any]) -> None:
    home.mkdir(exist_ok=True)
    (home / "mcp.json").write_text(json.dumps({"mcpServers": servers}))


def fault(**extra: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [FAULT], "env": {"API_TOKEN": SECRET}, **extra}


def paicli(places: tuple[Path, Path], *args: str, env: dict[str, str] | None = None) -> Run:
    """`paicli ARGS`, in this process (tests/in_process.py)."""
    home, project = places
    environ = {**os.environ, "PAICLI_HOME": str(home), **(env or {})}
    return run_paicli(args, cwd=project, environ=environ)


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_trace_records_a_call_with_secrets_redacted(
    places: tuple[Path, Path], tmp_path: Path
) -> None:
    write_config(places[0], {"fault": fault()})
    trace = tmp_path / "trace.jsonl"
    text = f"{SECRET} and {SHAPED}"
    called = paicli(
        places, "--trace", str(trace), "mcp", "call", "fault", "stderr", json.dumps({"text": text})
    )
    assert called.returncode == 0, called.stderr
    assert stat.S_IMODE(trace.stat().st_mode) == 0o600
    content = trace.read_text()
    assert SECRET not in content and SHAPED not in content
    recorded = rows(trace)
    calls = [
        r["msg"] for r in recorded if r["dir"] == "out" and r["msg"].get("method") == "tools/call"
    ]
    assert calls[0]["params"]["arguments"]["text"] == "[REDACTED] and [REDACTED]"
    assert "[REDACTED] and [REDACTED]" in [r["text"] for r in recorded if r["dir"] == "stderr"]


def test_the_environment_variable_records_too(places: tuple[Path, Path], tmp_path: Path) -> None:
    write_config(places[0], {"fault": fault()})
    trace = tmp_path / "env-trace.jsonl"
    called = paicli(
        places, "mcp", "call", "fault", "echo", '{"text": "hi"}', env={"PAICLI_TRACE": str(trace)}
    )
    assert called.returncode == 0, called.stderr
    assert any(r["dir"] == "in" and "result" in r["msg"] for r in rows(trace))


def test_an_unwritable_trace_is_one_line_and_no_run(
    places: tuple[Path, Path], tmp_path: Path
) -> None:
    done = paicli(places, "--trace", str(tmp_path / "missing" / "t.jsonl"), "mcp", "list")
    assert done.returncode == 2
    where = tmp_path / "missing" / "t.jsonl"
    assert done.stderr.strip().splitlines() == [
        f"paicli: cannot write the trace {where}: No such file or directory"
    ]


def test_a_server_marked_trace_is_recorded_under_the_home_alone(places: tuple[Path, Path]) -> None:
    home = places[0]
    write_config(home, {"traced": fault(trace=True), "quiet": fault()})
    listed = paicli(places, "mcp", "list")
    assert listed.returncode == 0, listed.stderr
    folder = home / "traces"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    [path] = folder.iterdir()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.name.endswith(f"-{path.name.split('-')[-1]}") and path.suffix == ".jsonl"
    assert {r["server"] for r in rows(path)} == {"traced"}


def test_a_project_cannot_turn_on_tracing(places: tuple[Path, Path]) -> None:
    home, project = places
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"repo": fault(trace=True)}}))
    listed = paicli(places, "mcp", "list", "--trust-project")
    assert "ignoring 'trace'" in listed.stderr
    assert not (home / "traces").exists()


def test_the_timeline_pairs_requests_shows_latency_and_a_timeout(
    places: tuple[Path, Path], tmp_path: Path
) -> None:
    write_config(places[0], {"fault": fault(timeout=0.5)})
    trace = tmp_path / "trace.jsonl"
    paicli(places, "--trace", str(trace), "mcp", "call", "fault", "echo", '{"text": "hi"}')
    slow = paicli(places, "--trace", str(trace), "mcp", "call", "fault", "sleep", '{"seconds": 5}')
    assert slow.returncode != 0
    shown = paicli(places, "mcp", "trace", str(trace), "--server", "fault", "--slow", "0")
    assert shown.returncode == 0, shown.stderr
    out = shown.stdout
    assert "→ tools/call echo #" in out
    assert "← tools/call echo #" in out and " ms  slow" in out
    assert "⏱ timeout" in out
    assert "fault#1" in out and "fault#2" in out  # two runs, two connections
    assert "latency per method" in out
    summary = next(
        line for line in out.splitlines() if line.lstrip().startswith("tools/call sleep")
    )
    cells = [cell.strip() for cell in summary.split("│")]
    assert cells[1:4] == ["1", "0", "1"]  # calls, errors, timeouts


def test_a_hostile_trace_is_shown_escaped_and_bad_lines_are_counted(
    places: tuple[Path, Path], tmp_path: Path
) -> None:
    trace = tmp_path / "hostile.jsonl"
    evil = "\x1b]0;pwned\x07\x1b[2J"
    lines = [
        {
            "t": 1.0,
            "server": evil,
            "conn": 1,
            "dir": "out",
            "era": None,
            "size": 1,
            "msg": {"jsonrpc": "2.0", "id": 1, "method": evil, "params": {}},
        },
        {
            "t": 2.0,
            "server": evil,
            "conn": 1,
            "dir": "in",
            "era": None,
            "size": 1,
            "msg": {"jsonrpc": "2.0", "id": 1, "error": {"code": 1, "message": evil}},
        },
        {"t": 3.0, "server": evil, "conn": 1, "dir": "stderr", "era": None, "text": evil},
        {"t": "soon", "server": 1},
        [1, 2],
    ]
    trace.write_text("\n".join(json.dumps(x) for x in lines) + "\nnot json\n")
    shown = paicli(places, "mcp", "trace", str(trace))
    assert shown.returncode == 0, shown.stderr
    assert "\x1b" not in shown.stdout and "\x07" not in shown.stdout
    assert "\\x1b" in shown.stdout
    assert "3 lines were not trace records" in shown.stdout


def test_a_busy_metrics_port_is_one_line_and_no_run(places: tuple[Path, Path]) -> None:
    import socket  # noqa: PLC0415

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = paicli(places, "--metrics-port", str(port), "mcp", "list")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"paicli: cannot serve metrics on 127.0.0.1:{port}: Address already in use"
    ]
