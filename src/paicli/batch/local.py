"""The local batch: N `WorkerProcess`es on this machine, each taking the next task as soon as
it is free, results reported in the order they finish."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from paicli.batch.defaults import Defaults
from paicli.batch.process import WorkerProcess
from paicli.batch.tasks import Task

__all__ = ["Board", "run_local"]


class Board(Protocol):
    """Who hears of the batch's progress: a task started, a result came."""

    def started(self, task: Task) -> None: ...

    def finished(self, result: dict[str, Any]) -> None: ...


async def run_local(
    tasks: Sequence[Task],
    defaults: Defaults,
    board: Board,
    *,
    scratch: Path,
    workers: int,
    timeout: float | None,
    memory: int | None = None,
) -> None:
    """Run `tasks` on `workers` worker processes (fewer when there are fewer tasks)."""
    waiting = deque(tasks)
    sent = defaults.to_wire()
    pool = [
        WorkerProcess(scratch, number, memory=memory) for number in range(min(workers, len(tasks)))
    ]

    async def lane(worker: WorkerProcess) -> None:
        while waiting:
            task = waiting.popleft()
            board.started(task)
            board.finished(await worker.run(task, sent, timeout))

    try:
        async with asyncio.TaskGroup() as group:
            for worker in pool:
                group.create_task(lane(worker))
    finally:
        # Stopped even when cancelled: a worker left behind would hold its servers.
        await asyncio.shield(asyncio.gather(*(worker.aclose() for worker in pool)))
