"""The command line's own exception: what the user typed or piped cannot be used."""

from __future__ import annotations

from paicli.errors import PaicliError

__all__ = ["UsageError"]


class UsageError(PaicliError):
    """The command line or its input cannot be used (a malformed `paicli mcp add`, stdin
    over the limit); the message names the culprit."""
