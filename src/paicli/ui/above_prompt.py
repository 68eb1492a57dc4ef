"""Printing above a live prompt: while the REPL's prompt is on the screen, sys.stdout and
sys.stderr are a stream that writes each line above it (the role of prompt_toolkit's
`patch_stdout`, without its switch to cooked mode). It writes nothing of its own: what goes
through it was made safe by `paicli.ui.output` and `paicli.ui.console`."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import threading
from collections import deque
from collections.abc import Iterator
from typing import Any, TextIO

from prompt_toolkit.application import Application


class _Screen:
    """The lines to write above `app`'s prompt, in the order they were finished, whichever
    thread finished them; written from the event loop's thread, between two frames."""

    def __init__(self, app: Application[Any], stream: TextIO) -> None:
        self._app = app
        self.stream = stream
        self._loop = asyncio.get_running_loop()
        self._thread = threading.get_ident()
        self._queue: deque[str] = deque()
        self._lock = threading.Lock()

    def put(self, text: str) -> None:
        with self._lock:
            self._queue.append(text)
        if threading.get_ident() == self._thread:
            self.write_out()
        else:
            self._loop.call_soon_threadsafe(self.write_out)

    def write_out(self) -> None:
        with self._lock:
            text = "".join(self._queue)
            self._queue.clear()
        if not text:
            return
        app = self._app
        live = app.is_running and not app.is_done
        if live:
            app.renderer.erase()  # the cursor goes back to where the prompt began
        self.stream.write(text)
        self.stream.flush()
        if live:
            app.renderer.request_absolute_cursor_position()
            app.invalidate()


class AbovePrompt:
    """sys.stdout or sys.stderr while a prompt is on the screen: each finished line is written
    above the prompt, which is then drawn again below it; each stream keeps its own unfinished
    line.

    Unlike prompt_toolkit's `patch_stdout`, the terminal stays in raw mode while the text is
    written: that one switches it to cooked mode for each write, and a key pressed in that
    moment is the terminal's, not the prompt's (Ctrl+D became an end of file and was lost,
    Ctrl+C a SIGINT).
    """

    def __init__(self, screen: _Screen) -> None:
        self._screen = screen
        self._stream = screen.stream
        self._pending = ""  # the end of a line not finished yet

    def write(self, text: str) -> int:
        self._pending += text
        if "\n" in text:  # line-buffered, like a terminal's stdout
            self.flush()
        return len(text)

    def flush(self) -> None:
        lines, newline, self._pending = self._pending.rpartition("\n")
        if newline:
            self._screen.put(lines + newline)

    def close(self) -> None:
        """The prompt is gone: what is left goes out as it is."""
        text, self._pending = self._pending, ""
        if text:
            self._screen.put(text)

    def isatty(self) -> bool:
        return self._stream.isatty()

    def fileno(self) -> int:
        return self._stream.fileno()

    @property
    def encoding(self) -> str:
        return self._stream.encoding

    @property
    def errors(self) -> str | None:
        return self._stream.errors


@contextlib.contextmanager
def above_prompt(app: Application[Any]) -> Iterator[None]:
    """Print above `app`'s prompt while it runs (see `AbovePrompt`)."""
    saved = sys.stdout, sys.stderr
    screen = _Screen(app, sys.stdout)
    sys.stdout, sys.stderr = out, err = AbovePrompt(screen), AbovePrompt(screen)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved
        out.close()
        err.close()
        screen.write_out()  # (what other threads finished and the loop has not written)
