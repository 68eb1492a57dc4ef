"""`BatchActor`: the workers of `paicli batch --ray` on one Ray node (`ray_run` makes it an
actor, one per node). It owns one `WorkerProcess` per worker slot, the same worker process
as a local batch, and starts them all as soon as it is made, before the first task is sent;
each task it is given runs on whichever of its workers is free.

The actor's start is on the batch's clock, so this module imports only what starting and
talking to the workers needs (never Ray, the agent or the model clients: the worker
processes load those themselves, while the driver is still sending the first tasks).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, NamedTuple

from paicli.batch.process import WorkerProcess
from paicli.batch.task import Task

__all__ = ["BatchActor", "Placement", "plain_ray_serialization"]

# Ray's optional serializers (for pydantic models, Arrow data, Starlette state), which it
# registers when a process first needs its serialization: importing them costs 0.08-0.25 s
# a process, and a batch only sends plain JSON-shaped values (tasks, settings, results).
RAY_ADDONS = "ray.util.serialization_addons"


class Placement(NamedTuple):
    """What an actor is given: the driver's variables (see `ray_run.passed_environment`),
    the workers' memory limit and their number."""

    environ: dict[str, str]
    memory: int | None
    slots: int = 1


class BatchActor:
    """`slots` workers of the batch on a Ray node (an async actor: Ray runs `__init__` in
    the actor's event loop, where the workers' start is begun). At most `slots` tasks run at
    once, one per worker.

    Ray makes it from `BatchActor.placed(...)`, a class carrying its `Placement`, with no
    arguments: a new Ray worker sets up its serialization when it first reads arguments, so
    an actor made without any starts its workers first; and that set-up, done for its first
    task, is Ray's plain one (`plain_ray_serialization`), without 0.1-0.25 s of imports."""

    placement: ClassVar[Placement | None] = None

    def __init__(self, placement: Placement | None = None) -> None:
        given = placement or self.placement
        if given is None:
            raise TypeError("BatchActor needs a Placement (or a class from BatchActor.placed)")
        os.environ.update(given.environ)  # the driver's paicli settings, model keys, home
        # TMPDIR read now: tempfile keeps the first it saw in this (reused) Ray worker.
        self._scratch = Path(
            tempfile.mkdtemp(prefix="paicli-batch-", dir=os.environ.get("TMPDIR") or None)
        )
        self._workers = [
            WorkerProcess(self._scratch, n, memory=given.memory, environ=None)
            for n in range(given.slots)
        ]
        self._free: asyncio.Queue[WorkerProcess] = asyncio.Queue()
        for worker in self._workers:
            self._free.put_nowait(worker)
        self._starting: asyncio.Future[Any] | None = None
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # no loop here (another Ray): the first task starts each
            return
        self._starting = asyncio.gather(*(worker.start() for worker in self._workers))

    @classmethod
    def placed(cls, placement: Placement) -> type[BatchActor]:
        """A class with `placement` in it (one for the actors of each size). Ray ships an
        actor's class pickled (kept in the cluster's function table for the job, as the
        arguments it replaces were kept with the actor, restarts included), so its actors
        need no arguments."""
        namespace = {"placement": placement, "__module__": __name__, "__init__": _in_ray}
        return type(cls.__name__, (cls,), namespace)

    async def run(
        self, task: dict[str, Any], defaults: dict[str, Any], timeout: float | None
    ) -> dict[str, Any]:
        await self._started()
        worker = await self._free.get()
        try:
            result = await worker.run(Task.from_wire(task), defaults, timeout)
        except BaseException:
            # Stopped mid-task (the call cancelled): the worker may still be running it and
            # would answer the next task with its result. It stops (its copy removed); the
            # slot's next task starts a new one.
            await asyncio.shield(worker.aclose())
            raise
        finally:
            self._free.put_nowait(worker)
        result["node"] = socket.gethostname()
        return result

    async def close(self) -> None:
        await self._started()
        await asyncio.gather(*(worker.aclose() for worker in self._workers))
        await asyncio.to_thread(shutil.rmtree, self._scratch, True)

    async def _started(self) -> None:
        if self._starting is not None:
            await asyncio.shield(self._starting)


def _in_ray(self: BatchActor) -> None:
    """`__init__` of a class from `BatchActor.placed`, which only Ray makes: in the actor's
    own Ray worker process, which serves this actor alone, Ray's serialization is to be
    made plain (before the first task's arguments are read) and stays so."""
    plain_ray_serialization()
    BatchActor.__init__(self)


def plain_ray_serialization() -> Callable[[], None]:
    """Have Ray make this process's serialization context (when it next needs one) without
    its optional serializers (`RAY_ADDONS`); the function that puts them back. Nothing to
    do where Ray is not loaded, or does not have them."""
    addons: Any = sys.modules.get(RAY_ADDONS)  # Ray's, untyped here (never imported)
    apply = getattr(addons, "apply", None)
    if apply is None:
        return lambda: None
    addons.apply = _no_addons

    def restore() -> None:
        addons.apply = apply

    return restore


def _no_addons(context: object) -> None:
    """What Ray's serialization gets instead of its add-ons: nothing (its own cloudpickle
    and msgpack carry every value a batch sends)."""
