"""The session a stateful Streamable HTTP server keeps for us (2025-03-26 to 2025-11-25).

The server names it with `Mcp-Session-Id` in its answer to `initialize` (checked: visible
ASCII, at most 1 KiB, since it goes back on every request); every later request carries it
and the agreed `MCP-Protocol-Version`. When the server forgets it (a 404), the handshake is
run again once, by one request for all that saw the 404; on close it is ended with a DELETE,
a courtesy that never holds up shutdown. The 2026 revision has no session: nothing here is
used then.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import aiohttp

from ._http_exchange import read_body
from .errors import McpError

__all__ = ["HttpSession", "Post", "session_id_problem"]

log = logging.getLogger("paicli.mcp.http")

Message = dict[str, Any]
#: Posts one message to the server (its headers made as for any request).
Post = Callable[[Message], AbstractAsyncContextManager[aiohttp.ClientResponse]]
#: Sends the DELETE that ends the session (its headers made as for any request).
Delete = Callable[[], AbstractAsyncContextManager[aiohttp.ClientResponse]]

# Closing the session (DELETE) is a courtesy; never let it hold up shutdown.
DELETE_TIMEOUT = 2.0

# The longest Mcp-Session-Id accepted (it goes back to the server on every request).
MAX_SESSION_ID = 1024


def session_id_problem(session_id: str) -> str | None:
    """What is wrong with a server's `Mcp-Session-Id`, or None. The spec allows visible
    ASCII only (0x21-0x7E); paicli echoes it on every request, so it is also kept short."""
    rule = "a session id must be visible ASCII (no spaces), at most 1 KiB"
    if len(session_id) > MAX_SESSION_ID:
        return f"the server's Mcp-Session-Id is {len(session_id):,} characters long; {rule}"
    for at, char in enumerate(session_id, 1):
        if not 0x21 <= ord(char) <= 0x7E:
            return f"the server's Mcp-Session-Id has {char!a} at character {at}; {rule}"
    return None


class HttpSession:
    """The session id, the agreed version, and the handshake to run again (see module)."""

    def __init__(self, label: str, max_message_size: int) -> None:
        self._label = label
        self._max_message_size = max_message_size
        self.id: str | None = None
        # The agreed handshake-era version, sent as a header on every later request.
        self.version: str | None = None
        # Our `initialize` request, to send again when the server forgot the session.
        self.initialize: Message | None = None
        # How many times the session was renewed: a request that saw a 404 under an older
        # one needs no renewal of its own.
        self.generation = 0
        self._renewing = asyncio.Lock()

    def headers(self) -> dict[str, str]:
        """The session's headers for a request (none before `initialize` is answered)."""
        headers: dict[str, str] = {}
        if self.id is not None:
            headers["Mcp-Session-Id"] = self.id
        if self.version is not None:
            headers["MCP-Protocol-Version"] = self.version
        return headers

    async def renew(self, generation: int, post: Post, renewed: Callable[[], None]) -> bool:
        """The server forgot our session (404) during session `generation`: run the
        handshake again, once; `renewed()` is called when this call did it. Whether the
        request may be sent again."""
        async with self._renewing:
            if self.generation != generation:
                return True  # Another request already did it.
            if self.initialize is None:
                return False
            log.info("%s: session expired; initializing a new one", self._label)
            self.id = None
            request = {
                "jsonrpc": "2.0",
                "id": f"paicli-reinit-{generation + 1}",
                "method": "initialize",
                "params": self.initialize.get("params"),
            }
            async with post(request) as response:
                session_id = response.headers.get("mcp-session-id")
                if response.status >= 300:
                    return False
                if session_id and (problem := session_id_problem(session_id)) is not None:
                    log.warning("%s: %s", self._label, problem)
                    return False
                self.id = session_id
                await read_body(response, self._max_message_size)
            self.generation += 1
            async with post({"jsonrpc": "2.0", "method": "notifications/initialized"}):
                pass
            renewed()
            return True

    async def end(self, delete: Delete) -> None:
        """End the session, if there is one, with a DELETE (bounded; failures ignored)."""
        if self.id is None:
            return
        try:
            with contextlib.suppress(aiohttp.ClientError, McpError):
                async with asyncio.timeout(DELETE_TIMEOUT), delete():
                    pass
        except TimeoutError:
            log.debug("%s: DELETE of the session timed out", self._label)
