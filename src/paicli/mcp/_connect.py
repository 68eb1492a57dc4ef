"""`connect()`: from a server description (typed or a config dict) to a live session."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

from ._stdio import StdioTransport
from .handlers import ClientHandlers
from .servers import StdioServer, server_from_dict
from .session import ClientSession

ServerSpec = StdioServer | Mapping[str, Any]


def as_server(server: ServerSpec, *, name: str | None = None) -> StdioServer:
    """The typed description of `server`, parsing a config-file dict if needed."""
    if isinstance(server, StdioServer):
        return server
    return server_from_dict(server, name=name)


@asynccontextmanager
async def connect(
    server: ServerSpec,
    *,
    name: str | None = None,
    handlers: ClientHandlers | None = None,
    client_info: Mapping[str, Any] | None = None,
) -> AsyncIterator[ClientSession]:
    """Start or reach `server`, negotiate the protocol, and yield a ready session.

    The server is shut down (bounded) when the block exits, however it exits.
    """
    spec = as_server(server, name=name)
    transport = await StdioTransport.start(
        spec.command,
        spec.args,
        env=spec.env,
        cwd=spec.cwd,
        max_message_size=spec.max_message_size,
        stderr_file=spec.stderr_file,
    )
    async with ClientSession(
        transport, spec, handlers=handlers, client_info=client_info
    ) as session:
        yield session
