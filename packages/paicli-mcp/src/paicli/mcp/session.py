"""`ClientSession`: typed MCP methods over the JSON-RPC engine, in either protocol era.

A session is built on any `Transport` and needs no server description: `connect()` makes the
transport and the session from one, and tests build one on an in-memory pair. The session
owns its receive task and its modern-era listen task; `aclose()` (or leaving `async with`)
stops both and closes the transport. Negotiation (`_negotiate`) hands back an `Agreement`
that the session keeps; the 2026 request loop (MRTR rounds, -32022/-32020 retries) and the
listen request are `_modern`'s. A tool found speaking the minimal dialect (`dialect ==
"minimal"`, see `_minimal`) gets tool calls only: its tools come from its handshake, lists of
resources and prompts are empty, ping and log levels send nothing, and any other request is
refused here rather than sent to a tool it may crash.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from ._instrument import instrumented
from ._minimal import Dialect, MinimalCalls
from ._modern import ModernRequests, listen_filter, modern_meta
from ._negotiate import Agreement, EraCache, Offer, negotiate
from ._pending import ProgressCallback
from ._rpc import RpcEngine
from ._server_spec import DEFAULT_HANDSHAKE_TIMEOUT, DEFAULT_REQUEST_TIMEOUT
from ._transport import Era, JsonObject, Transport
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

__all__ = ["CLIENT_INFO", "ClientSession", "Timeouts"]

log = logging.getLogger("paicli.mcp.session")

T = TypeVar("T")
NotificationCallback = Callable[[Notification], object]
LogLevel = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]

CLIENT_INFO: JsonObject = {"name": "paicli", "version": "0.1.0"}

# Pagination guards against a server that hands out a fresh cursor with every page (the
# list would never end and memory would grow). Page sizes are the server's choice, commonly
# 50 to 100, so 100 pages hold any list a real server pages through; 10,000 items is far
# more tools, resources or prompts than anyone can use (a model is offered a few hundred
# tools at most) while keeping a list at a few tens of MB of parsed JSON.
MAX_PAGES = 100
MAX_ITEMS = 10_000
# A list with malformed items by the thousand gets this many warning lines naming them and
# one counting the rest.
MAX_ITEM_WARNINGS = 5


@dataclass(slots=True)
class _Malformed:
    """How many items of one list were left out as malformed."""

    count: int = 0


@dataclass(frozen=True, slots=True)
class Timeouts:
    """Deadlines of one session, in seconds: the whole handshake (or discovery), and each
    request unless the call gives its own."""

    handshake: float = DEFAULT_HANDSHAKE_TIMEOUT
    request: float = DEFAULT_REQUEST_TIMEOUT


class ClientSession:
    """A live connection to one MCP server over `transport`.

    Most callers get one from `paicli.mcp.connect(...)`; building one directly takes any
    `Transport` (for example one end of `MemoryTransport.pair()`):

        async with ClientSession(transport, name="demo") as session:
            await session.list_tools()

    `protocol` is `"auto"` (probe the 2026 revision, else the handshake), `"legacy"`,
    `"modern"` or an exact version. With an `era_cache` and an `identity` for the server,
    an `auto` verdict is remembered and reused.
    """

    def __init__(
        self,
        transport: Transport,
        *,
        name: str = "server",
        protocol: str = "auto",
        timeouts: Timeouts | None = None,
        handlers: ClientHandlers | None = None,
        client_info: Mapping[str, Any] | None = None,
        era_cache: EraCache | None = None,
        identity: tuple[str, ...] | None = None,
    ) -> None:
        # Tracing, metrics, spans (see paicli.mcp.instrument); usually none.
        transport = instrumented(transport, name)
        self._transport = transport
        self._name = name
        self._protocol = protocol
        self._timeouts = timeouts or Timeouts()
        self._handlers = handlers or ClientHandlers()
        self._client_info: JsonObject = dict(client_info or CLIENT_INFO)
        self._capabilities: JsonObject = self._handlers.capabilities()
        self._era_cache = era_cache
        self._identity = identity
        self._engine = RpcEngine(
            transport,
            on_request=self._handlers.answer,
            on_notification=self._on_notification,
            label=name,
        )
        self._agreement: Agreement | None = None
        # The version in use: the agreed one, until a 2026 -32022 retry switches it.
        self._version: str | None = None
        self._modern: ModernRequests | None = None
        self._minimal: MinimalCalls | None = None
        self._log_level: LogLevel | None = None
        self._subscribers: list[NotificationCallback] = []
        self._resource_subscriptions: set[str] = set()
        self._reader: asyncio.Task[None] | None = None
        self._listener: asyncio.Task[None] | None = None
        # Every listen task, including replaced ones still winding down; aclose awaits them.
        self._listeners: set[asyncio.Task[None]] = set()
        self._closed = False

    # -- what was agreed -----------------------------------------------------------------

    @property
    def transport(self) -> Transport:
        return self._transport

    @property
    def name(self) -> str:
        """The server's name, as errors and logs show it."""
        return self._name

    @property
    def timeouts(self) -> Timeouts:
        return self._timeouts

    @property
    def handlers(self) -> ClientHandlers:
        return self._handlers

    @property
    def client_info(self) -> JsonObject:
        return dict(self._client_info)

    @property
    def capabilities(self) -> JsonObject:
        """What this client offers the server (from its handlers)."""
        return dict(self._capabilities)

    def _agreed(self) -> Agreement:
        if self._agreement is None:
            raise ProtocolError(f"{self._name}: the session is not open yet (use 'async with')")
        return self._agreement

    @property
    def era(self) -> Era:
        """`"legacy"` (the initialize handshake) or `"modern"` (2026-07-28). A minimal-
        dialect tool counts as legacy: a live process whose first line is a handshake."""
        return self._agreed().era

    @property
    def dialect(self) -> Dialect:
        """`"mcp"`, or `"minimal"` for a hand-written tool that speaks the minimal JSON-RPC
        dialect (its `protocol_version` is then `"minimal"`)."""
        return self._agreed().dialect

    @property
    def protocol_version(self) -> str:
        self._agreed()
        assert self._version is not None
        return self._version

    @property
    def server_info(self) -> Implementation:
        return self._agreed().server_info

    @property
    def server_capabilities(self) -> JsonObject:
        return dict(self._agreed().server_capabilities)

    @property
    def instructions(self) -> str | None:
        return self._agreed().instructions

    @property
    def probe_fallback(self) -> float | None:
        """Seconds the 2026 `server/discover` probe took before negotiation fell back to the
        `initialize` handshake; None when there was no fallback (no probe, or it was
        answered). What a slow start of a legacy server was spent on."""
        return self._agreed().probe_fallback

    # -- lifecycle -----------------------------------------------------------------------

    async def __aenter__(self) -> ClientSession:
        self._reader = asyncio.get_running_loop().create_task(self._engine.run())
        offer = Offer(
            label=self._name,
            protocol=self._protocol,
            capabilities=self._capabilities,
            client_info=self._client_info,
            handshake_timeout=self._timeouts.handshake,
            identity=self._identity,
            cache=self._era_cache,
        )
        try:
            agreement = await negotiate(self._engine, self._transport, offer, self._meta_for)
        except BaseException:
            await self.aclose()
            raise
        self._agreement = agreement
        self._version = agreement.protocol_version
        if agreement.dialect == "minimal":
            self._minimal = MinimalCalls(
                self._engine, self._transport, self._name, self._timeouts.handshake
            )
        if agreement.era == "modern":
            self._modern = ModernRequests(
                self._engine,
                self._handlers,
                self._name,
                meta=lambda: self._meta_for(self.protocol_version),
                on_version=self._switch_version,
                refresh_tools=self.list_tools,
            )
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
            await self._transport.aclose()
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
        return self._engine.closed or ConnectionClosed(f"{self._name}: closed")

    @property
    def closed(self) -> McpError | None:
        """Why the connection is gone, or None while it is up."""
        return self._engine.closed

    @property
    def pid(self) -> int | None:
        """The server's process id for stdio servers, else None."""
        return self._transport.pid

    def stderr_lines(self) -> list[str]:
        """The server's last stderr lines (stdio servers; empty otherwise)."""
        return self._transport.stderr_lines()

    # -- requests ------------------------------------------------------------------------

    def _meta_for(self, version: str) -> JsonObject:
        capabilities = self._handlers.capabilities("modern")
        return modern_meta(version, capabilities, self._client_info, self._log_level)

    def _switch_version(self, version: str) -> None:
        self._version = version
        self._transport.negotiated("modern", version)

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
        if self._agreed().dialect == "minimal":
            raise ProtocolError(
                f"{self._name}: {method}: this tool speaks the minimal JSON-RPC dialect, "
                "which takes tool calls only"
            )
        timeout = self._timeouts.request if timeout is None else timeout
        if self._modern is None:
            return await self._engine.request(
                method,
                params,
                timeout=timeout,
                on_progress=on_progress,
                progress_extends_deadline=progress_extends_deadline,
                max_timeout=max_timeout,
            )
        return await self._modern.request(
            method,
            params or {},
            timeout=timeout,
            on_progress=on_progress,
            progress_extends_deadline=progress_extends_deadline,
            max_timeout=max_timeout,
        )

    async def notify(self, method: str, params: JsonObject | None = None) -> None:
        """Send a notification to the server (never to a minimal-dialect tool, which a
        message it does not expect may crash: there it is dropped)."""
        if self._agreed().dialect == "minimal":
            log.debug("%s: not sending %s to a minimal-dialect tool", self._name, method)
            return
        await self._engine.notify(method, params)

    async def _paginate(
        self, method: str, key: str, build: Callable[[Any], T], timeout: float | None
    ) -> list[T]:
        """Every item of a paginated list, up to MAX_PAGES pages and MAX_ITEMS items (a
        warning names the server and the method when a limit cuts the list short)."""
        malformed = _Malformed()
        try:
            return await self._pages(method, key, build, timeout, malformed)
        finally:
            if (more := malformed.count - MAX_ITEM_WARNINGS) > 0:
                log.warning("%s: %s: left out %d more malformed items", self._name, method, more)

    async def _pages(
        self,
        method: str,
        key: str,
        build: Callable[[Any], T],
        timeout: float | None,
        malformed: _Malformed,
    ) -> list[T]:
        items: list[T] = []
        seen: set[str] = set()
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            params: JsonObject = {} if cursor is None else {"cursor": cursor}
            result = await self.request(method, params or None, timeout=timeout)
            page = result.get(key, [])
            if not isinstance(page, list):
                raise ProtocolError(f"{self._name}: {method}: {key!r} is not a list")
            room = MAX_ITEMS - len(items)
            items.extend(self._readable(method, build, page[:room], malformed))
            next_cursor = result.get("nextCursor")
            if len(page) > room or (isinstance(next_cursor, str) and len(items) >= MAX_ITEMS):
                log.warning(
                    "%s: %s: stopped at %d items; the server offers more, which are left out",
                    self._name,
                    method,
                    MAX_ITEMS,
                )
                return items
            if not isinstance(next_cursor, str):
                return items
            if next_cursor in seen:
                log.warning(
                    "%s: %s: the server repeated cursor %.100r; stopping with %d items",
                    self._name,
                    method,
                    next_cursor,
                    len(items),
                )
                return items
            seen.add(next_cursor)
            cursor = next_cursor
        log.warning(
            "%s: %s: stopped after %d pages (%d items); the server keeps sending a next "
            "cursor, so the rest is left out",
            self._name,
            method,
            MAX_PAGES,
            len(items),
        )
        return items

    def _readable(
        self, method: str, build: Callable[[Any], T], page: list[Any], malformed: _Malformed
    ) -> list[T]:
        """The items of a page that are well formed; each other one is left out and counted
        in `malformed`, with a warning for the first few of the list (one broken tool must
        not cost the server all of its tools, nor a thousand of them fill the screen)."""
        items: list[T] = []
        for item in page:
            try:
                items.append(build(item))
            except ProtocolError as exc:
                malformed.count += 1
                if malformed.count <= MAX_ITEM_WARNINGS:
                    log.warning("%s: %s: leaving out an item: %s", self._name, method, exc)
        return items

    # -- typed methods -------------------------------------------------------------------

    async def list_tools(self, *, timeout: float | None = None) -> list[Tool]:
        """All tools of the server, following pagination to the end.

        Over HTTP in the 2026 era, a tool whose `x-mcp-header` annotations are invalid is
        left out (with a warning naming it), as the specification requires.
        """
        agreement = self._agreed()
        if agreement.dialect == "minimal":
            return self._transport.tools_listed(list(agreement.tools))
        tools = await self._paginate("tools/list", "tools", Tool.from_wire, timeout)
        return self._transport.tools_listed(tools)

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
        """Call a tool. A tool's own failure comes back as `is_error`, not as an exception.

        A minimal-dialect tool gets `{"method": name, "params": arguments}` with no progress
        token, and a timed-out call is not cancelled (the tool might not survive the notice);
        if the tool says nothing more after that, the next call restarts it first (stdio).
        """
        if self._minimal is not None:
            timeout = self._timeouts.request if timeout is None else timeout
            return await self._minimal.call(name, dict(arguments or {}), timeout)
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
        if self._agreed().dialect == "minimal":
            return []
        return await self._paginate("resources/list", "resources", Resource.from_wire, timeout)

    async def list_resource_templates(
        self, *, timeout: float | None = None
    ) -> list[ResourceTemplate]:
        if self._agreed().dialect == "minimal":
            return []
        return await self._paginate(
            "resources/templates/list", "resourceTemplates", ResourceTemplate.from_wire, timeout
        )

    async def read_resource(self, uri: str, *, timeout: float | None = None) -> ReadResourceResult:
        result = await self.request("resources/read", {"uri": uri}, timeout=timeout)
        return ReadResourceResult.from_wire(result)

    async def list_prompts(self, *, timeout: float | None = None) -> list[Prompt]:
        if self._agreed().dialect == "minimal":
            return []
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
        """Ask the server for log messages at `level` and above (per request in 2026; a
        minimal-dialect tool has no log levels and is sent nothing)."""
        if self.dialect == "minimal":
            return
        if self.era == "modern":
            self._log_level = level
        else:
            await self.request("logging/setLevel", {"level": level})

    async def ping(self, *, timeout: float | None = None) -> None:
        """Check the server answers. 2026 has no ping; `server/discover` stands in. A
        minimal-dialect tool, which a ping may crash, is only checked to be connected."""
        if self.dialect == "minimal":
            if self._engine.closed is not None:
                raise self._engine.closed
            return
        if self.era == "modern":
            await self.request("server/discover", None, timeout=timeout)
        else:
            await self.request("ping", None, timeout=timeout)

    # -- notifications and subscriptions -------------------------------------------------

    async def notify_roots_changed(self) -> None:
        """Tell the server the roots changed (the list a `roots` callable returns is now
        different). Legacy era only: 2026 removed `notifications/roots/list_changed`, and a
        modern server asks for the roots with each request that needs them. Nothing is sent
        when this client offers no roots."""
        if self._handlers.roots is None or self.era == "modern":
            return
        await self.notify("notifications/roots/list_changed")

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
        if self.era == "legacy" and self.dialect == "mcp":
            await self.request("resources/subscribe", {"uri": uri})
        else:
            self._restart_listening()

    async def unsubscribe_resource(self, uri: str) -> None:
        self._resource_subscriptions.discard(uri)
        if self.era == "legacy" and self.dialect == "mcp":
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
        if self._modern is None or self._closed:
            return
        if self._listener is None or self._listener.done():
            wanted = listen_filter(self.server_capabilities, self._resource_subscriptions)
            if wanted and self._modern is not None:
                task = asyncio.get_running_loop().create_task(self._modern.listen(wanted))
                self._listener = task
                self._listeners.add(task)
                task.add_done_callback(self._listeners.discard)

    def _restart_listening(self) -> None:
        if self._listener is not None:
            self._listener.cancel()
            self._listener = None
        self._ensure_listening()
