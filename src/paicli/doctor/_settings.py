"""How patient the doctor is: the handshake timeout, and what counts as a slow start."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SLOW_START", "Limits"]

# An agent waits for its servers before the first turn (and `paicli mcp` commands before
# they answer): past two seconds that wait is felt.
SLOW_START = 2.0


@dataclass(frozen=True, slots=True)
class Limits:
    """`timeout`: seconds for the handshake and the tool list (None: the server's own
    handshake timeout); `slow`: a handshake slower than this is reported."""

    timeout: float | None = None
    slow: float = SLOW_START
