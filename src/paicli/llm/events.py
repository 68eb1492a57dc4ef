"""What `LlmClient.stream` yields: deltas as they arrive, retry notices, one final completion.

Plain frozen dataclasses with no dependency on the openai SDK, so the agent and the UI can
import them without loading it.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "Completion",
    "ReasoningDelta",
    "Retrying",
    "StreamEvent",
    "TextDelta",
    "ToolCallRequest",
    "Usage",
]


@dataclass(frozen=True)
class TextDelta:
    """A piece of the answer's text."""

    text: str


@dataclass(frozen=True)
class ReasoningDelta:
    """A piece of the model's visible thinking (`reasoning_content` or `reasoning` in the
    delta, as DeepSeek, Qwen, GLM, Kimi, Ollama and OpenRouter send it)."""

    text: str


@dataclass(frozen=True)
class Retrying:
    """The last attempt failed with a retryable error; the next starts after `delay` s."""

    attempt: int  # 1 for the first retry
    delay: float
    reason: str  # "rate limited", "server error (HTTP 503)", "connection lost"

    def describe(self) -> str:
        """ "rate limited, retrying in 2.0s"."""
        return f"{self.reason}, retrying in {self.delay:.1f}s"


@dataclass(frozen=True)
class ToolCallRequest:
    """A tool call the model asked for. `arguments` is the raw JSON text it produced, which
    may be malformed: validating it is the caller's business."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int
    completion_tokens: int


@dataclass(frozen=True)
class Completion:
    """The whole answer, yielded last."""

    text: str
    reasoning: str
    tool_calls: tuple[ToolCallRequest, ...]
    finish_reason: str | None  # "stop", "tool_calls", "length", ...; None if never sent
    usage: Usage | None  # None when the server sends no usage


StreamEvent = TextDelta | ReasoningDelta | Retrying | Completion
