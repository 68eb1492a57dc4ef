"""The negotiated connection under a `ClientSession`: the engine, its receive task, the
agreement, and requests shaped for the agreed era.

`open()` starts the engine's receive task and negotiates (`_negotiate`); the `Agreement` is
kept here and decides how each request goes out: as it is (the handshake era), through
`_modern`'s 2026 loop (per-request `_meta`, MRTR rounds, -32022/-32020 retries), or not at
all (a tool in the minimal dialect takes tool calls only, through `_minimal`). `aclose()`
closes the transport (bounded) and ends the receive task and the tasks it is given, every
step run even when the caller is cancelled.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Literal

from ._minimal import MinimalCalls
from ._modern import ModernRequests, modern_meta
from ._negotiate import Agreement, Offer, negotiate
from ._pending import ProgressCallback
from ._rpc import NotificationHandler, RpcEngine
from ._transport import AgreementHook, JsonObject, Transport, process_of
from .errors import ConnectionClosed, McpError, ProtocolError
from .handlers import ClientHandlers

__all__ = ["Connection", "LogLevel"]

log = logging.getLogger("paicli.mcp.session")

LogLevel = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]


class Connection:
    """One server's JSON-RPC engine and what was agreed with it (see the module)."""

    def __init__(
        self,
        transport: Transport,
        *,
        name: str,
        handlers: ClientHandlers,
        client_info: JsonObject,
        request_timeout: float,
        on_notification: NotificationHandler,
    ) -> None:
        self.transport = transport
        self.name = name
        self.handlers = handlers
        self.client_info = client_info
        self.request_timeout = request_timeout
        self._agreement_hook = transport if isinstance(transport, AgreementHook) else None
        self.process = process_of(transport)
        self.engine = RpcEngine(
            transport, on_request=handlers.answer, on_notification=on_notification, label=name
        )
        self.agreement: Agreement | None = None
        # The version in use: the agreed one, until a 2026 -32022 retry switches it.
        self.version: str | None = None
        self.modern: ModernRequests | None = None
        self.minimal: MinimalCalls | None = None
        # 2026: sent with every request (the revision has no logging/setLevel).
        self.log_level: LogLevel | None = None
        self._reader: asyncio.Task[None] | None = None

    def agreed(self) -> Agreement:
        """The agreement; a `ProtocolError` before the session is open."""
        if self.agreement is None:
            raise ProtocolError(f"{self.name}: the session is not open yet (use 'async with')")
        return self.agreement

    async def open(self, offer: Offer, refresh_tools: Callable[[], Awaitable[object]]) -> None:
        """Start receiving and negotiate; on failure the caller closes. `refresh_tools`
        lists the tools again (a 2026 -32020: their header annotations changed)."""
        self._reader = asyncio.get_running_loop().create_task(self.engine.run())
        agreement = await negotiate(self.engine, self.transport, offer, self.meta_for)
        self.agreement = agreement
        self.version = agreement.protocol_version
        if agreement.dialect == "minimal":
            self.minimal = MinimalCalls(
                self.engine, self.process, self.name, offer.handshake_timeout
            )
        if agreement.era == "modern":
            self.modern = ModernRequests(
                self.engine,
                self.handlers,
                self.name,
                meta=lambda: self.meta_for(self.version or agreement.protocol_version),
                on_version=self._switch_version,
                refresh_tools=refresh_tools,
            )

    async def aclose(self, tasks: Sequence[asyncio.Task[None]] = ()) -> None:
        """Cancel `tasks` and the receive task, close the transport (bounded), and wait
        for the tasks to end; a cancellation of the caller is raised after all of it."""
        tasks = [*tasks, *([self._reader] if self._reader else [])]
        for task in tasks:
            task.cancel()
        cancelled = False
        try:
            await self.transport.aclose()
        except asyncio.CancelledError:
            cancelled = True
        for task in tasks:
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
        return self.engine.closed or ConnectionClosed(f"{self.name}: closed")

    def meta_for(self, version: str) -> JsonObject:
        """The per-request `_meta` of a 2026 request in `version`."""
        capabilities = self.handlers.capabilities("modern")
        return modern_meta(version, capabilities, self.client_info, self.log_level)

    def _switch_version(self, version: str) -> None:
        self.version = version
        if self._agreement_hook is not None:
            self._agreement_hook.negotiated("modern", version)

    def request(
        self,
        method: str,
        params: JsonObject | None,
        *,
        timeout: float | None,
        on_progress: ProgressCallback | None,
        progress_extends_deadline: bool,
        max_timeout: float | None,
    ) -> Awaitable[JsonObject]:
        """Send any request shaped for the agreed era; `timeout` None: the session's.

        (The engine's or the 2026 loop's own coroutine is handed back to be awaited, with
        no coroutine of this method's in between: every call passes through here.)"""
        if self.agreed().dialect == "minimal":
            raise ProtocolError(
                f"{self.name}: {method}: this tool speaks the minimal JSON-RPC dialect, "
                "which takes tool calls only"
            )
        timeout = self.request_timeout if timeout is None else timeout
        if self.modern is None:
            return self.engine.request(
                method,
                params,
                timeout=timeout,
                on_progress=on_progress,
                progress_extends_deadline=progress_extends_deadline,
                max_timeout=max_timeout,
            )
        return self.modern.request(
            method,
            params or {},
            timeout=timeout,
            on_progress=on_progress,
            progress_extends_deadline=progress_extends_deadline,
            max_timeout=max_timeout,
        )

    async def notify(self, method: str, params: JsonObject | None) -> None:
        """Send a notification (dropped for a minimal-dialect tool, which a message it does
        not expect may crash)."""
        if self.agreed().dialect == "minimal":
            log.debug("%s: not sending %s to a minimal-dialect tool", self.name, method)
            return
        await self.engine.notify(method, params)
