"""`paicli batch TASKS.jsonl`: each task a full `paicli -p` run in its own copy of its
folder, on local worker processes or (`--ray`) a Ray cluster; result lines on stdout or in
`--out`, progress on stderr (`paicli.batch` has the rest).

Exit codes: 0 every task done; 1 a task failed or a line was not a task; 2 usage (the file
cannot be read, the results file is in the way, Ray cannot be reached); 130 interrupted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from paicli.batch.defaults import Defaults
from paicli.batch.tasks import Task, TaskFileError, check_permissions, read_tasks
from paicli.cli._signals import run_until_signalled
from paicli.ui.output import err, out_json, stdout_kept_for_json

if TYPE_CHECKING:
    from paicli.ui.batch_progress import BatchProgress

__all__ = ["run"]

# Workers by default: one per CPU, at most this many (each holds a model client and its
# servers; more is for --workers to say).
DEFAULT_WORKERS = 8


def run(options: argparse.Namespace, flags: dict[str, str | None]) -> int:
    path = Path(options.tasks)
    if options.resume_batch and options.out is None:
        err("paicli batch: --resume-batch needs --out RESULTS.jsonl (the results to carry on)")
        return 2
    if options.out == "":
        err("paicli batch: --out needs a file name")
        return 2
    if options.out is not None and (problem := _not_a_results_file(options.out)) is not None:
        err(f"paicli batch: {options.out}: {problem}")
        return 2
    if options.out is not None and not options.resume_batch and os.path.exists(options.out):
        err(f"paicli batch: {options.out} exists: add --resume-batch to carry it on, or remove it")
        return 2
    if options.ray is None and options.task_memory is not None:
        from paicli.batch.process import memory_problem  # noqa: PLC0415 - local workers only

        if (problem := memory_problem(options.task_memory)) is not None:
            err(f"paicli batch: {problem}")
            return 2
    finished: set[str] = set()
    if options.resume_batch:
        from paicli.batch.results import finished_ids  # noqa: PLC0415

        try:
            finished = finished_ids(Path(options.out))
        except ValueError as exc:
            err(f"paicli batch: {options.out}: {exc}: name the results file of an earlier run")
            return 2
    try:
        # With --ray, each task's mode and rules are checked once Ray is starting the
        # actors (`_checked`), which are sized by the tasks read here.
        tasks, problems = read_tasks(path, permissions=options.ray is None)
    except TaskFileError as exc:
        err(f"paicli batch: {exc}")
        return 2
    if not tasks and not problems:  # the wrong file, or a generator that made none
        err(f"paicli batch: {path}: no tasks (a task is a JSON object on a line of its own)")
        return 0
    if options.ray is None:
        tasks = _checked(tasks, problems, options)
    if options.resume_batch:
        skipped = [task for task in tasks if task.id in finished]
        tasks = [task for task in tasks if task.id not in finished]
        if skipped:
            err(f"paicli batch: {len(skipped)} tasks already have results; skipped")
    defaults = _defaults(options, flags)
    try:
        sink = _append(options.out) if options.out else None
        if sink is not None and not _ends_a_line(options.out):
            sink.write("\n")  # a line cut by a killed run stays a line of its own
    except OSError as exc:
        err(f"paicli batch: cannot write {options.out}: {exc.strerror or exc}")
        return 2
    try:
        code = run_until_signalled(_run(tasks, problems, defaults, options, sink))
    finally:
        if sink is not None:
            sink.close()
    failed = code == 0 and bool(problems)
    return 1 if failed else code


def _checked(tasks: list[Task], problems: list[str], options: argparse.Namespace) -> list[Task]:
    """The tasks that are run: those whose mode and rules hold (when `read_tasks` left them
    to check) and that paicli agrees to run, each problem said (and added to `problems`)."""
    if options.ray is not None:
        tasks, refused = check_permissions(tasks, Path(options.tasks).name)
        problems.extend(refused)
    tasks = [task for task in tasks if not _refused(task, options, problems)]
    for problem in problems:
        err(f"paicli batch: {problem}")
    return tasks


def _not_a_results_file(name: str) -> str | None:
    """Why `name` cannot be the results file (None: it can): a link would have the results
    written wherever it leads (a dangling one creates its target), and a FIFO or device
    would hold the batch reading or writing it."""
    try:
        found = os.lstat(name)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot read: {exc.strerror or exc}"
    if stat.S_ISLNK(found.st_mode):
        return "is a symbolic link: name the results file itself"
    if not stat.S_ISREG(found.st_mode):
        return "not a regular file"
    return None


def _append(name: str) -> IO[str]:
    """The results file opened to append to, never through a link swapped in since."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK
    fd = os.open(name, flags, 0o666)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(0, "not a regular file")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "a", encoding="utf-8")


def _ends_a_line(name: str) -> bool:
    with open(name, "rb") as file:
        if file.seek(0, os.SEEK_END) == 0:
            return True
        file.seek(-1, os.SEEK_END)
        return file.read(1) == b"\n"


def _refused(task: Task, options: argparse.Namespace, problems: list[str]) -> bool:
    """A task paicli will not run as asked (told in `problems`)."""
    if task.permission_mode == "yolo" and os.geteuid() == 0 and not options.force_root:
        problems.append(
            f"{Path(options.tasks).name}:{task.line}: refusing permission_mode yolo as root "
            "(add --force-root if you mean it)"
        )
        return True
    return False


def _defaults(options: argparse.Namespace, flags: dict[str, str | None]) -> Defaults:
    return Defaults(
        flags=flags,
        allow=tuple(options.allow),
        deny=tuple(options.deny),
        mode=options.mode.value if options.mode is not None else None,
        mcp_config=tuple(os.path.abspath(name) for name in options.mcp_config),
        strict_mcp_config=bool(options.strict_mcp_config),
        sandbox=getattr(options, "sandbox", None),
        max_steps=options.max_steps or None,
    )


async def _run(
    tasks: list[Task],
    problems: list[str],
    defaults: Defaults,
    options: argparse.Namespace,
    sink: IO[str] | None,
) -> int:
    if options.ray is None:
        board = _Board(_progress(tasks), sink, lambda value: out_json(value, indent=None))
        try:
            await _run_here(tasks, defaults, board, options)
        finally:
            board.progress.close()
        return 0 if board.failed == 0 else 1
    # Ray first: joined and the actors made before anything else, then the tasks' last
    # checks and the progress while Ray starts the actors' worker processes (a task refused
    # then leaves its worker slot unused).
    from paicli.batch.ray_run import RayUnavailable, on_ray  # noqa: PLC0415

    with stdout_kept_for_json() as write:  # Ray's own messages go to stderr
        try:
            async with on_ray(options, len(tasks)) as cluster:
                tasks = _checked(tasks, problems, options)
                board = _Board(_progress(tasks), sink, write)
                try:
                    await cluster.run(tasks, defaults, board)
                finally:
                    board.progress.close()
        except RayUnavailable as exc:
            err(f"paicli batch: {exc}")
            return 2
    return 0 if board.failed == 0 else 1


def _progress(tasks: list[Task]) -> BatchProgress:
    from paicli.ui.batch_progress import progress_for  # noqa: PLC0415 - after Ray's start

    return progress_for(len(tasks))


async def _run_here(
    tasks: list[Task], defaults: Defaults, board: _Board, options: argparse.Namespace
) -> None:
    # 0700 (mkdtemp): the copies of the tasks' folders are the user's files. TMPDIR read
    # now (tempfile keeps the first it saw), and never paicli's home, whose files the
    # tools protect.
    scratch = Path(tempfile.mkdtemp(prefix="paicli-batch-", dir=os.environ.get("TMPDIR") or None))
    from paicli.batch.local import run_local  # noqa: PLC0415 - only here (see _run)

    try:
        workers = options.workers or min(os.cpu_count() or 1, DEFAULT_WORKERS)
        await run_local(
            tasks,
            defaults,
            board,
            scratch=scratch,
            workers=workers,
            timeout=options.task_timeout,
            memory=options.task_memory,
        )
    finally:
        await asyncio.to_thread(shutil.rmtree, scratch, True)


class _Board:
    """Each result written as it comes, and counted."""

    def __init__(
        self, progress: BatchProgress, sink: IO[str] | None, show: Callable[[object], None]
    ) -> None:
        self.progress = progress
        self.sink = sink
        self.show = show  # a result on stdout
        self.failed = 0

    def started(self, task: Task) -> None:
        self.progress.started(task)

    def finished(self, result: dict[str, Any]) -> None:
        if result.get("status") != "done":
            self.failed += 1
        if self.sink is None:
            self.show(result)
        else:
            self.sink.write(json.dumps(result, ensure_ascii=False) + "\n")
            self.sink.flush()
        self.progress.finished(result)
