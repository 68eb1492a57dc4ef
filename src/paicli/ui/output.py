"""The one way paicli writes to the terminal: every other module hands its text to this one.

Plain lines pass `terminal_safe`, JSON passes `json_for_terminal`, and rich renderables go
through `SafeConsole`, which escapes the text of every segment it renders, so only rich's own
styles and cursor moves reach the terminal as escape sequences. Nothing a server or model says
can move the cursor, retitle the window, reorder or hide text, or start a line that looks like
paicli's own prompt. Results go to stdout, everything else to stderr. The one deliberate
exception is `answer`: a one-shot answer piped into a file arrives byte for byte but for the
known secret values. Everything else is redacted on its way out (`screen_secrets`). Log records
(the library's warnings quote servers) come through here too, once `log_to_terminal` ran, as one
line each: a traceback goes to `$PAICLI_HOME/logs/paicli.log` (0600, redacted), never to the
screen, and so do exceptions nobody retrieved ("Future exception was never retrieved").
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from paicli.escape import json_for_terminal, terminal_safe
from paicli.ui import screen_secrets
from paicli.ui.screen_secrets import screen_text, screen_value

if TYPE_CHECKING:
    from rich.console import RenderableType

    from paicli.ui.console import SafeConsole

# rich is imported only when a renderable is shown: `paicli mcp list` with nothing
# configured, or a one-shot answer, need plain lines alone.
_consoles: dict[bool, SafeConsole] = {}

QUOTE_MARK = " │ "


def out(text: str = "", *, end: str = "\n") -> None:
    """`text`, escaped, on stdout."""
    sys.stdout.write(terminal_safe(screen_text(text)) + end)
    sys.stdout.flush()


def stdout_gone() -> None:
    """Its reader went away (a closed pipe): what is still to be written, Python's flush at
    exit included, goes nowhere instead of raising again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def err(text: str) -> None:
    """`text`, escaped, as a line on stderr (progress, warnings, errors)."""
    sys.stderr.write(terminal_safe(screen_text(text)) + "\n")
    sys.stderr.flush()


def quoted(source: str, text: str) -> None:
    """Text that `source` (a server) wrote, on stdout: every line escaped and marked with the
    source's name, so none of it can pass for paicli's own output."""
    for line in quoted_lines(source, text):
        out(line)


def quoted_lines(source: str, text: str) -> list[str]:
    """The lines `quoted` prints, escaped. Only "\\n" ends a line: a carriage return is shown
    as `\\x0d`, never obeyed."""
    mark = terminal_safe(source) + QUOTE_MARK
    return [mark + terminal_safe(line) for line in screen_text(text).split("\n")]


def out_json(value: object, *, indent: int | None = 2) -> None:
    """`value` as JSON on stdout (one line with `indent=None`): valid JSON that decodes to
    `value` exactly, with every unsafe character inside a string spelled `\\uXXXX`."""
    sys.stdout.write(json_for_terminal(screen_value(value), indent=indent) + "\n")
    sys.stdout.flush()


def answer(text: str) -> None:
    """A piece of a one-shot answer on stdout: escaped on a terminal; into a pipe or a file it
    goes byte for byte, since there it is the product (a script, a patch), not a display."""
    if sys.stdout.isatty():
        sys.stdout.write(terminal_safe(screen_text(text)))
    else:
        sys.stdout.write(screen_secrets.known_only(text))
    sys.stdout.flush()


def show(renderable: RenderableType, *, stderr: bool = False, soft_wrap: bool = False) -> None:
    """A rich renderable (a table, a styled line) on stdout, or on stderr, through a
    `SafeConsole`; `soft_wrap` leaves long lines to the terminal, unbroken in a pipe."""
    from paicli.ui.console import SafeConsole  # noqa: PLC0415 - see `_consoles`

    console = _consoles.get(stderr)
    if console is None:
        console = _consoles[stderr] = SafeConsole(stderr=stderr)
    console.print(renderable, soft_wrap=soft_wrap)


@contextlib.contextmanager
def stdout_kept_for_json() -> Iterator[Callable[[object], None]]:
    """A writer of JSON lines (as `out_json`) to stdout, while everything else that writes
    to `sys.stdout` (a library's own messages: Ray prints its warnings there) goes to stderr,
    so stdout stays one JSON value per line (`paicli batch --ray`)."""
    stream = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8")
    saved = sys.stdout
    sys.stdout = sys.stderr

    def write(value: object) -> None:
        stream.write(json_for_terminal(screen_value(value), indent=None) + "\n")
        stream.flush()

    try:
        yield write
    finally:
        sys.stdout = saved
        stream.close()
