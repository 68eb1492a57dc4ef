"""`paicli batch`'s progress on stderr: on a terminal, rich's progress bar (done, failed,
running, and the time left estimated from the pace so far); otherwise one plain line per
finished task, which a log keeps. Task ids are checked labels, still escaped on the way out.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from paicli.ui.output import err

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

__all__ = ["BatchProgress", "progress_for"]


class _Task(Protocol):
    @property
    def id(self) -> str: ...


class BatchProgress:
    """Counts the batch and shows it (see the module). `close` ends the bar."""

    def __init__(self, total: int, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.total = total
        self.done = 0
        self.failed = 0
        self.running = 0
        self._clock = clock
        self._began = clock()
        self._bar: Progress | None = None
        self._row: TaskID | None = None

    def started(self, task: _Task) -> None:
        self.running += 1
        self._refresh()

    def finished(self, result: dict[str, Any]) -> None:
        self.running = max(0, self.running - 1)
        if result.get("status") == "done":
            self.done += 1
        else:
            self.failed += 1
        if self._bar is None:
            err(self.line(result))
        else:
            if result.get("status") != "done":  # a failure is said above the bar
                self._bar.console.print(self.line(result), soft_wrap=True)
            self._refresh()

    def line(self, result: dict[str, Any]) -> str:
        """The plain line for one finished task."""
        count = self.done + self.failed
        left = self.eta()
        eta = f", about {left:.0f}s left" if left is not None and count < self.total else ""
        status = result.get("status", "?")
        why = ""
        if status != "done":
            errors = result.get("errors") or [""]
            why = f": {str(errors[0])[:200]}"
        return (
            f"paicli batch: [{count}/{self.total}] {result.get('task')} {status}{why} "
            f"(done {self.done}, failed {self.failed}, running {self.running}{eta})"
        )

    def eta(self) -> float | None:
        """Seconds left at the pace so far (None before the first result)."""
        count = self.done + self.failed
        if count == 0:
            return None
        return (self._clock() - self._began) / count * (self.total - count)

    def show_bar(self) -> None:
        from rich.progress import (  # noqa: PLC0415 - only on a terminal
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
        )

        from paicli.ui.console import SafeConsole  # noqa: PLC0415

        self._bar = Progress(
            TextColumn("paicli batch"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[counts]}"),
            TimeRemainingColumn(),
            console=SafeConsole(stderr=True),
            transient=False,
        )
        self._row = self._bar.add_task("batch", total=self.total, counts=self._counts())
        self._bar.start()

    def close(self) -> None:
        if self._bar is not None:
            self._refresh()
            self._bar.stop()
            self._bar = None
        if self.done + self.failed:
            err(f"paicli batch: {self._counts()} of {self.total}")

    def _counts(self) -> str:
        return f"done {self.done} failed {self.failed} running {self.running}"

    def _refresh(self) -> None:
        if self._bar is not None and self._row is not None:
            self._bar.update(self._row, completed=self.done + self.failed, counts=self._counts())


def progress_for(total: int) -> BatchProgress:
    """The bar on a terminal, plain lines otherwise."""
    progress = BatchProgress(total)
    if sys.stderr.isatty():
        progress.show_bar()
    return progress
