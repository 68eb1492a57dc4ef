"""The tree walk under glob and grep: what lies below a folder, found through folder
descriptors (`Confinement`), never through a symlink, and within a budget.

A walk visits at most `SearchLimits.entries` names and runs at most `SearchLimits.seconds`;
then it stops and says why, so the tool returns what it found with a note instead of running
for as long as the tree is big. Credential stores below the base (`ProtectedPaths`, for
reading) are left out and counted: searching one means naming it as the path, which asks.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from paicli.tools.base import DENIED_READS
from paicli.tools.builtin.paths import Confinement, PathRefused
from paicli.tools.protected import ProtectedPaths

__all__ = ["SKIPPED_DIRS", "Budget", "Found", "SearchLimits", "Walk"]

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


class Walk:
    """One walk below `base`: iterate it for what it finds; `notes()` afterwards says what
    it left out and where it stopped."""

    def __init__(
        self, paths: Confinement, base: Path, limits: SearchLimits, protected: ProtectedPaths
    ) -> None:
        self.paths = paths
        self.base = base
        self.budget = Budget(limits)
        # A base that is itself a credential store was asked about: nothing below is hidden.
        self._protected = None if protected.reason(base, writing=False) else protected
        self.left_out = 0
        # What the user's deny rules keep from reading (`Read(secrets/**)`), left out too.
        self._denied = DENIED_READS.get()
        self.denied = 0

    def hides(self, path: Path) -> bool:
        """Whether `path` is a credential store, or a file the user's deny rules keep from
        reading, that this walk leaves out (and counts)."""
        if self._refused(path):
            return True
        if self._protected is None or self._protected.reason(path, writing=False) is None:
            return False
        self.left_out += 1
        return True

    def _hides_below(self, folder: Path, name: str) -> bool:
        # The walk never enters a hidden folder, so only `name` itself can make it hidden.
        if self._refused(folder / name):
            return True
        protected = self._protected
        if protected is None or protected.reason_below(folder, name, writing=False) is None:
            return False
        self.left_out += 1
        return True

    def _refused(self, path: Path) -> bool:
        if self._denied is None or not self._denied(path):
            return False
        self.denied += 1
        return True

    def notes(self) -> list[str]:
        notes: list[str] = []
        if self.left_out:
            notes.append(
                f"[{self.left_out} credential file(s) or folder(s) left out, such as .ssh or "
                "*.pem; to search one, give it as the path (the user is asked first)]"
            )
        if self.denied:
            notes.append(
                f"[{self.denied} file(s) or folder(s) left out: the user's rules deny reading them]"
            )
        if (stopped := self.budget.note()) is not None:
            notes.append(stopped)
        return notes

    def __iter__(self) -> Iterator[Found]:
        """What lies below the base, depth first, sorted within a folder (its folders as
        met, then its files, then each subfolder's content); skips the uninteresting folders
        and credential stores, does not descend into folder links or below MAX_DEPTH, leaves
        out FIFOs, sockets, devices and broken links, and ends early when the budget runs
        out."""
        with self.paths.open_dir(self.base) as top:
            yield from self._folder(top, "", 0)

    def _folder(self, folder: int, prefix: str, depth: int) -> Iterator[Found]:
        budget = self.budget
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
        here = self.base / prefix
        subfolders: list[str] = []
        files: list[Found] = []
        for entry in entries:
            if self._hides_below(here, entry.name):
                continue
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
            flags = os.O_RDONLY | os.O_DIRECTORY
            try:
                inner = self.paths.open_at(folder, name, flags, self.base / prefix / name)
            except (OSError, PathRefused):
                continue  # gone since the scan, or a link swapped in: not followed
            try:
                yield from self._folder(inner, f"{prefix}{name}/", depth + 1)
            finally:
                os.close(inner)
