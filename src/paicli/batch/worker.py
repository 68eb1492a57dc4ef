"""A worker's side of its pipe: task lines in, result lines out, one task at a time, the MCP
servers kept warm across tasks (`WarmServers`). The worker is a process of its own
(`python -m paicli.cli.batch_worker`), so the task it runs can crash, hang or run out of
memory without taking the batch along: its owner (`process.WorkerProcess`) kills it and
starts another.

Each line in is `{"task": ..., "defaults": ..., "scratch": FOLDER}`; each line out is the
task's result line (see `results`). A bug fails the task it met, never the worker.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from paicli.batch.defaults import Defaults
from paicli.batch.process import READY
from paicli.batch.results import failure
from paicli.batch.run_task import run_task
from paicli.batch.tasks import MAX_LINE, Task
from paicli.batch.warm import WarmServers

__all__ = ["serve"]

log = logging.getLogger("paicli.batch")


async def serve(read_line: Callable[[], bytes], channel: BinaryIO) -> int:
    """Run each task `read_line` brings (blocking: read in a thread) until it brings none,
    writing each result line to `channel`."""
    async with WarmServers() as warm:
        channel.write(READY)  # loaded: the owner's task timeouts count from here
        channel.flush()
        while line := await asyncio.to_thread(read_line):
            job = json.loads(line)
            task = Task.from_wire(job["task"])
            exhausted = False
            try:
                result = await run_task(
                    task, Defaults.from_wire(job["defaults"]), Path(job["scratch"]), warm
                )
            except MemoryError:
                # Past --task-memory: this process cannot be trusted with another task.
                exhausted = True
                result = failure(task, "the task ran out of memory (--task-memory)", "crashed")
            except Exception as exc:  # a bug costs this task, never the worker
                log.error("task %s: internal error", task.id, exc_info=True)
                result = failure(task, f"internal error: {exc}")
            result["warm_servers_opened"] = warm.opened
            channel.write(json.dumps(result, ensure_ascii=False).encode() + b"\n")
            channel.flush()
            if exhausted:
                return 1  # its owner starts a new worker for the next task
    return 0


def reader(stream: BinaryIO) -> Callable[[], bytes]:
    """One job line at a time from `stream` (a job carries one task line and a little more)."""
    return lambda: stream.readline(4 * MAX_LINE)
