"""Bridged calls through paicli's own approval, redaction and audit wrappers.

The same `ApprovingToolbox` as paicli's agent, inside the same `audit.guard.guard` stack
(audit outermost, so denials are recorded; what the agent reads is redacted), around a small
toolbox whose tools are the bridged `MCPTool`s (seen here as `BridgedTool`). Each is named
`mcp__{server}__{tool}` as in paicli, so the user's allow and deny patterns (`[permissions]`
in `~/.paicli/config.toml`) and "always allow" answers apply unchanged. A denial or refusal
comes back as an error result, which the tool raises as `ToolException`; a timeout or a dead
server passes through (recorded) as its exception.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from paicli.audit.guard import guard
from paicli.audit.log import AuditLog
from paicli.home import PaicliHome
from paicli.llm.schema import validate_arguments
from paicli.mcp import CallToolResult, HttpServer, StdioServer, TextContent
from paicli.permissions.approval import (
    Answer,
    ApprovalRequest,
    ApprovingToolbox,
    Choice,
    PermissionStore,
    Policy,
)
from paicli.redact import Redactor, environment_secrets
from paicli.tools.base import Toolbox, ToolOutcome, ToolSpec
from paicli.tools.mcp.naming import model_tool_name
from paicli.user_config import load_user_config

__all__ = ["ApproveCallback", "CallGuard", "PendingGuard"]

log = logging.getLogger("paicli.langchain")

ApproveCallback = Callable[[ApprovalRequest], "bool | Answer | Awaitable[bool | Answer]"]
"""Asked before a call the user's policy does not already allow: True (or an `Answer`)
lets it run. A plain function runs in a worker thread, so it may block on a prompt."""


class BridgedTool(Protocol):
    """What the guard reads of a bridged tool (`langchain.tool.BridgedTool`)."""

    server: str
    remote_name: str
    description: str
    args_schema: Any
    metadata: dict[str, Any] | None

    def link_spec(self) -> StdioServer | HttpServer: ...

    async def call_server(self, arguments: Mapping[str, Any]) -> CallToolResult: ...


@dataclass(frozen=True)
class _Ran(ToolOutcome):
    """An outcome that carries the server's whole result back through the wrappers."""

    result: CallToolResult | None = None


class _BridgedTools:
    """The bridged tools as a paicli `Toolbox`."""

    def __init__(self, tools: Sequence[BridgedTool]) -> None:
        self._tools = {model_tool_name(t.server, t.remote_name): t for t in tools}

    def spec(self, tool: BridgedTool) -> ToolSpec:
        annotations = tool.metadata.get("annotations") if tool.metadata else None
        read_only = isinstance(annotations, Mapping) and annotations.get("readOnlyHint") is True
        return ToolSpec(
            name=model_tool_name(tool.server, tool.remote_name),
            description=tool.description,
            parameters=tool.args_schema if isinstance(tool.args_schema, dict) else {},
            kind="mcp",
            server=tool.server,
            tool=tool.remote_name,
            read_only_hint=read_only,
        )

    def specs(self) -> list[ToolSpec]:
        return [self.spec(t) for t in self._tools.values()]

    def precheck(self, spec: ToolSpec, arguments: Mapping[str, object]) -> ToolOutcome | None:
        problem = validate_arguments(spec.parameters, dict(arguments))
        if problem is None:
            return None
        return ToolOutcome.refused(
            "Error: the arguments do not match the tool's input schema; nothing was sent to "
            f"the server. {problem}"
        )

    def must_ask(self, spec: ToolSpec, arguments: Mapping[str, object]) -> str | None:
        return None  # as for paicli's MCP tools: policy and the user decide

    async def call(self, spec: ToolSpec, arguments: Mapping[str, object]) -> ToolOutcome:
        result = await self._tools[spec.name].call_server(arguments)
        return _Ran(result.text, is_error=result.is_error, result=result)


class CallGuard:
    """Approval (when `approve` is given) and audit (when `audit` is) around bridged calls."""

    def __init__(
        self,
        tools: Sequence[BridgedTool],
        *,
        approve: ApproveCallback | None,
        audit: bool | str | os.PathLike[str] | None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self._options = (approve, audit)
        home = PaicliHome.from_environ(environ)
        self._tools = _BridgedTools(tools)
        toolbox: Toolbox = self._tools
        if approve is not None:
            policy, problems = Policy.from_config(load_user_config(home))
            store = PermissionStore(home.permissions)
            for problem in [*problems, *store.problems]:
                log.warning("%s", problem)
            toolbox = ApprovingToolbox(
                toolbox, policy=policy, store=store, approver=_approver(approve)
            )
        secrets = [*environment_secrets(environ or os.environ)]
        secrets += [v for t in tools for v in _secrets_of(t)]
        redactor = Redactor(secrets)
        log_file = None
        if audit:
            folder = home.audit_dir if audit is True else Path(audit).expanduser()
            log_file = AuditLog(folder, redactor)
        session_id = uuid.uuid4().hex[:12]
        self._toolbox = guard(toolbox, redactor=redactor, audit=log_file, session_id=session_id)

    async def call(self, tool: BridgedTool, arguments: Mapping[str, Any]) -> CallToolResult:
        outcome = await self._toolbox.call(self._tools.spec(tool), arguments)
        if isinstance(outcome, _Ran) and outcome.result is not None:
            return outcome.result
        return CallToolResult([TextContent(outcome.text)], is_error=True)

    def __deepcopy__(self, memo: dict[int, object]) -> CallGuard:
        return self  # a copied tool keeps its approval session and audit log

    def __reduce__(self) -> tuple[type[PendingGuard], tuple[object, ...]]:
        # Pickled as its options: the receiver makes its own guard (its own policy, store
        # and audit log) over the tools unpickled with it, which share one guard as here.
        return (PendingGuard, self._options)


class PendingGuard:
    """A `CallGuard` as pickled: made, over every tool unpickled with it, at its first call
    in the receiving process (where the user's policy and audit folder are then read)."""

    def __init__(
        self, approve: ApproveCallback | None, audit: bool | str | os.PathLike[str] | None
    ) -> None:
        self._options = (approve, audit)
        self._tools: list[BridgedTool] = []
        self._guard: CallGuard | None = None

    def adopt(self, tool: BridgedTool) -> None:
        self._tools.append(tool)

    async def call(self, tool: BridgedTool, arguments: Mapping[str, Any]) -> CallToolResult:
        if self._guard is None:
            approve, audit = self._options
            self._guard = CallGuard(self._tools, approve=approve, audit=audit)
        return await self._guard.call(tool, arguments)

    def __deepcopy__(self, memo: dict[int, object]) -> PendingGuard:
        return self

    def __reduce__(self) -> tuple[type[PendingGuard], tuple[object, ...]]:
        return (PendingGuard, self._options)


def _secrets_of(tool: BridgedTool) -> list[str]:
    """Values of the server's description that must never reach the log."""
    spec = tool.link_spec()
    values = getattr(spec, "env", None) or getattr(spec, "headers", None) or {}
    return [v for v in values.values() if v]


def _approver(approve: ApproveCallback) -> Callable[[ApprovalRequest], Awaitable[Answer]]:
    async def ask(request: ApprovalRequest) -> Answer:
        if inspect.iscoroutinefunction(approve) or inspect.iscoroutinefunction(
            getattr(approve, "__call__", None)  # noqa: B004 - an object with async __call__
        ):
            said = await approve(request)  # type: ignore[misc]
        else:
            said = await asyncio.to_thread(approve, request)
            if inspect.isawaitable(said):
                said = await said
        if isinstance(said, Answer):
            return said
        return Answer(Choice.ALLOW_ONCE if said is True else Choice.DENY)

    return ask
