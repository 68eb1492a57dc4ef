"""Keeping a conversation inside the model's context window.

Estimates are rough on purpose (about 4 characters a token, the usual figure for English and
code with OpenAI-style tokenizers); the budget leaves room for the answer. When the estimate
passes the budget, old tool results are cut first (they are the bulk and the least needed
later), then the oldest turns are replaced by a summary. When the summary cannot be made
the conversation is kept whole; only when it is larger than the whole window (the model cannot
take it at all) are the oldest turns dropped, and the notice names each one.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from paicli.llm.messages import IMAGE_CHARS, Message, ToolMessage, content_text

CHARS_PER_TOKEN = 4
# Act at 80% of the window: the answer and the next tool results need the rest.
BUDGET_SHARE = 0.8
# The newest tool results are left whole: the model is most likely still working with them.
KEEP_RECENT_TOOL_RESULTS = 4
TRIMMED_RESULT_CHARS = 300
# Turns (user messages and what followed them) kept verbatim when older ones are summarised.
KEEP_RECENT_TURNS = 2
# A dropped turn is named by this much of its user message: enough to recognise it.
TURN_HEAD_CHARS = 60


def estimate_tokens(messages: Sequence[Message], tools: Sequence[object] = ()) -> int:
    chars = sum(_chars(m) for m in messages)
    chars += sum(len(json.dumps(t, ensure_ascii=False)) for t in tools)
    return chars // CHARS_PER_TOKEN + 1


def _chars(message: Message) -> int:
    content = message.get("content")
    if not isinstance(content, list):
        return len(json.dumps(message, ensure_ascii=False))
    # An image counts as what the model reads of it, not as its base64 text.
    images = sum(1 for part in content if part["type"] == "image_url")
    return len(json.dumps(content_text(content), ensure_ascii=False)) + images * IMAGE_CHARS


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


def drop_oldest_turns(
    messages: list[Message], tools: Sequence[object], limit: int
) -> tuple[list[Message], list[str]]:
    """The messages without their oldest turns until they fit in `limit` tokens, and the
    first words of each dropped turn's user message. The last `KEEP_RECENT_TURNS` turns are
    never dropped, so the result may still be over the limit."""
    system, _, _ = split_for_summary(messages)
    rest: list[Message] = [m for m in messages if m["role"] != "system"]
    dropped: list[str] = []
    while estimate_tokens([*system, *rest], tools) > limit:
        starts = [i for i, m in enumerate(rest) if m["role"] == "user"]
        if len(starts) <= KEEP_RECENT_TURNS:
            break
        turn, rest = rest[: starts[1]], rest[starts[1] :]
        dropped.append(_turn_head(turn))
    return [*system, *rest], dropped


def _turn_head(turn: Sequence[Message]) -> str:
    """A dropped turn as the user will recognise it: its first words, then its size."""
    words = " ".join(content_text(turn[0]["content"]).split())
    head = words if len(words) <= TURN_HEAD_CHARS else words[:TURN_HEAD_CHARS] + "..."
    return f"{head!r} ({len(turn)} messages)"


def transcript(messages: Sequence[Message], limit: int) -> str:
    """The older turns as plain text for the summariser, at most `limit` characters."""
    lines: list[str] = []
    for m in messages:
        role = m["role"]
        if m["content"]:
            lines.append(f"{role}: {content_text(m['content'])}")
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
