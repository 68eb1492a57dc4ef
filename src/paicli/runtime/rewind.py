"""Rewinding a conversation to before one of its turns, as `/rewind` (the REPL) and `paicli
rewind` (the shell) both do: the turns listed with what each changed, the files brought back
(`paicli.checkpoints.restore`), the conversation cut where the turn began and its later
checkpoints forgotten. Blocking (file work): callers run it off the event loop. It never
prints: it returns lines, which the caller shows through the one escaping output path.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from paicli.checkpoints.restore import CodePlan, Restored, apply, conversation_cut, plan_code
from paicli.checkpoints.store import CheckpointStore, Turn
from paicli.llm.messages import Message
from paicli.tools.builtin.paths import Confinement

__all__ = ["ACTIONS", "Action", "Rewinder", "cut_conversation", "turn_label"]

SHOWN_FILES = 3  # a turn's label names this many files, then counts the rest
PROMPT_SHOWN = 60  # and this many characters of its prompt


@dataclass(frozen=True)
class Action:
    """What a rewind restores."""

    label: str
    code: bool
    conversation: bool


# As Claude Code's rewind menu offers them, in its order.
ACTIONS = (
    Action("Restore code and conversation", code=True, conversation=True),
    Action("Restore conversation", code=False, conversation=True),
    Action("Restore code", code=True, conversation=False),
)


class Rewinder:
    """One conversation's checkpoints (`store`) over the folders its tools worked in."""

    def __init__(self, store: CheckpointStore, paths: Confinement) -> None:
        self.store = store
        self.paths = paths

    @classmethod
    def over(cls, store: CheckpointStore, roots: Sequence[Path]) -> Rewinder:
        return cls(store, Confinement(roots[0], roots[1:]))

    @property
    def turns(self) -> list[Turn]:
        return list(self.store.turns)

    def label(self, turn: Turn, *, numbered: bool = True) -> str:
        return turn_label(turn, self.paths, numbered=numbered)

    def plan(self, number: int) -> CodePlan | None:
        return plan_code(self.store, number, self.paths)

    def restore(self, plan: CodePlan, *, overwrite: bool) -> tuple[list[str], bool]:
        """Bring the files back (conflicts only with `overwrite`): what was done, in lines,
        and whether every file was."""
        done = apply(plan, self.store, self.paths, overwrite=overwrite)
        return self.report(plan, done), not done.skipped

    def forget_from(self, number: int) -> None:
        """Turn `number` and the later ones left the conversation: drop their checkpoints."""
        self.store.drop_from(number)

    def shown(self, path: str) -> str:
        return self.paths.display(Path(path))

    def conflict_lines(self, plan: CodePlan) -> list[str]:
        return [f"  {self.shown(step.path)}" for step in plan.conflicts]

    def report(self, plan: CodePlan, done: Restored) -> list[str]:
        number = plan.turn.number
        lines: list[str] = []
        changed = [self.shown(p) for p in done.written] + [
            f"{self.shown(p)} (removed)" for p in done.removed
        ]
        if changed:
            lines.append(
                f"Restored {len(changed)} file(s) to before turn {number}: {', '.join(changed)}"
            )
        elif not done.skipped:
            lines.append(f"No file to restore: they are as they were before turn {number}.")
        lines += [f"Left alone: {self.shown(path)} ({why})" for path, why in done.skipped]
        lines += [
            f"Cannot bring back {self.shown(path)}: its earlier content was not kept "
            "(too large, or the checkpoint store was full)"
            for path in plan.lost
        ]
        return lines + [f"Not undone: {note}" for note in plan.notes]


def turn_label(turn: Turn, paths: Confinement, *, numbered: bool = True) -> str:
    """One line: the turn's number (`numbered`), prompt, and the files it changed."""
    files = [paths.display(Path(path)) for path in turn.files]
    if not files:
        changed = "no file changes"
    else:
        more = f" +{len(files) - SHOWN_FILES}" if len(files) > SHOWN_FILES else ""
        changed = f"{len(files)} file(s): {', '.join(files[:SHOWN_FILES])}{more}"
    prompt = " ".join(turn.prompt.split())
    if len(prompt) > PROMPT_SHOWN:
        prompt = prompt[: PROMPT_SHOWN - 1] + "…"
    number = f"{turn.number:>3}. " if numbered else ""
    return f"{number}{prompt or '(empty)'} · {changed}"


def cut_conversation(turn: Turn, messages: Sequence[Message]) -> list[Message] | str:
    """The conversation before `turn`, or why it cannot be cut there."""
    cut = conversation_cut(turn, messages)
    if cut is None:
        return (
            f"turn {turn.number} is no longer in the conversation (/compact summarised it, "
            "or it was not saved); only its code can be restored"
        )
    return list(messages[:cut])
