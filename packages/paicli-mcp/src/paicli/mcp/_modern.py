"""The 2026-07-28 request loop of a session (the "modern" era).

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
from collections.abc import Awaitable, Callable, Collection
from typing import Any

from ._rpc import RpcEngine
from ._transport import JsonObject
from ._versions import MODERN_VERSIONS, newest_mutual
from .errors import HandlerError, McpError, ProtocolError, RpcError, UnsupportedVersion
from .handlers import ClientHandlers

__all__ = ["ModernRequests", "listen_filter", "modern_meta"]

log = logging.getLogger("paicli.mcp.session")

META = "io.modelcontextprotocol/"
# Methods whose 2026 results may be `input_required` (multi round-trip requests).
MRTR_METHODS = frozenset({"tools/call", "prompts/get", "resources/read"})
# 2026: the HTTP headers did not match the body (e.g. stale x-mcp-header annotations).
HEADER_MISMATCH = -32020
# Round cap as in the reference SDKs: a server that keeps asking is broken or hostile.
MAX_INPUT_ROUNDS = 10
# A result with only `requestState` asks us to come back later: back off 50 ms up to 250 ms.
STATE_ONLY_BACKOFF = (0.05, 0.1, 0.2, 0.25)


def modern_meta(
    version: str,
    capabilities: JsonObject,
    client_info: JsonObject,
    log_level: str | None = None,
) -> JsonObject:
    """The per-request `_meta` of the 2026-07-28 revision."""
    meta: JsonObject = {
        META + "protocolVersion": version,
        META + "clientCapabilities": capabilities,
        META + "clientInfo": client_info,
    }
    if log_level is not None:
        meta[META + "logLevel"] = log_level
    return meta


class ModernRequests:
    """Sends requests shaped for the 2026 era for one session.

    `meta()` builds the current `_meta`; `on_version(v)` switches the session to another
    mutual version after a -32022; `refresh_tools()` lists tools again after a -32020.
    """

    def __init__(
        self,
        engine: RpcEngine,
        handlers: ClientHandlers,
        label: str,
        *,
        meta: Callable[[], JsonObject],
        on_version: Callable[[str], None],
        refresh_tools: Callable[[], Awaitable[object]],
    ) -> None:
        self._engine = engine
        self._handlers = handlers
        self._label = label
        self._meta = meta
        self._on_version = on_version
        self._refresh_tools = refresh_tools

    async def request(self, method: str, params: JsonObject, **options: Any) -> JsonObject:
        """Send `method` and return its complete result (after any input rounds)."""
        retry: JsonObject = {}
        version_retried = headers_retried = False
        rounds = 0
        while True:
            meta = _merged_meta(params.get("_meta", {}), self._meta())
            try:
                result = await self._engine.request(
                    method, {**params, **retry, "_meta": meta}, **options
                )
            except UnsupportedVersion as exc:
                version = newest_mutual(list(exc.supported), MODERN_VERSIONS)
                if version_retried or version is None:
                    raise
                version_retried = True
                self._on_version(version)
                continue
            except RpcError as exc:
                if exc.code != HEADER_MISMATCH or method != "tools/call" or headers_retried:
                    raise
                # The tool's header annotations changed under us: refresh them, retry once.
                headers_retried = True
                await self._refresh_tools()
                continue
            result_type = result.get("resultType", "complete")
            if result_type == "complete":
                return result
            if result_type == "task" and method == "tools/call" and _declares_tasks(meta):
                return result  # the caller's (ClientSession.call_tool_as_task) to poll
            if result_type != "input_required" or method not in MRTR_METHODS:
                raise ProtocolError(f"{method}: unexpected resultType {result_type!r}")
            rounds += 1
            if rounds > MAX_INPUT_ROUNDS:
                raise ProtocolError(f"{method}: server asked for input {rounds} times; giving up")
            retry = await self._fulfil_input(method, result, rounds)

    async def _fulfil_input(self, method: str, result: JsonObject, rounds: int) -> JsonObject:
        """Answer a server's `inputRequests` and build the retry's extra params."""
        asks = result.get("inputRequests")
        retry: JsonObject = {}
        if isinstance(asks, dict) and asks:
            keys = list(asks)
            answers = await asyncio.gather(*(self._answer_input(asks[k]) for k in keys))
            retry["inputResponses"] = dict(zip(keys, answers, strict=True))
        elif "requestState" in result:
            await asyncio.sleep(STATE_ONLY_BACKOFF[min(rounds, len(STATE_ONLY_BACKOFF)) - 1])
        else:
            raise ProtocolError(f"{method}: input_required result with nothing to answer")
        if "requestState" in result:
            # Echoed byte for byte: the state is the server's, never ours to read.
            retry["requestState"] = result["requestState"]
        return retry

    async def _answer_input(self, ask: Any) -> JsonObject:
        if not isinstance(ask, dict) or not isinstance(ask.get("method"), str):
            raise ProtocolError(f"malformed input request: {ask!r:.200}")
        method = ask["method"]
        params = ask.get("params")
        try:
            return await self._handlers.answer(method, params if isinstance(params, dict) else None)
        except Exception as exc:
            # Our own handler's failure (or a missing one), not the server's error: keep the
            # two apart so callers never mistake it for a server's JSON-RPC error.
            reason = exc.message if isinstance(exc, RpcError) else str(exc)
            raise HandlerError(
                f"{self._label}: could not answer the server's {method}: {reason}"
            ) from exc

    async def listen(self, wanted: JsonObject) -> None:
        """Hold a 2026 `subscriptions/listen` request open; its notifications arrive tagged
        with the request id and reach subscribers like any other notification."""
        try:
            await self.request("subscriptions/listen", {"notifications": wanted}, timeout=None)
        except McpError as exc:
            log.warning("%s: subscription stream ended: %s", self._label, exc)


def _merged_meta(given: JsonObject, ours: JsonObject) -> JsonObject:
    """Our per-request `_meta` over the caller's, keeping extensions the caller declared
    for this one request (the tasks extension, say)."""
    key = META + "clientCapabilities"
    merged = {**given, **ours}
    extra = given.get(key, {}).get("extensions") if isinstance(given.get(key), dict) else None
    if isinstance(extra, dict) and extra:
        caps = dict(ours.get(key) or {})
        caps["extensions"] = {**(caps.get("extensions") or {}), **extra}
        merged[key] = caps
    return merged


def _declares_tasks(meta: JsonObject) -> bool:
    caps = meta.get(META + "clientCapabilities")
    extensions = caps.get("extensions") if isinstance(caps, dict) else None
    return isinstance(extensions, dict) and META + "tasks" in extensions


def listen_filter(
    server_capabilities: JsonObject, resources: Collection[str], tasks: Collection[str] = ()
) -> JsonObject:
    """The notifications a 2026 `subscriptions/listen` asks for: each list the server
    announces changes of, and the resources subscribed to."""
    wanted: JsonObject = {}
    for cap, key in (
        ("tools", "toolsListChanged"),
        ("prompts", "promptsListChanged"),
        ("resources", "resourcesListChanged"),
    ):
        section = server_capabilities.get(cap)
        if isinstance(section, dict) and section.get("listChanged"):
            wanted[key] = True
    if resources:
        wanted["resourceSubscriptions"] = sorted(resources)
    if tasks:
        wanted["taskIds"] = sorted(tasks)  # the tasks extension's notifications/tasks
    return wanted
