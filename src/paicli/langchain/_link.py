"""One live session with one server, shared by all of its bridged tools.

The session is opened on first need and kept; calls run concurrently on it. When the server
crashes or exits, the call in flight fails with `ServerUnavailable` and the session is
dropped, so the next call starts the server again (a retrying runnable recovers without any
help). After a call timed out, the next call first pings the server: one that no longer
answers is restarted rather than waited on again (a minimal-dialect tool cannot be pinged;
the library restarts one that has said nothing since its call timed out). Failures are
translated here, once, into the bridge's exceptions.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any

from paicli.langchain.errors import BridgeError, ServerUnavailable, ToolTimeout
from paicli.mcp import (
    CallToolResult,
    ClientSession,
    ConnectionClosed,
    EraCache,
    HttpError,
    HttpServer,
    McpError,
    RequestTimeout,
    RpcError,
    StdioServer,
    TextContent,
    Tool,
    connect,
)

if TYPE_CHECKING:
    from paicli.servers.manager import Connector

__all__ = ["ServerLink"]

# A healthy server answers a ping at once; a hung one is given this long (or the call's own
# deadline, if shorter) before it is restarted.
PING_AFTER_TIMEOUT = 5.0


class ServerLink:
    """The session with `spec`, opened and reopened on the event loop `loop`."""

    def __init__(
        self,
        spec: StdioServer | HttpServer,
        loop: asyncio.AbstractEventLoop,
        *,
        connector: Connector | None = None,
    ) -> None:
        self.spec = spec
        self.loop = loop
        self.connector = connector  # tests serve in memory; None: `paicli.mcp.connect`
        self._connect: Connector = connector or connect
        # The protocol era found by the first start, so a restart skips the probe.
        self._era_cache = EraCache()
        self._opened: AbstractAsyncContextManager[ClientSession] | None = None
        self._session: ClientSession | None = None
        self._opening = asyncio.Lock()
        self._closed = False
        # The session on which a call last timed out: checked before its next call.
        self._timed_out: ClientSession | None = None

    @property
    def label(self) -> str:
        return self.spec.label

    def __deepcopy__(self, memo: dict[int, object]) -> ServerLink:
        return self  # a copied tool (LangChain copies some) uses the same session

    @property
    def closed(self) -> bool:
        """Closed for good (`aclose`): calls fail rather than start the server again."""
        return self._closed

    async def session(self) -> ClientSession:
        """The live session, starting the server when there is none (or it died)."""
        session = self._session
        if session is not None and session.closed is None:
            return session
        async with self._opening:
            if self._closed:
                raise BridgeError(f"{self.label}: these tools were closed")
            if self._session is not None and self._session.closed is None:
                return self._session
            await self._drop()
            opened = self._connect(
                self.spec, name=self.label, handlers=None, era_cache=self._era_cache
            )
            try:
                self._session = await opened.__aenter__()
            except McpError as exc:
                raise ServerUnavailable(f"{self.label}: cannot start the server: {exc}") from exc
            self._opened = opened
            return self._session

    async def list_tools(self) -> list[Tool]:
        session = await self.session()
        try:
            return await session.list_tools()
        except McpError as exc:
            raise self._translate(exc, "tools/list") from exc

    async def call(
        self, tool: str, arguments: Mapping[str, Any], timeout: float | None
    ) -> CallToolResult:
        """Call `tool`. A tool's error result is returned (`is_error`), and so is a JSON-RPC
        error answer (an unknown tool, invalid arguments): the model can act on both."""
        session = await self.session()
        if self._timed_out is session:
            session = await self._answering(session, timeout)
        try:
            return await session.call_tool(tool, arguments, timeout=timeout)
        except RpcError as exc:
            return CallToolResult([TextContent(f"{self.label}: {tool}: {exc}")], is_error=True)
        except McpError as exc:
            if isinstance(exc, RequestTimeout):
                self._timed_out = session
            if session.closed is not None:
                await self._drop(session)
            raise self._translate(exc, tool) from exc

    async def _answering(self, session: ClientSession, timeout: float | None) -> ClientSession:
        """`session` if its server still answers a ping, else a session with a new server."""
        self._timed_out = None
        wait = min(PING_AFTER_TIMEOUT, timeout or PING_AFTER_TIMEOUT)
        try:
            await session.ping(timeout=wait)
        except McpError:
            await self._drop(session)
            return await self.session()
        return session

    def _translate(self, exc: McpError, what: str) -> BridgeError:
        if isinstance(exc, RequestTimeout):
            return ToolTimeout(f"{self.label}: {what} timed out after {exc.seconds:g}s")
        if isinstance(exc, ConnectionClosed | HttpError):
            return ServerUnavailable(f"{self.label}: {exc}")
        return BridgeError(f"{self.label}: {what} failed: {exc}")

    async def _drop(self, session: ClientSession | None = None) -> None:
        """Close the current session (only if it is still `session`, when given)."""
        if session is not None and session is not self._session:
            return
        opened, self._opened, self._session = self._opened, None, None
        if opened is not None:
            try:
                await opened.__aexit__(None, None, None)
            except McpError:
                pass  # it is gone either way; the crash was reported to the caller

    async def aclose(self) -> None:
        """Stop the server (bounded); calls after this fail. Safe twice."""
        self._closed = True
        async with self._opening:
            await self._drop()
