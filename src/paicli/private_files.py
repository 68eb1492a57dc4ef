"""Writing files in place, atomically, and privately under paicli's home.

`write_atomically` is the one way paicli replaces a file: the data goes to a temporary file in
the same folder, is flushed to disk (fsync), and is renamed over the target, so a reader or a
crash sees the old content or the new, never a part. Under `$PAICLI_HOME` files are 0600 and
folders created 0700: they hold trust decisions, permissions and tool output. The built-in
write tools use it too, keeping a project file's mode.
"""

from __future__ import annotations

import os
import tempfile
from contextlib import suppress
from pathlib import Path

__all__ = ["PRIVATE_FILE_MODE", "make_private_dir", "write_atomically"]

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
