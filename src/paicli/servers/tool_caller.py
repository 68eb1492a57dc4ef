"""The tool caller: one tool call on a managed server, with the policy around it.

A call to a server still starting (or idle, or held back) starts it and waits, bounded by its
startup timeout; a tool offered from the catalogue must then still exist and be defined as it
was offered (never a silent drift). Each call has its server's limits (timeout, and how far
progress may extend it), is retried only when safe (`retry.retry_safe`), and fails with a
`ServerError`, never the library's `McpError`.

A server that crashed is started again by the next call of one of its tools (after a
backoff). A call lost in flight (its server crashed during it, or an HTTP server forgot its
session) is sent again once, on the server started again or in the new session, only when
`may_repeat` allows it (`readOnlyHint` or `idempotentHint`, or `retryTools`); any other such
call fails saying that nothing was repeated (it may or may not have run). A server's `retry`
policy, where it covers the tool, decides instead.
"""

from __future__ import annotations

import asyncio
import fnmatch
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeAlias

from paicli.mcp import (
    ConnectionClosed,
    McpError,
    Progress,
    RequestTimeout,
    SessionExpired,
)
from paicli.servers.call_limits import MAX_FACTOR, CallLimits, timeout_advice
from paicli.servers.crashes import crash_backoff
from paicli.servers.errors import ServerCallFailed, ServerNotReady
from paicli.servers.retry import (
    Attempt,
    RetryPolicy,
    default_deadline,
    report,
    retry_safe,
    with_retries,
)
from paicli.servers.server_record import ServerRecord
from paicli.servers.server_view import ServerState
from paicli.servers.supervisor import Supervisor
from paicli.servers.tool_definition import definition, definition_hash, still_offered

if TYPE_CHECKING:
    from paicli.mcp import (
        CallToolResult,
        ClientSession,
        TaskHandle,
        Tool,
    )

__all__ = ["ProgressCallback", "ToolCaller", "may_repeat"]

log = logging.getLogger("paicli.servers")

ProgressCallback = Callable[[Progress], object]
Once: TypeAlias = "Callable[[ClientSession, float], Awaitable[CallToolResult]]"


def _unwatched(progress: Progress) -> None:
    """Progress nobody shows still restarts the call's timeout: always asked for."""


def may_repeat(tool: Tool | None, name: str, *, patterns: tuple[str, ...]) -> bool:
    """Whether a call lost in flight (the server forgot its session, or crashed during the
    call) may be sent again: its name matches the server's `retryTools`, or the tool says a
    second run does no harm the first did not (`readOnlyHint` or `idempotentHint`). The
    server's own word, believed here whether or not it is trusted: a repeat sends it the call
    it already had, and a server lying about its own tool could do the harm with the first
    call (approval, which a hint may skip, believes it only on a trusted server). Never
    otherwise: the first may have run."""
    if any(fnmatch.fnmatchcase(name, p) for p in patterns):
        return True
    hints = tool.annotations if tool is not None else None
    if not isinstance(hints, Mapping):
        return False
    return hints.get("readOnlyHint") is True or hints.get("idempotentHint") is True


def _not_repeated(exc: SessionExpired, tool: str) -> str:
    """The error of a call lost with its session and not sent again."""
    if not exc.renewed:
        return f"{exc}; the call was not repeated"
    return (
        f"{exc}: {tool!r} is not marked readOnlyHint or idempotentHint (nor listed in "
        "retryTools), so it may not be safe to run twice; call it again if it is"
    )


class ToolCaller:
    """Calls tools on the supervisor's servers; `limits` are per server (default: the
    server's own request timeout, extended by progress up to `MAX_FACTOR` times)."""

    def __init__(self, supervisor: Supervisor, limits: Mapping[str, CallLimits]) -> None:
        self._supervisor = supervisor
        self.limits = dict(limits)

    def set_limits(self, server: str, limits: CallLimits) -> None:
        """The limits of `server`'s calls from now on (a server added during the run)."""
        self.limits[server] = limits

    async def call_tool(
        self,
        server: str,
        tool: str,
        arguments: Mapping[str, Any],
        *,
        timeout: float | None,
        on_progress: ProgressCallback | None,
        offered: str | None = None,
    ) -> CallToolResult:
        """`offered`: the hash of the tool's definition as the caller offered it; the call is
        sent only while the server still defines the tool so (checked before each attempt)."""
        managed = self._supervisor.get(server)
        self._supervisor.wake(server)
        session, offered = await self._ready_session(managed, tool, offered)
        limits = self._limits(managed, timeout)
        entry = managed.entry
        listed = next((t for t in managed.tools if t.name == tool), None)
        safe = retry_safe(listed, tool, trusted=entry.trust, patterns=entry.retry_tools)
        progress = on_progress or _unwatched

        async def once(current: ClientSession, seconds: float) -> CallToolResult:
            # Checked again right before each attempt: a relist (or a restart between
            # retries) may have redefined the tool since.
            if offered is not None:
                still_offered(server, managed.tools, tool, offered)
            return await current.call_tool(
                tool,
                arguments,
                timeout=seconds,
                on_progress=progress,
                progress_extends_deadline=True,
                max_timeout=max(limits.maximum, seconds),
            )

        repeat = may_repeat(listed, tool, patterns=entry.retry_tools)

        async def attempts() -> CallToolResult:
            if entry.retry is None or not safe:
                return await self._call_once(
                    managed, session, limits.timeout, once, name=tool, repeat=repeat
                )
            return await self._call_with_retries(managed, entry.retry, limits.timeout, once)

        try:
            try:
                return await attempts()
            except SessionExpired as exc:
                if not (exc.renewed and repeat):
                    raise ServerCallFailed(server, tool, _not_repeated(exc, tool)) from exc
                log.info("%s: sending %s again in the new session", server, tool)
                return await once(session, limits.timeout)
        except SessionExpired as exc:
            raise ServerCallFailed(server, tool, f"{exc} (also after sending it again)") from exc
        except RequestTimeout as exc:
            raise ServerCallFailed(server, tool, f"{exc}. {timeout_advice(exc, limits)}") from exc
        except McpError as exc:
            raise ServerCallFailed(server, tool, str(exc), server_text=exc.server_text) from exc

    def may_run_as_task(self, server: str, tool: str) -> bool:
        """Whether `server` (ready) can run `tool` as an MCP task (`start_tool`)."""
        session = self._supervisor.get(server).session
        return session is not None and session.may_run_as_task(tool)

    async def start_tool(
        self, server: str, tool: str, arguments: Mapping[str, Any], *, offered: str | None
    ) -> tuple[TaskHandle, float]:
        """Call `tool` offering the server to run it as a task (never retried: a task may
        have been made); the handle, and how long its result may take (the call's
        maximum, within which a handle that is not done must be awaited)."""
        managed = self._supervisor.get(server)
        session, offered = await self._ready_session(managed, tool, offered)
        limits = self._limits(managed, None)
        if offered is not None:
            still_offered(server, managed.tools, tool, offered)
        try:
            handle = await session.call_tool_as_task(tool, arguments, timeout=limits.timeout)
        except RequestTimeout as exc:
            raise ServerCallFailed(server, tool, f"{exc}. {timeout_advice(exc, limits)}") from exc
        except McpError as exc:
            raise ServerCallFailed(server, tool, str(exc), server_text=exc.server_text) from exc
        return handle, max(limits.maximum, limits.timeout)

    async def _ready_session(
        self, managed: ServerRecord, tool: str, offered: str | None
    ) -> tuple[ClientSession, str | None]:
        """The session of `managed`, waited for while it starts, and the definition hash the
        call must meet: the caller's `offered`, else what the catalogue promised. A server
        that was waited for must still offer `tool`."""
        waited = managed.state is ServerState.STARTING or managed.restarting
        # What the caller was offered from the catalogue (or before a crash): the live tool
        # must still be that.
        known = managed.cached_tools or managed.crash_tools
        promised = next((t for t in known if t.name == tool), None)
        if offered is None and promised is not None:
            offered = definition_hash(definition(promised))
        if waited:
            await self._supervisor.until_settled(managed, self._start_limit(managed))
        session = managed.session
        if managed.state is not ServerState.READY or session is None:
            raise ServerNotReady(managed.name, managed.state.value)
        if waited or offered is not None:
            still_offered(managed.name, managed.tools, tool, offered)
        return session, offered

    def _start_limit(self, managed: ServerRecord, *, crashed: bool = False) -> float | None:
        """How long a call waits for its server to start: its startup timeout, after the
        backoff it still has to wait (`crashed`: a crash the supervisor may not have seen
        yet, whose backoff is the next one)."""
        spec = managed.entry.spec
        if spec is None:
            return None
        start = spec.handshake_timeout
        if managed.installing is not None:  # a first start through npx & co. may install
            start = max(start, managed.entry.first_start_timeout)
        backoff = 0.0
        if managed.revive_at is not None:
            backoff = max(managed.revive_at - asyncio.get_running_loop().time(), 0.0)
        if crashed:
            backoff = max(backoff, crash_backoff(managed.crashes + 1))
        return start + backoff

    async def _call_once(
        self,
        managed: ServerRecord,
        session: ClientSession,
        seconds: float,
        once: Once,
        *,
        name: str,
        repeat: bool,
    ) -> CallToolResult:
        """`once`; if the server crashed during it, repeated once on the server started
        again when the tool says a second run does no harm, else a clear refusal."""
        started = asyncio.get_running_loop().time()
        try:
            return await once(session, seconds)
        except ConnectionClosed as exc:
            crash = exc
        if not repeat:
            raise ServerCallFailed(
                managed.name,
                name,
                f"the server crashed during the call ({crash}); the call was not repeated, "
                "since the tool is not marked read-only or idempotent (nor listed in "
                "retryTools), so it may or may not have run. The server is started again at "
                "the next call of one of its tools.",
            ) from crash
        elapsed = asyncio.get_running_loop().time() - started
        report(Attempt(1, 2, "crash", str(crash), elapsed, 0.0))
        try:
            async with asyncio.timeout(self._start_limit(managed, crashed=True)):
                await self._supervisor.replaced(managed, session, revive=True)
        except (TimeoutError, ServerNotReady):
            raise ServerCallFailed(
                managed.name,
                name,
                f"the server crashed during the call ({crash}) and was not back in time to "
                f"repeat it: {managed.failure() or managed.state.value}",
            ) from crash
        assert managed.session is not None
        return await once(managed.session, seconds)

    def _limits(self, managed: ServerRecord, timeout: float | None) -> CallLimits:
        """The call's limits: its server's, with a timeout the caller gave instead."""
        limits = self.limits.get(managed.name)
        if limits is None:
            spec = managed.entry.spec
            limits = CallLimits(spec.request_timeout) if spec is not None else CallLimits()
            limits = replace(limits, maximum=limits.timeout * MAX_FACTOR)
        if timeout is not None:
            limits = replace(limits, timeout=timeout, maximum=max(limits.maximum, timeout))
        return limits

    async def _call_with_retries(
        self, managed: ServerRecord, policy: RetryPolicy, each: float, once: Once
    ) -> CallToolResult:
        """`once` on the server's current session, tried again after a timeout or a crash
        (see `retry`); a crashed server is brought back first."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + (policy.deadline or default_deadline(policy, each))
        used: list[ClientSession] = []

        async def attempt(left: float) -> CallToolResult:
            session = managed.session
            if managed.state is not ServerState.READY or session is None:
                raise ServerNotReady(managed.name, managed.state.value)
            used.append(session)
            # Only a deadline the config sets cuts an attempt short (to the millisecond);
            # the default one leaves each attempt its full timeout.
            seconds = each if policy.deadline is None else max(round(min(each, left), 3), 0.001)
            return await once(session, seconds)

        async def recover(left: float) -> None:
            try:
                async with asyncio.timeout(max(left, 0)):
                    await self._supervisor.replaced(managed, used[-1])
            except TimeoutError:
                raise ServerNotReady(managed.name, "not back before the call's deadline") from None

        return await with_retries(policy, attempt, recover, deadline=deadline)
