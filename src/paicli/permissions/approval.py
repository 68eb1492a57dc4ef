"""The approving wrapper: decides, per call, whether a tool runs, and who decided.

Order: the inner toolbox's precheck, deny rules (config, project, `--deny`), plan mode (only
read-only tools run), read-only tools, allow rules and saved answers, this session's answers,
the mode (accept-edits: file edits and sandboxed commands; yolo: everything), the
command-line flags, and last the injected approver. A call the inner toolbox says `must_ask`
about (a protected path, a command no sandbox here can contain) skips
everything between plan mode and the approver: it is always asked, the answer counts for that
call only, and with no approver (`paicli -p`) it is denied whatever --allow, --yes and the mode
say. The approver is asked one call at a time; the arguments it is shown are a frozen copy, and
exactly that copy is what runs. Saved and session answers for an MCP tool cover the tool's
definition as it was when the user said yes (`ToolSpec.definition_hash`): a tool its server
redefined is asked about again, the question shows what changed, and so does the call's audit
record. This module never prints: the UI supplies the approver.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from paicli.permissions.answers import KeptAnswers
from paicli.permissions.hunks import hunks, merge
from paicli.permissions.policy import (
    PermissionStore,
    Policy,
    ProjectSettings,
    flag_rules,
    project_settings,
)
from paicli.permissions.request import Answer, ApprovalRequest, Approver, Choice, Mode
from paicli.permissions.rules import COMMAND_TOOL, READ_TOOL, READERS, command_limit
from paicli.tools.base import (
    APPROVED,
    DENIED_READS,
    HOOK_ALLOWED,
    SUBAGENT,
    VERDICT,
    DecidedBy,
    Preview,
    Toolbox,
    ToolboxWrapper,
    ToolOutcome,
    ToolSpec,
)
from paicli.tools.mcp.naming import blurred_server, unsanitised_tool_name

__all__ = [
    "EDIT_TOOLS",
    "YOLO_WARNING",
    "Answer",
    "ApprovalRequest",
    "Approver",
    "ApprovingToolbox",
    "Choice",
    "Mode",
    "PermissionStore",
    "Policy",
    "ProjectSettings",
    "flag_rules",
    "project_settings",
]

# The tools accept-edits mode lets run: they change files in the project only.
EDIT_TOOLS = frozenset({"write_file", "edit_file"})


def _denied(text: str, decided_by: DecidedBy, waited_ms: int | None = None) -> ToolOutcome:
    return ToolOutcome(
        text=text, is_error=True, decision="denied", decided_by=decided_by, waited_ms=waited_ms
    )


Previewer = Callable[[ToolSpec, Mapping[str, object]], Preview | None]

YOLO_WARNING = (
    "YOLO MODE: every tool call runs without asking, commands and file writes included "
    "(deny rules and protected paths still apply)"
)
PLAN_REFUSAL = (
    "The tool {name} was not run: paicli is in plan mode, where only read-only tools run. "
    "Do not try to change anything now: finish exploring, then present your plan (the "
    "changes and commands you would make) for the user to approve. The user leaves plan mode "
    "with Shift+Tab or /mode."
)


class ApprovingToolbox(ToolboxWrapper):
    """A toolbox that runs `inner`'s calls only when rules, the mode, flags or the user allow
    them. `root` is the folder the file tools work in (a call's path is relative to it);
    `project` the project root it lies in (default `root`): a relative path rule of `policy`
    (config and project settings) or of a saved answer is anchored there, one of `flag_allow`
    and `flag_deny` (`--allow`, `--deny`, typed in `root`) or of a session answer at `root`.
    `previewer` computes what a file edit would change, to show it (and run it only if the
    file is unchanged); `granted` gives the rules the user's own skills in use pre-approve
    (their `allowed-tools`, `paicli.skills.toolbox`)."""

    def __init__(
        self,
        inner: Toolbox,
        *,
        policy: Policy,
        store: PermissionStore,
        approver: Approver | None,
        flag_allow: tuple[str, ...] = (),
        flag_deny: tuple[str, ...] = (),
        yes: bool = False,
        mode: Mode = Mode.DEFAULT,
        root: Path | None = None,
        project: Path | None = None,
        previewer: Previewer | None = None,
        contained: Callable[[ToolSpec], bool] | None = None,
        granted: Callable[[], tuple[str, ...]] | None = None,
        also: Sequence[Path] = (),
    ) -> None:
        super().__init__(inner)
        # Folders --add-dir added: a command's paths in them are inside the project.
        self._also = tuple(also)
        self._policy = policy
        self._store = store
        self._approver = approver
        self._flags = Policy(allow=flag_allow, deny=flag_deny)
        self._yes = yes
        self.mode = mode
        # yolo is chosen when paicli starts; switching modes later never reaches it otherwise.
        self.yolo_allowed = mode is Mode.YOLO
        self._root = root or Path.cwd()
        self._project = project or self._root
        self._previewer = previewer
        # Whether a call runs in the OS sandbox (accept-edits lets those commands run).
        self._contained = contained
        # The calls the user's own skills in use pre-approve (their allowed-tools), as rules.
        self._skill_grants = granted
        # This session's answers, and how an answer is kept (saved ones in `store`).
        self._answers = KeptAnswers(store, root=self._root, project=self._project, also=also)
        # What a user's custom command allows during its turn (`granting`).
        self._granted = Policy()
        # One prompt at a time: parallel tool calls would otherwise talk over each other.
        self._asking = asyncio.Lock()

    def switch(self, wanted: Mode | None = None) -> Mode:
        """Switch to `wanted`, or to the next mode of the cycle (default, accept-edits, plan,
        and yolo when paicli started in it); ValueError for yolo when it did not."""
        cycle = [Mode.DEFAULT, Mode.ACCEPT_EDITS, Mode.PLAN]
        if self.yolo_allowed:
            cycle.append(Mode.YOLO)
        if wanted is None:
            wanted = cycle[(cycle.index(self.mode) + 1) % len(cycle)]
        if wanted not in cycle:
            raise ValueError(
                "yolo mode is chosen when paicli starts (paicli --permission-mode yolo), "
                "never switched on mid-session"
            )
        self.mode = wanted
        return wanted

    def rules(self) -> dict[str, tuple[str, ...]]:
        """The rules in force, by where they come from, for `/permissions`."""
        return {
            "allow (config and project)": self._policy.allow,
            "deny (config and project)": self._policy.deny,
            "--allow": self._flags.allow,
            "--deny": self._flags.deny,
            "saved, every project": self._store.patterns,
            "saved, this project": self._store.project_patterns,
            "this session": self.session_rules,
        }

    @contextlib.contextmanager
    def granting(self, rules: tuple[str, ...]) -> Iterator[None]:
        """Calls `rules` cover run unasked until the block ends: the `allowed-tools` of the
        user's own custom command, for its turn (a project's command never gets here)."""
        before = self._granted
        self._granted = before | Policy(allow=rules)
        try:
            yield
        finally:
            self._granted = before

    @property
    def session_rules(self) -> tuple[str, ...]:
        """What the user allowed for this session, as rules."""
        return self._answers.session_rules

    # `specs` is the inner toolbox's: denied tools stay listed, so the model learns why at
    # call time instead of guessing.

    def withheld(self, spec: ToolSpec) -> bool:
        """Whether the rules deny every call of `spec` (a deny rule naming the tool alone):
        a sub-agent is not even offered such a tool."""
        written = spec.name
        if spec.server and spec.tool:
            written = unsanitised_tool_name(spec.server, spec.tool)
        return self._policy.denies_every_call(spec.name, written) or self._flags.denies_every_call(
            spec.name, written
        )

    async def call(self, spec: ToolSpec, arguments: Mapping[str, object]) -> ToolOutcome:
        scope = SUBAGENT.get()
        if scope is not None and not scope.allows(spec.name):
            return ToolOutcome.refused(
                f"The tool {spec.name} was not run: the sub-agent {scope.agent} was not given "
                "it (its definition's tools, within the main agent's).",
                "policy",
            )
        refusal = self._inner.precheck(spec, arguments)
        if refusal is not None:
            return refusal
        written = spec.name
        if spec.server and spec.tool:
            written = unsanitised_tool_name(spec.server, spec.tool)
        if self._policy.denies(
            spec.name, written, arguments=arguments, root=self._root, anchor=self._project
        ):
            return _denied(
                f"The user's rules deny this call of {spec.name} (permissions.deny in the "
                "paicli config or the project's .paicli/settings.json); it was not run.",
                "policy",
            )
        if self._flags.denies(spec.name, written, arguments=arguments, root=self._root):
            return _denied(f"This call of {spec.name} is denied by --deny; it was not run.", "flag")
        if self.mode is Mode.PLAN and not self._read_only(spec):
            return _denied(PLAN_REFUSAL.format(name=spec.name), "mode")
        protected = self._inner.must_ask(spec, arguments)
        if protected is None:
            decided_by = self._decided_without_asking(spec, arguments)
            if decided_by is not None:
                return await self._run(spec, arguments, decided_by)
            if self._flags_allow(spec, arguments):
                return await self._run(spec, arguments, "flag")
        if self._approver is None and protected is not None:
            what = "an uncontained command" if spec.name == COMMAND_TOOL else "a protected path"
            return _denied(
                f"The tool {spec.name} was not run: {protected}. paicli -p never runs a call "
                f"on {what}, whatever --allow, --yes and the permission mode say; the "
                "user can do it by hand or approve it in an interactive paicli "
                "session.",
                "policy",
            )
        if self._approver is None:
            limit = self._limit(spec, arguments)
            if limit is not None:
                return _denied(
                    f"The tool {spec.name} was not run: paicli -p does not ask for approval, "
                    f"and no permission rule covers this call: {limit}.",
                    "flag",
                )
            return _denied(
                f"The tool {spec.name} was not run: paicli -p does not ask for approval. "
                f"Pass --allow {spec.name} or --yes to let it run.",
                "flag",
            )
        return await self._ask(self._approver, spec, arguments, protected)

    def _denied_reads(self, path: Path) -> bool:
        """Whether the user's deny rules (config, project, --deny) keep `path` from reading."""
        return self._policy.denies_reading(
            path, self._root, self._project
        ) or self._flags.denies_reading(path, self._root)

    @staticmethod
    def _read_only(spec: ToolSpec) -> bool:
        return spec.kind in ("read", "web") or (spec.kind == "mcp" and spec.read_only_hint)

    def _decided_without_asking(
        self, spec: ToolSpec, arguments: Mapping[str, object]
    ) -> DecidedBy | None:
        if spec.kind == "read":
            return "policy"
        # A server's readOnlyHint is its own claim: believed only when the user trusts it.
        if spec.kind == "mcp" and spec.read_only_hint and spec.trusted_server:
            return "policy"
        # A rule never covers an MCP tool the user allowed in another definition: saved
        # answers for those are bound to the definition.
        ruled = self._blurred(spec) is None  # else only an answer for this very tool covers it
        if ruled and self._policy.allows(
            spec.name, arguments, self._root, self._project, self._also
        ):
            return "policy"
        if self._store.allows(spec.name, spec.definition_hash, arguments, self._root):
            return "policy"
        if self._answers.allows(spec, arguments):
            return "session"
        if (
            ruled
            and self._skill_grants is not None
            and Policy(allow=self._skill_grants()).allows(
                spec.name, arguments, self._root, self._project
            )
        ):
            return "skill"
        if ruled and self._granted.allows(spec.name, arguments, self._root, self._project):
            return "command"
        if HOOK_ALLOWED.get():
            return "hook"
        if self.mode is Mode.YOLO:
            return "mode"
        if self.mode is Mode.ACCEPT_EDITS and spec.name in EDIT_TOOLS and spec.kind == "write":
            return "mode"
        # A command the OS sandbox contains can write the project only, like an edit.
        contained = self._contained is not None and self._contained(spec)
        if self.mode is Mode.ACCEPT_EDITS and spec.kind != "mcp" and contained:
            return "mode"
        return None

    def _flags_allow(self, spec: ToolSpec, arguments: Mapping[str, object]) -> bool:
        if self._yes:
            return True
        return self._blurred(spec) is None and self._flags.allows(spec.name, arguments, self._root)

    @staticmethod
    def _blurred(spec: ToolSpec) -> str | None:
        """Why no rule can name this MCP tool (its server's name), or None."""
        return blurred_server(spec.server) if spec.kind == "mcp" and spec.server else None

    def _limit(self, spec: ToolSpec, arguments: Mapping[str, object]) -> str | None:
        if spec.kind == "mcp":
            return self._blurred(spec)
        if spec.name != COMMAND_TOOL:
            return None
        return command_limit(arguments, self._root, self._project, self._also)

    async def _ask(
        self,
        approver: Approver,
        spec: ToolSpec,
        arguments: Mapping[str, object],
        protected: str | None,
    ) -> ToolOutcome:
        asked = time.monotonic()
        preview: Preview | None = None
        async with self._asking:
            # While this call waited, the user may have allowed the tool for the session
            # (which never covers a protected path).
            decided_by = None if protected else self._decided_without_asking(spec, arguments)
            if decided_by is None:
                # Two copies of one snapshot: the approver may do what it likes with its
                # own, the other is what runs, so the call is exactly what was shown.
                frozen = copy.deepcopy(dict(arguments))
                if self._previewer is not None:
                    preview = await asyncio.to_thread(self._previewer, spec, frozen)
                limit = self._limit(spec, frozen)
                request = ApprovalRequest(
                    spec,
                    copy.deepcopy(frozen),
                    protected,
                    self._answers.change(spec),
                    covers=None if protected else self._answers.covers(spec, frozen, limit),
                    preview=preview,
                    limit=limit,
                    agent=scope.agent if (scope := SUBAGENT.get()) is not None else None,
                )
                if (verdict := VERDICT.get()) is not None:
                    verdict.changed = request.changed  # the audit record keeps what was shown
                answer = await self._prompt(approver, request)
                # Remembered before the lock is released, so waiting calls see it; an answer
                # about a protected path is for that call only.
                warning = None if protected else self._answers.remember(request, answer)
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
        token = APPROVED.set(preview)
        try:
            if answer.hunks is not None and preview is not None:
                return await self._run_hunks(spec, frozen, preview, answer.hunks, waited)
            return await self._run(spec, frozen, "user", waited, warning)
        finally:
            APPROVED.reset(token)

    async def _run_hunks(
        self,
        spec: ToolSpec,
        arguments: Mapping[str, object],
        preview: Preview,
        chosen: frozenset[int],
        waited: int,
    ) -> ToolOutcome:
        """An edit the user approved hunk by hunk: the file is written with the chosen
        hunks only (as write_file, whichever tool asked), and the model is told which."""
        total = len(hunks(preview.before or "", preview.after))
        if not chosen:
            return _denied("The user rejected every hunk of this edit.", "user", waited)
        merged = merge(preview.before or "", preview.after, chosen)
        writer = next((s for s in self._inner.specs() if s.name == "write_file"), spec)
        outcome = await self._run(
            writer, {"path": arguments["path"], "content": merged}, "user", waited
        )
        if outcome.is_error or len(chosen) == total:
            return outcome
        rejected = ", ".join(str(n + 1) for n in range(total) if n not in chosen)
        said = (
            f"The user applied {len(chosen)} of the {total} hunks of this edit and rejected "
            f"hunk {rejected}; the file holds only the applied ones. {outcome.text}"
        )
        return replace(outcome, text=said)

    @staticmethod
    async def _prompt(approver: Approver, request: ApprovalRequest) -> Answer | ToolOutcome:
        """The user's answer, or a denial when asking failed."""
        try:
            return await approver(request)
        except Exception as exc:  # CancelledError is a BaseException and propagates
            failed = f"The tool {request.spec.name} was not run: asking the user failed"
            return _denied(f"{failed} ({type(exc).__name__}: {exc}).", "user")

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
        reading = spec.kind != "mcp" and spec.name in READERS | {READ_TOOL}
        token = DENIED_READS.set(self._denied_reads) if reading else None
        try:
            outcome = await self._inner.call(spec, arguments)
        finally:
            if token is not None:
                DENIED_READS.reset(token)
        if waited_ms is not None:
            outcome = replace(outcome, waited_ms=waited_ms, approval_warning=warning)
        if outcome.decision != "allowed":
            return outcome  # the inner toolbox refused at call time; its verdict stands
        return replace(outcome, decided_by=decided_by)
