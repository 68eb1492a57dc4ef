"""What the agent tells its UI while a turn runs (the REPL renders these, one-shot mode
prints or serialises them, tests collect them). Text, reasoning and retry events are the
model layer's own, passed through."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from paicli.llm.events import ReasoningDelta, Retrying, TextDelta, ToolCallRequest
from paicli.tools.base import ToolOutcome

__all__ = [
    "AgentEvent",
    "EventSink",
    "ModelReplied",
    "Notice",
    "ReasoningDelta",
    "Retrying",
    "TextDelta",
    "ToolFinished",
    "ToolProgress",
    "ToolRetrying",
    "ToolStarted",
    "TurnEnded",
]


@dataclass(frozen=True)
class ModelReplied:
    """One model request answered, as the conversation keeps it: its text, its visible
    reasoning and its tool calls (each with an id), why it stopped (`finish_reason` as the
    endpoint said it), the tokens it used (`prompt_tokens`, `completion_tokens`) and the
    seconds it took. Emitted before any of its calls starts."""

    text: str
    reasoning: str
    calls: tuple[ToolCallRequest, ...]
    finish_reason: str | None
    usage: Mapping[str, int]
    seconds: float


@dataclass(frozen=True)
class ToolStarted:
    call_id: str
    name: str
    arguments: Mapping[str, object] | None  # None when the model's JSON did not parse
    server: str | None = None


@dataclass(frozen=True)
class ToolRetrying:
    """A tool call failed (`reason`: timeout or crash) and runs again after `delay` s:
    `line` reads `retry 2/3 after crash`."""

    call_id: str
    name: str
    attempt: int
    of: int
    reason: str
    delay: float

    @property
    def line(self) -> str:
        return f"retry {self.attempt}/{self.of} after {self.reason}"


@dataclass(frozen=True)
class ToolFinished:
    call_id: str
    name: str
    outcome: ToolOutcome
    seconds: float


@dataclass(frozen=True)
class ToolProgress:
    """A running call: `seconds` since it started running (after any approval), and what
    the tool last reported (all None until it reports; `total` None when it did not say)."""

    call_id: str
    name: str
    seconds: float
    progress: float | None = None
    total: float | None = None
    message: str | None = None


@dataclass(frozen=True)
class Notice:
    """Something the user should know that is not the model's answer (context trimmed, ...)."""

    text: str


TurnReason = Literal["done", "step_budget", "cancelled", "error"]


@dataclass(frozen=True)
class TurnEnded:
    reason: TurnReason
    text: str = ""  # the model's final answer (its last text)
    error: str | None = None
    steps: int = 0
    usage: Mapping[str, int] = field(default_factory=dict)


AgentEvent = (
    TextDelta
    | ReasoningDelta
    | Retrying
    | ModelReplied
    | ToolStarted
    | ToolProgress
    | ToolRetrying
    | ToolFinished
    | Notice
    | TurnEnded
)
EventSink = Callable[[AgentEvent], None]
