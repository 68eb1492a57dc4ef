"""Keeping a conversation inside the model's context window: old tool results trimmed,
then the oldest turns summarised by the model (`/compact` does it on demand), and, only when
a summary fails and the conversation no longer fits at all, the oldest turns dropped, each
named in the notice. Pure over the message list; the agent keeps the result."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, Sequence
from typing import Protocol

from paicli.agent import context
from paicli.agent.events import EventSink, Notice
from paicli.llm.errors import LlmError
from paicli.llm.events import Completion
from paicli.llm.messages import Message, SystemMessage, ToolDefinition, UserMessage

__all__ = ["compact", "fit", "summary"]


class Summariser(Protocol):
    def stream(
        self, messages: Sequence[Message], tools: Sequence[ToolDefinition]
    ) -> AsyncGenerator[object, None]: ...


async def compact(
    messages: list[Message], llm: Summariser, window: int, instructions: str
) -> tuple[list[Message] | None, str]:
    """`messages` summarised into one (following `instructions`, if any), and the notice
    saying so; None (keep them) with why, when there is nothing to summarise or it failed."""
    system = [m for m in messages[:1] if m["role"] == "system"]
    history = messages[len(system) :]
    if not any(m["role"] == "user" for m in history):
        return None, "Nothing to compact yet."
    prompt = context.SUMMARY_PROMPT
    if instructions:
        prompt += f" The user asks the summary to: {instructions}"
    source = context.transcript(history, window * context.CHARS_PER_TOKEN // 2)
    text, failure = await summary(llm, prompt, source)
    turns = sum(1 for m in history if m["role"] == "user")
    if not text:
        return None, f"Compacting failed ({failure}); the whole conversation is kept."
    note = f"Summary of the earlier conversation:\n{text}"
    compacted: list[Message] = [*system, UserMessage(role="user", content=note)]
    return compacted, f"Compacted {turns} turns ({len(history)} messages) into a summary."


async def fit(
    messages: list[Message],
    tools: Sequence[object],
    llm: Summariser,
    window: int,
    emit: EventSink,
) -> list[Message]:
    """`messages` made to fit the window with `tools`: old tool results trimmed (in place),
    then the oldest turns summarised; each step said through `emit`."""
    limit = context.budget(window)
    if context.estimate_tokens(messages, tools) <= limit:
        return messages
    cut = context.trim_tool_results(messages)
    if cut:
        emit(Notice(f"Context nearly full: trimmed {cut} old tool results."))
    if context.estimate_tokens(messages, tools) <= limit:
        return messages
    return await _summarise(messages, tools, llm, window, emit)


async def _summarise(
    messages: list[Message],
    tools: Sequence[object],
    llm: Summariser,
    window: int,
    emit: EventSink,
) -> list[Message]:
    system, older, recent = context.split_for_summary(messages)
    # Too little old conversation to be worth a model call (the tool schemas, say, are
    # what fills the window): leave it.
    if context.estimate_tokens(older) < context.budget(window) // 4:
        return messages
    # The summariser sees at most half the window of old conversation.
    source = context.transcript(older, window * context.CHARS_PER_TOKEN // 2)
    text, failure = await summary(llm, context.SUMMARY_PROMPT, source)
    turns = sum(1 for m in older if m["role"] == "user")
    if text:
        note = f"Summary of the earlier conversation:\n{text}"
        emit(
            Notice(
                f"Context nearly full: summarised the {turns} oldest turns ({len(older)} messages)."
            )
        )
        return [*system, UserMessage(role="user", content=note), *recent]
    failed = f"summarising the {turns} oldest turns failed ({failure})"
    kept, said = _drop_as_last_resort(messages, tools, window, failed)
    emit(Notice(said))
    return kept


async def summary(llm: Summariser, prompt: str, source: str) -> tuple[str, str]:
    """The model's summary of `source` as `prompt` asks, or "" and why there is none."""
    request: list[Message] = [
        SystemMessage(role="system", content=prompt),
        UserMessage(role="user", content=source),
    ]
    text, failure = "", "the model answered with no text"
    try:
        async with contextlib.aclosing(llm.stream(request, [])) as stream:
            async for event in stream:
                if isinstance(event, Completion):
                    text = event.text.strip()
    except LlmError as exc:
        failure = str(exc)
    return text, failure


def _drop_as_last_resort(
    messages: list[Message], tools: Sequence[object], window: int, failed: str
) -> tuple[list[Message], str]:
    """The conversation after a failed summary, and what became of it in words. Only one
    larger than the whole window loses turns (the model could not take it at all), and the
    words name every dropped turn."""
    if context.estimate_tokens(messages, tools) > window:
        kept, dropped = context.drop_oldest_turns(messages, tools, window)
        if dropped:
            listed = "; ".join(f"{n}. {head}" for n, head in enumerate(dropped, 1))
            return kept, (
                f"Context full, and {failed}. The conversation no longer fits the "
                f"model's context window ({window:,} tokens), so its "
                f"{len(dropped)} oldest turns were dropped: {listed}."
            )
    return messages, f"Context nearly full, and {failed}: the whole conversation is kept."
