"""What the agent tells its UI while a turn runs (the REPL renders these, one-shot mode
prints or serialises them, tests collect them). Text, reasoning and retry events are the
model layer's own, passed through. The agent's own tools report through `CALL_EVENTS`: the
todo list as `TodoUpdated`, a sub-agent's events each wrapped in a `SubAgentEvent`."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Literal

from paicli.llm.events import ReasoningDelta, Retrying, TextDelta, ToolCallRequest
from paicli.tools.base import ToolOutcome

__all__ = [
    "CALL_EVENTS",
    "AgentEvent",
    "CallEvents",
    "EventSink",
    "ModelReplied",
    "Notice",
    "ReasoningDelta",
    "Retrying",
    "SubAgentEvent",
    "TextDelta",
    "TodoItem",
    "TodoStatus",
    "TodoUpdated",
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


TodoStatus = Literal["pending", "in_progress", "completed"]


@dataclass(frozen=True)
class TodoItem:
    """One item of the model's todo list (Claude Code's TodoWrite shape): what to do, its
    status, and `active_form`, the same in the present continuous ("Running the tests"),
    shown while it is in progress."""

    content: str
    status: TodoStatus
    active_form: str


@dataclass(frozen=True)
class TodoUpdated:
    """The todo list as the call `call_id` of `todo_write` left it: the whole list, which
    replaces the last one."""

    call_id: str
    items: tuple[TodoItem, ...]


@dataclass(frozen=True)
class SubAgentEvent:
    """An event of the sub-agent `agent` run by the call `call_id` (of the `Agent` tool): its
    text, tool calls, todo list, notices and end, as the main agent's own would be."""

    call_id: str
    agent: str
    event: AgentEvent


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
    | TodoUpdated
    | SubAgentEvent
    | TurnEnded
)
EventSink = Callable[[AgentEvent], None]


@dataclass(frozen=True)
class CallEvents:
    """Where a running tool call of the agent's own (the todo list, a sub-agent) reports: its
    call's id and the turn's event sink."""

    call_id: str
    emit: EventSink


# Set by the agent loop in each tool call's own task (as `tools.base.PROGRESS` is).
CALL_EVENTS: ContextVar[CallEvents | None] = ContextVar("paicli_call_events", default=None)
