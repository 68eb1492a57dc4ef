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
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

from paicli.servers.traces import MAX_TRACE_BYTES, TraceError, read_trace

T = TypeVar("T")
# Generous for a read that must not block at all; only a hang ever waits this long.
HANG = 10.0
RECORD = {"t": 1.0, "server": "s", "conn": "1", "dir": "event", "era": None, "event": "open"}


def without_hanging(call: Callable[[], T], fifo: Path) -> T:
    """`call()` in a thread; if it is still blocked after HANG seconds the FIFO is opened
    for writing and closed (which ends a reader's wait) and the test fails."""
    result: list[T] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            result.append(call())
        except BaseException as exc:
            errors.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(HANG)
    if worker.is_alive():
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        worker.join(HANG)
        pytest.fail(f"reading {fifo} blocked on the FIFO")
    if errors:
        raise errors[0]
    return result[0]


def paicli(cwd: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "paicli.cli", *args],
        cwd=cwd,
        env={**os.environ, "PAICLI_HOME": str(cwd / "home")},
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

