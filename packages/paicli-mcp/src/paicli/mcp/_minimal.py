"""The minimal JSON-RPC dialect that many hand-written tools speak instead of full MCP.

Such a tool answers the first line it reads, whatever its method, with
`{"server_info": {...}, "capabilities": {"tools": [{"name", "description", "input_schema"}]}}`
and then takes each call as a request whose method is the tool's name and whose params are
its arguments, answered by any JSON value or by an error. Anything else (a notification, a
second handshake, `tools/list`, `ping`, `notifications/cancelled`) may crash it or go
unanswered, so a session in this dialect sends tool calls and nothing else: no cancellation
notices either (a timed-out call just fails).
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any, Literal

from ._rpc import RpcEngine
from ._transport import JsonObject, ProcessTransport
from .errors import ProtocolError, RequestTimeout, RpcError
from .types import CallToolResult, TextContent, Tool

__all__ = ["MINIMAL", "Dialect", "MinimalCalls", "is_minimal_handshake", "minimal_tools"]

log = logging.getLogger("paicli.mcp.session")

#: What a session speaks: full MCP (either era), or the minimal dialect of hand-written tools.
Dialect = Literal["mcp", "minimal"]
#: The protocol version a minimal-dialect session reports (the dialect has none).
MINIMAL = "minimal"
# A handshake listing more tools than this is cut short (as `ClientSession.MAX_ITEMS`).
MAX_TOOLS = 10_000
# A tool that gives no input schema takes an object of any properties.
ANY_OBJECT: JsonObject = {"type": "object"}


def is_minimal_handshake(result: JsonObject) -> bool:
    """Whether a handshake answer has the minimal dialect's shape: the tool list itself in
    `capabilities.tools` (MCP has an object there), and no MCP version field."""
    capabilities = result.get("capabilities")
    return (
        isinstance(capabilities, dict)
        and isinstance(capabilities.get("tools"), list)
        and "protocolVersion" not in result
        and "supportedVersions" not in result
    )


def minimal_tools(result: JsonObject, label: str) -> tuple[Tool, ...]:
    """The tools a minimal handshake lists; an entry without a name is skipped (logged)."""
    entries: list[Any] = result["capabilities"]["tools"]
    if len(entries) > MAX_TOOLS:
        log.warning("%s: the handshake lists %d tools; keeping %d", label, len(entries), MAX_TOOLS)
    tools: list[Tool] = []
    for entry in entries[:MAX_TOOLS]:
        name = entry.get("name") if isinstance(entry, dict) else None
        if not isinstance(name, str) or not name:
            log.warning("%s: skipping a tool without a name: %.200r", label, entry)
            continue
        schema = entry.get("input_schema", entry.get("inputSchema"))
        description = entry.get("description")
        tools.append(
            Tool(
                name=name,
                input_schema=schema if isinstance(schema, dict) else dict(ANY_OBJECT),
                description=description if isinstance(description, str) else None,
            )
        )
    return tuple(tools)


class MinimalCalls:
    """Tool calls to one tool in the minimal dialect.

    Such a tool handles one line at a time, so a call that timed out holds up every later
    one until the tool answers it, and it cannot be told to stop. When the tool has said
    nothing at all since a call timed out, the next call first restarts it (when it runs as
    a local `process`: stdio) and sends the new process its handshake line.
    """

    def __init__(
        self,
        engine: RpcEngine,
        process: ProcessTransport | None,
        label: str,
        handshake_timeout: float,
    ) -> None:
        self._engine = engine
        self._process = process
        self._label = label
        self._handshake_timeout = handshake_timeout
        # The engine's response count when a call timed out, until the tool answers again.
        self._silent_since: int | None = None
        self._restarting = asyncio.Lock()

    async def call(self, name: str, arguments: JsonObject, timeout: float | None) -> CallToolResult:
        """Call tool `name`: the tool's name is the method, the arguments are the params. A
        string result is text; any other JSON value is its JSON text and the structured
        content; an error answer is a tool error carrying its message."""
        if self._silent_since is not None:
            await self._restart_if_silent()
        try:
            answer = await self._engine.request(
                name, arguments, timeout=timeout, cancellable=False, any_result=True
            )
        except RpcError as exc:
            return CallToolResult(content=[TextContent(exc.message)], is_error=True)
        except RequestTimeout:
            if self._silent_since is None:
                self._silent_since = self._engine.responses
            raise
        value = answer["value"]
        if isinstance(value, str):
            return CallToolResult(content=[TextContent(value)])
        try:
            text = json.dumps(value, ensure_ascii=False)
        except RecursionError:
            # The parser takes nesting up to 1024 levels; the encoder stops near 1000.
            message = f"{self._label}: {name}: the answer is nested too deeply to be shown"
            return CallToolResult(content=[TextContent(message)], is_error=True)
        return CallToolResult(
            content=[TextContent(text)], structured_content=None if value is None else value
        )

    async def _restart_if_silent(self) -> None:
        async with self._restarting:
            silent_since = self._silent_since
            if silent_since is None:
                return  # another call restarted it meanwhile
            self._silent_since = None
            if self._engine.responses != silent_since:
                return  # it answered (the late call, at least): it is alive
            if self._process is None or not await self._process.restart():
                return
            log.warning("%s: restarted: it had not answered since a call timed out", self._label)
            handshake = await self._engine.request(
                "initialize", {}, timeout=self._handshake_timeout, cancellable=False
            )
            if not is_minimal_handshake(handshake):
                raise ProtocolError(
                    f"{self._label}: after a restart the tool no longer answers in the "
                    "minimal JSON-RPC dialect"
                )
