"""The aiohttp boundary shared by both HTTP transports (Streamable HTTP and legacy SSE).

The pooled client; every exchange made through `exchange`, which follows a redirect only
within the server's origin (the configured headers, API keys among them, never reach
another); aiohttp's failures translated into our errors (one line naming the server); a body
read under the size cap, counted after decompression; error statuses shown with an escaped
excerpt of the body; and each incoming message handed to the engine. Nothing here knows
sessions, streams or eras.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urljoin, urlsplit

import aiohttp

from ._http_direct import DirectPost
from ._transport import TransportWatcher
from .errors import (
    AuthenticationError,
    HttpError,
    LoginRequired,
    McpError,
    MessageTooLarge,
    OAuthError,
)

if TYPE_CHECKING:
    from .auth import OAuth

__all__ = [
    "HTTP_FAILURES",
    "OAuthUse",
    "arrived_body",
    "error_body",
    "excerpt",
    "exchange",
    "hand_over",
    "http_client",
    "oauth_use",
    "origin_of",
    "read_body",
    "status_error",
    "translate_http_error",
]

log = logging.getLogger("paicli.mcp.http")

Message = dict[str, Any]

# How a transport with OAuth gets its tokens: "login" (a user, through a redirect),
# "stored" (a user's earlier login, and no way to ask for another), "machine" (a grant
# without a user).
OAuthUse = Literal["login", "stored", "machine"]

# Connecting and sending are quick on any working network; reading has no limit here
# because SSE streams idle for long stretches and every request has its own deadline.
HTTP_TIMEOUT = aiohttp.ClientTimeout(total=None, connect=10.0, sock_read=None)


def http_client(headers: Mapping[str, str]) -> aiohttp.ClientSession:
    """A pooled keep-alive client carrying the server's configured `headers`."""
    return aiohttp.ClientSession(
        headers=dict(headers),
        timeout=HTTP_TIMEOUT,
        connector=aiohttp.TCPConnector(limit=100),
    )


# What aiohttp raises for a failed exchange (its timeouts are asyncio's TimeoutError).
HTTP_FAILURES = (aiohttp.ClientError, TimeoutError)

# A redirect within the server's origin (a trailing slash, a moved endpoint) is followed, a
# few times at most; these statuses keep the method and the body (an MCP POST turned into a
# GET, as browsers do for 301/302, would only fail further on). 303 means "GET something
# else", which no MCP request wants.
MAX_REDIRECTS = 5
FOLLOWED_REDIRECTS = frozenset({301, 302, 307, 308})
# An error body is read this far for its excerpt, and this much of it is shown.
ERROR_BODY_READ = 4096
EXCERPT_CHARS = 300

Origin = tuple[str, str, int]


def oauth_use(auth: OAuth | None) -> OAuthUse | None:
    """How a transport with `auth` gets its tokens (None: no OAuth)."""
    if auth is None:
        return None
    if auth.grant != "authorization_code":
        return "machine"
    return "login" if auth.redirect is not None else "stored"


def origin_of(url: str) -> Origin:
    """The (scheme, host, port) of `url`, the port made explicit."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, parts.hostname or "", parts.port or (443 if scheme == "https" else 80)


def _show(origin: Origin) -> str:
    scheme, host, port = origin
    return f"{scheme}://[{host}]:{port}" if ":" in host else f"{scheme}://{host}:{port}"


async def exchange(
    client: aiohttp.ClientSession,
    label: str,
    method: str,
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    data: bytes | None = None,
    watcher: TransportWatcher | None = None,
    direct: DirectPost | None = None,
) -> aiohttp.ClientResponse:
    """One HTTP exchange with the server at `url`: its final response, which the caller
    releases (`async with`).

    Redirects are followed here, not by aiohttp: within the origin of `url` at most
    MAX_REDIRECTS times; one to another origin is refused with an `HttpError` naming both,
    so the headers configured for this server are never sent anywhere else. `watcher` is
    told the final response's status and headers. (A coroutine, not a context manager:
    every call's request goes through here, and `async with await exchange(...)` costs
    less.) `direct`, for a client of our own, makes a POST to its URL one layer lower."""
    here = url
    for _ in range(MAX_REDIRECTS + 1):
        if direct is not None and here == direct.url and method == "POST" and data is not None:
            response = await direct.post(headers or {}, data)
        else:
            response = await client.request(
                method, here, headers=headers, data=data, allow_redirects=False
            )
        if response.status not in FOLLOWED_REDIRECTS:
            break
        location = response.headers.get("Location")
        if location is None:
            break
        response.release()
        there = urljoin(here, location)
        if origin_of(there) != origin_of(url):
            raise HttpError(
                f"{label}: the server redirected {method} {here} to {there}, on another "
                f"origin ({_show(origin_of(there))}, not {_show(origin_of(url))}); "
                "not followed, so the configured headers are not sent there",
                status=response.status,
            )
        here = there
    else:
        raise HttpError(
            f"{label}: more than {MAX_REDIRECTS} redirects from {method} {url}",
            status=response.status,
        )
    if watcher is not None:
        watcher.http_response(method, here, response.status, response.headers)
    return response


def translate_http_error(label: str, url: str, exc: BaseException) -> McpError:
    """One clear line for a failed HTTP exchange, naming the server."""
    if isinstance(exc, aiohttp.ClientSSLError | aiohttp.ClientConnectorCertificateError):
        return HttpError(f"{label}: TLS failure connecting to {url}: {exc}")
    if isinstance(exc, aiohttp.ClientConnectorError):
        reason = exc.os_error.strerror or str(exc.os_error)
        return HttpError(f"{label}: cannot connect to {url}: {reason}")
    if isinstance(exc, TimeoutError):
        return HttpError(f"{label}: timed out talking to {url}")
    if isinstance(exc, aiohttp.ClientPayloadError):
        # aiohttp keeps the reason (say, "received 40 of 87 bytes") on the cause.
        detail = getattr(exc.__cause__, "message", None)
        return HttpError(f"{label}: the response from {url} was cut short: {detail or exc}")
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return HttpError(f"{label}: the server broke the connection: {exc}")
    return HttpError(f"{label}: HTTP request to {url} failed: {exc}")


def status_error(
    label: str,
    response: aiohttp.ClientResponse,
    body: bytes = b"",
    *,
    refused: str | None = None,
    oauth: OAuthUse | None = None,
) -> McpError:
    """The error for an unsuccessful HTTP status with no JSON-RPC error in the body: the
    status, an excerpt of `body` (the server's reason, escaped), and what was refused when it
    is not the request itself (`refused`, say "resuming the response stream of tools/call").
    With OAuth (`oauth`: how tokens are got), a 401 means the server refused every token
    it was given: without a way to ask the user, that is a `LoginRequired`."""
    status = response.status
    text = f"HTTP {status} {response.reason or ''}".rstrip()
    text = f"{label}: {refused} was refused: {text}" if refused else f"{label}: {text}"
    reason = excerpt(body)
    if reason:
        text += f': "{reason}"'
    if status == 401 and oauth is not None:
        text += " (the server refused every OAuth access token it was given"
        text += "; log in again)" if oauth != "machine" else ")"
        if oauth == "stored":
            return LoginRequired(text, www_authenticate=response.headers.get("www-authenticate"))
        return OAuthError(text, status=401)
    if status == 401:
        text += " (the server needs credentials; set them with 'headers')"
    elif status == 403 and not reason:
        text += " (access refused; if the server needs credentials, set them with 'headers')"
    if status in (401, 403):
        challenge = response.headers.get("www-authenticate")
        return AuthenticationError(
            text, status=status, www_authenticate=challenge, server_text=reason
        )
    return HttpError(text, status=status, server_text=reason)


def excerpt(body: bytes | bytearray) -> str:
    """At most EXCERPT_CHARS characters of a server's text, fit for a one-line message:
    whitespace runs are one space, control and format characters are escapes (never raw:
    they could move the cursor, retitle the terminal or reorder text), "…" marks a cut."""
    text = " ".join(bytes(body[: EXCERPT_CHARS * 4]).decode("utf-8", "replace").split())
    shown: list[str] = []
    size = 0
    for char in text:
        piece = char if char.isprintable() else repr(char)[1:-1]
        if size + len(piece) > EXCERPT_CHARS:
            shown.append("…")
            break
        shown.append(piece)
        size += len(piece)
    return "".join(shown)


async def error_body(response: aiohttp.ClientResponse) -> bytes:
    """The first ERROR_BODY_READ bytes of an error response's body, for its excerpt (what
    cannot be read is left out)."""
    body = bytearray()
    try:
        while len(body) < ERROR_BODY_READ:
            chunk = await response.content.read(ERROR_BODY_READ - len(body))
            if not chunk:
                break
            body += chunk
    except HTTP_FAILURES:
        pass
    return bytes(body)


def read_body(response: aiohttp.ClientResponse, limit: int) -> Awaitable[bytes]:
    """The whole body, decompressed, refusing to hold more than `limit` bytes of it.

    A compressed body counts by what it expands to (a 61 KB gzip body may hold 60 MB):
    aiohttp decompresses it in bounded chunks as they are read, and reading stops at the
    limit. (An awaitable, not a coroutine of its own: in the common case, a declared and
    acceptable size, usually already buffered, it is aiohttp's own read.)"""
    length = response.content_length
    encoding = response.headers.get("Content-Encoding", "identity").strip().lower()
    if length is not None and length <= limit and encoding in ("", "identity"):
        return response.read()
    return _read_capped(response, limit)


def arrived_body(response: aiohttp.ClientResponse, limit: int) -> bytes | None:
    """The whole body if it has arrived already, as a small answer usually has with its
    headers (a declared length within `limit`, not compressed, its end seen); else None,
    and `read_body` waits for it. (No coroutine: nearly every call's answer is read here.)"""
    content = response.content
    length = response.content_length
    if length is None or length > limit or not content.is_eof() or content.exception():
        return None
    encoding = response.headers.get("Content-Encoding")
    if encoding is not None and encoding.strip().lower() not in ("", "identity"):
        return None
    return content.read_nowait()


async def _read_capped(response: aiohttp.ClientResponse, limit: int) -> bytes:
    body = bytearray()
    async for chunk in response.content.iter_any():
        if len(body) + len(chunk) > limit:
            raise MessageTooLarge(f"server sent a response body over the {limit} byte limit")
        body += chunk
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
