"""The answers the user keeps: "allow for this session" in memory, "always" and "this
project" through the `PermissionStore`, and what a kept answer covers.

An answer covers one rule (`covers`): a tool, a command prefix (`execute_command(git diff:*)`)
or one site; none when no rule can say what a call runs (then it is allowed once only). An
answer for an MCP tool covers the tool's definition as it was when the user said yes
(`ToolSpec.definition_hash`): a tool its server redefined is not covered, and `change` says
what changed since.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from paicli.permissions.policy import PermissionStore, Policy
from paicli.permissions.request import Answer, ApprovalRequest, Choice
from paicli.permissions.rules import COMMAND_TOOL, WEB_FETCH_TOOL, command_prefix, domain_rule
from paicli.servers.tool_definition import definition_hash, describe_change
from paicli.tools.base import ToolOutcome, ToolSpec

__all__ = ["KeptAnswers"]


class KeptAnswers:
    """This session's answers, and the saved ones `store` keeps: `remember` keeps an answer
    where its choice says, `allows` says whether a session answer covers a call. Calls run in
    `root` (where a session answer's relative path rule is anchored), in the project at
    `project`, with the folders `also` (--add-dir) inside it too."""

    def __init__(
        self, store: PermissionStore, *, root: Path, project: Path, also: Sequence[Path]
    ) -> None:
        self._store = store
        self._root, self._project, self._also = root, project, tuple(also)
        # Session answers: tool name → the definition hash allowed (None: a built-in tool).
        self._session: dict[str, str | None] = {}
        # Session answers about commands: prefix rules (`execute_command(git diff:*)`).
        self._session_rules = Policy()
        # The definitions of MCP tools allowed this session, to show what changed.
        self._session_definitions: dict[str, Mapping[str, object]] = {}

    @property
    def session_rules(self) -> tuple[str, ...]:
        """What the user allowed for this session, as rules."""
        return (*self._session, *self._session_rules.allow)

    def allows(self, spec: ToolSpec, arguments: Mapping[str, object]) -> bool:
        """Whether an answer for this session covers the call."""
        if spec.name in self._session and self._session[spec.name] == spec.definition_hash:
            return True
        return spec.kind != "mcp" and self._session_rules.allows(
            spec.name, arguments, self._root, also=self._also
        )

    def covers(
        self, spec: ToolSpec, arguments: Mapping[str, object], limit: str | None
    ) -> str | None:
        """What a kept answer to the call would cover; `limit` is why no rule can cover it
        (then none: a rule saved for it would never apply)."""
        if spec.name == WEB_FETCH_TOOL and spec.kind != "mcp":
            return domain_rule(arguments)  # one site, never every page on the web
        if spec.name != COMMAND_TOOL or spec.kind == "mcp":
            return spec.name
        if limit is not None:
            return None
        prefix = command_prefix(arguments, self._root, self._project, self._also)
        return f"{COMMAND_TOOL}({prefix})" if prefix is not None else None

    def change(self, spec: ToolSpec) -> tuple[str, ...]:
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

    def remember(self, request: ApprovalRequest, answer: Answer | ToolOutcome) -> str | None:
        """Keep `answer` to `request` as its choice says; a warning when it could not be kept
        as asked (no rule covers the call, or saving failed)."""
        if not isinstance(answer, Answer):
            return None
        spec, covers = request.spec, request.covers
        keeps = (Choice.ALLOW_SESSION, Choice.ALLOW_ALWAYS, Choice.ALLOW_PROJECT)
        if answer.choice in keeps and covers is None:
            why = request.limit or "a rule cannot say what this call runs"
            return f"allowed this once only: no permission rule can cover this call ({why})"
        if answer.choice is Choice.ALLOW_SESSION:
            if covers is not None and covers != spec.name:
                self._session_rules = self._session_rules | Policy(allow=(covers,))
                return None
            self._session[spec.name] = spec.definition_hash
            if spec.definition is not None:
                self._session_definitions[spec.name] = spec.definition
        elif answer.choice in (Choice.ALLOW_ALWAYS, Choice.ALLOW_PROJECT):
            self._session.pop(spec.name, None)  # the saved answer is the newer one
            self._session_definitions.pop(spec.name, None)
            # The store remembers the answer for this process even when saving fails.
            project = answer.choice is Choice.ALLOW_PROJECT
            return self._store.add(
                covers or spec.name, spec.definition_hash, spec.definition, project=project
            )
        return None
