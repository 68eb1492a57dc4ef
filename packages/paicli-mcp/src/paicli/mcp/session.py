"""`ClientSession`: typed MCP methods over the JSON-RPC engine, in either protocol era.

The session owns its receive task and its modern-era listen task; `aclose()` (or leaving
`async with`) stops both and closes the transport. Era negotiation lives in `_negotiate`;
this module only needs `self.era` and `self.protocol_version` to shape each request. The
2026 request loop (MRTR rounds, -32022/-32020 retries) and the listen request are `_modern`'s.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from typing import Any, Literal, TypeVar

from ._headers import HeaderParam, header_params
from ._modern import listen, listen_filter, modern_request
from ._negotiate import negotiate
from ._rpc import ProgressCallback, RpcEngine
from ._server_spec import ServerSpec
from ._transport import JsonObject, Transport
from ._versions import LATEST_HANDSHAKE, Era
from .errors import ConnectionClosed, McpError, ProtocolError
from .handlers import ClientHandlers
from .types import (
    CallToolResult,
    Completion,
    GetPromptResult,
    Implementation,
    Notification,
    Prompt,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    Tool,
)

__all__ = ["CLIENT_INFO", "ClientSession"]

log = logging.getLogger("paicli.mcp.session")

T = TypeVar("T")
NotificationCallback = Callable[[Notification], object]
LogLevel = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]

CLIENT_INFO: JsonObject = {"name": "paicli", "version": "0.1.0"}
META = "io.modelcontextprotocol/"


class ClientSession:
    """A live connection to one MCP server. Get one from `paicli.mcp.connect(...)`."""

    def __init__(
        self,
        transport: Transport,
        server: ServerSpec,
        *,
        handlers: ClientHandlers | None = None,
        client_info: Mapping[str, Any] | None = None,
    ) -> None:
        self.transport = transport
        self.server = server
        self.handlers = handlers or ClientHandlers()
        self.client_info: JsonObject = dict(client_info or CLIENT_INFO)
        self.capabilities: JsonObject = self.handlers.capabilities()
        self._engine = RpcEngine(
            transport,
            on_request=self.handlers.answer,
            on_notification=self._on_notification,
            label=server.label,
        )
        # Filled in by negotiation.
        self.era: Era = "legacy"
        self.protocol_version: str = LATEST_HANDSHAKE
        self.server_info = Implementation(name="unknown", version="unknown")
        self.server_capabilities: JsonObject = {}
        self.instructions: str | None = None
        self._log_level: LogLevel | None = None
        self._subscribers: list[NotificationCallback] = []
        self._resource_subscriptions: set[str] = set()
        self._reader: asyncio.Task[None] | None = None
        self._listener: asyncio.Task[None] | None = None
        # Every listen task, including replaced ones still winding down; aclose awaits them.
        self._listeners: set[asyncio.Task[None]] = set()
        self._closed = False

    # -- lifecycle -----------------------------------------------------------------------

    async def __aenter__(self) -> ClientSession:
        self._reader = asyncio.get_running_loop().create_task(self._engine.run())
        try:
            await negotiate(self)
        except BaseException:
            await self.aclose()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Stop listening, close the transport (bounded), and end the receive task."""
        if self._closed:
            return
        self._closed = True
        cancelled = False
        tasks = [*self._listeners, *([self._reader] if self._reader else [])]
        for task in tasks:
            task.cancel()
        try:
            await self.transport.aclose()
        except asyncio.CancelledError:
            cancelled = True
        for task in tasks:
            if task is not None:
                try:
                    await task
                except asyncio.CancelledError:
                    if not task.cancelled():
                        cancelled = True
                except Exception:
                    log.exception("session task failed")
        if cancelled:
            raise asyncio.CancelledError

    async def wait_closed(self) -> McpError:
        """Wait until the connection is gone (a crash, or `aclose()`); return why."""
        if self._reader is not None:
            await asyncio.wait({self._reader})
        return self._engine.closed or ConnectionClosed(f"{self.server.label}: closed")

    @property
    def closed(self) -> McpError | None:
        """Why the connection is gone, or None while it is up."""
        return self._engine.closed

    @property
    def pid(self) -> int | None:
        """The server's process id for stdio servers, else None."""
        pid = getattr(self.transport, "pid", None)
        return pid if isinstance(pid, int) else None

    def stderr_lines(self) -> list[str]:
        """The server's last stderr lines (stdio servers; empty otherwise)."""
        lines = getattr(self.transport, "stderr_lines", None)
        return list(lines()) if callable(lines) else []

    # -- requests ------------------------------------------------------------------------

    def modern_meta(self) -> JsonObject:
        """The per-request `_meta` of the 2026-07-28 revision."""
        meta: JsonObject = {
            META + "protocolVersion": self.protocol_version,
            META + "clientCapabilities": self.capabilities,
            META + "clientInfo": self.client_info,
        }
        if self._log_level is not None:
            meta[META + "logLevel"] = self._log_level
        return meta

    async def request(
        self,
        method: str,
        params: JsonObject | None = None,
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
        progress_extends_deadline: bool = False,
        max_timeout: float | None = None,
    ) -> JsonObject:
        """Send any request and return its raw result, shaped for the session's era."""
        if self.era == "legacy":
            return await self._engine.request(
                method,
                params,
                timeout=self.server.request_timeout if timeout is None else timeout,
                on_progress=on_progress,
                progress_extends_deadline=progress_extends_deadline,
                max_timeout=max_timeout,
            )
        return await modern_request(
            self,
            method,
            params or {},
            timeout=self.server.request_timeout if timeout is None else timeout,
            on_progress=on_progress,
            progress_extends_deadline=progress_extends_deadline,
            max_timeout=max_timeout,
        )

    async def notify(self, method: str, params: JsonObject | None = None) -> None:
        """Send a notification to the server."""
        await self._engine.notify(method, params)

    async def _paginate(
        self, method: str, key: str, build: Callable[[Any], T], timeout: float | None
    ) -> list[T]:
        items: list[T] = []
        seen: set[str] = set()
        cursor: str | None = None
        while True:
            params: JsonObject = {} if cursor is None else {"cursor": cursor}
            result = await self.request(method, params or None, timeout=timeout)
            page = result.get(key, [])
            if not isinstance(page, list):
                raise ProtocolError(f"{method}: {key!r} is not a list")
            items.extend(build(item) for item in page)
            next_cursor = result.get("nextCursor")
            if not isinstance(next_cursor, str):
                return items
            if next_cursor in seen:
                log.warning("%s: server repeated cursor %r; stopping", method, next_cursor)
                return items
            seen.add(next_cursor)
            cursor = next_cursor

    # -- typed methods -------------------------------------------------------------------

    async def list_tools(self, *, timeout: float | None = None) -> list[Tool]:
        """All tools of the server, following pagination to the end.

        Over HTTP in the 2026 era, a tool whose `x-mcp-header` annotations are invalid is
        left out (with a warning naming it), as the specification requires.
        """
        tools = await self._paginate("tools/list", "tools", Tool.from_wire, timeout)
        headers: dict[str, list[HeaderParam]] | None = getattr(self.transport, "tool_headers", None)
        if headers is None or self.era != "modern":
            return tools
        usable = []
        for tool in tools:
            try:
                headers[tool.name] = header_params(tool.input_schema)
            except ValueError as exc:
                log.warning("%s: leaving out tool %r: %s", self.server.label, tool.name, exc)
                headers.pop(tool.name, None)
                continue
            usable.append(tool)
        return usable

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
        progress_extends_deadline: bool = False,
        max_timeout: float | None = None,
    ) -> CallToolResult:
        """Call a tool. A tool's own failure comes back as `is_error`, not as an exception."""
        params: JsonObject = {"name": name, "arguments": dict(arguments or {})}
        result = await self.request(
            "tools/call",
            params,
            timeout=timeout,
            on_progress=on_progress,
            progress_extends_deadline=progress_extends_deadline,
            max_timeout=max_timeout,
        )
        return CallToolResult.from_wire(result)

    async def list_resources(self, *, timeout: float | None = None) -> list[Resource]:
        return await self._paginate("resources/list", "resources", Resource.from_wire, timeout)

    async def list_resource_templates(
        self, *, timeout: float | None = None
    ) -> list[ResourceTemplate]:
        return await self._paginate(
            "resources/templates/list", "resourceTemplates", ResourceTemplate.from_wire, timeout
        )

    async def read_resource(self, uri: str, *, timeout: float | None = None) -> ReadResourceResult:
        result = await self.request("resources/read", {"uri": uri}, timeout=timeout)
        return ReadResourceResult.from_wire(result)

    async def list_prompts(self, *, timeout: float | None = None) -> list[Prompt]:
        return await self._paginate("prompts/list", "prompts", Prompt.from_wire, timeout)

    async def get_prompt(
        self,
        name: str,
        arguments: Mapping[str, str] | None = None,
        *,
        timeout: float | None = None,
    ) -> GetPromptResult:
        params: JsonObject = {"name": name}
        if arguments:
            params["arguments"] = dict(arguments)
        return GetPromptResult.from_wire(await self.request("prompts/get", params, timeout=timeout))

    async def complete(
        self,
        ref: Mapping[str, Any],
        argument: str,
        value: str,
        *,
        context: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> Completion:
        """Ask for completions of `argument` of a prompt (`{"type": "ref/prompt", "name":
        ...}`) or resource template (`{"type": "ref/resource", "uri": ...}`)."""
        params: JsonObject = {"ref": dict(ref), "argument": {"name": argument, "value": value}}
        if context:
            params["context"] = {"arguments": dict(context)}
        return Completion.from_wire(
            await self.request("completion/complete", params, timeout=timeout)
        )

    async def set_logging_level(self, level: LogLevel) -> None:
        """Ask the server for log messages at `level` and above (per request in 2026)."""
        if self.era == "modern":
            self._log_level = level
        else:
            await self.request("logging/setLevel", {"level": level})

    async def ping(self, *, timeout: float | None = None) -> None:
        """Check the server answers. 2026 has no ping; `server/discover` stands in."""
        if self.era == "modern":
            await self.request("server/discover", None, timeout=timeout)
        else:
            await self.request("ping", None, timeout=timeout)

    # -- notifications and subscriptions -------------------------------------------------

    def subscribe(self, callback: NotificationCallback) -> Callable[[], None]:
        """Deliver server notifications (list changes, resource updates, log messages) to
        `callback`; returns a function that removes it."""
        self._subscribers.append(callback)
        self._ensure_listening()

        def remove() -> None:
            if callback in self._subscribers:
                self._subscribers.remove(callback)

        return remove

    async def subscribe_resource(self, uri: str) -> None:
        """Get `notifications/resources/updated` for `uri`."""
        self._resource_subscriptions.add(uri)
        if self.era == "legacy":
            await self.request("resources/subscribe", {"uri": uri})
        else:
            self._restart_listening()

    async def unsubscribe_resource(self, uri: str) -> None:
        self._resource_subscriptions.discard(uri)
        if self.era == "legacy":
            await self.request("resources/unsubscribe", {"uri": uri})
        else:
            self._restart_listening()

    def _on_notification(self, method: str, params: JsonObject | None) -> None:
        notification = Notification(method, params or {})
        for callback in list(self._subscribers):
            try:
                callback(notification)
            except Exception:
                log.exception("notification subscriber failed on %s", method)

    def _ensure_listening(self) -> None:
        if self.era != "modern" or self._closed:
            return
        if self._listener is None or self._listener.done():
            wanted = listen_filter(self)
            if wanted:
                task = asyncio.get_running_loop().create_task(listen(self, wanted))
                self._listener = task
                self._listeners.add(task)
                task.add_done_callback(self._listeners.discard)

    def _restart_listening(self) -> None:
        if self._listener is not None:
            self._listener.cancel()
            self._listener = None
        self._ensure_listening()
