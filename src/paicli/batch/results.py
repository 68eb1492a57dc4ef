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
# How every result line starts (`with_task`: the id first), whole or cut by a kill.
RESULT_START = b'{"task": '


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
    exist); a line cut by a kill is passed over. ValueError naming the first line that is
    neither (another file: the tasks file, say, which results must not be appended to)."""
    found: set[str] = set()
    try:
        file = path.open("rb")
    except FileNotFoundError:
        return found
    with file:
        number = 0
        while raw := file.readline(MAX_RESULT_LINE):
            number += 1
            if (task := _task_of(raw)) is not None:
                found.add(task)
            elif raw.strip() and not raw.startswith(RESULT_START) and raw.endswith(b"\n"):
                raise ValueError(f"line {number} is not a result line of paicli batch")
    return found


def _task_of(raw: bytes) -> str | None:
    try:
        line = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    task = line.get("task") if isinstance(line, dict) else None
    return task if isinstance(task, str) and line.get("status") in STATUSES else None
