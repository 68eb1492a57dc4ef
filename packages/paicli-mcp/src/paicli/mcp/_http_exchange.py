"""The aiohttp boundary shared by both HTTP transports (Streamable HTTP and legacy SSE).

The pooled client, aiohttp's failures translated into our errors (one line naming the
server), a body read under the size cap, JSON-RPC messages parsed out of a body, and each
incoming message handed to the engine. Nothing here knows sessions, streams or eras.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

import aiohttp

from ._server_spec import HttpServer
from .errors import AuthenticationError, HttpError, McpError, MessageTooLarge

__all__ = [
    "HTTP_FAILURES",
    "hand_over",
    "http_client",
    "read_body",
    "status_error",
    "translate_http_error",
]

log = logging.getLogger("paicli.mcp.http")

Message = dict[str, Any]

# Connecting and sending are quick on any working network; reading has no limit here
# because SSE streams idle for long stretches and every request has its own deadline.
HTTP_TIMEOUT = aiohttp.ClientTimeout(total=None, connect=10.0, sock_read=None)


def http_client(server: HttpServer) -> aiohttp.ClientSession:
    """A pooled keep-alive client carrying the server's configured headers."""
    return aiohttp.ClientSession(
        headers=dict(server.headers),
        timeout=HTTP_TIMEOUT,
        connector=aiohttp.TCPConnector(limit=100),
    )


# What aiohttp raises for a failed exchange (its timeouts are asyncio's TimeoutError).
HTTP_FAILURES = (aiohttp.ClientError, TimeoutError)


def translate_http_error(label: str, url: str, exc: BaseException) -> McpError:
    """One clear line for a failed HTTP exchange, naming the server."""
    if isinstance(exc, aiohttp.ClientSSLError | aiohttp.ClientConnectorCertificateError):
        return HttpError(f"{label}: TLS failure connecting to {url}: {exc}")
    if isinstance(exc, aiohttp.ClientConnectorError):
        reason = exc.os_error.strerror or str(exc.os_error)
        return HttpError(f"{label}: cannot connect to {url}: {reason}")
    if isinstance(exc, TimeoutError):
        return HttpError(f"{label}: timed out talking to {url}")
    if isinstance(exc, aiohttp.ServerDisconnectedError | aiohttp.ClientPayloadError):
        return HttpError(f"{label}: the server broke the connection: {exc}")
    return HttpError(f"{label}: HTTP request to {url} failed: {exc}")


def status_error(label: str, response: aiohttp.ClientResponse) -> McpError:
    """The error for an unsuccessful HTTP status with no JSON-RPC error in the body."""
    status = response.status
    text = f"{label}: HTTP {status} {response.reason or ''}".rstrip()
    if status in (401, 403):
        return AuthenticationError(
            f"{text} (the server needs credentials; set them with 'headers')",
            status=status,
            www_authenticate=response.headers.get("www-authenticate"),
        )
    return HttpError(text, status=status)


async def read_body(response: aiohttp.ClientResponse, limit: int) -> bytes:
    """The whole body, refusing to hold more than `limit` bytes."""
    length = response.content_length
    if length is not None and length <= limit:
        # The common case: a declared, acceptable size, usually already buffered.
        return await response.read()
    body = bytearray()
    async for chunk in response.content.iter_any():
        body += chunk
        if len(body) > limit:
            raise MessageTooLarge(f"server sent a response body over the {limit} byte limit")
    return bytes(body)


def hand_over(
    message: Message,
    sink: Callable[[Message], None] | None,
    queue: asyncio.Queue[Message | McpError],
) -> None:
    """Give one incoming message to the engine's sink (or queue it for `receive()`)."""
    if sink is None:
        queue.put_nowait(message)
        return
    try:
        sink(message)
    except Exception:
        # The sink's bug must not take the stream down with it.
        log.exception("message handler failed on %.200r", message)
