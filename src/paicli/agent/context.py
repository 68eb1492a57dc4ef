"""Keeping a conversation inside the model's context window.

Estimates are rough on purpose (about 4 characters a token, the usual figure for English and
code with OpenAI-style tokenizers); the budget leaves room for the answer. When the estimate
passes the budget, old tool results are cut first (they are the bulk and the least needed
later), then the oldest turns are replaced by a summary (`Conversation.compact`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from paicli.llm.messages import Message, ToolMessage

CHARS_PER_TOKEN = 4
# Act at 80% of the window: the answer and the next tool results need the rest.
BUDGET_SHARE = 0.8
# The newest tool results are left whole: the model is most likely still working with them.
KEEP_RECENT_TOOL_RESULTS = 4
TRIMMED_RESULT_CHARS = 300
# Turns (user messages and what followed them) kept verbatim when older ones are summarised.
KEEP_RECENT_TURNS = 2


def estimate_tokens(messages: Sequence[Message], tools: Sequence[object] = ()) -> int:
    chars = sum(len(json.dumps(m, ensure_ascii=False)) for m in messages)
    chars += sum(len(json.dumps(t, ensure_ascii=False)) for t in tools)
    return chars // CHARS_PER_TOKEN + 1


def budget(context_window: int) -> int:
    return int(context_window * BUDGET_SHARE)


def trim_tool_results(messages: list[Message]) -> int:
    """Cut all but the newest tool results to a short head; return how many were cut."""
    tool_indexes = [i for i, m in enumerate(messages) if m["role"] == "tool"]
    cut = 0
    for index in tool_indexes[:-KEEP_RECENT_TOOL_RESULTS] if KEEP_RECENT_TOOL_RESULTS else []:
        message = messages[index]
        if message["role"] != "tool" or len(message["content"]) <= TRIMMED_RESULT_CHARS:
            continue
        content = message["content"]
        messages[index] = ToolMessage(
            role="tool",
            tool_call_id=message["tool_call_id"],
            content=content[:TRIMMED_RESULT_CHARS]
            + f"\n[tool result trimmed to save context; {len(content):,} characters originally]",
        )
        cut += 1
    return cut


def split_for_summary(
    messages: list[Message],
) -> tuple[list[Message], list[Message], list[Message]]:
    """(system messages, older turns to summarise, recent turns to keep).

    Cuts only at a user message, so an assistant's tool calls and their results stay together.
    """
    system: list[Message] = [m for m in messages if m["role"] == "system"]
    rest: list[Message] = [m for m in messages if m["role"] != "system"]
    starts = [i for i, m in enumerate(rest) if m["role"] == "user"]
    if len(starts) <= KEEP_RECENT_TURNS:
        return system, [], rest
    cut = starts[-KEEP_RECENT_TURNS]
    return system, rest[:cut], rest[cut:]


def transcript(messages: Sequence[Message], limit: int) -> str:
    """The older turns as plain text for the summariser, at most `limit` characters."""
    lines: list[str] = []
    for m in messages:
        role = m["role"]
        if m["content"]:
            lines.append(f"{role}: {m['content']}")
        if m["role"] == "assistant":
            for call in m.get("tool_calls", []):
                function = call["function"]
                lines.append(f"{role} called {function['name']}({function['arguments']})")
    text = "\n".join(lines)
    return text if len(text) <= limit else text[-limit:]


SUMMARY_PROMPT = (
    "Summarise the conversation below for your own later use: the user's goals, decisions "
    "made, files and commands involved, results found, and what is still open. Be concise "
    "and factual; keep names, paths and numbers exact."
)
