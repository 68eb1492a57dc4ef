"""The file tools: read_file, write_file, edit_file.

Each runs synchronously (the toolbox moves it to a thread) on a path already confined by
`Confinement`, and turns every failure into an error outcome naming the path. Writes are
atomic: the new content goes to a temporary file in the same directory, which then replaces the
target, so a failure at any step leaves the old file as it was.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

from ._paths import Confinement
from .base import ToolOutcome

__all__ = ["MAX_WRITE_BYTES", "edit_file", "is_binary", "read_file", "write_file"]

MAX_WRITE_BYTES = 5 * 1024 * 1024
# Enough lines for most source files in one call; the model pages with offset for the rest.
DEFAULT_READ_LINES = 2000
# A minified bundle is one huge line; cut each line so one line cannot fill the output.
MAX_LINE_CHARS = 2000
# Text files have no NUL bytes in their first few KB; binaries almost always do.
BINARY_SNIFF_BYTES = 8192


def is_binary(head: bytes) -> bool:
    """Whether a file starting with `head` looks binary (a NUL byte in it)."""
    return b"\x00" in head[:BINARY_SNIFF_BYTES]


def _error(text: str) -> ToolOutcome:
    return ToolOutcome(text=text, is_error=True)


def _decode(data: bytes, shown: str) -> str | ToolOutcome:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return _error(f"{shown} is not UTF-8 text (invalid byte at offset {exc.start})")


def read_file(
    paths: Confinement, path: Path, arguments: Mapping[str, object], max_chars: int
) -> ToolOutcome:
    """Lines of a text file, numbered, from `offset` (1-based), at most `limit` of them."""
    shown = paths.display(path)
    offset = _int(arguments.get("offset"), 1)
    limit = _int(arguments.get("limit"), DEFAULT_READ_LINES)
    if path.is_dir():
        return _error(f"{shown} is a directory; use list_dir to see its entries")
    with path.open("rb") as f:
        data = f.read()
    if is_binary(data):
        return _error(f"{shown} looks like a binary file (it contains NUL bytes); not shown")
    text = _decode(data, shown)
    if isinstance(text, ToolOutcome):
        return text
    lines = text.splitlines()
    total = len(lines)
    if total == 0:
        return ToolOutcome(text=f"{shown} is empty", details={"lines": 0})
    if offset > total:
        return _error(f"{shown} has {total} lines; offset {offset} is past the end")
    out: list[str] = []
    used = 0
    last = offset - 1
    long_lines = False
    for number in range(offset, min(total, offset - 1 + limit) + 1):
        line = lines[number - 1]
        if len(line) > MAX_LINE_CHARS:
            line = line[:MAX_LINE_CHARS] + " [line cut]"
            long_lines = True
        entry = f"{number:6}\t{line}"
        if out and used + len(entry) + 1 > max_chars:
            break
        out.append(entry)
        used += len(entry) + 1
        last = number
    notes: list[str] = []
    if last < total:
        notes.append(
            f"[showing lines {offset}-{last} of {total}; "
            f"call read_file with offset={last + 1} to read further]"
        )
    if long_lines:
        notes.append(f"[lines longer than {MAX_LINE_CHARS} characters were cut]")
    body = "\n".join(out + notes)
    return ToolOutcome(
        text=body,
        details={"lines": total, "first": offset, "last": last, "truncated": last < total},
    )


def write_file(paths: Confinement, path: Path, arguments: Mapping[str, object]) -> ToolOutcome:
    """Create or replace a file with `content`, creating parent directories as needed."""
    shown = paths.display(path)
    content = str(arguments["content"])
    try:
        data = content.encode("utf-8")
    except UnicodeEncodeError as exc:
        return _error(f"content for {shown} cannot be encoded as UTF-8: {exc.reason}")
    if len(data) > MAX_WRITE_BYTES:
        return _error(too_large(len(data)))
    if path.is_dir():
        return _error(f"{shown} is a directory; cannot write a file there")
    existed = path.exists()
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, data)
    verb = "Overwrote" if existed else "Created"
    lines = content.count("\n") + (0 if content.endswith("\n") or not content else 1)
    return ToolOutcome(
        text=f"{verb} {shown} ({len(data)} bytes, {lines} lines)",
        details={"bytes": len(data), "created": not existed},
    )


def too_large(size: int) -> str:
    return (
        f"content is {size} bytes, over the {MAX_WRITE_BYTES // (1024 * 1024)} MB limit of "
        "write_file; write it in smaller files"
    )


def edit_file(paths: Confinement, path: Path, arguments: Mapping[str, object]) -> ToolOutcome:
    """Replace `old_string` with `new_string`: once (it must be unique) or everywhere."""
    shown = paths.display(path)
    old = str(arguments["old_string"])
    new = str(arguments["new_string"])
    replace_all = bool(arguments.get("replace_all", False))
    if old == new:
        return _error("old_string and new_string are identical; nothing to change")
    if path.is_dir():
        return _error(f"{shown} is a directory, not a file")
    data = path.read_bytes()
    if is_binary(data):
        return _error(f"{shown} looks like a binary file; edit_file only edits text")
    text = _decode(data, shown)
    if isinstance(text, ToolOutcome):
        return text
    count = text.count(old)
    if count == 0:
        return _error(
            f"old_string was not found in {shown}; read the file and copy the exact text "
            "(whitespace and indentation included)"
        )
    if count > 1 and not replace_all:
        return _error(
            f"old_string occurs {count} times in {shown}; include more surrounding context "
            "to make it unique, or set replace_all to replace every occurrence"
        )
    updated = text.replace(old, new) if replace_all else text.replace(old, new, 1)
    atomic_write(path, updated.encode("utf-8"))
    noun = "occurrence" if count == 1 else "occurrences"
    return ToolOutcome(text=f"Replaced {count} {noun} in {shown}", details={"replacements": count})


def atomic_write(path: Path, data: bytes) -> None:
    """Write `data` to a temporary file beside `path`, then rename it over `path`.

    The old file keeps its permissions; a new one gets the usual mode for the umask. On any
    failure the temporary file is removed and `path` is untouched."""
    try:
        mode = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = 0o666 & ~_umask()
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except FileNotFoundError:
            pass
        raise


def _umask() -> int:
    # os.umask can only be read by setting it, which races with other threads; Linux shows it
    # in /proc instead.
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return 0o022


def _int(value: object, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default
