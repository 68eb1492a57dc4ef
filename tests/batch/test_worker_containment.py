"""A batch worker contains itself before anything else runs (`process.contain`): its
address space limited to `--task-memory`, and it dies with its owner. Its owner passes both
on its command line instead of running code between fork and exec (which made each spawn a
copy of the owner: ~15 ms from a Ray actor's process)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from paicli.batch.process import WorkerProcess
from tests.processes import processes_with, until

pytestmark = pytest.mark.real

LIMIT = 768 * 1024 * 1024


def address_space_limit(pid: int) -> str:
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max address space"):
            return line.split()[3]
    return ""


async def test_a_worker_limits_its_own_address_space_to_the_task_memory(tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    worker = WorkerProcess(scratch, 0, memory=LIMIT)
    await worker.start()
    try:
        (pid,) = processes_with(str(scratch))
        await until(lambda: address_space_limit(pid) == str(LIMIT))
    finally:
        await worker.aclose()
    assert processes_with(str(scratch)) == []


def test_a_worker_whose_owner_is_already_gone_exits_at_once() -> None:
    """Started by a process that is not the OWNER it names (its owner died before it could
    ask to die with it): it runs nothing."""
    argv = [sys.executable, "-m", "paicli.cli.batch_worker", "label", "1"]
    done = subprocess.run(argv, input=b"", capture_output=True, timeout=60, check=False)
    assert (done.returncode, done.stdout) == (1, b"")
