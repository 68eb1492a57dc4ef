"""The toolbox interface: what every tool source and every wrapper around one implements.

A toolbox lists `ToolSpec`s and runs calls. Wrappers (approval, redaction, audit) take a
toolbox and are one themselves (`ToolboxWrapper`: each overrides only what it changes),
composed by `paicli.runtime.open.build_toolbox` (and the LangChain bridge's `CallGuard`), the
outer two always by `paicli.audit.guard`, audit outermost. A call never raises for a tool
failure: it returns a `ToolOutcome` with `is_error` set, which the model reads (only
cancellation escapes).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from paicli.llm.messages import ToolDefinition

# What a tool can do, which decides whether a call asks first:
#   read     never asks (read_file, list_dir, glob, grep)
#   write    asks (write_file, edit_file)
#   execute  asks (execute_command)
#   mcp      asks, unless policy says otherwise (a third party's tool)
#   web      asks, but only reads (web_fetch, web_search): runs in plan mode, still asking
ToolKind = Literal["read", "write", "execute", "mcp", "web"]

# Who let a call run or stopped it, as the audit log records it.
# "skill": a user's skill in use pre-approved it (`allowed-tools`); "command": a user's custom
# command allowed it for its turn (`allowed-tools`); "hook": a PreToolUse hook answered allow,
# or blocked it.
DecidedBy = Literal[
    "policy",
    "user",
    "session",
    "skill",
    "flag",
    "mode",
    "refusal",
    "validation",
    "command",
    "hook",
]
Decision = Literal["allowed", "denied", "refused"]


@dataclass(frozen=True)
class ToolSpec:
    """One tool as the model sees it, plus what approval and audit need to know."""

    name: str  # unique across all toolboxes; ^[a-zA-Z0-9_-]{1,64}$
    description: str
    parameters: Mapping[str, object]  # JSON Schema of the arguments, cleaned for the provider
    kind: ToolKind
    server: str | None = None  # MCP tools: the server's name
    tool: str | None = None  # MCP tools: the tool's name on its server
    read_only_hint: bool = False  # MCP annotations.readOnlyHint (believed for trusted servers)
    trusted_server: bool = False  # MCP tools: the server is marked `trust` in its config
    # MCP tools: the definition the server gave (servers.tool_definition) and its hash, which
    # saved and session answers are bound to: a redefined tool is asked about again.
    definition: Mapping[str, object] | None = None
    definition_hash: str | None = None

    def openai_tool(self) -> ToolDefinition:
        """The `tools=[...]` entry of an OpenAI chat completions request."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": dict(self.parameters),
            },
        }


@dataclass(frozen=True)
class ToolOutcome:
    """What a call produced. `text` goes back to the model as the tool message; the fields
    after `decided_by` are facts for the UI and the audit log, set by whoever knows them."""

    text: str
    is_error: bool = False
    decision: Decision = "allowed"
    decided_by: DecidedBy | None = None
    truncated: bool = False  # the output was cut to fit (the text says how)
    exit_code: int | None = None  # execute_command: the exit status (None: did not exit)
    timed_out: bool = False  # execute_command: killed at its timeout
    saved_path: Path | None = None  # the full output, saved when an MCP result was cut
    waited_ms: int | None = None  # time spent asking the user (approval), not running
    approval_warning: str | None = None  # an "always allow" answer that could not be saved
    # The MCP server and tool whose output `text` is: the agent fences it for the model as
    # untrusted data (`tools.mcp.results.for_model`). None for paicli's own text.
    source: tuple[str, str] | None = None
    # Images in an MCP result, (mimeType, base64 data) each: passed to a model that takes
    # images as image parts after the tool messages (tool messages carry text only).
    images: tuple[tuple[str, str], ...] = ()
    # The web address (or search) whose content `text` is (web_fetch, web_search): fenced
    # for the model as untrusted data too, under its own element.
    origin: str | None = None

    @classmethod
    def refused(cls, text: str, decided_by: DecidedBy = "validation") -> ToolOutcome:
        """A call stopped before it ran (bad arguments, a path outside the root, a refused
        command): an error result the model reads, recorded as refused."""
        return cls(text, is_error=True, decision="refused", decided_by=decided_by)


@dataclass
class Verdict:
    """Who allowed a call that then started running, for a record written if it never
    returns an outcome (cancelled, or a toolbox that raised). The auditing wrapper puts a
    fresh one in `VERDICT` around each call; the approving wrapper fills it in."""

    decided_by: DecidedBy | None = None
    waited_ms: int | None = None
    # What changed in an MCP tool since an answer that no longer covers it, as the user was
    # shown it when asked (`describe_change`): the audit record keeps it with the answer.
    changed: tuple[str, ...] = ()


VERDICT: ContextVar[Verdict | None] = ContextVar("paicli_tool_verdict", default=None)


@dataclass(frozen=True)
class Preview:
    """What a file edit will do, as the approval prompt shows it: the file's text now (None:
    a new file) and after the call. `digest` is the SHA-256 of the file's bytes when it was
    read: an approved edit runs only if the file still has exactly those bytes."""

    path: str
    before: str | None
    after: str
    digest: str | None = None


# A PreToolUse hook allowed this call (`paicli.hooks`): it runs without asking, unless a
# deny rule, plan mode or a protected path says otherwise (set in the call's own task).
HOOK_ALLOWED: ContextVar[bool] = ContextVar("paicli_hook_allowed", default=False)

# The preview the user approved, around the call that runs it (the file tools check it).
APPROVED: ContextVar[Preview | None] = ContextVar("paicli_approved_preview", default=None)


@dataclass(frozen=True)
class ProgressUpdate:
    """A running call's progress as its tool reports it. All None: the call has started
    running (any approval is over)."""

    progress: float | None = None
    total: float | None = None
    message: str | None = None


# Where a tool reports its progress: set by the agent around each call (a context variable,
# so every wrapper between the agent and the tool passes it on without knowing of it).
PROGRESS: ContextVar[Callable[[ProgressUpdate], None] | None] = ContextVar(
    "paicli_tool_progress", default=None
)


@dataclass(frozen=True)
class SubAgentScope:
    """The sub-agent a call is made by (`paicli.subagents`): its name, which the approval
    question and the audit record show, and the tools it was given (`allows`, by name), the
    only ones the approving wrapper lets it call."""

    agent: str
    allows: Callable[[str], bool]


# Set around a sub-agent's run (None: the main agent's calls), so every wrapper its calls pass
# sees who makes them without being told.
SUBAGENT: ContextVar[SubAgentScope | None] = ContextVar("paicli_subagent", default=None)

# Set by the approving wrapper around a built-in reading call: whether the user's deny rules
# keep a file from being read (`Read(secrets/**)`), so a search below a folder leaves it out.
DENIED_READS: ContextVar[Callable[[Path], bool] | None] = ContextVar(
    "paicli_denied_reads", default=None
)


class Toolbox(Protocol):
    """A source of tools, or a wrapper around one."""

    def specs(self) -> list[ToolSpec]:
        """The tools available now (MCP servers come and go, so ask each turn)."""
        ...

    def precheck(self, spec: ToolSpec, arguments: Mapping[str, object]) -> ToolOutcome | None:
        """A cheap check before any approval prompt: an outcome refuses the call outright
        (a path outside the project, a destructive command, arguments that break the
        schema); None lets it go on."""
        ...

    def must_ask(self, spec: ToolSpec, arguments: Mapping[str, object]) -> str | None:
        """Why the user must be asked about this call whatever was allowed before (saved or
        session answers, allow patterns, the mode, --allow, --yes), in one line (a protected
        path and what it is, or a command no sandbox here can contain); None when the usual
        approval rules decide. Called after `precheck` passed."""
        ...

    async def call(self, spec: ToolSpec, arguments: Mapping[str, object]) -> ToolOutcome:
        """Run the call. Never raises for a tool failure (only on cancellation)."""
        ...


class ToolboxWrapper:
    """A toolbox around `inner` that passes everything through: a cross-cutting wrapper
    (approval, redaction, audit) subclasses it and overrides only what it changes."""

    def __init__(self, inner: Toolbox) -> None:
        self._inner = inner

    def specs(self) -> list[ToolSpec]:
        return self._inner.specs()

    def precheck(self, spec: ToolSpec, arguments: Mapping[str, object]) -> ToolOutcome | None:
        return self._inner.precheck(spec, arguments)

    def must_ask(self, spec: ToolSpec, arguments: Mapping[str, object]) -> str | None:
        return self._inner.must_ask(spec, arguments)

    async def call(self, spec: ToolSpec, arguments: Mapping[str, object]) -> ToolOutcome:
        return await self._inner.call(spec, arguments)
