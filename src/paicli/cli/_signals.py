"""Running a command's coroutine so that Ctrl+C, SIGTERM and SIGHUP all stop it the same way:
by cancellation, which stops every MCP server with the bounded shutdown ladder (servers live
in their own process groups and would otherwise outlive us)."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Coroutine
from typing import Any


def run_until_signalled(work: Coroutine[Any, Any, int]) -> int:
    """`asyncio.run(work)`; 130 when interrupted."""
    try:
        return asyncio.run(until_signalled(work))
    except KeyboardInterrupt:
        # Ctrl+C: asyncio.run already cancelled the work, which stopped every server.
        return 130


async def until_signalled(work: Coroutine[Any, Any, int]) -> int:
    """Run `work`; SIGTERM or SIGHUP cancel it like Ctrl+C does."""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None
    for sig in (signal.SIGTERM, signal.SIGHUP):
        # The signal's name rides on the cancellation (the audit log's session end).
        loop.add_signal_handler(sig, task.cancel, sig.name)
    try:
        return await work
    except asyncio.CancelledError:
        from paicli.ui.output import err  # noqa: PLC0415 - not before the REPL's prompt

        err("paicli: stopped; servers shut down")
        return 130
    finally:
        for sig in (signal.SIGTERM, signal.SIGHUP):
            loop.remove_signal_handler(sig)
