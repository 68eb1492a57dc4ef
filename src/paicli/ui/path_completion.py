"""Tab completion of `@path` mentions: the project's files and folders, matched fuzzily.

The tree is walked as glob walks it (`Walk`: through folder descriptors, never into a
folder link, skipping .git, node_modules and credential stores) within a small budget, and
kept for a few seconds, so Tab stays instant in a large repository (what lies beyond the
budget is reached by typing a folder: `@src/` lists that folder). A name that would not
survive the prompt line or the screen (control characters) is never offered.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from paicli.escape import terminal_safe
from paicli.tools.builtin.paths import Confinement, PathRefused
from paicli.tools.builtin.walk import SearchLimits, Walk
from paicli.tools.protected import ProtectedPaths

__all__ = ["PathIndex", "fuzzy_rank"]

# The walk behind one Tab: enough for most projects, short enough not to be felt.
WALK_LIMITS = SearchLimits(seconds=0.25, entries=20_000)
# How long a walk is reused (files come and go while one types).
FRESH_SECONDS = 5.0
OFFERED = 40


class PathIndex:
    """The project's paths (folders ending in `/`), walked on demand and kept briefly."""

    def __init__(
        self,
        root: Path,
        home: Path | None,
        *,
        limits: SearchLimits = WALK_LIMITS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._root = root
        self._protected = ProtectedPaths(home)
        self._limits = limits
        self._clock = clock
        self._paths: list[str] = []
        self._walked: float | None = None

    def paths(self) -> list[str]:
        now = self._clock()
        if self._walked is None or now - self._walked > FRESH_SECONDS:
            self._paths = self._walk(self._root)
            self._walked = now
        return self._paths

    def complete(self, typed: str) -> list[str]:
        """The paths `typed` (what follows `@`) may mean, best first."""
        if "/" in typed:  # a folder typed out: its own entries too (beyond the budget)
            folder = typed.rsplit("/", 1)[0]
            inside = [f"{folder}/{p}" for p in self._walk(self._root / folder, depth=1)]
            found = dict.fromkeys([*inside, *self.paths()])
            return fuzzy_rank(typed, list(found))[:OFFERED]
        return fuzzy_rank(typed, self.paths())[:OFFERED]

    def _walk(self, base: Path, depth: int | None = None) -> list[str]:
        try:
            paths = Confinement(self._root)
            real = paths.resolve(str(base))
            if not real.is_dir():
                return []
            walk = Walk(paths, real, self._limits, self._protected)
            found: list[str] = []
            for entry in walk:
                if depth is not None and entry.relative.count("/") >= depth:
                    continue
                name = entry.relative + ("/" if entry.is_dir else "")
                if terminal_safe(name) == name and "\n" not in name:
                    found.append(name)
            return found
        except (OSError, PathRefused):
            return []


def fuzzy_rank(typed: str, candidates: list[str]) -> list[str]:
    """The candidates holding `typed`'s characters in order (case ignored), best first: the
    name starting with it, then containing it, then the path containing it, then scattered;
    shorter paths first within each."""
    wanted = typed.lower()
    ranked: list[tuple[int, int, str]] = []
    for path in candidates:
        lower = path.lower()
        name = lower.rstrip("/").rsplit("/", 1)[-1]
        if name.startswith(wanted):
            score = 0
        elif wanted in name:
            score = 1
        elif wanted in lower:
            score = 2
        elif _subsequence(wanted, lower):
            score = 3
        else:
            continue
        ranked.append((score, len(path), path))
    ranked.sort()
    return [path for _, _, path in ranked]


def _subsequence(wanted: str, text: str) -> bool:
    position = 0
    for char in wanted:
        position = text.find(char, position) + 1
        if position == 0:
            return False
    return True
