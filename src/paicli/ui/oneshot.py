"""What `paicli -p PROMPT` prints: the answer on stdout as text, one JSON object, or JSON lines
of events; tool calls, retries and notices as escaped lines on stderr. All through `output`:
JSON is escaped by JSON itself, so it stays valid and exact; text answers are escaped on a
terminal and written as they are into a pipe or a file.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Callable
from typing import Any

from paicli.agent.events import (
    AgentEvent,
    Notice,
    Retrying,
    TextDelta,
    ToolFinished,
    ToolProgress,
    ToolRetrying,
    ToolStarted,
    TurnEnded,
)
from paicli.escape import one_line
from paicli.servers.manager import ManagedServer, ServerState
from paicli.ui.output import answer, err, out, out_json
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
    """Writes the agent's events in the chosen output format; `finish` writes the end."""

    def __init__(self, fmt: str) -> None:
        self.fmt = fmt
        self.tool_calls: list[dict[str, Any]] = []
        self.ended: TurnEnded | None = None  # the agent's own end of the turn, once seen
        self._ends_with_newline = True
        self._finished = False
        self._progress_shown: dict[str, float] = {}  # call id: when its last line was shown

    def __call__(self, event: AgentEvent) -> None:
        if isinstance(event, TurnEnded):
            self.ended = event
        if self.fmt == "stream-json":
            out_json(event_json(event), indent=None)
            return
        if isinstance(event, ToolFinished):
            self.tool_calls.append(
                {
                    "id": event.call_id,
                    "name": event.name,
                    "is_error": event.outcome.is_error,
                    "decision": event.outcome.decision,
                    "seconds": round(event.seconds, 3),
                }
            )
        if self.fmt == "json":
            return
        if isinstance(event, TextDelta):
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
        """The end of the output, written once whatever ended the run (an answer, a failure,
        an interruption): with `json` the one object that is the whole output, with
        `stream-json` a `turn_ended` event if the agent did not write one."""
        if self._finished:
            return
        self._finished = True
        if self.fmt == "json":
            out_json(self.summary(ended), indent=None)
        elif self.fmt == "stream-json" and self.ended is None:
            out_json(event_json(ended), indent=None)

    def interrupted(self) -> None:
        """The run was cancelled (Ctrl+C, SIGTERM): finish with what the agent said, if it
        got that far, and say so."""
        ended = self.ended or TurnEnded("cancelled")
        if ended.reason == "cancelled" and ended.error is None:
            ended = dataclasses.replace(ended, error="interrupted")
        self.finish(ended)

    def failed(self, error: str) -> None:
        """The run failed before or outside the agent's turn; `error` is the reason, shown
        as it is on stderr."""
        err(error)
        self.finish(TurnEnded("error", error=error))

    def summary(self, ended: TurnEnded) -> dict[str, Any]:
        return {
            "result": ended.text,
            "reason": ended.reason,
            "error": ended.error,
            "steps": ended.steps,
            "usage": dict(ended.usage),
            "tool_calls": self.tool_calls,
        }


def event_json(event: AgentEvent) -> dict[str, Any]:
    """One event as a JSON object with a `type` field (for --output-format stream-json)."""
    kind = {
        "TextDelta": "text",
        "ReasoningDelta": "reasoning",
        "Retrying": "retrying",
        "ToolStarted": "tool_started",
        "ToolProgress": "tool_progress",
        "ToolRetrying": "tool_retrying",
        "ToolFinished": "tool_finished",
        "Notice": "notice",
        "TurnEnded": "turn_ended",
    }[type(event).__name__]
    body = dataclasses.asdict(event)
    if isinstance(event, ToolFinished):
        outcome = event.outcome
        body["outcome"] = {
            "text": outcome.text,
            "is_error": outcome.is_error,
            "decision": outcome.decision,
            "decided_by": outcome.decided_by,
        }
    return {"type": kind, **body}
