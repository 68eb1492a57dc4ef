"""A batch's result lines: the headless `result` message of the task's run
(`paicli.headless.transcript`) with the task's `id`, its `status` and the `diff` of its
folder; and the ids an earlier run of the batch already finished (`--resume-batch`).

`status` is `done` (the run answered), `failed` (it ended in error, or could not start:
a missing folder, a bad ref, bad servers), `timeout` (`--task-timeout` passed; the worker
was killed) or `crashed` (the worker died: a crash, or the memory limit).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from paicli.agent.events import TurnEnded
from paicli.batch.tasks import Task
from paicli.headless.transcript import Message, Transcript

__all__ = ["STATUSES", "failure", "finished_ids", "success_of", "with_task"]

STATUSES = ("done", "failed", "timeout", "crashed")
# An earlier results file is read for its ids only; a line this long is not one of ours.
MAX_RESULT_LINE = 64 * 1024 * 1024


def with_task(task: Task, status: str, result: Message, diff: str = "") -> Message:
    """The result line of `task`: its id and status first, the run's `result` message,
    then the diff."""
    return {"task": task.id, "line": task.line, "status": status, **result, "diff": diff}


def failure(task: Task, why: str, status: str = "failed", session_id: str = "") -> Message:
    """The result line of a task whose run could not finish: an error `result` saying why."""
    result = Transcript(session_id).result(TurnEnded("error", error=why), [why])
    return with_task(task, status, result)


def success_of(result: Mapping[str, Any]) -> str:
    """The status a run's `result` message stands for."""
    return "failed" if result.get("is_error") else "done"


def finished_ids(path: Path) -> set[str]:
    """The ids of the tasks with a result line in the file at `path` (none when it does not
    exist); a line that is not a result (cut by a kill, say) is passed over."""
    found: set[str] = set()
    try:
        file = path.open("rb")
    except FileNotFoundError:
        return found
    with file:
        while raw := file.readline(MAX_RESULT_LINE):
            try:
                line = json.loads(raw)
            except ValueError:
                continue
            task = line.get("task") if isinstance(line, dict) else None
            if isinstance(task, str) and line.get("status") in STATUSES:
                found.add(task)
    return found
