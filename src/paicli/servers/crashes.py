"""A server whose connection ended while it served: when it may be started again (a backoff
that grows with each crash in a row), and its last tools, offered meanwhile."""

from __future__ import annotations

import asyncio

from paicli.servers.server_record import ServerRecord

__all__ = ["BACKOFF_MAX", "BACKOFF_START", "crash_backoff", "crashed", "forget_crashes"]

# Restart backoff: 0.5 s, 1 s, 2 s, ... capped at 30 s, so a crash-looping server costs
# little while a transient failure recovers quickly.
BACKOFF_START = 0.5
BACKOFF_MAX = 30.0
# A server that served this long before it crashed starts its backoff afresh: it crashes
# now and then, not at every start.
CRASH_RESET = 60.0


def crash_backoff(crashes: int) -> float:
    """Seconds before a server that crashed `crashes` times in a row is started again."""
    return min(BACKOFF_START * 2.0 ** (crashes - 1), BACKOFF_MAX)


def crashed(server: ServerRecord, served: float) -> None:
    """`server`'s connection ended after `served` seconds up (0: a revival that failed to
    start): it is started again at its next call, after a backoff that grows with each
    crash in a row, and its last tools stay offered until then."""
    server.crashes = 1 if served >= CRASH_RESET else server.crashes + 1
    server.revive_at = asyncio.get_running_loop().time() + crash_backoff(server.crashes)
    if server.tools:
        server.crash_tools = list(server.tools)


def forget_crashes(server: ServerRecord) -> None:
    server.revive_at, server.crashes, server.crash_tools = None, 0, []
