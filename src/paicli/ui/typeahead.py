"""Keys typed before a question was shown are not its answer: `drop_typeahead` forgets them
(the terminal's input queue is flushed). Used before the project-server question, asked
before any prompt (the REPL's own questions keep such keys for the next prompt instead:
`paicli.ui.one_key.typed_before`); it loads nothing else, so the `paicli mcp` commands pay
nothing for it."""

from __future__ import annotations

import contextlib
import sys
import termios


def drop_typeahead() -> None:
    """Forget what was typed and not yet read (a line typed ahead, meant for the REPL's
    prompt, must not answer a question, least of all as a lasting "no")."""
    with contextlib.suppress(OSError, ValueError, termios.error):
        if sys.stdin.isatty():
            termios.tcflush(sys.stdin.fileno(), termios.TCIFLUSH)
