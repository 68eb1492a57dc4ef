"""A read that must never block, checked from a thread: the FIFO it waits on is opened for
writing once the time is up, which ends the wait, and the test fails."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

T = TypeVar("T")
# Generous for a read that must not block at all; only a hang ever waits this long.
HANG = 10.0


def without_hanging(call: Callable[[], T], fifo: Path) -> T:
    """`call()` in a thread; if it is still blocked after HANG seconds the FIFO is opened
    for writing and closed (which ends a reader's wait) and the test fails."""
    result: list[T] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            result.append(call())
        except BaseException as exc:
            errors.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(HANG)
    if worker.is_alive():
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        worker.join(HANG)
        pytest.fail(f"reading {fifo} blocked on the FIFO")
    if errors:
        raise errors[0]
    return result[0]
