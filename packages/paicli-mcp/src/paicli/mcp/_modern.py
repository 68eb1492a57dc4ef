"""The 2026-07-28 request loop of a `ClientSession` (the "modern" era).

Every request carries the per-request `_meta` (version, capabilities, clientInfo[, logLevel]).
One retry each for -32022 (another mutual version) and, on `tools/call`, -32020 (stale header
annotations: tools are listed again). An `input_required` result (multi round-trip requests)
is answered through the session's `ClientHandlers` and the request re-sent, at most
MAX_INPUT_ROUNDS times, echoing the server's `requestState` untouched. Also the long-lived
`subscriptions/listen` request that stands in for the legacy subscribe calls.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from ._transport import JsonObject
from ._versions import MODERN_VERSIONS, newest_mutual
from .errors import HandlerError, McpError, ProtocolError, RpcError, UnsupportedVersion

if TYPE_CHECKING:
    from .session import ClientSession

__all__ = ["listen", "listen_filter", "modern_request"]

log = logging.getLogger("paicli.mcp.session")

# Methods whose 2026 results may be `input_required` (multi round-trip requests).
MRTR_METHODS = frozenset({"tools/call", "prompts/get", "resources/read"})
# 2026: the HTTP headers did not match the body (e.g. stale x-mcp-header annotations).
HEADER_MISMATCH = -32020
# Round cap as in the reference SDKs: a server that keeps asking is broken or hostile.
MAX_INPUT_ROUNDS = 10
# A result with only `requestState` asks us to come back later: back off 50 ms up to 250 ms.
STATE_ONLY_BACKOFF = (0.05, 0.1, 0.2, 0.25)


async def modern_request(
    session: ClientSession, method: str, params: JsonObject, **options: Any
) -> JsonObject:
    """Send a request shaped for the 2026 era; return its complete result."""
    retry: JsonObject = {}
    version_retried = headers_retried = False
    rounds = 0
    while True:
        meta = {**params.get("_meta", {}), **session.modern_meta()}
        try:
            result = await session._engine.request(
                method, {**params, **retry, "_meta": meta}, **options
            )
        except UnsupportedVersion as exc:
            version = newest_mutual(list(exc.supported), MODERN_VERSIONS)
            if version_retried or version is None:
                raise
            version_retried = True
            session.protocol_version = version
            continue
        except RpcError as exc:
            if exc.code != HEADER_MISMATCH or method != "tools/call" or headers_retried:
                raise
            # The tool's header annotations changed under us: refresh them, retry once.
            headers_retried = True
            await session.list_tools()
            continue
        result_type = result.get("resultType", "complete")
        if result_type == "complete":
            return result
        if result_type != "input_required" or method not in MRTR_METHODS:
            raise ProtocolError(f"{method}: unexpected resultType {result_type!r}")
        rounds += 1
        if rounds > MAX_INPUT_ROUNDS:
            raise ProtocolError(f"{method}: server asked for input {rounds} times; giving up")
        retry = await _fulfil_input(session, method, result, rounds)


async def _fulfil_input(
    session: ClientSession, method: str, result: JsonObject, rounds: int
) -> JsonObject:
    """Answer a server's `inputRequests` and build the retry's extra params."""
    asks = result.get("inputRequests")
    retry: JsonObject = {}
    if isinstance(asks, dict) and asks:
        keys = list(asks)
        answers = await asyncio.gather(*(_answer_input(session, asks[k]) for k in keys))
        retry["inputResponses"] = dict(zip(keys, answers, strict=True))
    elif "requestState" in result:
        await asyncio.sleep(STATE_ONLY_BACKOFF[min(rounds, len(STATE_ONLY_BACKOFF)) - 1])
    else:
        raise ProtocolError(f"{method}: input_required result with nothing to answer")
    if "requestState" in result:
        # Echoed byte for byte: the state is the server's, never ours to read.
        retry["requestState"] = result["requestState"]
    return retry


async def _answer_input(session: ClientSession, ask: Any) -> JsonObject:
    if not isinstance(ask, dict) or not isinstance(ask.get("method"), str):
        raise ProtocolError(f"malformed input request: {ask!r:.200}")
    method = ask["method"]
    params = ask.get("params")
    try:
        return await session.handlers.answer(method, params if isinstance(params, dict) else None)
    except Exception as exc:
        # Our own handler's failure (or a missing one), not the server's error: keep the
        # two apart so callers never mistake it for a server's JSON-RPC error.
        reason = exc.message if isinstance(exc, RpcError) else str(exc)
        raise HandlerError(
            f"{session.server.label}: could not answer the server's {method}: {reason}"
        ) from exc


def listen_filter(session: ClientSession) -> JsonObject:
    """The notifications a 2026 `subscriptions/listen` asks for: each list the server
    announces changes of, and the resources subscribed to."""
    caps = session.server_capabilities
    wanted: JsonObject = {}
    for cap, key in (
        ("tools", "toolsListChanged"),
        ("prompts", "promptsListChanged"),
        ("resources", "resourcesListChanged"),
    ):
        section = caps.get(cap)
        if isinstance(section, dict) and section.get("listChanged"):
            wanted[key] = True
    if session._resource_subscriptions:
        wanted["resourceSubscriptions"] = sorted(session._resource_subscriptions)
    return wanted


async def listen(session: ClientSession, wanted: JsonObject) -> None:
    """Hold a 2026 `subscriptions/listen` request open; its notifications arrive tagged
    with the request id and reach subscribers like any other notification."""
    try:
        await modern_request(
            session, "subscriptions/listen", {"notifications": wanted}, timeout=None
        )
    except McpError as exc:
        log.warning("%s: subscription stream ended: %s", session.server.label, exc)
