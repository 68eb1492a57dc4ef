"""The virtual clock of the in-memory tier (tests/virtual_clock.py): time jumps to the next
timer when nothing can run, stands still while a worker job runs, and refuses to jump past a
thread it cannot see into."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from tests.virtual_clock import ThreadBesideVirtualClock, VirtualClockLoop


@pytest.mark.virtual_time
async def test_a_minute_s_sleep_is_a_jump_of_the_clock() -> None:
    loop = asyncio.get_running_loop()
    assert isinstance(loop, VirtualClockLoop)
    began = loop.time()
    await asyncio.sleep(60)
    assert loop.time() - began == 60


@pytest.mark.virtual_time
async def test_timers_fire_in_order_at_their_own_times() -> None:
    loop = asyncio.get_running_loop()
    began = loop.time()
    fired: list[tuple[str, float]] = []

    def fire(name: str) -> None:
        fired.append((name, loop.time() - began))

    for name, delay in (("late", 3.0), ("early", 1.0), ("middle", 2.0)):
        loop.call_later(delay, fire, name)
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(2.5):
            await asyncio.Event().wait()
    assert loop.time() - began == 2.5
    assert fired == [("early", 1.0), ("middle", 2.0)]


@pytest.mark.virtual_time
async def test_the_clock_stands_still_while_a_worker_job_runs() -> None:
    loop = asyncio.get_running_loop()
    began = loop.time()
    # Real work in a worker thread (a blocking call): a clock that jumped meanwhile would
    # time it out.
    async with asyncio.timeout(0.001):
        await asyncio.to_thread(time.sleep, 0.05)
    assert loop.time() == began


def test_a_jump_beside_a_thread_it_cannot_see_into_fails() -> None:
    loop = VirtualClockLoop()
    release = threading.Event()
    stranger = threading.Thread(target=release.wait, name="stranger", daemon=True)
    stranger.start()
    try:
        with pytest.raises(ThreadBesideVirtualClock, match="stranger"):
            loop.run_until_complete(asyncio.sleep(1))
    finally:
        release.set()
        stranger.join()
        loop.close()


async def test_other_tests_run_on_asyncio_s_own_loop() -> None:
    assert not isinstance(asyncio.get_running_loop(), VirtualClockLoop)
