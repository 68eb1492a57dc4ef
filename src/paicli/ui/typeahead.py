"""Questions read as a line from the terminal (the project's servers, rules and hooks, the
`--resume` list), asked before any prompt: `answering` puts the terminal in line mode (the
REPL holds keys in a mode without lines from its start) and forgets what was typed before
the question showed, which is not its answer (a line typed ahead must not decline a server
for good). The REPL's own questions keep such keys for the next prompt instead
(`paicli.ui.one_key.typed_before`). It loads nothing else, so the `paicli mcp` commands pay
nothing for it."""

from __future__ import annotations

import contextlib
import sys
import termios
from collections.abc import Iterator


@contextlib.contextmanager
def answering() -> Iterator[None]:
    """Around showing a question and reading its line: the terminal echoes and edits the
    line and Enter ends it, what was typed and not yet read is flushed first (in line mode
    already, so every key typed after it arrives as a line's), and the terminal is back as
    it was afterwards. Stdin not a terminal: nothing changes."""
    try:
        fd = sys.stdin.fileno()
        saved = termios.tcgetattr(fd) if sys.stdin.isatty() else None
    except (termios.error, ValueError, OSError):
        saved = None
    if saved is None:
        yield
        return
    lines = [*saved[:6], list(saved[6])]
    lines[0] |= termios.ICRNL
    lines[3] |= termios.ECHO | termios.ICANON
    termios.tcsetattr(fd, termios.TCSANOW, lines)
    termios.tcflush(fd, termios.TCIFLUSH)
    try:
        yield
    finally:
        with contextlib.suppress(termios.error):
            termios.tcsetattr(fd, termios.TCSANOW, saved)
