"""The messages of a turn: the model's tool-call arguments read (or the error the model reads
instead), ids given to calls that came without, and the assistant and tool messages the
conversation keeps."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence

from paicli.llm.events import Completion, ToolCallRequest
from paicli.llm.images import ImageProblem, base64_image_part
from paicli.llm.messages import AssistantMessage, ContentPart, ToolMessage, UserMessage
from paicli.tools.base import ToolOutcome, ToolSpec

__all__ = [
    "add_usage",
    "assistant_message",
    "names",
    "parse_arguments",
    "tool_images",
    "tool_message",
    "with_id",
]

# The model's raw arguments are quoted back to it when they do not parse, up to this much.
QUOTE_LIMIT = 500


def parse_arguments(raw: str) -> dict[str, object] | str:
    """The model's arguments as an object, or the error text the model reads instead."""
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        quoted = raw if len(raw) <= QUOTE_LIMIT else raw[:QUOTE_LIMIT] + "..."
        return (
            f"Error: the tool arguments are not valid JSON ({exc.msg} at line {exc.lineno}, "
            f"column {exc.colno}); the tool was not run. You sent: {quoted}"
        )
    if not isinstance(value, dict):
        return "Error: the tool arguments must be a JSON object; the tool was not run."
    try:  # JSON may spell unpaired surrogates (\ud800), which no file name or pipe can carry
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return (
            "Error: the tool arguments contain invalid Unicode (an unpaired surrogate escape "
            "such as \\ud800); the tool was not run."
        )
    return value


def with_id(call: ToolCallRequest, index: int) -> ToolCallRequest:
    # Some local servers send tool calls without ids; the tool message must still match one.
    if call.id:
        return call
    import dataclasses  # noqa: PLC0415

    return dataclasses.replace(call, id=f"call_{index}_{int(time.time() * 1000)}")


def assistant_message(text: str, calls: Sequence[ToolCallRequest]) -> AssistantMessage:
    # Content may be null only next to tool calls; an empty answer is an empty string.
    message = AssistantMessage(role="assistant", content=(text or None) if calls else text)
    if calls:
        message["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments or "{}"},
            }
            for call in calls
        ]
    return message


# How many tool names a "no such tool" answer lists before "and N more".
LISTED_NAMES = 40


def names(specs: Mapping[str, ToolSpec]) -> str:
    names = sorted(specs)
    if len(names) <= LISTED_NAMES:
        return ", ".join(names) or "none"
    return ", ".join(names[:LISTED_NAMES]) + f" and {len(names) - LISTED_NAMES} more"


def tool_message(call_id: str, text: str) -> ToolMessage:
    return ToolMessage(role="tool", tool_call_id=call_id, content=text)


def add_usage(total: dict[str, int], completion: Completion) -> None:
    usage = completion.usage
    if usage is None:
        return
    total["prompt_tokens"] = total.get("prompt_tokens", 0) + usage.prompt_tokens
    total["completion_tokens"] = total.get("completion_tokens", 0) + usage.completion_tokens


NO_IMAGES = "the model does not take images (set images = true in ~/.paicli/config.toml if it does)"


def tool_images(
    calls: Sequence[ToolCallRequest], outcomes: Sequence[ToolOutcome], accepted: bool
) -> tuple[UserMessage | None, list[str]]:
    """The images MCP results carried, as one user message to follow the tool messages (a
    tool message carries text only), and a line for each image left out and why."""
    parts: list[ContentPart] = []
    notes: list[str] = []
    for call, outcome in zip(calls, outcomes, strict=True):
        if not outcome.images:
            continue
        if not accepted:
            notes.append(f"{call.name} returned {len(outcome.images)} image(s): {NO_IMAGES}")
            continue
        for number, (mime_type, data) in enumerate(outcome.images, 1):
            try:
                part = base64_image_part(data, mime_type)
            except ImageProblem as exc:
                notes.append(f"{call.name}: image {number} was left out: {exc}")
                continue
            label = f"Image {number} returned by the tool call {call.id} ({call.name}):"
            parts += [{"type": "text", "text": label}, part]
    if not parts:
        return None, notes
    return UserMessage(role="user", content=parts), notes
