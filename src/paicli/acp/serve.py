"""The connection's life: the channel opened, the SDK's agent-side connection listening
until the editor closes stdin (or a signal cancels it), then every session's turn cancelled
and its runtime closed (its servers stopped) before the process exits."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping

from acp.agent.connection import AgentSideConnection

from paicli.acp.agent import PaicliAgent
from paicli.acp.wire import StdioChannel
from paicli.run_settings import StartOptions

__all__ = ["serve"]


async def serve(options: StartOptions, environ: Mapping[str, str]) -> int:
    """Serve one editor on stdin/stdout; 0 once it has gone."""
    channel = await StdioChannel.open()
    async with asyncio.TaskGroup() as group:
        agent = PaicliAgent(options, environ, group)
        # PaicliAgent implements the methods it serves; the SDK routes the rest to errors.
        connection = AgentSideConnection(agent, channel, listening=False)  # type: ignore[arg-type]
        try:
            with contextlib.suppress(ConnectionError):
                await connection.listen()
        finally:
            await agent.aclose()
            await asyncio.shield(connection.close())
    return 0
