"""What a shell command changed in the project: every file under the tools' folders, seen
(lstat) before and after the command, and the content of each kept beforehand.

A command may write any file it likes, so before it runs each file whose stat changed since
the last look is read and kept in the session's store (content-addressed: an unchanged file
costs a stat, not a copy). After it, a second look finds what it created, changed or
removed. Bounded: at most `MAX_FILES` files are looked at, files over `MAX_FILE_BYTES` and
past `MAX_READ_BYTES` read per command are not kept (their earlier content is "unknown"),
generated folders (.git, node_modules, virtual environments, caches) and paicli's own folder
are skipped. What is left out is said in the turn's notes, so a rewind can say what it
cannot undo. Symbolic links are never followed; a link's target is not kept.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path

from paicli.checkpoints.store import ABSENT, UNKNOWN, CheckpointStore, State

__all__ = ["MAX_FILES", "SKIPPED", "CommandChanges", "ProjectScan"]

# Folders a command fills with what can be made again (and that are large): not looked at.
SKIPPED = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        ".venv",
        "venv",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
        ".nox",
    }
)
MAX_FILES = 20_000  # a large project outside its generated folders
MAX_FILE_BYTES = 1024 * 1024  # source files; larger ones are rarely written by hand
MAX_READ_BYTES = 64 * 1024 * 1024  # read before one command at most
MAX_DEPTH = 64
# The temporary file of a file tool's atomic write (`writes.replace_at`), there for an instant
# while a command may run beside the tool: never the command's doing, never to restore.
_TRANSIENT = re.compile(r"\..+\.[0-9a-f]{12}\.tmp")
_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC

Key = tuple[int, int, int, int, int]  # mode, size, mtime_ns, ctime_ns, inode


def _key(found: os.stat_result) -> Key:
    return (found.st_mode, found.st_size, found.st_mtime_ns, found.st_ctime_ns, found.st_ino)


@dataclass
class CommandChanges:
    """The files one command changed: their state before and after, and what was not seen."""

    files: dict[str, tuple[State, State]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


class ProjectScan:
    """The files under `roots` (real paths), minus `skip` (paicli's own folder, say), as
    last seen, with the content state of each kept in a store."""

    def __init__(self, roots: Sequence[Path], skip: Sequence[Path | str] = ()) -> None:
        self.roots = [Path(os.path.realpath(root)) for root in roots]
        self.skip = [os.path.realpath(path) for path in skip]
        self._known: dict[str, tuple[Key, State]] = {}  # path -> (stat key, content state)
        self._before: dict[str, Key] = {}
        self._complete = True

    def before(self, store: CheckpointStore) -> None:
        """Look at the project before a command, keeping what changed since the last look."""
        seen, self._complete = self._look()
        budget = MAX_READ_BYTES
        for path, key in seen.items():
            known = self._known.get(path)
            if known is not None and known[0] == key and (known[1] != UNKNOWN or budget <= 0):
                continue
            state, read = self._keep(path, key, store, budget)
            budget -= read
            self._known[path] = (key, state)
        for path in set(self._known) - set(seen):
            del self._known[path]
        self._before = seen
        store.pinned = {state for _, state in self._known.values() if state and state != UNKNOWN}

    def after(self, store: CheckpointStore) -> CommandChanges:
        """What the command run since `before` changed, and what could not be seen."""
        seen, complete = self._look()
        changes = CommandChanges()
        for path in sorted(set(seen) | set(self._before)):
            old, new = self._before.get(path), seen.get(path)
            if old == new:
                continue
            earlier = self._known.get(path, (None, UNKNOWN))[1] if old is not None else ABSENT
            if new is None:
                later: State = ABSENT
                self._known.pop(path, None)
            else:
                later, _ = self._keep(path, new, store, MAX_FILE_BYTES)
                self._known[path] = (new, later)
            changes.files[path] = (earlier, later)
        if not (complete and self._complete):
            changes.notes.append(
                f"the project has more than {MAX_FILES:,} files: what a command changed beyond "
                "them is not covered"
            )
        return changes

    def _keep(self, path: str, key: Key, store: CheckpointStore, budget: int) -> tuple[State, int]:
        """The content state of the file at `path` (kept in `store`), and the bytes read."""
        if not stat.S_ISREG(key[0]) or key[1] > MAX_FILE_BYTES or key[1] > budget:
            return UNKNOWN, 0
        try:
            fd = os.open(path, _READ)
        except OSError:
            return UNKNOWN, 0
        with os.fdopen(fd, "rb") as file:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return UNKNOWN, 0
            data = file.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            return UNKNOWN, len(data)
        return store.put(data), len(data)

    def _look(self) -> tuple[dict[str, Key], bool]:
        """Every file and link under the roots (lstat), and whether all were seen."""
        seen: dict[str, Key] = {}
        skipped = set(self.skip)
        pending = [(str(root), 0) for root in self.roots]
        while pending:
            folder, depth = pending.pop()
            try:
                entries = list(os.scandir(folder))
            except OSError:
                continue
            for entry in entries:
                if entry.path in skipped:
                    continue
                with suppress(OSError):
                    found = entry.stat(follow_symlinks=False)
                    if stat.S_ISDIR(found.st_mode):
                        if entry.name not in SKIPPED and depth < MAX_DEPTH:
                            pending.append((entry.path, depth + 1))
                        continue
                    if _TRANSIENT.fullmatch(entry.name):
                        continue
                    if len(seen) >= MAX_FILES:
                        return seen, False
                    seen[entry.path] = _key(found)
        return seen, True
