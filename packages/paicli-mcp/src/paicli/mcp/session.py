"""`ClientSession`: typed MCP methods over a negotiated connection, in either protocol era.

A session is built on any `Transport` and needs no server description: `connect()` makes the
transport and the session from one, and tests build one on an in-memory pair. Below the
typed methods is a `_connection.Connection`: the JSON-RPC engine and its receive task, the
`Agreement` negotiation hands back (`_negotiate`), and requests shaped for the agreed era
(`_modern`'s 2026 loop; a tool in the minimal dialect, `_minimal`, gets tool calls only: its
tools come from its handshake, lists of resources and prompts are empty, ping and log levels
send nothing, and any other request is refused rather than sent to a tool it may crash).
Notifications go to `_subscriptions`, lists are read by `_paging` (pages a server marked
cacheable kept by `_list_cache` while fresh). The task methods are mixed in from
`_task_calls`, the SEP-2640 skill methods from `_skill_calls`. `aclose()` (or leaving
`async with`) stops the listen and receive tasks and closes the transport.

The session calls a transport's optional hooks only if it has them (`isinstance` once, when
the session is made): `ToolsHook` on each tool list, `AgreementHook` when a 2026 retry
switches the version; `process` is the `ProcessTransport` behind it, if any.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from ._client_info import default_client_info
from ._connection import Connection, LogLevel
from ._era_cache import EraCache
from ._instrument import Instrument, instrumented
from ._list_cache import ListCache
from ._minimal import Dialect
from ._negotiate import Offer
from ._paging import paginate
from ._pending import ProgressCallback
from ._server_spec import DEFAULT_HANDSHAKE_TIMEOUT, DEFAULT_REQUEST_TIMEOUT
from ._skill_calls import SkillCalls
from ._subscriptions import NotificationCallback, Subscriptions
from ._task_calls import TaskCalls
from ._tasks import task_support
from ._transport import Era, JsonObject, ProcessTransport, ToolsHook, Transport
from ._versions import ProtocolChoice
from .errors import McpError
from .handlers import ClientHandlers
from .types import (
    CallToolResult,
    Completion,
    GetPromptResult,
    Implementation,
    Prompt,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    Tool,
)

__all__ = ["ClientSession", "Timeouts"]

log = logging.getLogger("paicli.mcp.session")

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Timeouts:
    """Deadlines of one session, in seconds: the whole handshake (or discovery), and each
    request unless the call gives its own."""

    handshake: float = DEFAULT_HANDSHAKE_TIMEOUT
    request: float = DEFAULT_REQUEST_TIMEOUT


class ClientSession(TaskCalls, SkillCalls):
    """A live connection to one MCP server over `transport`.

    Most callers get one from `paicli.mcp.connect(...)`; building one directly takes any
    `Transport` (for example one end of `MemoryTransport.pair()`):

        async with ClientSession(transport, name="demo") as session:
            await session.list_tools()

    `protocol` is `"auto"` (probe the 2026 revision, else the handshake), `"legacy"`,
    `"modern"` or an exact version. With an `era_cache` and an `identity` for the server,
    an `auto` verdict is remembered and reused. `instruments` wrap the transport (tracing,
    metrics, spans: `TraceRecorder`, `McpMetrics`, `McpTelemetry`), the first closest to
    the wire; None takes those registered with `paicli.mcp.instrument()`, `()` none.
    `client_info` defaults to `{"name": "paicli", "version": <paicli-mcp's version>}`.
    """

    def __init__(
        self,
        transport: Transport,
        *,
        name: str = "server",
        protocol: ProtocolChoice = "auto",
        timeouts: Timeouts | None = None,
        handlers: ClientHandlers | None = None,
        client_info: Mapping[str, Any] | None = None,
        era_cache: EraCache | None = None,
        identity: tuple[str, ...] | None = None,
        instruments: Sequence[Instrument] | None = None,
    ) -> None:
        transport = instrumented(transport, name, instruments)
        self._tools_hook = transport if isinstance(transport, ToolsHook) else None
        self._name = name
        self._protocol: ProtocolChoice = protocol
        self._timeouts = timeouts or Timeouts()
        self._handlers = handlers or ClientHandlers()
        self._capabilities: JsonObject = self._handlers.capabilities()
        self._era_cache = era_cache
        self._identity = identity
        self._subscriptions = Subscriptions()
        self._lists = ListCache(lambda: asyncio.get_running_loop().time())
        self._connection = Connection(
            transport,
            name=name,
            handlers=self._handlers,
            client_info=dict(client_info or default_client_info()),
            request_timeout=self._timeouts.request,
            on_notification=self._heard,
        )
        self._closed = False
        self._task_support: dict[str, str] = {}

    # -- what it runs over, and what was agreed -------------------------------------------

    @property
    def transport(self) -> Transport:
        """The transport the session runs over (wrapped by its instruments, if any)."""
        return self._connection.transport

    @property
    def process(self) -> ProcessTransport | None:
        """The server's local process (a stdio server: pid, exit status, stderr tail,
        skipped stdout lines), found through any wrappers; None for other transports."""
        return self._connection.process

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
        return dict(self._connection.client_info)

    @property
    def capabilities(self) -> JsonObject:
        """What this client offers the server (from its handlers)."""
        return dict(self._capabilities)

    @property
    def era(self) -> Era:
        """`"legacy"` (the initialize handshake) or `"modern"` (2026-07-28). A minimal-
        dialect tool counts as legacy: a live process whose first line is a handshake."""
        return self._connection.agreed().era

    @property
    def dialect(self) -> Dialect:
        """`"mcp"`, or `"minimal"` for a hand-written tool that speaks the minimal JSON-RPC
        dialect (its `protocol_version` is then `"minimal"`)."""
        return self._connection.agreed().dialect

    @property
    def protocol_version(self) -> str:
        """The version in use: the agreed one, unless a 2026 -32022 retry switched it."""
        self._connection.agreed()
        assert self._connection.version is not None
        return self._connection.version

    @property
    def server_info(self) -> Implementation:
        return self._connection.agreed().server_info

    @property
    def server_capabilities(self) -> JsonObject:
        return dict(self._connection.agreed().server_capabilities)

    @property
    def instructions(self) -> str | None:
        return self._connection.agreed().instructions

    @property
    def probe_fallback(self) -> float | None:
        """Seconds the 2026 `server/discover` probe took before negotiation fell back to the
        `initialize` handshake; None when there was no fallback (no probe, or it was
        answered). What a slow start of a legacy server was spent on."""
        return self._connection.agreed().probe_fallback

    # -- lifecycle -----------------------------------------------------------------------

    async def __aenter__(self) -> ClientSession:
        offer = Offer(
            label=self._name,
            protocol=self._protocol,
            capabilities=self._capabilities,
            client_info=self._connection.client_info,
            handshake_timeout=self._timeouts.handshake,
            identity=self._identity,
            cache=self._era_cache,
        )
        try:
            await self._connection.open(offer, refresh_tools=self.list_tools)
        except BaseException:
            await self.aclose()
            raise
        modern = self._connection.modern
        if modern is not None:
            self._subscriptions.use_listen(modern, self.server_capabilities)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Stop listening, close the transport (bounded), and end the receive task."""
        if self._closed:
            return
        self._closed = True
        await self._connection.aclose(self._subscriptions.stop())

    async def wait_closed(self) -> McpError:
        """Wait until the connection is gone (a crash, or `aclose()`); return why."""
        return await self._connection.wait_closed()

    @property
    def closed(self) -> McpError | None:
        """Why the connection is gone, or None while it is up."""
        return self._connection.engine.closed

    # -- requests ------------------------------------------------------------------------

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
        return await self._connection.request(
            method,
            params,
            timeout=timeout,
            on_progress=on_progress,
            progress_extends_deadline=progress_extends_deadline,
            max_timeout=max_timeout,
        )

    async def notify(self, method: str, params: JsonObject | None = None) -> None:
        """Send a notification to the server (never to a minimal-dialect tool, which a
        message it does not expect may crash: there it is dropped)."""
        await self._connection.notify(method, params)

    async def _paginate(
        self, method: str, key: str, build: Callable[[Any], T], timeout: float | None
    ) -> list[T]:
        return await paginate(self._page, self._name, method, key, build, timeout=timeout)

    async def _page(
        self, method: str, params: JsonObject | None, timeout: float | None
    ) -> JsonObject:
        cached = self._lists.get(method, params)
        if cached is not None:
            return cached
        result = await self.request(method, params, timeout=timeout)
        self._lists.put(method, params, result)
        return result

    def _heard(self, method: str, params: JsonObject | None) -> None:
        self._lists.heard(method)
        self._subscriptions.notify(method, params)

    def cache_hints(self, method: str) -> tuple[int | None, str | None]:
        """What the last `method` list (`"tools/list"`, ...) said about caching it:
        (`ttlMs`, `cacheScope`), each None when it said nothing. A page within its `ttlMs`
        is served again without a request, until the list changes."""
        return self._lists.hints.get(method, (None, None))

    def _usable(self, tools: list[Tool]) -> list[Tool]:
        """The tools usable over this transport (see `ToolsHook`)."""
        self._task_support = {tool.name: task_support(tool.execution) for tool in tools}
        return tools if self._tools_hook is None else self._tools_hook.tools_listed(tools)

    # -- typed methods -------------------------------------------------------------------

    async def list_tools(self, *, timeout: float | None = None) -> list[Tool]:
        """All tools of the server, following pagination to the end.

        Over HTTP in the 2026 era, a tool whose `x-mcp-header` annotations are invalid is
        left out (with a warning naming it), as the specification requires.
        """
        agreement = self._connection.agreed()
        if agreement.dialect == "minimal":
            return self._usable(list(agreement.tools))
        return self._usable(await self._paginate("tools/list", "tools", Tool.from_wire, timeout))

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
        connection = self._connection
        if connection.minimal is not None:
            timeout = self._timeouts.request if timeout is None else timeout
            return await connection.minimal.call(name, dict(arguments or {}), timeout)
        params: JsonObject = {"name": name, "arguments": dict(arguments or {})}
        result = await connection.request(
            "tools/call",
            params,
            timeout=timeout,
            on_progress=on_progress,
            progress_extends_deadline=progress_extends_deadline,
            max_timeout=max_timeout,
        )
        return CallToolResult.from_wire(result)

    async def list_resources(self, *, timeout: float | None = None) -> list[Resource]:
        if self._connection.agreed().dialect == "minimal":
            return []
        return await self._paginate("resources/list", "resources", Resource.from_wire, timeout)

    async def list_resource_templates(
        self, *, timeout: float | None = None
    ) -> list[ResourceTemplate]:
        if self._connection.agreed().dialect == "minimal":
            return []
        return await self._paginate(
            "resources/templates/list", "resourceTemplates", ResourceTemplate.from_wire, timeout
        )

    async def read_resource(self, uri: str, *, timeout: float | None = None) -> ReadResourceResult:
        result = await self.request("resources/read", {"uri": uri}, timeout=timeout)
        return ReadResourceResult.from_wire(result)

    async def list_prompts(self, *, timeout: float | None = None) -> list[Prompt]:
        if self._connection.agreed().dialect == "minimal":
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
            self._connection.log_level = level
        else:
            await self.request("logging/setLevel", {"level": level})

    async def ping(self, *, timeout: float | None = None) -> None:
        """Check the server answers. 2026 has no ping; `server/discover` stands in. A
        minimal-dialect tool, which a ping may crash, is only checked to be connected."""
        if self.dialect == "minimal":
            if self.closed is not None:
                raise self.closed
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
        return self._subscriptions.add(callback)

    async def subscribe_resource(self, uri: str) -> None:
        """Get `notifications/resources/updated` for `uri`."""
        self._subscriptions.resources.add(uri)
        if self.era == "legacy" and self.dialect == "mcp":
            await self.request("resources/subscribe", {"uri": uri})
        else:
            self._subscriptions.restart_listening()

    async def unsubscribe_resource(self, uri: str) -> None:
        self._subscriptions.resources.discard(uri)
        if self.era == "legacy" and self.dialect == "mcp":
            await self.request("resources/unsubscribe", {"uri": uri})
        else:
            self._subscriptions.restart_listening()
