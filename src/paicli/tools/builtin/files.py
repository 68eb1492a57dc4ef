"""Reading files: read_file, and opening a regular file for any tool that reads one.

read_file runs synchronously (the toolbox moves it to a thread) on a path already confined by
`Confinement`, and turns every failure into an error outcome naming the path. Files are opened
through `Confinement`'s descriptors, never by path, so a symlink swapped in after the check
fails the call. Writing is `writes`.
"""

from __future__ import annotations

import codecs
import io
import os
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import BinaryIO

from paicli.tools.base import ToolOutcome
from paicli.tools.builtin.paths import Confinement
from paicli.tools.errors import ToolError

__all__ = ["NotRegularFile", "is_binary", "open_regular", "open_regular_at", "read_file"]

# Enough lines for most source files in one call; the model pages with offset for the rest.
DEFAULT_READ_LINES = 2000
# A minified bundle is one huge line; cut each line so one line cannot fill the output.
MAX_LINE_CHARS = 2000
# Text files have no NUL bytes in their first few KB; binaries almost always do.
BINARY_SNIFF_BYTES = 8192
# Bytes of one line kept for display: MAX_LINE_CHARS characters of up to 4 UTF-8 bytes each,
# plus the newline; the rest of a longer line is skipped without being held in memory.
MAX_LINE_BYTES = MAX_LINE_CHARS * 4 + 2
# Counting the lines after the page means reading to the end; below this size that is cheap,
# above it read_file only says more lines follow.
COUNT_LINES_MAX_BYTES = 16 * 1024 * 1024
COUNT_CHUNK = 1024 * 1024

_KINDS = {
    stat.S_IFIFO: "a named pipe",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFDIR: "a directory",
}


class NotRegularFile(ToolError):
    """A file tool was pointed at a named pipe, socket or device; reading one can block
    forever (a FIFO with no writer) or never end (/dev/zero)."""

    def __init__(self, mode: int) -> None:
        self.mode = mode
        kind = _KINDS.get(stat.S_IFMT(mode), "not a regular file")
        super().__init__(f"it is {kind}, not a regular file; file tools read only regular files")


def open_regular(paths: Confinement, real: Path) -> BinaryIO:
    """`real` (a path from `paths.resolve`) opened for binary reading through the root's
    descriptor, or NotRegularFile when it is anything but a regular file."""
    if real == paths.root:
        raise NotRegularFile(stat.S_IFDIR)
    with paths.open_parent(real) as folder:
        return open_regular_at(paths, folder, real)


def open_regular_at(paths: Confinement, folder: int, real: Path) -> BinaryIO:
    """`real`, whose folder is open as `folder`, opened for binary reading without following
    a symlink. Checked with fstat on the open descriptor: a FIFO is opened without blocking,
    thanks to O_NONBLOCK, then refused."""
    fd = paths.open_at(folder, real.name, os.O_RDONLY | os.O_NONBLOCK, real)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFile(mode)
        # O_NONBLOCK means nothing for a regular file; clear it anyway so reads are ordinary.
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def is_binary(head: bytes) -> bool:
    """Whether a file starting with `head` looks binary (a NUL byte in it)."""
    return b"\x00" in head[:BINARY_SNIFF_BYTES]


def _error(text: str) -> ToolOutcome:
    return ToolOutcome(text=text, is_error=True)


def read_file(
    paths: Confinement,
    path: Path,
    arguments: Mapping[str, object],
    max_chars: int,
    *,
    source: bytes | None = None,
) -> ToolOutcome:
    """Lines of a text file, numbered, from `offset` (1-based), at most `limit` of them;
    `source`: the file's content as an editor has it (the file on disk is still checked).

    Lines are read one at a time up to the page's end, so a huge file costs only its page;
    lines end at "\n" only (a trailing "\r" is dropped), as editors and grep count them."""
    shown = paths.display(path)
    offset = _int(arguments.get("offset"), 1)
    limit = _int(arguments.get("limit"), DEFAULT_READ_LINES)
    try:
        opened = open_regular(paths, path)
    except NotRegularFile as exc:
        if stat.S_ISDIR(exc.mode):
            return _error(f"{shown} is a directory; use list_dir to see its entries")
        raise
    if source is not None:
        opened.close()
        opened = io.BytesIO(source)
    with opened as f:
        if is_binary(f.read(BINARY_SNIFF_BYTES)):
            return _error(f"{shown} looks like a binary file (it contains NUL bytes); not shown")
        f.seek(0)
        size = len(source) if source is not None else os.fstat(f.fileno()).st_size
        out: list[str] = []
        used = 0
        last = offset - 1
        long_lines = False
        number = 0
        position = 0  # Byte offset of the current line, for the UTF-8 error message.
        full = False
        for number, raw, cut in _raw_lines(f):
            if number >= offset:
                if number >= offset + limit:
                    full = True
                    break
                line = _decode_line(raw, cut, position, shown)
                if isinstance(line, ToolOutcome):
                    return line
                if cut or len(line) > MAX_LINE_CHARS:
                    line = line[:MAX_LINE_CHARS] + " [line cut]"
                    long_lines = True
                entry = f"{number:6}\t{line}"
                if out and used + len(entry) + 1 > max_chars:
                    full = True
                    break
                out.append(entry)
                used += len(entry) + 1
                last = number
            position = f.tell()
        total: int | None
        if not full:
            total = number
        elif size <= COUNT_LINES_MAX_BYTES:
            # `number` lines were read (the last of them not shown); count the rest.
            total = number + _count_lines(f)
        else:
            total = None
    if total == 0:
        return ToolOutcome(text=f"{shown} is empty")
    if total is not None and offset > total:
        return _error(f"{shown} has {total} lines; offset {offset} is past the end")
    truncated = total is None or last < total
    notes: list[str] = []
    if truncated:
        of = f" of {total}" if total is not None else "; more lines follow"
        notes.append(
            f"[showing lines {offset}-{last}{of}; "
            f"call read_file with offset={last + 1} to read further]"
        )
    if long_lines:
        notes.append(f"[lines longer than {MAX_LINE_CHARS} characters were cut]")
    body = "\n".join(out + notes)
    return ToolOutcome(text=body, truncated=truncated)


def _raw_lines(f: BinaryIO) -> Iterator[tuple[int, bytes, bool]]:
    """(1-based number, the line's first MAX_LINE_BYTES bytes without its ending, whether it
    was longer) for each line of `f`; memory stays bounded however long a line is."""
    number = 0
    while line := f.readline(MAX_LINE_BYTES):
        number += 1
        cut = not line.endswith(b"\n") and len(line) == MAX_LINE_BYTES
        if cut:
            while (rest := f.readline(COUNT_CHUNK)) and not rest.endswith(b"\n"):
                pass
        yield number, line.removesuffix(b"\n").removesuffix(b"\r"), cut


def _decode_line(raw: bytes, cut: bool, position: int, shown: str) -> str | ToolOutcome:
    # A cut line may end inside a character: the incremental decoder keeps that part back.
    try:
        return codecs.getincrementaldecoder("utf-8")().decode(raw, final=not cut)
    except UnicodeDecodeError as exc:
        return _error(f"{shown} is not UTF-8 text (invalid byte at offset {position + exc.start})")


def _count_lines(f: BinaryIO) -> int:
    """Lines from the current position to the end, counted without keeping them."""
    count = 0
    last = b"\n"
    while chunk := f.read(COUNT_CHUNK):
        count += chunk.count(b"\n")
        last = chunk[-1:]
    return count + (last != b"\n")


def _int(value: object, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default
