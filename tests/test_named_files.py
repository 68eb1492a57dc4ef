"""Files whose path a user or a repository names, each attacked with what can sit at a path:
a FIFO (a plain open waits for a writer for ever), a folder, a file too large to hold, and a
symlink to a device. Each is one line naming the file, never a hang or a traceback; every
read goes through `paicli.config_files` (issue 24: traces, `--mcp-config`, imports, locks,
sessions)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from paicli.agent.sessions import MAX_SESSION_BYTES, SessionStore
from paicli.config_files import MAX_CONFIG_BYTES
from paicli.servers.tool_pins import ToolPins
from paicli.servers.traces import MAX_TRACE_BYTES, TraceError, read_trace
from tests.in_process import Run, run_paicli
from tests.no_hang import HANG, without_hanging

RECORD = {"t": 1.0, "server": "s", "conn": "1", "dir": "event", "era": None, "event": "open"}


def paicli(
    cwd: Path, *args: str, timeout: float = 60, process: bool = True, **environ: str
) -> subprocess.CompletedProcess[str] | Run:
    """`paicli ARGS` in `cwd`, its home in `cwd`/home unless `environ` says: a real process
    (a FIFO that a plain open would wait on for ever must not hold the test process), or
    in this process through its entry point (tests/in_process.py)."""
    env = {**os.environ, "PAICLI_HOME": str(cwd / "home"), **environ}
    if not process:
        return run_paicli(args, cwd=cwd, environ=env)
    return subprocess.run(
        [sys.executable, "-m", "paicli.cli", *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


# Traces: `paicli mcp trace FILE`, `paicli mcp replay FILE`


def test_a_fifo_as_a_trace_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "trace.jsonl"
    os.mkfifo(fifo)

    def read() -> str:
        with pytest.raises(TraceError) as refused:
            read_trace(fifo)
        return str(refused.value)

    assert without_hanging(read, fifo) == f"{fifo}: cannot read: not a regular file (a FIFO)"


def test_a_folder_as_a_trace_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(TraceError, match=r": cannot read: not a regular file \(a folder\)$"):
        read_trace(tmp_path)


def test_a_trace_linked_to_a_device_is_never_read(tmp_path: Path) -> None:
    link = tmp_path / "trace.jsonl"
    link.symlink_to("/dev/zero")  # once read for ever, 65 MiB at a time
    with pytest.raises(TraceError, match=r"not a regular file \(a device\)$"):
        read_trace(link)


def test_a_trace_larger_than_the_cap_is_refused_before_a_byte_is_read(tmp_path: Path) -> None:
    big = tmp_path / "trace.jsonl"
    big.write_text(json.dumps(RECORD) + "\n")
    os.truncate(big, MAX_TRACE_BYTES + 1)  # sparse: no disk, but every record would be held
    with pytest.raises(TraceError, match=f"{big}: cannot read: larger than 256 MiB$"):
        read_trace(big)


def test_a_trace_that_is_no_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(TraceError, match=r"nothing\.jsonl: cannot read: no such file$"):
        read_trace(tmp_path / "nothing.jsonl")


def test_a_trace_within_the_cap_still_reads(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    path.write_text(json.dumps(RECORD) + "\n")
    assert [r.server for r in read_trace(path).records] == ["s"]


@pytest.mark.real
@pytest.mark.parametrize("command", ["trace", "replay"])
def test_paicli_mcp_trace_and_replay_refuse_a_fifo_in_one_line(
    tmp_path: Path, command: str
) -> None:
    fifo = tmp_path / "trace.jsonl"
    os.mkfifo(fifo)
    done = paicli(tmp_path, "mcp", command, str(fifo), timeout=HANG * 3)
    assert done.returncode == 1
    assert done.stderr == (
        f"paicli mcp {command}: {fifo}: cannot read: not a regular file (a FIFO)\n"
    )


# Sessions: `paicli --resume ID`, `--continue`

SESSION_ID = "20260101-000000-abcdef"


def sessions(tmp_path: Path) -> tuple[SessionStore, Path]:
    folder = tmp_path / "sessions"
    folder.mkdir()
    store = SessionStore(folder, tmp_path)
    store.save(store.new_id(), [{"role": "user", "content": "kept"}])
    return store, folder / f"{SESSION_ID}.json"


def test_a_fifo_as_a_session_is_no_session_and_never_blocks(tmp_path: Path) -> None:
    store, path = sessions(tmp_path)
    os.mkfifo(path)
    assert without_hanging(lambda: store.load(SESSION_ID), path) is None
    titles = without_hanging(lambda: [s.title for s in store.recent()], path)
    assert titles == ["kept"]  # the others are still listed


@pytest.mark.parametrize("kind", ["folder", "device", "too large"])
def test_a_session_that_is_no_plain_small_file_is_no_session(tmp_path: Path, kind: str) -> None:
    store, path = sessions(tmp_path)
    if kind == "folder":
        path.mkdir()
    elif kind == "device":
        path.symlink_to("/dev/zero")
    else:
        path.write_text(json.dumps({"messages": [{"role": "user", "content": "big"}]}))
        os.truncate(path, MAX_SESSION_BYTES + 1)
    assert store.load(SESSION_ID) is None
    assert [s.title for s in store.recent()] == ["kept"]


# `--mcp-config FILE`


@pytest.mark.real
@pytest.mark.parametrize("kind", ["fifo", "folder", "device", "too large"])
def test_a_hostile_mcp_config_file_is_one_line_and_no_run(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "servers.json"
    expected = {
        "fifo": "not a regular file (a FIFO)",
        "folder": "not a regular file (a folder)",
        "device": "not a regular file (a device)",
        "too large": "larger than 1 MiB",
    }[kind]
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    elif kind == "device":
        path.symlink_to("/dev/zero")
    else:
        path.write_text('{"mcpServers": {}}')
        os.truncate(path, MAX_CONFIG_BYTES + 1)
    args = ("--mcp-config", str(path), "-p", "hi")
    done = paicli(tmp_path, *args, timeout=HANG * 3, process=kind == "fifo")
    assert done.returncode == 2
    assert done.stderr == f"paicli -p: {path}: cannot read: {expected}\n"


# Imports: `paicli mcp import` reads Claude Desktop's and Claude Code's files


@pytest.mark.real
@pytest.mark.parametrize("kind", ["fifo", "folder", "device", "too large"])
def test_a_hostile_claude_file_is_one_line_and_the_import_goes_on(
    tmp_path: Path, kind: str
) -> None:
    claude = tmp_path / ".claude.json"
    if kind == "fifo":
        os.mkfifo(claude)
    elif kind == "folder":
        claude.mkdir()
    elif kind == "device":
        claude.symlink_to("/dev/zero")
    else:
        claude.write_text("{}")
        os.truncate(claude, 32 * 1024 * 1024 + 1)  # Claude Code's file may be 32 MiB
    desktop = tmp_path / ".config" / "Claude" / "claude_desktop_config.json"
    desktop.parent.mkdir(parents=True)
    desktop.write_text(json.dumps({"mcpServers": {"gh": {"command": "gh-server"}}}))
    project = tmp_path / "project"
    project.mkdir()
    home = {"HOME": str(tmp_path), "PAICLI_HOME": str(tmp_path / ".paicli")}
    args = ("mcp", "import", "--yes")
    done = paicli(project, *args, timeout=HANG * 3, process=kind == "fifo", **home)
    assert done.returncode == 0, done.stderr
    assert "~/.claude.json: cannot read: " in done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1
    saved = json.loads((tmp_path / ".paicli" / "mcp.json").read_text())
    assert list(saved["mcpServers"]) == ["gh"]


# Locks: a repository's `.paicli/mcp.lock`


@pytest.mark.parametrize("kind", ["fifo", "folder", "device", "too large"])
def test_a_hostile_project_lock_is_one_problem_and_not_used(tmp_path: Path, kind: str) -> None:
    lock = tmp_path / "project" / ".paicli" / "mcp.lock"
    lock.parent.mkdir(parents=True)
    if kind == "fifo":
        os.mkfifo(lock)
    elif kind == "folder":
        lock.mkdir()
    elif kind == "device":
        lock.symlink_to("/dev/zero")  # a link out of the project, too
    else:
        lock.write_text('{"format": 1, "servers": {}}')
        os.truncate(lock, MAX_CONFIG_BYTES + 1)
    pins = without_hanging(lambda: ToolPins(tmp_path / "pins.json", project=lock.parents[1]), lock)
    (problem,) = pins.problems
    assert problem.startswith(f"{lock}: cannot read: ")
    assert problem.endswith("; the project's tool lock is not used")
