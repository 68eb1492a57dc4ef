"""A batch worker contains itself before anything else runs (`process.contain`): its
address space limited to `--task-memory`, and it dies with its owner. Its owner passes both
on its command line instead of running code between fork and exec (which made each spawn a
copy of the owner: ~15 ms from a Ray actor's process)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from paicli.batch.process import WorkerProcess
from tests.processes import processes_with, until

pytestmark = pytest.mark.real

LIMIT = 768 * 1024 * 1024
WORKER = [sys.executable, "-m", "paicli.cli.batch_worker"]
PAICLI = [sys.executable, "-m", "paicli.cli"]


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


def under_hard_limit(size: int, argv: list[str]) -> list[str]:
    """`argv` run with its hard limit on address space at `size` (exec'd by a Python that
    sets it: the same process, so its parent stays the test)."""
    code = (
        "import os, resource, sys; "
        f"resource.setrlimit(resource.RLIMIT_AS, ({size}, {size})); "
        "os.execv(sys.argv[1], sys.argv[1:])"
    )
    return [sys.executable, "-c", code, *argv]


def test_a_task_memory_above_the_hard_limit_is_one_line_from_worker_and_batch(
    tmp_path: Path,
) -> None:
    """`ulimit -Hv 4G`, `--task-memory 8G`: no worker can set it (only root raises a hard
    limit), so the batch says so and stops; a worker started so says it in one line."""
    limit = 4 * 1024**3
    worker = subprocess.run(
        under_hard_limit(limit, [*WORKER, "label", str(os.getpid()), str(2 * limit)]),
        input=b"",
        capture_output=True,
        timeout=60,
        check=False,
    )
    said = "--task-memory 8192M is above this machine's hard limit on address space (4096M"
    assert (worker.returncode, worker.stdout) == (2, b"")
    assert worker.stderr.decode().splitlines() == [f"paicli batch: {said}, ulimit -Hv)"]
    (tmp_path / "tasks.jsonl").write_text('{"prompt": "p"}\n')
    env = {"PATH": os.environ.get("PATH", ""), "PAICLI_HOME": str(tmp_path / "home")}
    batch = subprocess.run(
        under_hard_limit(limit, [*PAICLI, "batch", "tasks.jsonl", "--task-memory", "8G"]),
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (batch.returncode, batch.stdout) == (2, "")
    assert batch.stderr.splitlines() == [f"paicli batch: {said}, ulimit -Hv)"]
