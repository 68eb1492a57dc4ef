"""Rewinding: the files as they were before turn N, and the conversation cut there.

`plan_code` works out, for every file the session's turns changed, the content it had
before turn N (the "before" of the first turn from N on that changed it; for a file only
earlier turns changed, what paicli last left it as, which differs only after an earlier
code rewind), and compares it with the file now. A file whose content now is not what
paicli last left it as was changed by someone else since: it is a conflict, left alone
unless the caller says to overwrite it. A content the store never kept (too large, the
store full) cannot be brought back, and the plan says so; so do the notes of commands.

`apply` writes only inside the recorded roots: each path is confined again now (a symlink
swapped into its folders since makes it refused), folders are opened one name at a time
without following links, and files are replaced atomically (`writes.replace_at`), or
removed when they did not exist before.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from paicli.checkpoints.recorder import fingerprint
from paicli.checkpoints.store import ABSENT, UNKNOWN, CheckpointStore, State, Turn, digest
from paicli.checkpoints.toolbox import NotAFile, TooLarge, read_current
from paicli.tools.builtin.paths import Confinement, PathRefused
from paicli.tools.builtin.writes import replace_at

__all__ = ["CodePlan", "Step", "apply", "conversation_cut", "plan_code"]


@dataclass(frozen=True)
class Step:
    """One file to bring back: its path, the content it gets (ABSENT: removed), and
    whether it changed since paicli last changed it (a conflict)."""

    path: str
    target: State
    conflict: bool


@dataclass
class CodePlan:
    """What rewinding the files to before `turn` does."""

    turn: Turn
    steps: list[Step] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)  # not kept: cannot be brought back
    notes: list[str] = field(default_factory=list)  # what no rewind undoes

    @property
    def conflicts(self) -> list[Step]:
        return [step for step in self.steps if step.conflict]


@dataclass
class Restored:
    """What `apply` did: files written, removed, and left alone with the reason."""

    written: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)


def plan_code(store: CheckpointStore, number: int, paths: Confinement) -> CodePlan | None:
    """The plan to bring the files back to before turn `number` (None: no such turn)."""
    turn = store.turn(number)
    if turn is None:
        return None
    targets: dict[str, State] = {}
    later = [t for t in store.turns if t.number >= number]
    for earlier in (t for t in store.turns if t.number < number):
        for path, change in earlier.files.items():
            if store.current.get(path, change.after) != change.after:
                targets[path] = change.after  # moved by an earlier code rewind
    for t in reversed(later):
        targets.update({path: change.before for path, change in t.files.items()})
    plan = CodePlan(turn)
    for path, target in sorted(targets.items()):
        now = _now(paths, path)
        if now == target and now != UNKNOWN:
            continue
        if target is not None and (target == UNKNOWN or not store.has(target)):  # not ABSENT
            plan.lost.append(path)
            continue
        expected = store.current.get(path, UNKNOWN)
        plan.steps.append(Step(path, target, conflict=now == UNKNOWN or now != expected))
    for t in later:
        if t.commands:
            shown = ", ".join(f"`{c}`" for c in t.commands[:3])
            more = f" and {len(t.commands) - 3} more" if len(t.commands) > 3 else ""
            plan.notes.append(
                f"turn {t.number} ran commands ({shown}{more}): what they changed outside "
                f"{_folders(store.roots)} or in skipped folders (.git, node_modules, virtual "
                "environments, caches) is not undone"
            )
        plan.notes.extend(f"turn {t.number}: {note}" for note in t.notes)
    return plan


def _folders(roots: Sequence[str]) -> str:
    return "the project folder" if len(roots) <= 1 else "the project folders"


def _now(paths: Confinement, path: str) -> State:
    """The state of the file at `path` now (UNKNOWN: not a regular file we can read)."""
    try:
        real = paths.resolve(path)
        if real != Path(path):
            return UNKNOWN
        data = read_current(paths, real, 16 * 1024 * 1024)
    except (PathRefused, TooLarge, NotAFile, OSError):
        return UNKNOWN
    return ABSENT if data is None else digest(data)


def apply(
    plan: CodePlan, store: CheckpointStore, paths: Confinement, *, overwrite: bool
) -> Restored:
    """Carry out `plan` (conflicts only with `overwrite`), recording each file's new state."""
    done = Restored()
    for step in plan.steps:
        if step.conflict and not overwrite:
            done.skipped.append((step.path, "changed since paicli last changed it"))
            continue
        try:
            problem = _restore_one(step, store, paths)
        except PathRefused as exc:
            problem = str(exc)
        except OSError as exc:
            problem = exc.strerror or str(exc)
        if problem is not None:
            done.skipped.append((step.path, problem))
            continue
        (done.removed if step.target is ABSENT else done.written).append(step.path)
        store.current[step.path] = step.target
    store.save()
    return done


def _restore_one(step: Step, store: CheckpointStore, paths: Confinement) -> str | None:
    """Bring one file back; why not, when it cannot be."""
    real = paths.resolve(step.path)
    if real != Path(step.path):
        return f"it now leads to {real} (a symbolic link on the way)"
    if step.target is ABSENT:
        with paths.open_parent(real) as folder:
            try:
                found = os.stat(real.name, dir_fd=folder, follow_symlinks=False)
            except FileNotFoundError:
                return None
            if stat.S_ISDIR(found.st_mode):
                return "it is a folder now"
            os.unlink(real.name, dir_fd=folder)  # a link itself, never what it points to
        return None
    data = store.get(step.target) if step.target is not None else None
    if data is None:
        return "its earlier content is no longer in the checkpoint store"
    with paths.open_parent(real, create=True) as folder:
        there: os.stat_result | None
        try:
            there = os.stat(real.name, dir_fd=folder, follow_symlinks=False)
        except FileNotFoundError:
            there = None
        if there is not None and stat.S_ISDIR(there.st_mode):
            return "it is a folder now"
        keep = there if there is not None and stat.S_ISREG(there.st_mode) else None
        replace_at(folder, real.name, data, keep=keep)
    return None


def conversation_cut(turn: Turn, messages: Sequence[Mapping[str, object]]) -> int | None:
    """How many of `messages` (the conversation, no system prompt) come before `turn`: its
    first message found where it was (or, after a /compact, wherever it is now); None when
    the turn is no longer in the conversation."""
    at = turn.messages
    if turn.first is None:
        return at if at <= len(messages) else None
    if at < len(messages) and fingerprint(messages[at]) == turn.first:
        return at
    for index, message in enumerate(messages):
        if fingerprint(message) == turn.first:
            return index
    return None
