"""Writing files in place, atomically, and privately under paicli's home.

`write_atomically` is the one way paicli replaces a file: the data goes to a temporary file in
the same folder, is flushed to disk (fsync), and is renamed over the target, so a reader or a
crash sees the old content or the new, never a part. Under `$PAICLI_HOME` files are 0600 and
folders created 0700: they hold trust decisions, permissions and tool output. The built-in
write tools use it too, keeping a project file's mode. `folder_lock` serialises the
read-change-write of a file edited by several processes at once (two `paicli mcp add`).
"""

from __future__ import annotations

import fcntl
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

__all__ = ["PRIVATE_FILE_MODE", "folder_lock", "make_private_dir", "write_atomically"]

PRIVATE_FILE_MODE = 0o600
PRIVATE_DIR_MODE = 0o700


def make_private_dir(path: Path) -> None:
    """Create `path` and any missing parents as 0700 folders; existing folders are left as
    they are."""
    missing: list[Path] = []
    current = path
    while not current.exists():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for folder in reversed(missing):
        try:
            folder.mkdir()
        except FileExistsError:
            if folder.is_dir():  # another process made it first: theirs stands
                continue
            raise  # a file or a dangling symlink is in the way
        # mkdir's mode passes through the umask, which may leave more than 0700 or less.
        os.chmod(folder, PRIVATE_DIR_MODE)


def write_atomically(
    path: Path, data: bytes, *, mode: int = PRIVATE_FILE_MODE, keep_mode: bool = False
) -> None:
    """Replace `path`'s content with `data` in one step; missing folders are made private.

    The file gets `mode`, or with `keep_mode` the mode it already has (a file the user
    wrote, like mcp.json or a project file, keeps the permissions they chose). On any
    failure the temporary file is removed and `path` is untouched; the error propagates.
    """
    make_private_dir(path.parent)
    if keep_mode:
        with suppress(FileNotFoundError):
            mode = path.stat().st_mode & 0o7777
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        with suppress(OSError):
            os.unlink(temporary)
        raise


@contextmanager
def folder_lock(folder: Path) -> Iterator[None]:
    """Hold an exclusive lock on `folder` (which must exist) until the block ends, waiting
    for another process holding it.

    The lock is taken on the folder itself (`flock` on its descriptor), not on the file
    changed: `write_atomically` replaces the file, so a lock on it would be on the old one,
    and a lock file would be litter in a project's `.paicli/`. Errors are `OSError`.
    """
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # (closing releases the lock)
