"""The tasks file of `paicli batch`: one JSON object per line, read into frozen `Task`s.

Every field is checked here, before anything runs: a line that is not a task is one
problem naming its line number (the other lines still run). A task file may be written by
a program from data nobody reviewed, so nothing in it becomes a file name: a task's files
are named by its line number, its `id` is a label checked against a plain pattern, a
relative folder may not climb out of the tasks file's folder, and sizes are bounded.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from paicli.batch.task import Task
from paicli.errors import PaicliError

__all__ = [
    "MAX_LINE",
    "MAX_PROMPT",
    "Task",
    "TaskFileError",
    "check_permissions",
    "read_tasks",
    "task_from_dict",
]

# A prompt goes to the model whole: 1 MiB is far beyond any model's window, and bounds what
# a task file can make each worker hold. A line also carries its servers and rules.
MAX_PROMPT = 1024 * 1024
MAX_LINE = 2 * MAX_PROMPT
# A batch of more tasks than this is a mistake (or a file that never ends).
MAX_TASKS = 100_000
ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
FIELDS = frozenset(
    {"id", "prompt", "cwd", "repo", "ref", "model", "permission_mode", "allow", "deny"}
    | {"mcpServers", "max_turns"}
)
# A git ref names a commit, branch or tag: no option-like or whitespace-carrying text.
REF_PATTERN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._/@{}^~-]{0,199}")


class TaskFileError(PaicliError, ValueError):
    """The tasks file itself cannot be read (the run stops before any task)."""


def read_tasks(path: Path, *, permissions: bool = True) -> tuple[list[Task], list[str]]:
    """The tasks of the file at `path` and one problem per line that is not a task (naming
    its line); TaskFileError when the file cannot be read at all. `permissions=False`
    leaves each task's mode and rules checked for their shape only, for
    `check_permissions` to finish (`--ray` makes its actors first: those checks load the
    permission rules and the tool catalog)."""
    base = path.resolve().parent
    tasks: list[Task] = []
    problems: list[str] = []
    seen: dict[str, int] = {}
    for number, text in _lines(path):
        if not text.strip():
            continue
        try:
            task = task_from_dict(_json(text), number, base, permissions=permissions)
        except ValueError as exc:
            problems.append(f"{path.name}:{number}: {exc}")
            continue
        if task.id in seen:
            problems.append(f"{path.name}:{number}: id {task.id!r} is line {seen[task.id]}'s too")
            continue
        seen[task.id] = number
        tasks.append(task)
    return tasks, problems


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    try:
        # Not blocking: a FIFO in place of the file would hold the open forever.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise TaskFileError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise TaskFileError(f"{path}: not a regular file")
    os.set_blocking(fd, True)
    with os.fdopen(fd, "rb") as file:
        for number in range(1, MAX_TASKS + 2):
            raw = file.readline(MAX_LINE + 1)
            if not raw:
                return
            if number > MAX_TASKS:
                raise TaskFileError(f"{path}: more than {MAX_TASKS} lines")
            if len(raw) > MAX_LINE and not raw.endswith(b"\n"):
                while raw and not raw.endswith(b"\n"):  # skip the rest of the long line
                    raw = file.readline(MAX_LINE + 1)
                yield number, "\x00too long"
                continue
            yield number, raw.decode("utf-8", errors="replace")


def _json(text: str) -> dict[str, Any]:
    if text == "\x00too long":
        raise ValueError(f"the line is longer than {MAX_LINE // (1024 * 1024)} MiB")
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"not JSON ({exc})") from None
    except RecursionError:  # `[[[[...` : json's decoder recurses once per level
        raise ValueError("not JSON (nested too deeply)") from None
    if not isinstance(value, dict):
        raise ValueError("a task is a JSON object")
    return value


def check_permissions(tasks: list[Task], name: str) -> tuple[list[Task], list[str]]:
    """The tasks of `read_tasks(..., permissions=False)` whose mode and rules hold (the mode
    in its canonical spelling), and one problem per task that is refused, as `read_tasks`
    words it (`name` is the tasks file's)."""
    kept: list[Task] = []
    problems: list[str] = []
    for task in tasks:
        try:
            mode = _mode(task.permission_mode)
            for field, rules in (("allow", task.allow), ("deny", task.deny)):
                _parse_rules(field, rules)
        except ValueError as exc:
            problems.append(f"{name}:{task.line}: {exc}")
            continue
        kept.append(dataclasses.replace(task, permission_mode=mode))
    return kept, problems


def task_from_dict(
    value: Mapping[str, Any], line: int, base: Path, *, permissions: bool = True
) -> Task:
    """The task on line `line`, its relative folders taken from `base`; ValueError saying
    which field is wrong (of its mode and rules, only their shape unless `permissions`)."""
    unknown = sorted(set(value) - FIELDS)
    if unknown:
        raise ValueError(f"unknown field {unknown[0]!r}; known: {', '.join(sorted(FIELDS))}")
    prompt = value.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        raise ValueError("'prompt' must be a non-empty string")
    if len(prompt.encode("utf-8", "surrogatepass")) > MAX_PROMPT:  # JSON may spell "\\udcff"
        raise ValueError(f"'prompt' is longer than {MAX_PROMPT // 1024} KiB")
    task_id = value.get("id", f"line-{line}")
    if not isinstance(task_id, str) or ID_PATTERN.fullmatch(task_id) is None:
        raise ValueError(
            "'id' must be 1-128 letters, digits or . _ : - (starting with a letter or digit)"
        )
    if "cwd" in value and "repo" in value:
        raise ValueError("give 'cwd' or 'repo', not both")
    ref = _optional_text(value, "ref", 200)
    if ref is not None and ("repo" not in value or REF_PATTERN.fullmatch(ref) is None):
        raise ValueError("'ref' must be a branch, tag or commit of 'repo'")
    where = "repo" if "repo" in value else "cwd"
    folder = _folder(value.get(where), where, base) if where in value else None
    return Task(
        line=line,
        id=task_id,
        prompt=prompt,
        folder=folder,
        git=where == "repo",
        ref=ref,
        model=_optional_text(value, "model", 200),
        permission_mode=_mode(value.get("permission_mode"), parse=permissions),
        allow=_rules(value, "allow", parse=permissions),
        deny=_rules(value, "deny", parse=permissions),
        servers=_servers(value.get("mcpServers", {})),
        max_turns=_turns(value.get("max_turns")),
    )


def _optional_text(value: Mapping[str, Any], name: str, limit: int) -> str | None:
    text = value.get(name)
    if text is None:
        return None
    if not isinstance(text, str) or not text or len(text) > limit or not text.isprintable():
        raise ValueError(f"'{name}' must be a printable string of at most {limit} characters")
    return text


def _folder(given: object, name: str, base: Path) -> str:
    """The folder `given` names, absolute. A relative one is the tasks file's folder's and
    may not leave it (`../..`); an absolute one is taken as the user wrote it."""
    if not isinstance(given, str) or not given or "\x00" in given or len(given) > 4096:
        raise ValueError(f"'{name}' must be a folder's path")
    path = Path(os.path.expanduser(given))
    if not path.is_absolute():
        # Resolved, links included: a link in the folder that leads out of it leaves it too.
        try:
            path = (base / path).resolve()
        except (OSError, RuntimeError) as exc:  # a loop of links (RuntimeError before 3.13)
            raise ValueError(f"'{name}' {given!r} cannot be followed ({exc})") from None
        if path != base and base not in path.parents:
            raise ValueError(f"'{name}' {given!r} leaves the tasks file's folder")
    return str(path)


def _mode(given: object, *, parse: bool = True) -> str | None:
    if given is None:
        return None
    if not isinstance(given, str):
        raise ValueError("'permission_mode' must be a string")
    if not parse:
        return given
    from paicli.permissions.request import Mode  # noqa: PLC0415 - see read_tasks

    return Mode.parse(given).value  # its ValueError names the modes


def _rules(value: Mapping[str, Any], name: str, *, parse: bool = True) -> tuple[str, ...]:
    rules = value.get(name, [])
    if not isinstance(rules, list) or not all(isinstance(r, str) for r in rules):
        raise ValueError(f"'{name}' must be a list of rules (strings)")
    if parse:
        _parse_rules(name, rules)
    return tuple(rules)


def _parse_rules(name: str, rules: list[str] | tuple[str, ...]) -> None:
    if not rules:
        return
    from paicli.permissions.rules import RuleError, parse_rule  # noqa: PLC0415 - see read_tasks

    for rule in rules:
        try:
            parse_rule(rule)
        except RuleError as exc:
            raise ValueError(f"'{name}' rule {rule!r}: {exc}") from None


def _servers(given: object) -> dict[str, Any]:
    """The `mcpServers` object: checked by the same loader as `--mcp-config` in the worker;
    here only its shape."""
    if not isinstance(given, dict) or not all(isinstance(k, str) for k in given):
        raise ValueError("'mcpServers' must be an object of server entries")
    return given


def _turns(given: object) -> int | None:
    if given is None:
        return None
    if not isinstance(given, int) or isinstance(given, bool) or not 1 <= given <= 10_000:
        raise ValueError("'max_turns' must be a whole number from 1 to 10000")
    return given
