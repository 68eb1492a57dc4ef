"""`connect()`: from a server description (typed or a config dict) to a live session.

This is the one place where a description (`StdioServer`, `HttpServer`) becomes transport
arguments (`stdio_transport`, `http_transport`, `sse_transport`) and session options; the
transports themselves take plain arguments. HTTP modules (and aiohttp) are imported only
when an HTTP server is used, so scripts that talk to stdio servers do not pay for them.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ._era_cache import EraCache
from ._instrument import Instrument
from ._server_spec import HttpServer, ServerSpec, StdioServer, server_from_dict
from ._stdio import StdioTransport
from ._transport import Transport
from .errors import AuthenticationError, ClosedOnProbe, HttpError, ServerConfigError
from .handlers import ClientHandlers
from .session import ClientSession, Timeouts

if TYPE_CHECKING:
    from ._http import StreamableHttpTransport
    from ._legacy_sse import LegacySseTransport
    from .auth import OAuth

log = logging.getLogger("paicli.mcp")

# Statuses with which a 2024-11-05 server refuses a Streamable HTTP POST; the specification's
# cue to try the legacy HTTP+SSE transport on the same URL.
LEGACY_SSE_CUES = (400, 404, 405)


def as_server(server: ServerSpec | Mapping[str, Any], *, name: str | None = None) -> ServerSpec:
    """The typed description of `server`, parsing a config-file dict if needed."""
    if isinstance(server, StdioServer | HttpServer):
        return server
    return server_from_dict(server, name=name)


@dataclass(frozen=True, slots=True)
class _SessionOptions:
    """What a session is given besides its transport: the caller's, and the description's."""

    handlers: ClientHandlers | None
    client_info: Mapping[str, Any] | None
    era_cache: EraCache | None
    instruments: Sequence[Instrument] | None

    def session(self, spec: ServerSpec, transport: Transport) -> ClientSession:
        return ClientSession(
            transport,
            name=spec.label,
            protocol=spec.protocol,
            timeouts=Timeouts(spec.handshake_timeout, spec.request_timeout),
            handlers=self.handlers,
            client_info=self.client_info,
            era_cache=self.era_cache,
            identity=spec.identity,
            instruments=self.instruments,
        )


@asynccontextmanager
async def connect(
    server: ServerSpec | Mapping[str, Any],
    *,
    name: str | None = None,
    handlers: ClientHandlers | None = None,
    client_info: Mapping[str, Any] | None = None,
    era_cache: EraCache | None = None,
    auth: OAuth | None = None,
    instruments: Sequence[Instrument] | None = None,
) -> AsyncIterator[ClientSession]:
    """Start or reach `server`, negotiate the protocol, and yield a ready session.

    A stdio server is shut down (bounded) when the block exits, however it exits (one
    that exits on the 2026 discovery probe is started again once with `initialize`); an HTTP
    session is closed (DELETE) and its connections released. With an `era_cache`, the
    protocol era found by probing this server is remembered there and reused by the next
    `connect()` given the same cache. `auth` (an HTTP server only) enables OAuth, as
    `HttpServer(auth=...)` does. `instruments` wrap the session's transport (see
    `ClientSession`; None: those registered with `paicli.mcp.instrument()`).
    """
    spec = as_server(server, name=name)
    if auth is not None:
        if not isinstance(spec, HttpServer):
            raise ServerConfigError(f"{spec.label}: OAuth applies to HTTP servers only")
        spec = replace(spec, auth=auth)
    options = _SessionOptions(handlers, client_info, era_cache, instruments)
    if isinstance(spec, StdioServer):
        session = await _open_stdio(spec, options)
    else:
        session = await _open_http(spec, options)
    try:
        yield session
    finally:
        await session.aclose()


async def stdio_transport(spec: StdioServer) -> StdioTransport:
    """Start the server `spec` describes."""
    return await StdioTransport.start(
        spec.command,
        spec.args,
        env=spec.env,
        cwd=spec.cwd,
        max_message_size=spec.max_message_size,
        stderr_file=spec.stderr_file,
        stderr_filter=spec.stderr_filter,
        label=spec.label,
        limits=spec.limits,
        sandbox=spec.sandbox,
    )


def http_transport(spec: HttpServer) -> StreamableHttpTransport:
    """A Streamable HTTP transport to the server `spec` describes."""
    from ._http import StreamableHttpTransport  # noqa: PLC0415 - aiohttp only when needed

    return StreamableHttpTransport(
        spec.url,
        headers=spec.headers,
        label=spec.label,
        max_message_size=spec.max_message_size,
        auth=spec.auth,
    )


async def sse_transport(spec: HttpServer) -> LegacySseTransport:
    """A legacy HTTP+SSE transport to the server `spec` describes (its stream open)."""
    from ._legacy_sse import LegacySseTransport  # noqa: PLC0415 - aiohttp only when needed

    return await LegacySseTransport.open(
        spec.url,
        headers=spec.headers,
        label=spec.label,
        max_message_size=spec.max_message_size,
        open_timeout=spec.handshake_timeout,
    )


async def _open_stdio(spec: StdioServer, options: _SessionOptions) -> ClientSession:
    """The session with a stdio server; one that exits on the 2026 discovery probe (an SDK
    that takes `initialize` first only) is started once more, with `initialize`, and the
    verdict is remembered so its restarts skip the probe."""
    try:
        return await options.session(spec, await stdio_transport(spec)).__aenter__()
    except ClosedOnProbe as exc:
        log.info(
            "%s: exited on the 2026 discovery probe (%s); starting it again with initialize "
            '(set "protocol": "legacy" to skip the probe)',
            spec.label,
            exc,
        )
    legacy = replace(spec, protocol="legacy")
    session = await options.session(legacy, await stdio_transport(legacy)).__aenter__()
    if options.era_cache is not None:
        options.era_cache.remember(spec.identity, "legacy")
    return session


async def _open_http(spec: HttpServer, options: _SessionOptions) -> ClientSession:
    if spec.transport != "sse":
        session = options.session(spec, http_transport(spec))
        try:
            return await session.__aenter__()
        except AuthenticationError:
            raise
        except HttpError as exc:
            if spec.transport == "http" or exc.status not in LEGACY_SSE_CUES:
                raise
            log.info("%s: Streamable HTTP refused (%s); trying legacy HTTP+SSE", spec.label, exc)
    return await options.session(spec, await sse_transport(spec)).__aenter__()
