"""`paicli -p PROMPT`: answer once and exit, for scripts and pipelines.

Never prompts: tools that would ask run only when `--allow PATTERN` or `--yes` says so, and
anything else is denied with a message the model and the user can read. The answer goes to
stdout (text, one JSON object, or JSON lines of events); everything else goes to stderr.

Exit codes: 0 answered; 1 the model endpoint failed; 2 usage or setup problem (no model
configured, empty prompt); 3 the step budget ran out; 130 interrupted.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

from paicli.agent.events import (
    AgentEvent,
    Notice,
    Retrying,
    TextDelta,
    ToolFinished,
    ToolStarted,
    TurnEnded,
)
from paicli.runtime import open_runtime
from paicli.servers.manager import ManagedServer, ServerState
from paicli.tools.escape import one_line, terminal_safe

EXIT_CODES = {"done": 0, "error": 1, "step_budget": 3, "cancelled": 130}


def err(text: str) -> None:
    print(terminal_safe(text), file=sys.stderr, flush=True)


def read_prompt(options: argparse.Namespace) -> str | None:
    """The prompt, read before the event loop starts when it comes from stdin (a blocking
    read inside the loop would keep SIGTERM from being handled until stdin ends)."""
    prompt: str = options.print
    if prompt == "-":
        prompt = sys.stdin.read()
    return prompt if prompt.strip() else None


async def run_once(options: argparse.Namespace, flags: dict[str, str | None], prompt: str) -> int:
    fmt: str = options.output_format
    async with open_runtime(
        root=Path.cwd(),
        flags=flags,
        approver=None,
        flag_allow=tuple(options.allow),
        yes=options.yes,
        trust_project=options.trust_project,
        on_server_change=_report_server,
        max_steps=options.max_steps or None,
    ) as runtime:
        for problem in runtime.problems:
            err(f"paicli: {problem}")
        for name in runtime.skipped:
            err(f"paicli: skipping unapproved project server {name!r} (pass --trust-project)")
        if runtime.agent is None:
            err(f"paicli: {runtime.settings.why_not_configured()}")
            return 2
        await runtime.manager.wait_ready()
        printer = EventPrinter(fmt)
        ended = await runtime.agent.run(prompt, printer)
        if fmt == "json":
            print(json.dumps(printer.summary(ended), ensure_ascii=False))
        return EXIT_CODES[ended.reason]


def _report_server(server: ManagedServer) -> None:
    if server.state is ServerState.ERROR:
        err(f"paicli: MCP server {server.name!r} failed: {server.error}")


class EventPrinter:
    """Writes the agent's events in the chosen output format."""

    def __init__(self, fmt: str) -> None:
        self.fmt = fmt
        self.tool_calls: list[dict[str, Any]] = []
        self._ends_with_newline = True
        self._tty = sys.stdout.isatty()

    def __call__(self, event: AgentEvent) -> None:
        if self.fmt == "stream-json":
            print(json.dumps(event_json(event), ensure_ascii=False), flush=True)
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
            # On a terminal, escape sequences in the answer are shown, not obeyed; into a
            # pipe or file the answer goes byte for byte.
            sys.stdout.write(terminal_safe(event.text) if self._tty else event.text)
            sys.stdout.flush()
            self._ends_with_newline = event.text.endswith("\n")
        elif isinstance(event, ToolStarted):
            shown = json.dumps(event.arguments, ensure_ascii=False) if event.arguments else ""
            err(f"→ {event.name} {one_line(shown, 200)}")
        elif isinstance(event, ToolFinished):
            mark = "✗" if event.outcome.is_error else "✓"
            err(f"  {mark} {event.name}: {one_line(event.outcome.text, 160)}")
        elif isinstance(event, Retrying):
            err(f"paicli: {event.reason}; retrying in {event.delay:.1f}s")
        elif isinstance(event, Notice):
            err(f"paicli: {event.text}")
        elif isinstance(event, TurnEnded):
            if not self._ends_with_newline:
                print()
            if event.error:
                err(f"paicli: {event.error}")

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
