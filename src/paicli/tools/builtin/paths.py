"""Confinement of the built-in tools to one directory tree, the project root, and the
folders `--add-dir` added beside it (each held the same way; a relative path is the root's).

A path argument is first resolved to a real path (symlinks followed, `..` folded) that must lie
inside the real root; a path that does not exist yet resolves through its nearest existing
parent. That check decides what the user is asked about. The file system is then touched only
through a descriptor of the root held for the toolbox's life: each folder of the real path is
opened relative to the one before with `O_NOFOLLOW | O_DIRECTORY`, and the last name with
`O_NOFOLLOW`, so a symlink swapped in after the check makes the call fail instead of leading
outside. Hard links are not guarded against (see docs/security.md).
"""

from __future__ import annotations

import errno
import os
import stat
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from paicli.tools.errors import ToolError

__all__ = ["Confinement", "PathRefused"]

# A descriptor for reading or searching a folder; close-on-exec so no command inherits it.
_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class PathRefused(ToolError):
    """A path argument leaves the root (or cannot be a path at all); the message says which."""


class Confinement:
    """Resolves path arguments against `root`, refuses those that leave it, and opens what
    they name without following a symlink on the way."""

    def __init__(self, root: Path, also: Sequence[Path] = ()) -> None:
        self.root = Path(os.path.realpath(root))
        # The root first: a path inside both it and an added folder is the root's.
        self._trees: list[tuple[Path, int]] = []
        for tree in (self.root, *(Path(os.path.realpath(folder)) for folder in also)):
            fd = os.open(tree, _DIRECTORY & ~os.O_NOFOLLOW)
            self._trees.append((tree, fd))
            # Closed when the toolbox goes away: an fd has no finalizer of its own.
            weakref.finalize(self, os.close, fd)

    def resolve(self, raw: str) -> Path:
        """The real path `raw` names (relative to the root, or absolute), inside the root."""
        if "\x00" in raw:
            raise PathRefused(f"refused path {raw!r}: it contains a NUL byte")
        try:
            os.fsencode(raw)
        except UnicodeEncodeError as exc:  # JSON's "\ud800": no file name has it
            raise PathRefused(f"refused path {raw!r}: it is not a valid file name") from exc
        candidate = self.lexical(raw)
        # Non-strict realpath follows every symlink of the part that exists and folds `..`
        # in the rest, which is exactly "resolve through the nearest existing parent".
        try:
            real = Path(os.path.realpath(candidate))
        except OSError as exc:  # a link removed while realpath read it
            raise PathRefused(
                f"refused path {raw!r}: it changed while being resolved ({exc.strerror})"
            ) from exc
        if not self.contains(real):
            how = "through a symlink " if self.contains(candidate) else ""
            raise PathRefused(
                f"refused path {raw!r}: it leads {how}outside the project root {self.root}"
                + (" and the folders added with --add-dir" if len(self._trees) > 1 else "")
            )
        return real

    def lexical(self, raw: str) -> Path:
        """`raw` as an absolute path with `..` folded, no symlink followed (the name the model
        wrote, which may differ from the file it reaches)."""
        candidate = Path(raw).expanduser() if raw.startswith("~") else Path(raw)
        return Path(os.path.normpath(self.root / candidate))

    def contains(self, real: Path) -> bool:
        """Whether `real` lies inside the root or an added folder (or is one), as written."""
        return self._tree_of(real) is not None

    def _tree_of(self, real: Path) -> tuple[Path, int] | None:
        for tree, fd in self._trees:
            if real == tree or real.is_relative_to(tree):
                return tree, fd
        return None

    def display(self, real: Path) -> str:
        """`real` as the model should see it: relative to the root ("." for the root)."""
        try:
            relative = real.relative_to(self.root)
        except ValueError:
            return str(real)
        return relative.as_posix() or "."

    @contextmanager
    def open_dir(self, real: Path, *, create: bool = False) -> Iterator[int]:
        """A descriptor of the folder `real` (a path from `resolve`), reached from the root one
        name at a time, never through a symlink; missing folders are made with `create`.
        NotADirectoryError when a name on the way is a file; PathRefused when it is a link."""
        tree, names = self._names(real)
        fd = os.dup(tree)
        try:
            for name in names:
                if create:
                    try:
                        os.mkdir(name, dir_fd=fd)
                    except FileExistsError:
                        pass  # what is there is opened next, and refused if it is a link
                inner = self._open(fd, name, _DIRECTORY, real)
                os.close(fd)
                fd = inner
            yield fd
        finally:
            os.close(fd)

    @contextmanager
    def open_parent(self, real: Path, *, create: bool = False) -> Iterator[int]:
        """The descriptor of the folder holding `real` (as `open_dir`)."""
        if any(real == tree for tree, _ in self._trees):
            raise IsADirectoryError(errno.EISDIR, "the project root is a directory")
        with self.open_dir(real.parent, create=create) as fd:
            yield fd

    def open_at(self, fd: int, name: str, flags: int, real: Path) -> int:
        """`name` in the folder `fd` opened with `flags`, refusing a symlink in its place."""
        return self._open(fd, name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, real)

    def stat_at(self, fd: int, name: str, real: Path) -> os.stat_result | None:
        """`name` in the folder `fd` as it is now, None when missing; PathRefused for a
        symlink (the checked path had none there)."""
        try:
            found = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            return None
        if stat.S_ISLNK(found.st_mode):
            raise PathRefused(_became_link(self.display(real), name))
        return found

    def _names(self, real: Path) -> tuple[int, tuple[str, ...]]:
        """The descriptor of the tree holding `real`, and the names leading to it there."""
        found = self._tree_of(real)
        if found is None:
            raise PathRefused(f"refused path {str(real)!r}: outside the project root {self.root}")
        tree, fd = found
        return fd, real.relative_to(tree).parts

    def _open(self, fd: int, name: str, flags: int, real: Path) -> int:
        try:
            return os.open(name, flags, dir_fd=fd)
        except OSError as exc:
            # O_NOFOLLOW reports a link as ELOOP, or as ENOTDIR with O_DIRECTORY.
            if exc.errno in (errno.ELOOP, errno.ENOTDIR) and _is_link(name, fd):
                raise PathRefused(_became_link(self.display(real), name)) from exc
            raise


def _became_link(shown: str, name: str) -> str:
    return (
        f"refused path {shown!r}: {name!r} is a symbolic link now (it changed after the path "
        "was checked); nothing was read or written through it"
    )


def _is_link(name: str, fd: int) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode)
    except OSError:
        return False
