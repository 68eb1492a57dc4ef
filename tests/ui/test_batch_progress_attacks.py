"""The batch's progress lines carry a failed task's first error, which a server, git or the
model wrote: it reaches stderr escaped."""

from __future__ import annotations

import pytest

from paicli.ui.batch_progress import BatchProgress


def test_a_failed_tasks_error_reaches_stderr_without_its_escapes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    progress = BatchProgress(1)
    hostile = "boom\x1b]0;owned\x07\x1b[2J\rfake line\u202e"
    progress.finished({"task": "t", "status": "failed", "errors": [hostile]})
    shown = capsys.readouterr().err
    assert "boom" in shown
    assert not any(char in shown for char in "\x1b\x07\r\u202e")
