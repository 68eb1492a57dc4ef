"""Reading a file before anything in it is trusted: the one reader of every file whose path a
user or a repository names (mcp.json, .mcp.json, config.toml, `--mcp-config`, imports, locks,
sessions, and, streamed, traces).

A cloned repository brings its own config files, and a path given on the command line may be
anything, so whatever sits at such a path must neither hang paicli, exhaust its memory nor crash
it. Only a regular file is read (checked before the open and again on the open descriptor;
opened non-blocking, so a FIFO cannot hang the open), at most `MAX_CONFIG_BYTES` (or the
caller's cap: `open_regular` streams a larger file, still capped); JSON may nest at most
`MAX_DEPTH` levels and never repeat a key in an object (last-wins would hide a value from a
reader of the file). Every problem is one `ConfigFileError` whose message names the file, on
one line.
"""

from __future__ import annotations

import io
import json
import os
import re
import stat
from pathlib import Path
from typing import BinaryIO

from paicli.errors import PaicliError

__all__ = [
    "MAX_CONFIG_BYTES",
    "MAX_DEPTH",
    "ConfigFileError",
    "check_depth",
    "open_regular",
    "parse_json",
    "read_config_text",
]

# Real config files are a few KiB; a cap far above that still stops /dev/zero-like files.
MAX_CONFIG_BYTES = 1024 * 1024
# No config needs more than a handful of levels; 64 keeps every recursive walk (the JSON and
# TOML parsers, hashing, printing) far from Python's recursion limit.
MAX_DEPTH = 64

_KINDS = {
    stat.S_IFDIR: "a folder",
    stat.S_IFIFO: "a FIFO",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a device",
    stat.S_IFBLK: "a device",
}
# The characters that matter to nesting: brackets, and quotes and backslashes (strings).
_STRUCTURE = re.compile(r'[\[\]{}"\\]')


class ConfigFileError(PaicliError):
    """A config file cannot be used as it is; the message names the file."""


def read_config_text(
    path: Path, shown: str, *, inside: Path | None = None, max_bytes: int = MAX_CONFIG_BYTES
) -> str | None:
    """The text of the regular file at `path` (a UTF-8 BOM dropped), None when there is none.

    `shown` names the file in messages; `max_bytes` is the most read (another program's
    file, like Claude Code's, may be larger than paicli's own). With `inside` (a project
    folder) the file must really be in that folder: a symlink leading out of it is refused,
    since a repository could otherwise point paicli at any file of the user's.
    """
    file = open_regular(path, shown, inside=inside, max_bytes=max_bytes)
    if file is None:
        return None
    with file:
        data = file.read()
    try:
        # utf-8-sig: editors on Windows like to start files with a BOM.
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigFileError(f"{shown}: not UTF-8 text") from exc


def open_regular(
    path: Path, shown: str, *, inside: Path | None = None, max_bytes: int = MAX_CONFIG_BYTES
) -> BinaryIO | None:
    """The regular file at `path` opened for reading in binary, None when there is none:
    `read_config_text`'s checks, for a file read as a stream (a trace, line by line).

    A read that would pass `max_bytes` (the file grew after it was checked) raises
    `ConfigFileError`, so the cap holds however the file is read.
    """
    try:
        found = os.stat(path)
    except FileNotFoundError:
        return None  # missing, or a symlink to nothing: no file
    except OSError as exc:
        raise ConfigFileError(f"{shown}: cannot read: {exc.strerror or exc}") from exc
    if inside is not None and not Path(os.path.realpath(path)).is_relative_to(
        os.path.realpath(inside)
    ):
        raise ConfigFileError(f"{shown}: cannot read: a symbolic link out of the project")
    _check_regular(found.st_mode, found.st_size, shown, max_bytes)
    try:
        # O_NONBLOCK: should a FIFO replace the file after the stat, the open still returns.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigFileError(f"{shown}: cannot read: {exc.strerror or exc}") from exc
    try:
        opened = os.fstat(fd)
        _check_regular(opened.st_mode, opened.st_size, shown, max_bytes)
    except BaseException:
        os.close(fd)
        raise
    return io.BufferedReader(_Capped(fd, shown, max_bytes))


def parse_json(text: str, shown: str) -> object:
    """The JSON value in `text`: nested at most `MAX_DEPTH` deep, no key twice in an object."""
    _check_json_depth(text, shown)

    def unique_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
        document: dict[str, object] = {}
        for key, value in pairs:
            if key in document:
                raise ConfigFileError(f"{shown}: duplicate key {key!r}")
            document[key] = value
        return document

    try:
        return json.loads(text, object_pairs_hook=unique_keys)
    except json.JSONDecodeError as exc:
        raise ConfigFileError(
            f"{shown}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        ) from exc
    except (ValueError, RecursionError) as exc:  # e.g. an integer beyond Python's digit limit
        raise ConfigFileError(f"{shown}: invalid JSON: {exc}") from exc


def check_depth(value: object, shown: str) -> None:
    """Refuse a parsed document (from TOML, say) nested deeper than `MAX_DEPTH`."""
    level: list[object] = [value]
    for _ in range(MAX_DEPTH):
        level = [
            child
            for item in level
            if isinstance(item, dict | list)
            for child in (item.values() if isinstance(item, dict) else item)
        ]
        if not level:
            return
    if any(isinstance(item, dict | list) for item in level):
        raise ConfigFileError(f"{shown}: nested deeper than {MAX_DEPTH} levels")


def _check_json_depth(text: str, shown: str) -> None:
    # Before parsing: the json module recurses once per level and a deep enough document
    # ends in RecursionError. One pass over the structural characters, skipping strings.
    depth = 0
    in_string = False
    skip_to = 0
    for match in _STRUCTURE.finditer(text):
        at = match.start()
        if at < skip_to:
            continue  # the character a backslash escapes
        char = match.group()
        if in_string:
            if char == "\\":
                skip_to = at + 2
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                line = text.count("\n", 0, at) + 1
                raise ConfigFileError(
                    f"{shown}: nested deeper than {MAX_DEPTH} levels (at line {line})"
                )
        elif char in "]}":
            depth -= 1


def _check_regular(mode: int, size: int, shown: str, max_bytes: int) -> None:
    if not stat.S_ISREG(mode):
        kind = _KINDS.get(stat.S_IFMT(mode), "not a file")
        raise ConfigFileError(f"{shown}: cannot read: not a regular file ({kind})")
    if size > max_bytes:
        raise ConfigFileError(f"{shown}: cannot read: larger than {_size(max_bytes)}")


class _Capped(io.RawIOBase):
    """An open descriptor read at most `limit` bytes far: one byte more is an error naming
    the file (never a silently shortened file). Closing it closes the descriptor."""

    def __init__(self, fd: int, shown: str, limit: int) -> None:
        self._fd = fd
        self._shown = shown
        self._limit = limit
        self._left = limit

    def readable(self) -> bool:
        return True

    # (typeshed's parameter is any writable buffer; BufferedReader passes a memoryview.)
    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        # One byte past the cap is asked for, to tell a file of exactly `limit` bytes from
        # a longer one.
        wanted = min(len(buffer), self._left + 1)
        try:
            data = os.read(self._fd, wanted)
        except OSError as exc:
            raise ConfigFileError(f"{self._shown}: cannot read: {exc.strerror or exc}") from exc
        if len(data) > self._left:
            raise ConfigFileError(f"{self._shown}: cannot read: larger than {_size(self._limit)}")
        self._left -= len(data)
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        if not self.closed:
            os.close(self._fd)
        super().close()


def _size(limit: int) -> str:
    if limit < 1024 * 1024:
        return f"{limit // 1024} KiB"
    return f"{limit // (1024 * 1024)} MiB"
