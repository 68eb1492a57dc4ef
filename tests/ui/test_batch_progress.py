"""`paicli batch`'s progress lines (`ui.batch_progress`): counts, the time left at the pace
so far (on an injected clock), and a failure's reason, escaped on the way out."""

from __future__ import annotations

import pytest

from paicli.ui.batch_progress import BatchProgress


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Named:
    def __init__(self, name: str) -> None:
        self.id = name


def test_each_result_is_a_line_with_the_counts_and_the_time_left(
    capsys: pytest.CaptureFixture[str],
) -> None:
    clock = Clock()
    progress = BatchProgress(4, clock=clock)
    for name in ("a", "b", "c"):
        progress.started(Named(name))
    assert progress.eta() is None
    clock.now += 10
    progress.finished({"task": "a", "status": "done"})
    clock.now += 10
    progress.finished({"task": "b", "status": "timeout", "errors": ["no result \x1b[2J"]})
    progress.close()
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == ("paicli batch: [1/4] a done (done 1, failed 0, running 2, about 30s left)")
    assert lines[1].startswith("paicli batch: [2/4] b timeout: no result ")
    assert "\x1b" not in lines[1]
    assert lines[1].endswith("(done 1, failed 1, running 1, about 20s left)")
    assert lines[2] == "paicli batch: done 1 failed 1 running 1 of 4"
