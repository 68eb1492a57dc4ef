"""`BatchActor` without Ray (Ray makes it an actor; its methods are plain coroutines): a
call stopped mid-task (as `ray.cancel` stops one) never leaves its worker slot holding the
stopped task for the next one; and its `WorkerProcess`, stopped mid-task, stops at once."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from paicli.batch import process
from paicli.batch.actor import BatchActor, Placement
from paicli.batch.defaults import Defaults
from paicli.batch.process import WorkerProcess
from paicli.batch.task import Task
from tests.batch.task_llm import TaskLlm
from tests.batch.test_batch_runs import environ
from tests.processes import processes_with, until

pytestmark = pytest.mark.real


async def test_a_call_stopped_mid_task_does_not_leave_its_slot_busy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = environ(tmp_path)
    for name, value in settings.items():  # the actor sets them in its process: put back after
        monkeypatch.setenv(name, value)

    def decide(prompt: str, _: int) -> dict[str, Any]:
        return {"hang": True} if prompt == "stuck" else {"text": f"fine {prompt}"}

    async with TaskLlm(decide) as llm:
        flags = {"provider": None, "model": "scripted", "base_url": llm.base_url}
        defaults = Defaults(flags=flags).to_wire()
        actor = BatchActor(Placement(settings, None, slots=1))
        stuck = Task(line=1, id="stuck", prompt="stuck").to_wire()
        running = asyncio.ensure_future(actor.run(stuck, defaults, None))
        await asyncio.wait_for(llm.wait_for_requests(1), 60)
        running.cancel()  # the driver gave up on it (ray.cancel)
        with pytest.raises(asyncio.CancelledError):
            await running
        after = Task(line=2, id="after", prompt="after").to_wire()
        async with asyncio.timeout(60):
            result = await actor.run(after, defaults, None)
        assert (result["task"], result["result"]) == ("after", "fine after")
        await actor.close()
    await until(lambda: processes_with(f"{tmp_path}/paicli-batch-") == [], timeout=20)


def test_an_actor_class_carries_its_placement_through_a_pickle() -> None:
    """Ray makes the actor from its class alone (no arguments): the class, pickled as Ray
    ships it, brings the placement along; `BatchActor` itself has none to start from."""
    cloudpickle = pytest.importorskip("ray.cloudpickle")
    placement = Placement({"PAICLI_HOME": "/somewhere"}, 1 << 30, slots=3)
    shipped = cloudpickle.loads(cloudpickle.dumps(BatchActor.placed(placement)))
    assert issubclass(shipped, BatchActor) and shipped.__name__ == "BatchActor"
    assert shipped.placement == placement
    assert BatchActor.placement is None
    with pytest.raises(TypeError, match="needs a Placement"):
        BatchActor()


async def test_a_worker_stopped_mid_task_is_told_to_stop_not_waited_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl+C during a task: the worker, which would only read its closed stdin once the
    task ended, is told to stop (SIGTERM) and stops its run and servers at once; it was
    waited for `STOP_GRACE` (5 s of a stopped batch) and then killed."""
    monkeypatch.setattr(process, "STOP_GRACE", 3600.0)  # only the worker's own stop counts
    for name, value in environ(tmp_path).items():
        monkeypatch.setenv(name, value)
    async with TaskLlm(lambda *_: {"hang": True}) as llm:
        flags = {"provider": None, "model": "scripted", "base_url": llm.base_url}
        worker = WorkerProcess(tmp_path / "scratch", 0)
        task = Task(line=1, id="stuck", prompt="stuck")
        running = asyncio.ensure_future(worker.run(task, Defaults(flags=flags).to_wire(), None))
        await asyncio.wait_for(llm.wait_for_requests(1), 60)
        running.cancel()
        with pytest.raises(asyncio.CancelledError):
            await running
        async with asyncio.timeout(60):
            await worker.aclose()
    said = (tmp_path / "scratch" / "worker-0.log").read_text()
    assert "paicli: stopped; servers shut down" in said
    assert not (tmp_path / "scratch" / "1").exists()  # the task's copy went with it
