"""What the approving wrapper asks and hears: the permission `Mode`, the `ApprovalRequest` the
user is shown (safe to print: it decodes back to exactly the arguments that run) and the
`Answer` (`Choice`) that comes back through the injected `Approver`."""

from __future__ import annotations

import difflib
import enum
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from functools import cached_property

from paicli.escape import json_for_terminal, terminal_safe
from paicli.tools.base import Preview, ToolSpec

__all__ = ["MAX_PREVIEW_LINES", "Answer", "ApprovalRequest", "Approver", "Choice", "Mode"]

MAX_PREVIEW_LINES = 400


class Mode(enum.Enum):
    """How much runs without asking: `default` asks, `accept-edits` lets file edits in the
    project run, `plan` runs read-only tools only (the model proposes), `yolo` runs
    everything but what a deny rule names or a protected path."""

    DEFAULT = "default"
    ACCEPT_EDITS = "accept-edits"
    PLAN = "plan"
    YOLO = "yolo"

    @classmethod
    def parse(cls, text: str) -> Mode:
        """A mode from its name (`bypass` and Claude Code's names too), or ValueError."""
        key = text.strip().lower().replace("_", "-")
        aliases = {
            "acceptedits": "accept-edits",
            "bypass": "yolo",
            "bypasspermissions": "yolo",
            "ask": "default",
        }
        try:
            return cls(aliases.get(key.replace("-", ""), key))
        except ValueError:
            names = ", ".join(m.value for m in cls)
            raise ValueError(f"unknown permission mode {text!r}; use one of: {names}") from None


class Choice(enum.Enum):
    ALLOW_ONCE = "allow_once"
    ALLOW_SESSION = "allow_session"  # this tool (or command prefix), until paicli exits
    ALLOW_ALWAYS = "allow_always"  # saved in permissions.json, for every project
    ALLOW_PROJECT = "allow_project"  # saved in permissions.json, for this project
    DENY = "deny"
    DENY_WITH_MESSAGE = "deny_with_message"  # the message goes to the model


@dataclass(frozen=True)
class Answer:
    choice: Choice
    message: str | None = None
    # An edit approved hunk by hunk: the numbers (0-based) of the hunks to apply; None: all.
    hunks: frozenset[int] | None = None


@dataclass(frozen=True)
class ApprovalRequest:
    """One call waiting for the user's answer. `arguments` is the approver's own copy;
    `protected` says why this call is asked about whatever was allowed before; `changed`
    what changed in an MCP tool the user allowed before in another definition."""

    spec: ToolSpec
    arguments: Mapping[str, object]
    protected: str | None = None
    changed: tuple[str, ...] = ()
    # What "for the session" and "always" cover: the tool, or a command prefix rule
    # (`execute_command(git diff:*)`); None: this call only (a line of several commands).
    covers: str | None = None
    preview: Preview | None = None
    # For a command: why no allow rule can cover it (`--output` writes a file), shown so the
    # user knows why a rule they set did not let it run.
    limit: str | None = None
    # The sub-agent making the call (None: the main agent).
    agent: str | None = None

    def diff(self) -> list[str]:
        """The preview as unified diff lines (`+`, `-`, ` `, `@@`), safe to print; a new file
        is all `+` lines. Empty without a preview."""
        return list(self._diff)

    @cached_property
    def _diff(self) -> tuple[str, ...]:
        # Computed once: the prompt shows it and colours it (up to 5 MB of text each time).
        if self.preview is None:
            return ()
        before = (self.preview.before or "").splitlines()
        after = self.preview.after.splitlines()
        lines = list(difflib.unified_diff(before, after, lineterm="", n=3))[2:]
        if self.preview.before is None:
            lines = [f"+{line}" for line in after]
        if not lines:
            lines = [" (no change)"]
        shown = [terminal_safe(line) for line in lines[:MAX_PREVIEW_LINES]]
        if len(lines) > MAX_PREVIEW_LINES:
            shown.append(f"… {len(lines) - MAX_PREVIEW_LINES} more lines")
        return tuple(shown)

    def headline(self) -> str:
        """One line on what the preview does (`Edit src/a.py`, `Create b.txt (3 lines)`)."""
        if self.preview is None:
            return ""
        path = terminal_safe(self.preview.path)
        if self.preview.before is None:
            count = len(self.preview.after.splitlines())
            return f"Create {path} ({count} line{'s' if count != 1 else ''})"
        verb = "Overwrite" if self.spec.name == "write_file" else "Edit"
        return f"{verb} {path}"

    def display(self) -> str:
        """A warning line for a protected path, then tool, server (MCP) and the full
        arguments as indented JSON, safe to print: it decodes back to exactly the arguments
        that run. A file edit shows its diff instead of the arguments."""
        lines: list[str] = []
        if self.agent is not None:
            lines.append(f"Asked by the sub-agent {terminal_safe(self.agent)}")
        if self.protected is not None:
            lines.append(
                f"Warning: {terminal_safe(self.protected)}. Saved and session answers never "
                "cover such a call: s and a allow this call only."
            )
        if self.changed:
            lines.append(
                "Warning: the server changed this tool since you allowed it; your earlier "
                f"answer does not cover the new definition ({terminal_safe(self.changed[0])}):"
            )
            lines.extend(f"  {terminal_safe(line)}" for line in self.changed[1:])
        if self.limit is not None:
            lines.append(f"Note: no permission rule covers this call: {terminal_safe(self.limit)}")
        lines.append(f"Tool: {terminal_safe(self.spec.name)}")
        if self.spec.server is not None:
            tool = terminal_safe(self.spec.tool or self.spec.name)
            lines.append(f"Server: {terminal_safe(self.spec.server)} (tool {tool})")
        if self.preview is not None:
            lines.append(self.headline())
            lines.extend(self.diff())
        else:
            lines.append("Arguments:")
            lines.append(json_for_terminal(self.arguments))
        return "\n".join(lines)


Approver = Callable[[ApprovalRequest], Awaitable[Answer]]
