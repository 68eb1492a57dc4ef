"""Confinement of the built-in tools to one directory tree, the project root.

Every path a tool touches is resolved to a real path (symlinks followed, `..` folded) and must
lie inside the real root. A path that does not exist yet resolves through its nearest existing
parent, so writing through a symlinked directory that points outside is refused too. The check
runs in `precheck` and again right before the file system is touched (defense in depth); a
symlink swapped in between the check and the use is not guarded against.
"""

from __future__ import annotations

import os
from pathlib import Path

from .errors import ToolError

__all__ = ["Confinement", "PathRefused"]


class PathRefused(ToolError):
    """A path argument leaves the root (or cannot be a path at all); the message says which."""


class Confinement:
    """Resolves path arguments against `root` and refuses those that leave it."""

    def __init__(self, root: Path) -> None:
        self.root = Path(os.path.realpath(root))

    def resolve(self, raw: str) -> Path:
        """The real path `raw` names (relative to the root, or absolute), inside the root."""
        if "\x00" in raw:
            raise PathRefused(f"refused path {raw!r}: it contains a NUL byte")
        candidate = Path(raw).expanduser() if raw.startswith("~") else Path(raw)
        if not candidate.is_absolute():
            candidate = self.root / candidate
        # Non-strict realpath follows every symlink of the part that exists and folds `..`
        # in the rest, which is exactly "resolve through the nearest existing parent".
        real = Path(os.path.realpath(candidate))
        if not self.contains(real):
            how = "through a symlink " if _lexically_inside(candidate, self.root) else ""
            raise PathRefused(
                f"refused path {raw!r}: it leads {how}outside the project root {self.root}"
            )
        return real

    def contains(self, real: Path) -> bool:
        """Whether the already-resolved `real` lies inside the root (or is the root)."""
        return real == self.root or real.is_relative_to(self.root)

    def display(self, real: Path) -> str:
        """`real` as the model should see it: relative to the root ("." for the root)."""
        try:
            relative = real.relative_to(self.root)
        except ValueError:
            return str(real)
        return relative.as_posix() or "."


def _lexically_inside(candidate: Path, root: Path) -> bool:
    normal = Path(os.path.normpath(candidate))
    return normal == root or normal.is_relative_to(root)
