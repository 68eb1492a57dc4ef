"""`BatchActor`: one worker of `paicli batch --ray` on a Ray node (`ray_run` makes it an
actor). It owns one `WorkerProcess`, the same worker process as a local batch, and starts it
as soon as it is made, before the first task is sent.

The actor's start is on the batch's clock, so this module imports only what starting and
talking to the worker needs (never Ray, the agent or the model clients: the worker process
loads those itself, while the driver is still sending the first task).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import tempfile
from pathlib import Path
from typing import Any

from paicli.batch.process import WorkerProcess
from paicli.batch.task import Task

__all__ = ["BatchActor"]


class BatchActor:
    """One worker of the batch on a Ray node (an async actor: Ray runs `__init__` in the
    actor's event loop, where the worker's start is begun)."""

    def __init__(self, number: int, environ: dict[str, str], memory: int | None) -> None:
        os.environ.update(environ)  # the driver's paicli settings, model keys, home
        # TMPDIR read now: tempfile keeps the first it saw in this (reused) Ray worker.
        self._scratch = Path(
            tempfile.mkdtemp(prefix="paicli-batch-", dir=os.environ.get("TMPDIR") or None)
        )
        self._worker = WorkerProcess(self._scratch, number, memory=memory, environ=None)
        self._starting: asyncio.Task[None] | None = None
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop here (another Ray): the first task starts it
            return
        self._starting = loop.create_task(self._worker.start())

    async def run(
        self, task: dict[str, Any], defaults: dict[str, Any], timeout: float | None
    ) -> dict[str, Any]:
        await self._started()
        result = await self._worker.run(Task.from_wire(task), defaults, timeout)
        result["node"] = socket.gethostname()
        return result

    async def close(self) -> None:
        await self._started()
        await self._worker.aclose()
        await asyncio.to_thread(shutil.rmtree, self._scratch, True)

    async def _started(self) -> None:
        if self._starting is not None:
            await asyncio.shield(self._starting)
