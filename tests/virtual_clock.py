"""A virtual clock for the in-memory tier: an event loop whose time moves only when nothing
can run.

paicli decides deadlines, backoff and timeouts on the running loop's clock (`loop.time()`,
`asyncio.sleep`, `asyncio.timeout`, `loop.call_at`), and so does the library: the loop is the
clock a caller replaces (house style 6c; trio's `MockClock` is a loop clock too). A test
marked `virtual_time` runs on `VirtualClockLoop` (the `pytest_asyncio_loop_factories` hook in
tests/conftest.py): when the loop would wait for its next timer with no callback ready, no
file descriptor ready and no worker-thread job outstanding, the clock jumps to that timer
instead. A 60 s timeout then costs no real time, and the machine's load changes nothing: what
happens first depends on the code alone.

This is sound only while everything that takes time runs on the loop. A worker job
(`asyncio.to_thread`, `run_in_executor`) stops the clock until it is done. Any other thread
(the in-memory fault server runs in threads and sleeps on the wall clock) could still be
working when the clock jumps past it, so a jump with such a thread alive fails the test
(`ThreadBesideVirtualClock`): run the SDK's server in memory (tests/sdk_memory.py) or a
scripted server instead.
"""

from __future__ import annotations

import asyncio
import selectors
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

__all__ = ["ThreadBesideVirtualClock", "VirtualClockLoop"]

T = TypeVar("T")

WORKER_PREFIX = "virtual-clock-worker"


class ThreadBesideVirtualClock(RuntimeError):
    """The virtual clock would jump while a thread it cannot see into is alive."""


class _JumpingSelector(selectors.BaseSelector):
    """The loop's selector, which moves the virtual clock instead of waiting for a timer."""

    def __init__(self, loop: VirtualClockLoop) -> None:
        self._inner = selectors.DefaultSelector()
        self._loop = loop

    def register(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        return self._inner.register(fileobj, events, data)

    def unregister(self, fileobj: Any) -> selectors.SelectorKey:
        return self._inner.unregister(fileobj)

    def modify(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        return self._inner.modify(fileobj, events, data)

    def get_map(self) -> Mapping[Any, selectors.SelectorKey]:
        return self._inner.get_map()

    def close(self) -> None:
        self._inner.close()

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        ready = self._inner.select(0)
        if ready or (timeout is not None and timeout <= 0):
            return ready
        if timeout is None or self._loop.waiting_on_threads():
            # No timer to jump to, or a worker job still running: wait for real (its end
            # wakes the loop through the self-pipe); the clock stands still meanwhile.
            return self._inner.select(timeout)
        self._loop.jump(timeout)
        return []


class VirtualClockLoop(asyncio.SelectorEventLoop):
    """An event loop on a virtual clock that starts at 0 and jumps from timer to timer."""

    def __init__(self) -> None:
        self._now = 0.0
        self._jobs = 0
        self._shutting_down = False
        self._threads_before = set(threading.enumerate())
        super().__init__(_JumpingSelector(self))
        self.set_default_executor(ThreadPoolExecutor(thread_name_prefix=WORKER_PREFIX))

    def time(self) -> float:
        return self._now

    def jump(self, seconds: float) -> None:
        strangers = [t.name for t in self._threads_unseen()]
        if strangers and not self._shutting_down:
            raise ThreadBesideVirtualClock(
                f"the virtual clock would jump {seconds:.3f}s while threads it cannot see "
                f"into are alive: {', '.join(strangers)}"
            )
        self._now += seconds

    def waiting_on_threads(self) -> bool:
        return self._jobs > 0 or (self._shutting_down and bool(self._threads_unseen()))

    def run_in_executor(  # type: ignore[override]  # typeshed's TypeVarTuple signature
        self, executor: Any, func: Callable[..., T], *args: Any
    ) -> asyncio.Future[T]:
        future = super().run_in_executor(executor, func, *args)
        self._jobs += 1
        future.add_done_callback(self._job_done)
        return future

    async def shutdown_default_executor(self, *args: Any) -> None:
        # asyncio joins the executor from a thread of its own: the clock waits for it.
        self._shutting_down = True
        await super().shutdown_default_executor(*args)

    def _job_done(self, _future: asyncio.Future[Any]) -> None:
        self._jobs -= 1

    def _threads_unseen(self) -> list[threading.Thread]:
        return [
            thread
            for thread in threading.enumerate()
            if thread not in self._threads_before
            and not thread.name.startswith(WORKER_PREFIX)
            and thread.is_alive()
        ]
