"""The approving wrapper: decides, per call, whether a tool runs, and who decided.

Order: the inner toolbox's precheck, deny patterns, read-only tools, allow patterns and saved
answers, this session's answers, the command-line flags, and last the injected approver. A call
the inner toolbox says `must_ask` about (a protected path) skips everything between the deny
patterns and the approver: it is always asked, the answer counts for that call only, and with
no approver (`paicli -p`) it is denied whatever --allow and --yes say. The approver is asked
one call at a time; the arguments it is shown are a frozen copy, and exactly that copy is what
runs. Saved and session answers for an MCP tool cover the tool's definition as it was when
the user said yes (`ToolSpec.definition_hash`): a tool its server redefined is asked about
again, and the question shows what changed. This module never prints: the UI supplies the
approver.
"""

from __future__ import annotations

import asyncio
import copy
import enum
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace

from paicli.servers.tool_definition import definition_hash, describe_change
from paicli.tools._policy import (
    PermissionStore,
    Policy,
    argument_pattern_problems,
    matches_any,
)
from paicli.tools.base import VERDICT, DecidedBy, Toolbox, ToolOutcome, ToolSpec
from paicli.tools.escape import json_for_terminal, terminal_safe
from paicli.tools.naming import unsanitised_tool_name

__all__ = [
    "Answer",
    "ApprovalRequest",
    "Approver",
    "ApprovingToolbox",
    "Choice",
    "PermissionStore",
    "Policy",
    "argument_pattern_problems",
]


class Choice(enum.Enum):
    ALLOW_ONCE = "allow_once"
    ALLOW_SESSION = "allow_session"  # this tool, until paicli exits
    ALLOW_ALWAYS = "allow_always"  # this tool, saved in permissions.json
    DENY = "deny"
    DENY_WITH_MESSAGE = "deny_with_message"  # the message goes to the model


@dataclass(frozen=True)
class Answer:
    choice: Choice
    message: str | None = None


@dataclass(frozen=True)
class ApprovalRequest:
    """One call waiting for the user's answer. `arguments` is the approver's own copy;
    `protected` says why this call is asked about whatever was allowed before; `changed`
    what changed in an MCP tool the user allowed before in another definition."""

    spec: ToolSpec
    arguments: Mapping[str, object]
    protected: str | None = None
    changed: tuple[str, ...] = ()

    def display(self) -> str:
        """A warning line for a protected path, then tool, server (MCP) and the full
        arguments as indented JSON, safe to print: it decodes back to exactly the arguments
        that run."""
        lines: list[str] = []
        if self.protected is not None:
            lines.append(
                f"Warning: {terminal_safe(self.protected)}. Saved and session answers never "
                "cover a protected path: s and a allow this call only."
            )
        if self.changed:
            lines.append(
                "Warning: the server changed this tool since you allowed it; your earlier "
                f"answer does not cover the new definition ({terminal_safe(self.changed[0])}):"
            )
            lines.extend(f"  {terminal_safe(line)}" for line in self.changed[1:])
        lines.append(f"Tool: {terminal_safe(self.spec.name)}")
        if self.spec.server is not None:
            tool = terminal_safe(self.spec.tool or self.spec.name)
            lines.append(f"Server: {terminal_safe(self.spec.server)} (tool {tool})")
        lines.append("Arguments:")
        lines.append(json_for_terminal(self.arguments))
        return "\n".join(lines)


Approver = Callable[[ApprovalRequest], Awaitable[Answer]]


def _denied(text: str, decided_by: DecidedBy, waited_ms: int | None = None) -> ToolOutcome:
    return ToolOutcome(
        text=text, is_error=True, decision="denied", decided_by=decided_by, waited_ms=waited_ms
    )


class ApprovingToolbox:
    """A toolbox that runs `inner`'s calls only when policy, flags or the user allow them."""

    def __init__(
        self,
        inner: Toolbox,
        *,
        policy: Policy,
        store: PermissionStore,
        approver: Approver | None,
        flag_allow: tuple[str, ...] = (),
        yes: bool = False,
    ) -> None:
        self._inner = inner
        self._policy = policy
        self._store = store
        self._approver = approver
        self._flag_allow = flag_allow
        self._yes = yes
        # Session answers: tool name → the definition hash allowed (None: a built-in tool).
        self._session: dict[str, str | None] = {}
        # The definitions of MCP tools allowed this session, to show what changed.
        self._session_definitions: dict[str, Mapping[str, object]] = {}
        # One prompt at a time: parallel tool calls would otherwise talk over each other.
        self._asking = asyncio.Lock()

    def specs(self) -> list[ToolSpec]:
        # Denied tools stay listed: the model learns why at call time instead of guessing.
        return self._inner.specs()

    def precheck(self, spec: ToolSpec, arguments: Mapping[str, object]) -> ToolOutcome | None:
        return self._inner.precheck(spec, arguments)

    def must_ask(self, spec: ToolSpec, arguments: Mapping[str, object]) -> str | None:
        return self._inner.must_ask(spec, arguments)

    async def call(self, spec: ToolSpec, arguments: Mapping[str, object]) -> ToolOutcome:
        refusal = self._inner.precheck(spec, arguments)
        if refusal is not None:
            return refusal
        written = spec.name
        if spec.server and spec.tool:
            written = unsanitised_tool_name(spec.server, spec.tool)
        if self._policy.denies(spec.name, written):
            return _denied(
                f"The user's policy denies the tool {spec.name} (permissions.deny in the "
                "paicli config); it was not run.",
                "policy",
            )
        protected = self._inner.must_ask(spec, arguments)
        if protected is None:
            decided_by = self._decided_without_asking(spec)
            if decided_by is not None:
                return await self._run(spec, arguments, decided_by)
            if self._flags_allow(spec):
                return await self._run(spec, arguments, "flag")
        if self._approver is None and protected is not None:
            return _denied(
                f"The tool {spec.name} was not run: {protected}. paicli -p never runs a call "
                "on a protected path, whatever --allow and --yes say; the user can make this "
                "change by hand or approve it in an interactive paicli session.",
                "policy",
            )
        if self._approver is None:
            return _denied(
                f"The tool {spec.name} was not run: paicli -p does not ask for approval. "
                f"Pass --allow {spec.name} or --yes to let it run.",
                "flag",
            )
        return await self._ask(self._approver, spec, arguments, protected)

    def _decided_without_asking(self, spec: ToolSpec) -> DecidedBy | None:
        if spec.kind == "read":
            return "policy"
        # A server's readOnlyHint is its own claim: believed only when the user trusts it.
        if spec.kind == "mcp" and spec.read_only_hint and spec.trusted_server:
            return "policy"
        if self._policy.allows(spec.name) or self._store.allows(spec.name, spec.definition_hash):
            return "policy"
        if spec.name in self._session and self._session[spec.name] == spec.definition_hash:
            return "session"
        return None

    def _change(self, spec: ToolSpec) -> tuple[str, ...]:
        """What changed in an MCP tool since an answer that no longer covers it."""
        if spec.definition is None:
            return ()
        before = self._session_definitions.get(spec.name)
        grant = self._store.grant(spec.name)
        if before is None and grant is not None:
            before = grant.definition
        if before is None or definition_hash(before) == spec.definition_hash:
            return ()
        return tuple(describe_change(before, spec.definition))

    def _flags_allow(self, spec: ToolSpec) -> bool:
        return self._yes or matches_any(spec.name, self._flag_allow)

    async def _ask(
        self,
        approver: Approver,
        spec: ToolSpec,
        arguments: Mapping[str, object],
        protected: str | None,
    ) -> ToolOutcome:
        asked = time.monotonic()
        async with self._asking:
            # While this call waited, the user may have allowed the tool for the session
            # (which never covers a protected path).
            decided_by = None if protected else self._decided_without_asking(spec)
            if decided_by is None:
                # Two copies of one snapshot: the approver may do what it likes with its
                # own, the other is what runs, so the call is exactly what was shown.
                frozen = copy.deepcopy(dict(arguments))
                request = ApprovalRequest(
                    spec, copy.deepcopy(frozen), protected, self._change(spec)
                )
                answer = await self._prompt(approver, request)
                # Remembered before the lock is released, so waiting calls see it; an answer
                # about a protected path is for that call only.
                warning = None if protected else self._remember(spec, answer)
        # How long the call waited for the user (and for other prompts): the audit log keeps
        # it apart from how long the tool ran.
        waited = round((time.monotonic() - asked) * 1000)
        # The lock serialises questions, not tool calls: the call runs outside it.
        if decided_by is not None:
            return await self._run(spec, arguments, decided_by, waited)
        if isinstance(answer, ToolOutcome):
            return replace(answer, waited_ms=waited)
        if answer.choice is Choice.DENY:
            return _denied("The user denied this tool call.", "user", waited)
        if answer.choice is Choice.DENY_WITH_MESSAGE:
            if not answer.message or not answer.message.strip():
                return _denied("The user denied this tool call.", "user", waited)
            said = f"The user denied this tool call and said: {answer.message}"
            return _denied(said, "user", waited)
        return await self._run(spec, frozen, "user", waited, warning)

    @staticmethod
    async def _prompt(approver: Approver, request: ApprovalRequest) -> Answer | ToolOutcome:
        """The user's answer, or a denial when asking failed."""
        try:
            return await approver(request)
        except Exception as exc:  # CancelledError is a BaseException and propagates
            failed = f"The tool {request.spec.name} was not run: asking the user failed"
            return _denied(f"{failed} ({type(exc).__name__}: {exc}).", "user")

    def _remember(self, spec: ToolSpec, answer: Answer | ToolOutcome) -> str | None:
        if not isinstance(answer, Answer):
            return None
        if answer.choice is Choice.ALLOW_SESSION:
            self._session[spec.name] = spec.definition_hash
            if spec.definition is not None:
                self._session_definitions[spec.name] = spec.definition
        elif answer.choice is Choice.ALLOW_ALWAYS:
            self._session.pop(spec.name, None)  # the saved answer is the newer one
            self._session_definitions.pop(spec.name, None)
            # The store remembers the answer for this process even when saving fails.
            return self._store.add(spec.name, spec.definition_hash, spec.definition)
        return None

    async def _run(
        self,
        spec: ToolSpec,
        arguments: Mapping[str, object],
        decided_by: DecidedBy,
        waited_ms: int | None = None,
        warning: str | None = None,
    ) -> ToolOutcome:
        verdict = VERDICT.get()
        if verdict is not None:
            verdict.decided_by, verdict.waited_ms = decided_by, waited_ms
        outcome = await self._inner.call(spec, arguments)
        if waited_ms is not None:
            outcome = replace(outcome, waited_ms=waited_ms, approval_warning=warning)
        if outcome.decision != "allowed":
            return outcome  # the inner toolbox refused at call time; its verdict stands
        return replace(outcome, decided_by=decided_by)
