"""How `paicli batch --ray` splits its workers over the cluster's nodes (one actor per node,
never more actors than workers, the workers as evenly as can be), and how the driver keeps
each actor busy (in memory: Ray's actor handles stood in for)."""

from __future__ import annotations

import asyncio
import concurrent.futures
from typing import Any

from paicli.batch.defaults import Defaults
from paicli.batch.ray_run import _dispatch, split_workers
from paicli.batch.task import Task


def test_one_actor_per_node_holds_its_share_of_the_workers() -> None:
    assert split_workers(4, 1) == [4]
    assert split_workers(4, 2) == [2, 2]
    assert split_workers(5, 2) == [3, 2]
    assert split_workers(2, 8) == [1, 1]  # no actor without a worker
    assert split_workers(3, 0) == [3]  # no node told its CPUs: one actor, Ray places it


async def test_each_actor_holds_one_task_beyond_its_workers_started_when_one_is_free() -> None:
    """The driver keeps a task waiting in each actor for its first worker free (no round
    trip to the driver between a worker's tasks), and counts it started only then (or when
    its own result comes first, as it may: results come back in any order)."""
    async with asyncio.timeout(10):  # a call never sent fails, not hangs
        a, b = _Actor(), _Actor()
        tasks = [Task(line=n, id=f"t{n}", prompt="p") for n in range(1, 8)]
        board = _Board()
        sending = asyncio.ensure_future(
            _dispatch(_Ray, [(a, 2), (b, 1)], tasks, Defaults(), board, timeout=5)
        )
        sent_a = [await a.sent.get() for _ in range(3)]  # its 2 workers' tasks and 1 more
        sent_b = [await b.sent.get() for _ in range(2)]  # its worker's task and 1 more
        assert [call.task for call in sent_a + sent_b] == ["t1", "t2", "t3", "t4", "t5"]
        assert board.began() == ["t1", "t2", "t4"]
        sent_a[1].answer()  # a worker of actor a is free: t3 runs there, t6 goes to wait
        assert (await a.sent.get()).task == "t6"
        assert board.began() == ["t1", "t2", "t4", "t3"]
        sent_b[1].answer()  # the waiting task's result first, then the one before it
        sent_b[0].answer()
        last = await b.sent.get()
        assert last.task == "t7"
        for call in [sent_a[0], sent_a[2], last]:
            call.answer()
        for call in a.calls:
            call.answer()
        await sending
        assert sorted(board.began()) == sorted(task.id for task in tasks)
        for task in tasks:  # each counted started once, and before its result
            assert board.log.count(("started", task.id)) == 1
            assert board.log.index(("started", task.id)) < board.log.index(("finished", task.id))


class _Call:
    """One actor call, as Ray's handle gives it: a future that `answer` completes."""

    def __init__(self, task: dict[str, Any]) -> None:
        self.task = task["id"]
        self._future: concurrent.futures.Future[dict[str, Any]] = concurrent.futures.Future()

    def future(self) -> concurrent.futures.Future[dict[str, Any]]:
        return self._future

    def answer(self) -> None:
        if not self._future.done():
            self._future.set_result({"task": self.task, "status": "done"})


class _Actor:
    """A stand-in for a Ray actor handle (Ray's, not paicli's): `run.remote(...)`."""

    def __init__(self) -> None:
        self.calls: list[_Call] = []
        self.sent: asyncio.Queue[_Call] = asyncio.Queue()
        self.run = self

    def remote(self, task: dict[str, Any], *_: object) -> _Call:
        self.calls.append(_Call(task))
        self.sent.put_nowait(self.calls[-1])
        return self.calls[-1]


class _Ray:
    class exceptions:
        RayError = RuntimeError


class _Board:
    def __init__(self) -> None:
        self.log: list[tuple[str, str]] = []

    def started(self, task: Task) -> None:
        self.log.append(("started", task.id))

    def finished(self, result: dict[str, Any]) -> None:
        self.log.append(("finished", result["task"]))

    def began(self) -> list[str]:
        return [name for event, name in self.log if event == "started"]
