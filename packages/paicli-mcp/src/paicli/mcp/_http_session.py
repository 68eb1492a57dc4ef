"""The session a stateful Streamable HTTP server keeps for us (2025-03-26 to 2025-11-25).

The server names it with `Mcp-Session-Id` in its answer to `initialize` (checked: visible
ASCII, at most 1 KiB, since it goes back on every request); every later request carries it
and the agreed `MCP-Protocol-Version`. When the server forgets it (a 404), the handshake is
run again once, by one request for all that saw the 404 (or the error -32001 "Session not
found"); on close it is ended with a DELETE, a courtesy that never holds up shutdown. The
2026 revision has no session (a 404 there is an answer like any other): nothing here is used
then.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
import orjson

from ._http_exchange import HTTP_FAILURES, read_body
from .errors import McpError

__all__ = [
    "HttpSession",
    "Post",
    "says_session_not_found",
    "session_error_body",
    "session_id_problem",
]

log = logging.getLogger("paicli.mcp.http")

Message = dict[str, Any]
#: Posts one message to the server (its headers made as for any request).
Post = Callable[[Message], Awaitable[aiohttp.ClientResponse]]
#: Sends the DELETE that ends the session (its headers made as for any request).
Delete = Callable[[], Awaitable[aiohttp.ClientResponse]]

# Closing the session (DELETE) is a courtesy; never let it hold up shutdown.
DELETE_TIMEOUT = 2.0

# The JSON-RPC error the official TypeScript SDK's servers answer (with 404) for a session
# they do not know; some send it with 400. The Python SDK uses the same code for a request
# timeout, so the message must name the session too.
SESSION_NOT_FOUND = -32001

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


def says_session_not_found(body: bytes) -> bool:
    """Whether an error body is the JSON-RPC error -32001 about a session not found."""
    error = _error_of(body)
    message = error.get("message") if error is not None else None
    return (
        error is not None
        and error.get("code") == SESSION_NOT_FOUND
        and isinstance(message, str)
        and "session" in message.lower()
    )


async def session_error_body(response: aiohttp.ClientResponse, limit: int) -> bytes | None:
    """The body of an error answer, when it may say "Session not found" (a JSON one that is
    not a 404: a 404 says it by itself)."""
    if response.status == 404 or response.content_type != "application/json":
        return None
    return await read_body(response, limit)


def _error_of(body: bytes) -> dict[str, Any] | None:
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    error = data.get("error") if isinstance(data, dict) else None
    return error if isinstance(error, dict) else None


def _is_error(body: bytes) -> bool:
    return _error_of(body) is not None


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
        # Whether the server keeps a session for us (it named one); stays True when a
        # renewal failed, so that the next request tries again.
        self.stateful = False
        self._renewing = asyncio.Lock()

    @property
    def lost(self) -> bool:
        """Whether the server forgot our session and no new one could be established."""
        return self.stateful and self.id is None and self.initialize is not None

    def headers(self) -> dict[str, str]:
        """The session's headers for a request (none before `initialize` is answered)."""
        headers: dict[str, str] = {}
        if self.id is not None:
            headers["Mcp-Session-Id"] = self.id
        if self.version is not None:
            headers["MCP-Protocol-Version"] = self.version
        return headers

    async def renew(self, generation: int, post: Post, renewed: Callable[[], None]) -> str | None:
        """The server forgot our session during session `generation`: run the handshake
        again, once; `renewed()` is called when this call did it. None when a session is
        back (this call's or another request's), else why not (one clause, no server text:
        the caller words the error)."""
        async with self._renewing:
            if self.generation != generation:
                return None  # Another request already did it.
            if self.initialize is None:
                return "paicli has no handshake to repeat"
            log.info("%s: session expired; initializing a new one", self._label)
            self.id = None
            try:
                problem = await self._initialize_again(generation, post)
                if problem is not None:
                    log.warning(
                        "%s: a new session could not be established: %s", self._label, problem
                    )
                    return problem
                self.generation += 1
                async with await post({"jsonrpc": "2.0", "method": "notifications/initialized"}):
                    pass
            except HTTP_FAILURES as exc:
                return f"initialize failed ({type(exc).__name__})"
            except McpError as exc:
                return f"initialize failed ({type(exc).__name__})"
            renewed()
            return None

    async def _initialize_again(self, generation: int, post: Post) -> str | None:
        assert self.initialize is not None
        request = {
            "jsonrpc": "2.0",
            "id": f"paicli-reinit-{generation + 1}",
            "method": "initialize",
            "params": self.initialize.get("params"),
        }
        async with await post(request) as response:
            session_id = response.headers.get("mcp-session-id")
            if response.status >= 300:
                return f"initialize was answered with HTTP {response.status}"
            if session_id and (problem := session_id_problem(session_id)) is not None:
                return problem
            body = await read_body(response, self._max_message_size)
            if response.content_type == "application/json" and _is_error(body):
                return "the server answered initialize with an error"
            self.id = session_id
        return None

    async def end(self, delete: Delete) -> None:
        """End the session, if there is one, with a DELETE (bounded; failures ignored)."""
        if self.id is None:
            return
        try:
            with contextlib.suppress(aiohttp.ClientError, McpError):
                async with asyncio.timeout(DELETE_TIMEOUT), await delete():
                    pass
        except TimeoutError:
            log.debug("%s: DELETE of the session timed out", self._label)
