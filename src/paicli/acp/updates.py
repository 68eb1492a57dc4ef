"""paicli's agent events as ACP `session/update`s: message and thought chunks, tool calls
(kind, status, locations, raw input and output, a diff for a file edit), the todo list as a
plan. Pure: what is sent, and in what order, is the session's business (`session.py`).

Everything that leaves passes the run's redactor first (known secret values; a tool's
result has already passed the guard stack's redaction)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from acp import (
    plan_entry,
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    update_agent_message,
    update_agent_thought,
    update_plan,
    update_tool_call,
    update_user_message,
)
from acp.schema import ToolCallLocation, ToolKind

from paicli.agent.events import (
    AgentEvent,
    Notice,
    ReasoningDelta,
    SubAgentEvent,
    TextDelta,
    TodoUpdated,
    ToolFinished,
    ToolProgress,
    ToolRetrying,
    ToolStarted,
)
from paicli.llm.messages import Message

__all__ = ["Update", "event_updates", "history_updates", "tool_kind"]

Update = Any  # one of the SDK's session update models (a union of pydantic classes)
Redact = Callable[[str], str]

# What an editor shows of a tool's output: enough to read, never a whole log.
OUTPUT_CHARS = 16_000

_KINDS: dict[str, ToolKind] = {
    "read_file": "read",
    "list_dir": "read",
    "glob": "search",
    "grep": "search",
    "search_tools": "search",
    "web_search": "search",
    "write_file": "edit",
    "edit_file": "edit",
    "execute_command": "execute",
    "todo_write": "think",
    "load_skill": "read",
    "Agent": "think",
}


def tool_kind(name: str) -> ToolKind:
    """The ACP kind of a paicli tool (MCP tools: `other`, or `fetch` by name)."""
    if name in _KINDS:
        return _KINDS[name]
    return "fetch" if "fetch" in name.lower() else "other"


def event_updates(event: AgentEvent, root: Path, redact: Redact, prefix: str = "") -> list[Update]:
    """The updates that tell an editor about `event` (none for what it has no use for).
    A tool call's ACP id is `prefix` + its id: models reuse ids from one reply to the next,
    and an editor merges the calls of one id (the session gives each reply its prefix)."""
    if isinstance(event, TextDelta):
        return [update_agent_message(text_block(redact(event.text)))] if event.text else []
    if isinstance(event, ReasoningDelta):
        return [update_agent_thought(text_block(redact(event.text)))] if event.text else []
    if isinstance(event, Notice):
        return [update_agent_thought(text_block(redact(event.text) + "\n"))]
    if isinstance(event, ToolStarted):
        return [_started(event, root, redact, prefix)]
    if isinstance(event, ToolProgress | ToolRetrying):
        # Running (approved, or reporting progress): what it last said, if anything.
        said = event.message if isinstance(event, ToolProgress) else event.line
        content = [tool_content(text_block(redact(said)))] if said else None
        return [update_tool_call(prefix + event.call_id, status="in_progress", content=content)]
    if isinstance(event, ToolFinished):
        outcome = event.outcome
        text = redact(outcome.text[:OUTPUT_CHARS])
        return [
            update_tool_call(
                prefix + event.call_id,
                status="failed" if outcome.is_error else "completed",
                content=[tool_content(text_block(text))] if text else None,
                raw_output={"text": text, "is_error": outcome.is_error},
            )
        ]
    if isinstance(event, TodoUpdated):
        entries = [plan_entry(redact(i.content), status=i.status) for i in event.items]
        return [update_plan(entries)]
    if isinstance(event, SubAgentEvent):
        # A sub-agent's own text would read as the main answer: only its tool calls show.
        inner = event.event
        if isinstance(inner, ToolStarted | ToolProgress | ToolRetrying | ToolFinished):
            return event_updates(inner, root, redact, f"{prefix}{event.call_id}/")
    return []


def _started(event: ToolStarted, root: Path, redact: Redact, prefix: str) -> Update:
    arguments = dict(event.arguments or {})
    path = arguments.get("path")
    where = (root / path).resolve() if isinstance(path, str) and path else None
    title = event.name if where is None else f"{event.name} {path}"
    content = _diff(event.name, arguments, where, redact)
    return start_tool_call(
        prefix + event.call_id,
        redact(title),
        kind=tool_kind(event.name),
        status="pending",  # until it runs: approval may come first
        content=content,
        locations=[ToolCallLocation(path=str(where))] if where is not None else None,
        raw_input=redact_values(arguments, redact),
    )


def _diff(
    name: str, arguments: Mapping[str, object], where: Path | None, redact: Redact
) -> list[Any] | None:
    """A file edit as ACP's diff content: the replaced text and its replacement (edit_file),
    or the new content (write_file)."""
    if where is None:
        return None
    if name == "edit_file":
        old, new = arguments.get("old_string"), arguments.get("new_string")
        if isinstance(old, str) and isinstance(new, str):
            return [tool_diff_content(str(where), redact(new), redact(old))]
    if name == "write_file" and isinstance(content := arguments.get("content"), str):
        return [tool_diff_content(str(where), redact(content))]
    return None


def redact_values(value: object, redact: Redact) -> object:
    """`value` with every string in it redacted."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, Mapping):
        return {str(k): redact_values(v, redact) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_values(v, redact) for v in value]
    return value


def history_updates(messages: list[Message], redact: Redact) -> list[Update]:
    """A saved conversation replayed (`session/load`): the user's and the agent's text, and
    each tool call with its result."""
    updates: list[Update] = []
    replies = 0  # each reply's calls get their own prefix, as in a live turn
    for message in messages:
        role = message["role"]
        content = message.get("content")
        text = content if isinstance(content, str) else ""
        if role == "user" and text:
            updates.append(update_user_message(text_block(redact(text))))
        elif role == "assistant":
            replies += 1
            if text:
                updates.append(update_agent_message(text_block(redact(text))))
            for call in message.get("tool_calls") or []:  # type: ignore[attr-defined]
                name = call["function"]["name"]
                updates.append(
                    start_tool_call(
                        f"h{replies}-{call['id']}",
                        redact(name),
                        kind=tool_kind(name),
                        status="completed",
                    )
                )
        elif role == "tool" and text:
            call_id = f"h{replies}-{message.get('tool_call_id', '')}"
            block = tool_content(text_block(redact(text[:OUTPUT_CHARS])))
            updates.append(update_tool_call(call_id, content=[block]))
    return updates
