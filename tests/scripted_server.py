"""A hand-written server on the far end of a `MemoryTransport.pair()`, for protocol tests.

The test decides, message by message, what goes back: its `script` is called with every
request and notification the client sends and returns the raw messages to send in answer
(anything JSON: invalid envelopes, arrays, wrong ids), or None for the defaults: a valid
`initialize` result (2025-11-25), `{}` for ping, -32601 for everything else, nothing for
notifications. Everything stays in memory.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, Final

from paicli.mcp import ClientHandlers, ClientSession, ConnectionClosed, MemoryTransport, Timeouts
from paicli.mcp._versions import ProtocolChoice

Json = dict[str, Any]
Script = Callable[[Json], list[Any] | None]

VERSION: Final = "2025-11-25"
INITIALIZE_RESULT: Json = {
    "protocolVersion": VERSION,
    "capabilities": {"tools": {"listChanged": True}},
    "serverInfo": {"name": "scripted", "version": "1.0"},
}


def result(request: Json, value: Any) -> Json:
    """A valid response carrying `value` as the result of `request`."""
    return {"jsonrpc": "2.0", "id": request["id"], "result": value}


def default_answer(message: Json) -> list[Any]:
    if "id" not in message:
        return []
    method = message.get("method")
    if method == "initialize":
        return [result(message, INITIALIZE_RESULT)]
    if method == "ping":
        return [result(message, {})]
    error = {"code": -32601, "message": f"Method not found: {method}"}
    return [{"jsonrpc": "2.0", "id": message["id"], "error": error}]


async def serve(end: MemoryTransport, script: Script) -> None:
    """Answer every client message with what `script` says (or the defaults)."""
    with contextlib.suppress(ConnectionClosed):
        while True:
            message = await end.receive()
            answers = script(message)
            for answer in default_answer(message) if answers is None else answers:
                # A raw answer may be an array (a batch); the pair carries any JSON.
                await end.send(answer)


@asynccontextmanager
async def scripted_session(
    script: Script,
    *,
    protocol: ProtocolChoice = VERSION,
    request_timeout: float = 10.0,
    handshake_timeout: float = 10.0,
    handlers: ClientHandlers | None = None,
) -> AsyncIterator[ClientSession]:
    """An open session whose server answers as `script` says; the server task ends with
    the session."""
    client, server = MemoryTransport.pair()
    # Not a TaskGroup: a failing handshake must come out as itself, not in a group.
    task = asyncio.ensure_future(serve(server, script))
    try:
        async with ClientSession(
            client,
            name="scripted",
            protocol=protocol,
            timeouts=Timeouts(handshake_timeout, request_timeout),
            handlers=handlers,
        ) as session:
            yield session
    finally:
        await server.aclose()
        await task
