"""The tree walk under glob and grep: what lies below a folder, found through folder
descriptors (`Confinement`), never through a symlink, and within a budget.

A walk visits at most `SearchLimits.entries` names and runs at most `SearchLimits.seconds`;
then it stops and its `Budget` says why, so the tool returns what it found with a note instead
of running for as long as the tree is big.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ._paths import Confinement, PathRefused

__all__ = ["SKIPPED_DIRS", "Budget", "Found", "SearchLimits", "walk"]

SKIPPED_DIRS = frozenset({".git", "node_modules", ".venv", "__pycache__"})
# Deeper trees are generated, not written by hand; the walk holds one descriptor per level.
MAX_DEPTH = 64


@dataclass(frozen=True)
class SearchLimits:
    """How much one glob or grep may do before it stops and says so."""

    # The model waits on the call; a search that needs longer has too wide a path.
    seconds: float = 10.0
    # Folders and files looked at; a large monorepo has about this many outside .git and
    # node_modules, while a home folder or / has millions.
    entries: int = 100_000
    clock: Callable[[], float] = field(default=time.monotonic, compare=False)


class Budget:
    """One walk's spending against its `SearchLimits`; `stopped` says which ran out."""

    def __init__(self, limits: SearchLimits) -> None:
        self._limits = limits
        self._deadline = limits.clock() + limits.seconds
        self.visited = 0
        self.stopped: str | None = None

    def spend(self) -> bool:
        """Count one more name looked at; False (from then on) once a limit is reached."""
        if self.exceeded():
            return False
        if self.visited >= self._limits.entries:
            self.stopped = f"the budget of {self._limits.entries:,} entries"
            return False
        self.visited += 1
        return True

    def exceeded(self) -> bool:
        """Whether the walk must stop now (checked between files, too)."""
        if self.stopped is None and self._limits.clock() >= self._deadline:
            self.stopped = f"the time budget of {self._limits.seconds:g} s"
        return self.stopped is not None

    def note(self) -> str | None:
        """The line a tool adds to a partial result, or None when the walk was complete."""
        if self.stopped is None:
            return None
        return (
            f"[stopped after {self.visited:,} files and folders ({self.stopped}); the results "
            "are partial; narrow the path or the pattern]"
        )


@dataclass(frozen=True)
class Found:
    """One folder or regular file below the walk's base (a symlink counts as what it points
    to). `folder` is the open descriptor of the folder holding it, valid until the walk moves
    on."""

    relative: str  # from the base, "/"-separated
    is_dir: bool
    is_link: bool
    folder: int


def walk(paths: Confinement, base: Path, budget: Budget) -> Iterator[Found]:
    """What lies below `base`, depth first, sorted within a folder (its folders as met, then
    its files, then each subfolder's content); skips the uninteresting folders, does not
    descend into folder links or below MAX_DEPTH, leaves out FIFOs, sockets, devices and
    broken links, and ends early when `budget` runs out."""
    with paths.open_dir(base) as top:
        yield from _walk_folder(paths, base, top, "", 0, budget=budget)


def _walk_folder(
    paths: Confinement, base: Path, folder: int, prefix: str, depth: int, *, budget: Budget
) -> Iterator[Found]:
    entries: list[os.DirEntry[str]] = []
    try:
        with os.scandir(folder) as scan:
            # Counted while reading: one folder with a million names is spent on, too.
            for entry in scan:
                if not budget.spend():
                    break
                entries.append(entry)
    except OSError:
        return
    entries.sort(key=lambda e: e.name)
    subfolders: list[str] = []
    files: list[Found] = []
    for entry in entries:
        try:
            if entry.is_dir():
                if entry.name in SKIPPED_DIRS:
                    continue
                link = entry.is_symlink()
                yield Found(prefix + entry.name, True, link, folder)
                if not link:
                    subfolders.append(entry.name)
            elif entry.is_file():
                files.append(Found(prefix + entry.name, False, entry.is_symlink(), folder))
        except OSError:
            continue
    for found in files:
        if budget.exceeded():  # grep reads each file: the clock runs between them
            return
        yield found
    if depth >= MAX_DEPTH:
        return
    for name in subfolders:
        if budget.exceeded():
            return
        try:
            inner = paths.open_at(folder, name, os.O_RDONLY | os.O_DIRECTORY, base / prefix / name)
        except (OSError, PathRefused):
            continue  # gone since the scan, or a link swapped in: not followed
        try:
            yield from _walk_folder(
                paths, base, inner, f"{prefix}{name}/", depth + 1, budget=budget
            )
        finally:
            os.close(inner)
