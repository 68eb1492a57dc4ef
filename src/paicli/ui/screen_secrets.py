"""The redactor every line paicli shows passes through (`output`, `SafeConsole`).

Before a run knows its secrets it redacts by shape alone (keys and tokens in free text,
`user:pass@` in URLs, `access_token=...`); a run installs its own redactor (`redacting`),
which also knows the exact values: the model key, the servers' env and header values, the
secret-named variables of the environment. So a server's stderr, an error quoting a URL or a
traceback cannot put a secret on the screen. Text cut to a width is redacted before the cut
(`screen_line`): half a secret is no longer found.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from paicli.escape import one_line
from paicli.redact import Redactor

__all__ = ["known_only", "redacting", "screen_line", "screen_text", "screen_value"]

# Nothing shorter than this can hold a secret the redactor would find: rich renders text in
# many short segments, which need no regular expressions.
_SHORTEST_SECRET = 6

_current = Redactor()


def screen_text(text: str) -> str:
    """`text` as it may be shown: secrets replaced with `[REDACTED]`."""
    if len(text) < _SHORTEST_SECRET:
        return text
    return _current.redact_text(text)


def screen_line(text: str, limit: int) -> str:
    """`text` as `one_line` shows it, at most `limit` characters, its secrets replaced first:
    cut first, a secret across the cut would be shown up to it, unknown to the redactor."""
    return one_line(screen_text(text), limit)


def known_only(text: str) -> str:
    """`text` with only the known secret values replaced (a one-shot answer in a pipe)."""
    return _current.redact_known(text)


def screen_value(value: object) -> object:
    """JSON-like `value` as it may be shown (values under secret keys replaced too)."""
    return _current.redact(value)


@contextlib.contextmanager
def redacting(redactor: Redactor) -> Iterator[None]:
    """Show everything through `redactor` until the block ends."""
    global _current  # noqa: PLW0603 - the one screen, the one redactor in front of it
    previous, _current = _current, redactor
    try:
        yield
    finally:
        _current = previous
