"""PreToolUse and PostToolUse hooks around every tool call: `Audit( Redact( Hooks(
Approve( ... ) ) ) )`.

A hook is matched against the tool's name as the model sees it, its Claude Code names
(`Bash` is `execute_command`: `tools.claude_names`) and, for an MCP tool, its name as
written (`mcp__my.server__tool`). Before the call: exit 2 or `permissionDecision: "deny"`
(or the legacy `decision: "block"`) stops it, the reason going to the model; `"allow"` lets
it run without asking (deny rules, plan mode and protected paths still apply: the approving
wrapper inside reads `HOOK_ALLOWED`); `"ask"` leaves it to the usual approval. Several hooks:
deny beats ask beats allow. `updatedInput` replaces the whole input, and must fit the tool's
input schema (else the call is refused: a hook that meant to change it must not see it run
unchanged). After the call: exit 2 or `decision: "block"` puts the reason before the model,
and so does `additionalContext`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from paicli.hooks.engine import MAX_TEXT, HookAnswer, HookEngine
from paicli.llm.schema import schema_problems
from paicli.tools.base import HOOK_ALLOWED, Toolbox, ToolboxWrapper, ToolOutcome, ToolSpec
from paicli.tools.claude_names import claude_aliases
from paicli.tools.mcp.naming import unsanitised_tool_name

__all__ = ["HookingToolbox", "PreDecision", "pre_decision"]

_ORDER = {"deny": 3, "ask": 2, "allow": 1}


@dataclass(frozen=True)
class PreDecision:
    """What a call's PreToolUse hooks decided together."""

    decision: str | None = None  # "deny", "ask", "allow" or None (no word)
    reason: str = ""
    updated: Mapping[str, object] | None = None
    context: str = ""


def pre_decision(answers: Sequence[HookAnswer]) -> PreDecision:
    decision, reason, updated, context = None, "", None, []
    for answer in answers:
        specific = answer.specific("PreToolUse")
        word = specific.get("permissionDecision")
        legacy = (answer.output or {}).get("decision")
        if answer.blocked or (answer.output or {}).get("continue") is False:
            word = "deny"
        elif word not in _ORDER and legacy in ("approve", "block"):
            word = "allow" if legacy == "approve" else "deny"
        why = specific.get("permissionDecisionReason")
        text = answer.reason or (why if isinstance(why, str) else "") or answer.field("stopReason")
        stronger = decision is None or _ORDER.get(str(word), 0) > _ORDER[decision]
        if isinstance(word, str) and word in _ORDER and stronger:
            decision, reason = word, text[:MAX_TEXT]
        new = specific.get("updatedInput")
        if isinstance(new, dict) and updated is None:
            updated = new
        extra = specific.get("additionalContext")
        if isinstance(extra, str) and extra.strip():
            context.append(extra[:MAX_TEXT])
    return PreDecision(decision, reason, updated, "\n".join(context))


class HookingToolbox(ToolboxWrapper):
    """Runs the PreToolUse and PostToolUse hooks of `engine` around `inner`'s calls."""

    def __init__(self, inner: Toolbox, engine: HookEngine) -> None:
        super().__init__(inner)
        self._engine = engine

    async def call(self, spec: ToolSpec, arguments: Mapping[str, object]) -> ToolOutcome:
        names = [spec.name, *claude_aliases(spec.name)]
        if spec.server and spec.tool:
            names.append(unsanitised_tool_name(spec.server, spec.tool))
        fields: dict[str, object] = {"tool_name": spec.name, "tool_input": dict(arguments)}
        pre = pre_decision(await self._engine.fire("PreToolUse", fields, names, arguments))
        if pre.decision == "deny":
            why = pre.reason or "no reason given"
            return ToolOutcome(
                f"A PreToolUse hook blocked this call of {spec.name}: {why}",
                is_error=True,
                decision="denied",
                decided_by="hook",
            )
        if pre.updated is not None:
            schema = (spec.definition or {}).get("inputSchema", spec.parameters)
            problems = schema_problems(schema if isinstance(schema, Mapping) else {}, pre.updated)
            if problems:
                return ToolOutcome.refused(
                    f"A PreToolUse hook changed the input of {spec.name} into one the tool's "
                    f"input schema refuses ({problems}); the call was not run.",
                    "hook",
                )
            arguments = pre.updated
            fields["tool_input"] = dict(arguments)
        token = HOOK_ALLOWED.set(pre.decision == "allow")
        try:
            outcome = await self._inner.call(spec, arguments)
        finally:
            HOOK_ALLOWED.reset(token)
        if outcome.decision != "allowed":
            return _with(outcome, pre.context)
        fields["tool_response"] = {"text": outcome.text, "is_error": outcome.is_error}
        notes = [pre.context] if pre.context else []
        for answer in await self._engine.fire("PostToolUse", fields, names, arguments):
            if answer.blocked or (answer.output or {}).get("decision") == "block":
                notes.append(f"A PostToolUse hook says: {answer.reason or 'blocked'}")
            extra = answer.specific("PostToolUse").get("additionalContext")
            if isinstance(extra, str) and extra.strip():
                notes.append(extra[:MAX_TEXT])
        return _with(outcome, "\n".join(notes))


def _with(outcome: ToolOutcome, note: str) -> ToolOutcome:
    if not note:
        return outcome
    return replace(outcome, text=f"{outcome.text}\n\n[hook] {note}")
