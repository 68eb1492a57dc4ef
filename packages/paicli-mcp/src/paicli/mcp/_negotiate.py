"""Protocol negotiation: pick the era and version for one server, and remember the verdict.

Auto mode probes with `server/discover` (2026-07-28). A `DiscoverResult` naming a modern
version, or a -32022 naming one, proves a modern server; any other answer, or silence within
the probe timeout, means legacy, and the `initialize` handshake follows on the same
connection. The fallback is never keyed on one error code (legacy servers differ).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._versions import (
    HANDSHAKE_VERSIONS,
    KNOWN_VERSIONS,
    LATEST_HANDSHAKE,
    LATEST_MODERN,
    MODERN_VERSIONS,
    Era,
    newest_mutual,
)
from .errors import (
    AuthenticationError,
    ConnectionClosed,
    HttpError,
    ProtocolError,
    RequestTimeout,
    RpcError,
    UnsupportedVersion,
)
from .types import Implementation

if TYPE_CHECKING:
    from .session import ClientSession

# The era each server spoke last time in this process, keyed by server identity.
_ERA_CACHE: dict[tuple[str, ...], Era] = {}

# How long a legacy server may stay silent on the probe before we assume it ignores unknown
# pre-handshake methods (the official SDK waits 10 s; never longer than the handshake).
PROBE_TIMEOUT = 10.0


async def negotiate(session: ClientSession) -> None:
    """Run the handshake or discovery that fits `session.server.protocol`."""
    pin = session.server.protocol
    legacy_only = getattr(session.transport, "legacy_only", False)
    if pin in HANDSHAKE_VERSIONS:
        await _initialize(session, pin)
    elif (
        pin == "legacy"
        or legacy_only
        or (pin == "auto" and _ERA_CACHE.get(session.server.identity) == "legacy")
    ):
        await _initialize(session, LATEST_HANDSHAKE)
    elif pin in MODERN_VERSIONS or pin == "modern":
        version = pin if pin in MODERN_VERSIONS else LATEST_MODERN
        if not await _discover(session, version):
            raise ProtocolError(
                f"{session.server.label}: server does not speak protocol {version} "
                "(it is pinned by the 'protocol' setting)"
            )
    else:
        if not await _discover(session, LATEST_MODERN):
            await _initialize(session, LATEST_HANDSHAKE)
        # Only a probe's verdict is worth remembering; a pin says nothing about the server.
        _ERA_CACHE[session.server.identity] = session.era


async def _discover(session: ClientSession, version: str) -> bool:
    """Probe with `server/discover`; on success fill the session and return True."""
    timeout = min(PROBE_TIMEOUT, session.server.handshake_timeout)
    session.protocol_version = version
    engine = session._engine
    try:
        result = await engine.request(
            "server/discover",
            {"_meta": session.modern_meta()},
            timeout=timeout,
            cancellable=False,
        )
    except UnsupportedVersion as exc:
        retry = newest_mutual(list(exc.supported), MODERN_VERSIONS)
        if retry is None:
            return False
        session.protocol_version = retry
        result = await engine.request(
            "server/discover", {"_meta": session.modern_meta()}, timeout=timeout
        )
    except AuthenticationError:
        raise
    except (RpcError, RequestTimeout, HttpError):
        # A legacy server: it rejected or ignored the method, or (HTTP) refused the POST.
        return False
    except ConnectionClosed:
        if session.closed is not None:
            raise  # the connection itself is gone (a stdio server died): nothing to fall to
        # Only the probe's own HTTP stream ended without an answer (a legacy server or a
        # proxy cutting an unknown request short): the handshake may still work.
        return False
    chosen = newest_mutual(result.get("supportedVersions"), MODERN_VERSIONS)
    if chosen is None:
        # A stateful server answering discover with legacy versions only: use the handshake.
        return False
    session.era = "modern"
    session.protocol_version = chosen
    _fill_server(session, result, _server_info_of(result))
    return True


def _server_info_of(result: dict[str, Any]) -> Any:
    meta = result.get("_meta")
    if isinstance(meta, dict) and "io.modelcontextprotocol/serverInfo" in meta:
        return meta["io.modelcontextprotocol/serverInfo"]
    # Some pre-release servers put it at the top level.
    return result.get("serverInfo")


async def _initialize(session: ClientSession, offer: str) -> None:
    """The stateful handshake: `initialize`, check the version, `notifications/initialized`."""
    session.era = "legacy"
    session.protocol_version = offer
    params = {
        "protocolVersion": offer,
        "capabilities": session.capabilities,
        "clientInfo": session.client_info,
    }
    try:
        result = await session._engine.request(
            "initialize", params, timeout=session.server.handshake_timeout, cancellable=False
        )
    except UnsupportedVersion:
        # A modern server that was too slow for the probe: probe once more.
        if await _discover(session, LATEST_MODERN):
            return
        raise
    version = result.get("protocolVersion")
    if version not in HANDSHAKE_VERSIONS:
        raise ProtocolError(
            f"{session.server.label}: server answered protocol version {version!r}, which "
            f"paicli does not support (it speaks {', '.join(KNOWN_VERSIONS)})"
        )
    session.protocol_version = version
    if hasattr(session.transport, "protocol_version"):
        # HTTP sends the agreed version as a header on every later request.
        session.transport.protocol_version = version
    _fill_server(session, result, result.get("serverInfo"))
    await session._engine.notify("notifications/initialized")


def _fill_server(session: ClientSession, result: dict[str, Any], info: Any) -> None:
    caps = result.get("capabilities")
    session.server_capabilities = caps if isinstance(caps, dict) else {}
    instructions = result.get("instructions")
    session.instructions = instructions if isinstance(instructions, str) else None
    session.server_info = Implementation.from_wire(info)
