"""The todo list the model keeps (`todo_write`, Claude Code's TodoWrite shape): each call sends
the whole list, which replaces the last one, and the UI is told through the call's events
(`TodoUpdated`). Nothing is kept here: the list lives in the conversation, where the model
wrote it, and on the screen. It changes nothing outside the conversation, so it is a `read`
tool: it never asks, and runs in plan mode too.
"""

from __future__ import annotations

from collections.abc import Mapping

from paicli.agent.events import CALL_EVENTS, TodoItem, TodoStatus, TodoUpdated
from paicli.llm.schema import validate_arguments
from paicli.tools.base import ToolOutcome, ToolSpec

__all__ = ["TODO_TOOL", "TodoToolbox"]

TODO_TOOL = "todo_write"
# A plan, not a backlog: enough for any task one conversation takes on, and bounded on screen.
MAX_ITEMS = 100
MAX_TEXT = 500

_ITEM = {
    "type": "object",
    "properties": {
        "content": {
            "type": "string",
            "minLength": 1,
            "maxLength": MAX_TEXT,
            "description": "What to do, in the imperative (e.g. 'Run the tests').",
        },
        "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]},
        "activeForm": {
            "type": "string",
            "minLength": 1,
            "maxLength": MAX_TEXT,
            "description": "The same in the present continuous (e.g. 'Running the tests'), "
            "shown while the item is in progress.",
        },
    },
    "required": ["content", "status", "activeForm"],
    "additionalProperties": False,
}
_SCHEMA: dict[str, object] = {
    "type": "object",
    "properties": {"todos": {"type": "array", "maxItems": MAX_ITEMS, "items": _ITEM}},
    "required": ["todos"],
    "additionalProperties": False,
}
_SPEC = ToolSpec(
    name=TODO_TOOL,
    description=(
        "Keep a todo list for the current task, shown to the user as it changes. Use it for "
        "work of three or more steps, or when the user gives several things to do: write the "
        "steps as pending items, mark one in_progress before starting it, and mark it "
        "completed as soon as it is done (not in batches). Send the whole list each time: it "
        "replaces the last one. Skip it for a single quick step."
    ),
    parameters=_SCHEMA,
    kind="read",
)


class TodoToolbox:
    """The `todo_write` tool."""

    def specs(self) -> list[ToolSpec]:
        return [_SPEC]

    def precheck(self, spec: ToolSpec, arguments: Mapping[str, object]) -> ToolOutcome | None:
        problem = validate_arguments(_SCHEMA, dict(arguments))
        return None if problem is None else ToolOutcome.refused(problem)

    def must_ask(self, spec: ToolSpec, arguments: Mapping[str, object]) -> str | None:
        return None

    async def call(self, spec: ToolSpec, arguments: Mapping[str, object]) -> ToolOutcome:
        refused = self.precheck(spec, arguments)
        if refused is not None:
            return refused
        raw = arguments["todos"]
        assert isinstance(raw, list)  # the schema says so
        items = tuple(_item(entry) for entry in raw)
        events = CALL_EVENTS.get()
        if events is not None:
            events.emit(TodoUpdated(events.call_id, items))
        return ToolOutcome(_summary(items))


def _item(entry: object) -> TodoItem:
    assert isinstance(entry, dict)
    status: TodoStatus = entry["status"]
    return TodoItem(str(entry["content"]), status, str(entry["activeForm"]))


def _summary(items: tuple[TodoItem, ...]) -> str:
    if not items:
        return "The todo list is now empty."
    done = sum(1 for item in items if item.status == "completed")
    doing = sum(1 for item in items if item.status == "in_progress")
    text = (
        f"Todo list updated: {len(items)} items, {done} completed, {doing} in progress, "
        f"{len(items) - done - doing} pending."
    )
    if doing > 1:
        text += " Keep one item in progress at a time."
    elif done < len(items):
        text += " Keep it current as you work."
    return text
