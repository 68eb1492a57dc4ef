"""A stdio server's stderr: the last lines kept in memory, and the log file it is copied to.

stderr is always drained (never onto the user's terminal): `StderrTail` keeps the last
lines, cut into marked pieces when a line is too long, and tells a watcher each one;
`StderrLog` appends the raw bytes to a private file, each line stamped with the time it
arrived, rotating past a size; given a line filter (an application's redactor), whole lines
pass through it first.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import logging
import os
from collections import deque
from collections.abc import Callable
from typing import IO

from ._transport import TransportWatcher

__all__ = ["StderrLog", "StderrTail", "log_time", "open_log"]

log = logging.getLogger("paicli.mcp.stdio")

STDERR_RING_LINES = 200
# A stderr "line" longer than this is split, so a server that never writes a newline to
# stderr cannot grow our memory. The pieces are marked, so a reader knows a line was cut.
STDERR_MAX_LINE = 8192
CUT_MARK = " …[cut]"
# With a line filter, a line longer than this goes through it (and to the file) in pieces.
FILTER_MAX_LINE = 64 * 1024
# A server's stderr log file rotates past this size (one older file is kept).
STDERR_FILE_MAX = 4 * 1024 * 1024
CONTINUED_MARK = "[cont] "


def log_time() -> bytes:
    """The local time a log line starts with, to the millisecond, and a space."""
    return datetime.datetime.now().isoformat(sep=" ", timespec="milliseconds").encode() + b" "


def open_log(path: str | os.PathLike[str], line_filter: Callable[[str], str] | None) -> StderrLog:
    """The log at `path`, its folder made if need be. A server's stderr may quote its
    secrets: a new file is private (0600), and a new folder 0700, whatever the umask says."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), 0o700, exist_ok=True)
    return StderrLog(os.fspath(path), line_filter=line_filter)


class StderrLog:
    """A server's stderr log file, appended to and rotated: past `max_bytes` it becomes
    `NAME.1` (replacing the one before) and a new file starts, so a chatty server keeps at
    most two files' worth. Files are created private (0600). Each line starts with the
    time its first bytes arrived (`clock`), so a reader can tell when a server said what;
    a line that arrives in pieces is stamped once."""

    def __init__(
        self,
        path: str,
        max_bytes: int = STDERR_FILE_MAX,
        clock: Callable[[], bytes] = log_time,
        line_filter: Callable[[str], str] | None = None,
    ) -> None:
        self.path = path
        self.max_bytes = max_bytes
        self._clock = clock
        # With a filter, only whole lines are written (a secret split between two reads
        # is still one piece of text to it); a line longer than FILTER_MAX_LINE goes in
        # pieces. Undecodable bytes pass through it as surrogates and come out unchanged.
        self._filter = line_filter
        self._pending = b""
        self._file = self._open()
        self._size = os.fstat(self._file.fileno()).st_size
        # Whether the next byte starts a line, and whether a line break must come first: a
        # file an earlier run left mid-line, so this run's first stamp starts a line too.
        self._line_start = True
        self._break_first = not self._ends_a_line()
        if self._size > max_bytes:  # what an earlier run left past the limit
            self._rotate()

    def _open(self) -> IO[bytes]:
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC
        return os.fdopen(os.open(self.path, flags, 0o600), "ab")

    def _ends_a_line(self) -> bool:
        if self._size == 0:
            return True
        with open(self.path, "rb") as file:
            file.seek(-1, os.SEEK_END)
            return file.read(1) == b"\n"

    def write(self, data: bytes) -> None:
        if self._filter is not None:
            data = self._filtered(data)
        data = self._stamped(data)
        self._file.write(data)
        self._file.flush()
        self._size += len(data)
        if self._size > self.max_bytes:
            self._rotate()

    def _stamped(self, data: bytes) -> bytes:
        """`data` with the time in front of each line it starts."""
        if not data:
            return data
        stamp = self._clock()
        lines = data.split(b"\n")
        pieces: list[bytes] = [b"\n"] if self._break_first else []
        self._break_first = False
        for line in lines[:-1]:  # each ends with a line break
            pieces += [stamp, line, b"\n"] if self._line_start else [line, b"\n"]
            self._line_start = True
        if lines[-1]:  # a line begun, its end still to come
            pieces += [stamp, lines[-1]] if self._line_start else [lines[-1]]
            self._line_start = False
        return b"".join(pieces)

    def _filtered(self, data: bytes) -> bytes:
        """The whole lines `data` completes, each through the filter (the rest waits)."""
        assert self._filter is not None
        *lines, rest = (self._pending + data).split(b"\n")
        whole = b"".join(self._filter_line(line) + b"\n" for line in lines)
        if len(rest) > FILTER_MAX_LINE:
            # A log must not wait forever, nor hold an endless line: this much goes now,
            # and the line goes on after it.
            self._pending = b""
            return whole + self._filter_line(rest)
        self._pending = rest
        return whole

    def _filter_line(self, line: bytes) -> bytes:
        assert self._filter is not None
        text = self._filter(line.decode("utf-8", "surrogateescape"))
        return text.encode("utf-8", "surrogateescape")

    def _rotate(self) -> None:
        self._file.close()
        os.replace(self.path, self.path + ".1")
        self._file = self._open()
        self._size = 0
        self._break_first = False

    def close(self) -> None:
        if self._pending and self._filter is not None:
            pending, self._pending = self._pending, b""
            with contextlib.suppress(OSError):
                self._file.write(self._stamped(self._filter_line(pending)))
        self._file.close()


class StderrTail:
    """The last lines of a server's stderr, optionally mirrored raw to a file."""

    def __init__(self, mirror: StderrLog | None) -> None:
        self.lines: deque[str] = deque(maxlen=STDERR_RING_LINES)
        self.done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._mirror = mirror
        # Told each line as it is kept (message tracing).
        self.watcher: TransportWatcher | None = None
        self._partial = b""
        # Whether the line being read continues one that was cut.
        self._continued = False

    def feed(self, data: bytes) -> None:
        self.feed_mirror(data)
        lines = (self._partial + data).split(b"\n")
        self._partial = lines.pop()
        for line in lines:
            self._add(line)
        self._partial = self._cut(self._partial)

    def feed_mirror(self, data: bytes) -> None:
        if self._mirror is None:
            return
        try:
            self._mirror.write(data)
        except OSError as exc:
            log.warning("cannot mirror server stderr to file: %s", exc)
            self._mirror = None

    def kept_in(self) -> str | None:
        """The file this stderr is mirrored to, if any."""
        return self._mirror.path if self._mirror is not None else None

    def note(self, text: str) -> None:
        """A line of paicli's own in the mirror file only (what became of stdout noise)."""
        if self._mirror is not None:
            self.feed_mirror(text.encode("utf-8", "replace") + b"\n")

    def warn(self, text: str) -> None:
        """paicli's own warning about the server: logged, and marked in the mirror file."""
        log.warning("%s", text)
        self.note(f"----- paicli: {text} -----")

    def eof(self) -> None:
        if self._partial:
            self._add(self._partial)
            self._partial = b""
        if not self.done.done():
            self.done.set_result(None)

    def close(self) -> None:
        if self._mirror is not None:
            self._mirror.close()
            self._mirror = None

    def _add(self, line: bytes) -> None:
        """Keep a complete line (cut into marked pieces if it is too long)."""
        self._keep(self._cut(line), cut=False)

    def _cut(self, line: bytes) -> bytes:
        """Keep the full-size pieces of a long line, each marked as cut; return the rest."""
        while len(line) > STDERR_MAX_LINE:
            end = STDERR_MAX_LINE
            # Cut between characters: step back over UTF-8 continuation bytes (at most 3).
            while end > STDERR_MAX_LINE - 3 and line[end] & 0xC0 == 0x80:
                end -= 1
            self._keep(line[:end], cut=True)
            line = line[end:]
        return line

    def _keep(self, piece: bytes, *, cut: bool) -> None:
        text = piece.decode("utf-8", "replace").rstrip("\r")
        if self._continued:
            text = CONTINUED_MARK + text
        line = text + CUT_MARK if cut else text
        self.lines.append(line)
        self._continued = cut
        if self.watcher is not None:
            self.watcher.stderr_line(line)
