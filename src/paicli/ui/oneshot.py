"""What `paicli -p PROMPT` prints as text: the answer on stdout, tool calls, retries and
notices as escaped lines on stderr, all through `output` (text answers are escaped on a
terminal and written as they are into a pipe or a file). `printer_for` picks this printer or
`stream_output.JsonPrinter` (`json`, `stream-json`).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

from paicli.agent.events import (
    AgentEvent,
    Notice,
    Retrying,
    SubAgentEvent,
    TextDelta,
    TodoItem,
    TodoUpdated,
    ToolFinished,
    ToolProgress,
    ToolRetrying,
    ToolStarted,
    TurnEnded,
)
from paicli.agent.todos import TODO_TOOL
from paicli.escape import one_line
from paicli.headless.transcript import RunFacts
from paicli.servers.manager import ManagedServer, ServerState
from paicli.ui.output import answer, err, out
from paicli.ui.stream_output import JsonPrinter
from paicli.ui.tool_progress import progress_text

# Seconds between two progress lines of one call on stderr.
PROGRESS_INTERVAL = 1.0


# Seconds between two "installing NAME (npx)… 20s" lines while a late server installs.
INSTALLING_INTERVAL = 10.0


class ServerLines:
    """A `ServerManager` change callback for `-p`: a server that failed, and one the first
    request went without (`went_without`) once it is ready, on stderr."""

    def __init__(self) -> None:
        self.late: set[str] = set()

    def __call__(self, server: ManagedServer) -> None:
        if server.state is ServerState.ERROR and server.needs_login:
            err(f"paicli: MCP server {server.name!r} needs login: paicli mcp login {server.name}")
        elif server.state is ServerState.ERROR and server.settled_news:
            err(f"paicli: MCP server {server.name!r} failed: {server.failure()}")
        if server.state is ServerState.READY and server.name in self.late:
            self.late.discard(server.name)
            after = f" after {server.ready_after:.1f}s" if server.ready_after is not None else ""
            err(f"paicli: MCP server {server.name!r} is ready{after}; its tools join from now on")

    def went_without(self, servers: list[ManagedServer], budget: float) -> None:
        """One line: the first request goes without these servers, still starting."""
        if not servers:
            return
        self.late.update(server.name for server in servers)
        names = ", ".join(server.installing_note() or repr(server.name) for server in servers)
        err(
            f"paicli: MCP servers not ready after {budget:g}s: {names}; the first request goes "
            "without their tools, which join when they are ready"
        )


async def installing_progress(servers: Callable[[], list[ManagedServer]]) -> None:
    """Every `INSTALLING_INTERVAL` seconds, a line for each server still installing itself
    (its first start through npx & co.), until cancelled."""
    while True:
        await asyncio.sleep(INSTALLING_INTERVAL)
        for server in servers():
            note = server.installing_note()
            if note is not None:
                err(f"paicli: {note}")


class EventPrinter:
    """Writes the agent's events as text: the answer on stdout, the rest on stderr; `finish`
    writes the end. (`json` and `stream-json` are `stream_output.JsonPrinter`'s.)"""

    def __init__(self) -> None:
        self.ended: TurnEnded | None = None  # the agent's own end of the turn, once seen
        self._ends_with_newline = True
        self._finished = False
        self._progress_shown: dict[str, float] = {}  # call id: when its last line was shown

    def begin(self, session_id: str, facts: RunFacts) -> None:
        """Nothing to say before a text answer."""

    def replay(self, text: str) -> None:
        """Only stream-json echoes the user's messages."""

    def begin_turn(self) -> None:
        self.ended = None
        self._finished = False

    def __call__(self, event: AgentEvent) -> None:
        if isinstance(event, TurnEnded):
            self.ended = event
        if _said_by_the_list(event):
            return
        if isinstance(event, TodoUpdated | SubAgentEvent):
            for line in _plan_lines(event):
                err(line)
        elif isinstance(event, TextDelta):
            answer(event.text)
            self._ends_with_newline = event.text.endswith("\n")
        elif isinstance(event, ToolStarted):
            shown = json.dumps(event.arguments, ensure_ascii=False) if event.arguments else ""
            err(f"→ {event.name} {one_line(shown, 200)}")
        elif isinstance(event, ToolProgress):
            self._progress(event)
        elif isinstance(event, ToolRetrying):
            err(f"  ↻ {event.name}: {event.line}")
        elif isinstance(event, ToolFinished):
            mark = "✗" if event.outcome.is_error else "✓"
            err(f"  {mark} {event.name}: {one_line(event.outcome.text, 160)}")
        elif isinstance(event, Retrying):
            err(f"paicli: {event.reason}; retrying in {event.delay:.1f}s")
        elif isinstance(event, Notice):
            err(f"paicli: {event.text}")
        elif isinstance(event, TurnEnded):
            if not self._ends_with_newline:
                out()
            if event.error:
                err(f"paicli: {event.error}")

    def _progress(self, event: ToolProgress) -> None:
        """A tool's report as a line on stderr, at most one a second per call (a tool may
        report far more often than anyone reads)."""
        if event.progress is None and event.message is None:
            return  # the call started running: its start line is already there
        last = self._progress_shown.get(event.call_id)
        if last is not None and event.seconds - last < PROGRESS_INTERVAL:
            return
        self._progress_shown[event.call_id] = event.seconds
        err(f"  ⋯ {progress_text(event, event.seconds)}")

    def finish(self, ended: TurnEnded) -> None:
        """The end of the answer (the agent's own TurnEnded wrote it), once."""
        self._finished = True

    def interrupted(self) -> None:
        """The run was cancelled (Ctrl+C, SIGTERM): a text answer just stops."""
        self._finished = True

    def failed(self, error: str) -> None:
        """The run failed before or outside the agent's turn: `error` on stderr."""
        self._finished = True
        err(error)


def _said_by_the_list(event: AgentEvent) -> bool:
    """A call of `todo_write` that went well: the list itself (TodoUpdated) says it all."""
    if isinstance(event, ToolStarted):
        return event.name == TODO_TOOL
    return (
        isinstance(event, ToolFinished) and event.name == TODO_TOOL and not event.outcome.is_error
    )


_TODO_MARKS = {"completed": "[x]", "in_progress": "[~]", "pending": "[ ]"}


def _todo_lines(items: tuple[TodoItem, ...], indent: str) -> list[str]:
    return [
        f"{indent}{_TODO_MARKS[item.status]} "
        + one_line(item.active_form if item.status == "in_progress" else item.content, 160)
        for item in items
    ]


def _plan_lines(event: TodoUpdated | SubAgentEvent) -> list[str]:
    """The todo list, or a sub-agent's tool calls, notices and failure, as stderr lines."""
    if isinstance(event, TodoUpdated):
        return ["→ todo list", *_todo_lines(event.items, "  ")]
    inner, head = event.event, f"  ↳ {event.agent}"
    if isinstance(inner, ToolStarted):
        shown = json.dumps(inner.arguments, ensure_ascii=False) if inner.arguments else ""
        return [f"{head} → {inner.name} {one_line(shown, 160)}"]
    if isinstance(inner, ToolFinished):
        mark = "✗" if inner.outcome.is_error else "✓"
        return [f"{head} {mark} {inner.name}: {one_line(inner.outcome.text, 140)}"]
    if isinstance(inner, TodoUpdated):
        return [f"{head} todo list", *_todo_lines(inner.items, "      ")]
    if isinstance(inner, Notice):
        return [f"{head}: {inner.text}"]
    if isinstance(inner, TurnEnded) and inner.error:
        return [f"{head} failed: {inner.error}"]
    return []


Printer = EventPrinter | JsonPrinter


def printer_for(fmt: str, *, partial: bool = False) -> Printer:
    """The printer of `--output-format fmt` (`partial`: --include-partial-messages)."""
    if fmt == "text":
        return EventPrinter()
    return JsonPrinter(fmt, partial=partial)
