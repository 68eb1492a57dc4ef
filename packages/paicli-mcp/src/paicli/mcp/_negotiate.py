"""Protocol negotiation: pick the era and version for one server, and remember the verdict.

Auto mode probes with `server/discover` (2026-07-28). A `DiscoverResult` naming a modern
version, or a -32022 naming one, proves a modern server; any other answer, or silence within
the probe timeout, means legacy, and the `initialize` handshake follows on the same
connection. The fallback is never keyed on one error code (legacy servers differ).

A hand-written tool in the minimal dialect (`_minimal`) answers whichever request comes first
with its own handshake; that shape decides, the session then sends it tool calls only, and
it never gets a second handshake: over stdio the probe's clock starts only once the server
has read the probe (a slow starter is not taken for a server that ignores it), and a probe
answered after `initialize` was sent still wins if it is a minimal handshake.

`negotiate()` returns an `Agreement`, which the session keeps, and changes nothing else but
telling a transport that takes the `AgreementHook` what was agreed (before any later message:
the HTTP version header, batches). A stdio server that exits on the probe before answering
anything raises `ClosedOnProbe`: `connect()` starts it again with `initialize` (a restart
needs a new process, which only its maker can give). Verdicts are remembered in an
`EraCache` that its owner (a server manager, or a library user who connects to the same
server repeatedly) passes in.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from ._era_cache import EraCache, Verdict
from ._minimal import MINIMAL, Dialect, is_minimal_handshake, minimal_tools
from ._rpc import RpcEngine
from ._transport import AgreementHook, Era, JsonObject, Transport, process_of
from ._versions import (
    HANDSHAKE_VERSIONS,
    KNOWN_VERSIONS,
    LATEST_HANDSHAKE,
    LATEST_MODERN,
    MODERN_VERSIONS,
    ProtocolChoice,
    newest_mutual,
)
from .errors import (
    AuthenticationError,
    ClosedOnProbe,
    ConnectionClosed,
    HttpError,
    ProtocolError,
    RequestTimeout,
    RpcError,
    UnsupportedVersion,
)
from .types import UNREADABLE_META, Implementation, Tool

__all__ = ["Agreement", "EraCache", "Offer", "Verdict", "negotiate"]

# While the server has not read the probe yet (it is still starting), how often to look
# again: a pipe gives no event when its reader catches up, and 20 ms is short next to any
# start-up worth waiting for.
UNREAD_POLL = 0.02


@dataclass(frozen=True, slots=True)
class Offer:
    """What this client brings to negotiation with one server."""

    label: str  # the server's name, for errors
    protocol: ProtocolChoice
    capabilities: JsonObject
    client_info: JsonObject
    handshake_timeout: float
    identity: tuple[str, ...] | None = None  # key for the era cache (None: not cached)
    cache: EraCache | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class Agreement:
    """The outcome of negotiation: what both sides will speak, and who the server is."""

    era: Era
    protocol_version: str
    server_info: Implementation
    server_capabilities: JsonObject
    instructions: str | None
    dialect: Dialect = "mcp"
    # The tools a minimal-dialect handshake listed (MCP lists tools on request).
    tools: tuple[Tool, ...] = ()
    # Seconds the 2026 discovery probe took before negotiation fell back to the handshake
    # (None: no fallback).
    probe_fallback: float | None = None

    @property
    def verdict(self) -> Verdict:
        return "minimal" if self.dialect == "minimal" else self.era


MetaBuilder = Callable[[str], JsonObject]


async def negotiate(
    engine: RpcEngine, transport: Transport, offer: Offer, modern_meta: MetaBuilder
) -> Agreement:
    """Run the handshake or discovery that fits `offer.protocol`; `modern_meta(version)`
    builds the per-request `_meta` of a 2026 request. One deadline,
    `offer.handshake_timeout`, covers every request this takes."""
    pin = offer.protocol
    cached = offer.cache.get(offer.identity) if offer.cache and offer.identity else None
    talk = _Talk(engine, transport, offer, modern_meta)
    try:
        return await _negotiate(talk, pin, cached)
    finally:
        await talk.aclose()


async def _negotiate(talk: _Talk, pin: str, cached: Verdict | None) -> Agreement:
    offer, transport = talk.offer, talk.transport
    if pin in HANDSHAKE_VERSIONS:
        return await talk.initialize(pin)
    # A minimal tool answers `initialize` as well as anything (its answer's shape decides).
    skip_probe = pin == "auto" and cached in ("legacy", "minimal")
    if pin == "legacy" or transport.traits.legacy_only or skip_probe:
        return await talk.initialize(LATEST_HANDSHAKE)
    if pin in MODERN_VERSIONS or pin == "modern":
        version = pin if pin in MODERN_VERSIONS else LATEST_MODERN
        agreement = await talk.discover(version, patient=True)
        if agreement is None:
            raise ProtocolError(
                f"{offer.label}: server does not speak protocol {version} "
                "(it is pinned by the 'protocol' setting)"
            )
        return agreement
    started = asyncio.get_running_loop().time()
    try:
        agreement = await talk.discover(LATEST_MODERN)
        if agreement is None:
            probed = asyncio.get_running_loop().time() - started
            agreement = await talk.initialize(LATEST_HANDSHAKE)
            agreement = dataclasses.replace(agreement, probe_fallback=probed)
    except RequestTimeout as exc:
        if exc.method != "initialize":
            raise
        raise RequestTimeout(
            "handshake (server/discover, then initialize)",
            offer.handshake_timeout,
            server=offer.label,
        ) from None
    if offer.cache is not None and offer.identity is not None:
        offer.cache.remember(offer.identity, agreement.verdict)
    return agreement


class _Talk:
    """The two ways in: the 2026 discovery probe, and the `initialize` handshake."""

    def __init__(
        self, engine: RpcEngine, transport: Transport, offer: Offer, modern_meta: MetaBuilder
    ) -> None:
        self.engine = engine
        self.transport = transport
        # The optional transport hooks negotiation uses: told the agreement; the server's
        # stdin backlog (a process only).
        self._hook = transport if isinstance(transport, AgreementHook) else None
        self._process = process_of(transport)
        self.offer = offer
        self.modern_meta = modern_meta
        self._loop = asyncio.get_running_loop()
        self._deadline = self._loop.time() + offer.handshake_timeout
        # A probe given up on but still awaiting its answer, which may yet prove a minimal
        # tool that was slow to answer (see `initialize`).
        self._late: asyncio.Future[JsonObject] | None = None

    def agreed(self, era: Era, version: str) -> None:
        """Tell the transport, if it takes the hook, what was agreed."""
        if self._hook is not None:
            self._hook.negotiated(era, version)

    def left(self) -> float:
        """Seconds left of the one deadline of the whole negotiation."""
        return max(self._deadline - self._loop.time(), 0.001)

    async def aclose(self) -> None:
        """Stop waiting for a probe given up on (its late answer is dropped quietly)."""
        late, self._late = self._late, None
        if late is not None:
            await _cancelled(late)

    async def discover(self, version: str, *, patient: bool = False) -> Agreement | None:
        """Probe with `server/discover`; the agreement if the server is modern (or a minimal
        tool), else None. The probe waits the transport's `traits.discovery_timeout` once the
        server has read it, at most half the time left (a silent legacy server must leave
        the handshake time to answer), or (`patient`: the server is known to be modern) all
        the time left."""
        engine = self.engine
        try:
            result = await self._probe(version, patient=patient)
            if result is None:
                return None  # no answer in time: the handshake follows
        except UnsupportedVersion as exc:
            retry = newest_mutual(list(exc.supported), MODERN_VERSIONS)
            if retry is None:
                return None
            result = await engine.request(
                "server/discover", {"_meta": self.modern_meta(retry)}, timeout=self.left()
            )
        except AuthenticationError:
            raise
        except (RpcError, RequestTimeout, HttpError):
            # A legacy server: it rejected or ignored the method, or (HTTP) refused the POST.
            return None
        except ConnectionClosed as exc:
            if engine.closed is not None:
                if self._exited_on_probe(exc, patient=patient):
                    raise ClosedOnProbe.of(exc) from exc
                raise  # the connection itself is gone (a stdio server died): nothing to try
            # Only the probe's own HTTP stream ended without an answer (a legacy server or a
            # proxy cutting an unknown request short): the handshake may still work.
            return None
        if is_minimal_handshake(result):
            return self.minimal(result)
        chosen = newest_mutual(result.get("supportedVersions"), MODERN_VERSIONS)
        if chosen is None:
            # A stateful server answering discover with legacy versions only: handshake.
            return None
        self.agreed("modern", chosen)
        return _agreement("modern", chosen, result, _server_info_of(result))

    def _exited_on_probe(self, exc: ConnectionClosed, *, patient: bool) -> bool:
        """Whether a stdio server ended on the probe itself, having answered nothing: an
        SDK older than the 2026 revision that takes `initialize` first only (a server
        stopped by a resource limit, or one known to be modern, ended for other reasons)."""
        return (
            not patient
            and self._process is not None
            and self.engine.responses == 0
            and type(exc) is ConnectionClosed
            and exc.limit is None
        )

    async def _probe(self, version: str, *, patient: bool) -> JsonObject | None:
        """The probe's answer, or None when it did not come in time (the probe is then
        kept in `_late`, still waiting)."""
        request = self.engine.request(
            "server/discover",
            {"_meta": self.modern_meta(version)},
            timeout=self.left(),
            cancellable=False,
        )
        if patient:
            return await request
        probe = self._late = asyncio.ensure_future(request)
        if await self._answered(probe):
            self._late = None
            return probe.result()
        return None

    async def _answered(self, probe: asyncio.Future[JsonObject]) -> bool:
        """Wait for the probe's answer; False when it is overdue (see `discover`)."""
        give_up = self._loop.time() + self.left() / 2
        while True:
            # (The first round also lets the probe's task write it.)
            done, _ = await asyncio.wait({probe}, timeout=UNREAD_POLL)
            if done:
                return True
            if self._loop.time() >= give_up:
                return False
            if self._process is None or not self._process.input_unread():
                break
            # Still starting: it has not read the probe, so its silence means nothing yet.
        patience = self.transport.traits.discovery_timeout
        wait = min(patience, max(give_up - self._loop.time(), 0.0))
        done, _ = await asyncio.wait({probe}, timeout=wait)
        return bool(done)

    async def initialize(self, offer: str) -> Agreement:
        """The stateful handshake: `initialize`, check the version, `notifications/initialized`."""
        params = {
            "protocolVersion": offer,
            "capabilities": self.offer.capabilities,
            "clientInfo": self.offer.client_info,
        }
        label = self.offer.label
        try:
            result = await self._first_answer(
                self.engine.request("initialize", params, timeout=self.left(), cancellable=False)
            )
        except UnsupportedVersion as exc:
            # A modern server that was too slow for the probe: probe once more.
            agreement = await self.discover(LATEST_MODERN, patient=True)
            if agreement is not None:
                return agreement
            raise _refused(label, exc) from exc
        except RpcError as exc:
            raise _refused(label, exc) from exc
        if is_minimal_handshake(result):
            return self.minimal(result)
        version = result.get("protocolVersion")
        if version not in HANDSHAKE_VERSIONS:
            raise ProtocolError(
                f"{label}: server answered protocol version {version!r}, which "
                f"paicli does not support (it speaks {', '.join(KNOWN_VERSIONS)})"
            )
        missing = [key for key in ("capabilities", "serverInfo") if not _is_object(result, key)]
        if missing:
            raise ProtocolError(
                f"{label}: the server's answer to initialize has no "
                f"{' and no '.join(repr(key) for key in missing)} object, which the "
                "handshake requires"
            )
        version = str(version)
        self.agreed("legacy", version)
        agreement = _agreement("legacy", version, result, result.get("serverInfo"))
        await self.engine.notify("notifications/initialized")
        return agreement

    async def _first_answer(self, request: Awaitable[JsonObject]) -> JsonObject:
        """The answer to `initialize`, unless the probe given up on answers first with a
        minimal handshake: a minimal tool that was slow to answer its first line, which
        will take `initialize` for a tool call (its answer to that is dropped)."""
        late, self._late = self._late, None
        if late is None:
            return await request
        answer = asyncio.ensure_future(request)
        try:
            done, _ = await asyncio.wait({answer, late}, return_when=asyncio.FIRST_COMPLETED)
            if late in done and _succeeded(late) and is_minimal_handshake(late.result()):
                return late.result()
            return await answer
        finally:
            await _cancelled(answer)
            await _cancelled(late)

    def minimal(self, result: JsonObject) -> Agreement:
        """The agreement with a tool that answered in the minimal dialect."""
        info = result.get("server_info", result.get("serverInfo"))
        return Agreement(
            era="legacy",
            protocol_version=MINIMAL,
            server_info=Implementation.from_wire(info),
            server_capabilities={"tools": {}},
            instructions=None,
            dialect="minimal",
            tools=minimal_tools(result, self.offer.label),
        )


def _succeeded(future: asyncio.Future[Any]) -> bool:
    return not future.cancelled() and future.exception() is None


async def _cancelled(future: asyncio.Future[Any]) -> None:
    """Cancel `future` if it is still running and wait until it has ended."""
    future.cancel()
    await asyncio.wait({future})
    if not future.cancelled():
        future.exception()  # retrieved: how an abandoned request ended is of no interest


def _refused(label: str, exc: RpcError) -> RpcError:
    """The server's error answer to `initialize`, saying it was the handshake it refused
    (the same error type, code and data)."""
    unreadable = exc.data.get(UNREADABLE_META) if isinstance(exc.data, dict) else None
    if unreadable is not None:  # not the server's refusal: its answer did not parse
        message = (
            f"{label}: the server's answer to the handshake (initialize) could not be read "
            f"({unreadable})"
        )
    else:
        message = f"{label}: the server refused the handshake (initialize): {exc.message}"
    return type(exc)(exc.code, message, exc.data)


def _is_object(result: dict[str, Any], key: str) -> bool:
    return isinstance(result.get(key), dict)


def _server_info_of(result: dict[str, Any]) -> Any:
    meta = result.get("_meta")
    if isinstance(meta, dict) and "io.modelcontextprotocol/serverInfo" in meta:
        return meta["io.modelcontextprotocol/serverInfo"]
    # Some pre-release servers put it at the top level.
    return result.get("serverInfo")


def _agreement(era: Era, version: str, result: dict[str, Any], info: Any) -> Agreement:
    caps = result.get("capabilities")
    instructions = result.get("instructions")
    return Agreement(
        era=era,
        protocol_version=version,
        server_info=Implementation.from_wire(info),
        server_capabilities=caps if isinstance(caps, dict) else {},
        instructions=instructions if isinstance(instructions, str) else None,
    )
