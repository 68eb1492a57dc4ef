"""The agent's events on the terminal: streaming Markdown, dimmed reasoning, one compact line
per tool call and its result. Everything from a model or server passes `terminal_safe` and is
printed as plain `Text`, never as rich markup."""

from __future__ import annotations

import json
import time

from rich.console import Console
from rich.live import Live
from rich.text import Text

from paicli.agent.events import (
    AgentEvent,
    Notice,
    ReasoningDelta,
    Retrying,
    SubAgentEvent,
    TextDelta,
    TodoUpdated,
    ToolFinished,
    ToolProgress,
    ToolRetrying,
    ToolStarted,
    TurnEnded,
)
from paicli.agent.todos import TODO_TOOL
from paicli.escape import one_line, terminal_safe
from paicli.ui.plan_view import todo_lines
from paicli.ui.tool_progress import progress_text

RESULT_LINES = 3
ARGUMENTS_CHARS = 160


def call_line(name: str, arguments: object) -> str:
    if isinstance(arguments, dict):
        inner = ", ".join(
            f"{key}={json.dumps(value, ensure_ascii=False)}" for key, value in arguments.items()
        )
    else:
        inner = "…"
    return f"{name}({one_line(inner, ARGUMENTS_CHARS)})"


def result_preview(text: str) -> str:
    lines = text.splitlines() or [""]  # one_line makes each line safe
    shown = [one_line(line, 150) for line in lines[:RESULT_LINES]]
    if len(lines) > RESULT_LINES:
        shown.append(f"… (+{len(lines) - RESULT_LINES} lines)")
    return "\n     ".join(shown)


def _plan_lines(event: TodoUpdated | SubAgentEvent) -> list[Text]:
    """The todo list's checklist, or what shows of a sub-agent's event: a line per tool
    call it starts, per call of its that fails, its todo list, notices and failure."""
    if isinstance(event, TodoUpdated):
        return [Text("⏺ Todo list", style="cyan"), *todo_lines(event.items)]
    inner, head = event.event, f"  ↳ {one_line(event.agent, 40)} "
    if isinstance(inner, ToolStarted) and inner.name != TODO_TOOL:
        return [Text(head + terminal_safe(call_line(inner.name, inner.arguments)), style="cyan")]
    if isinstance(inner, ToolFinished) and inner.outcome.is_error:
        style = "red" if inner.outcome.decision == "allowed" else "yellow"
        preview = one_line(inner.outcome.text, 150)
        return [Text(f"{head}⎿ {terminal_safe(inner.name)}: {preview}", style=style)]
    if isinstance(inner, TodoUpdated):
        return [Text(f"{head}todo list", style="cyan"), *todo_lines(inner.items, "      ")]
    if isinstance(inner, Notice):
        return [Text(head + one_line(inner.text, 200), style="yellow")]
    if isinstance(inner, TurnEnded) and inner.error:
        return [Text(f"{head}✗ {one_line(inner.error, 200)}", style="red")]
    return []


class _RunningCalls:
    """The live lines of the calls running now, redrawn a few times a second so the
    elapsed time moves even when a tool reports nothing."""

    def __init__(self) -> None:
        self.calls: dict[str, tuple[ToolProgress, float]] = {}  # id: (last report, started)

    def __rich__(self) -> Text:
        now = time.monotonic()
        lines = [
            f"  ⋯ {progress_text(event, now - started)}" for event, started in self.calls.values()
        ]
        return Text("\n".join(lines), style="cyan")


class TurnRenderer:
    """Renders one turn's events; call `close()` when the turn is over (or interrupted)."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self._text = ""
        self._live: Live | None = None
        self._reasoning = False
        self._running = _RunningCalls()
        self._tools_live: Live | None = None

    def __call__(self, event: AgentEvent) -> None:
        if isinstance(event, TextDelta):
            self._end_reasoning()
            self._text += event.text
            if self._live is None:
                self._live = Live(
                    console=self.console,
                    refresh_per_second=8,
                    # "visible" redraws an answer taller than the screen again and again;
                    # cut it while streaming, and rich prints it whole when the Live stops.
                    vertical_overflow="ellipsis",
                    transient=False,
                )
                self._live.start()
            # hyperlinks=False: a link shows its real target, never hidden behind its text.
            # Imported with the first answer, not before the first prompt: the Markdown
            # parser (markdown-it, pygments through rich.syntax) is a large part of startup.
            from rich.markdown import Markdown  # noqa: PLC0415

            self._live.update(Markdown(terminal_safe(self._text), hyperlinks=False))
        elif isinstance(event, ReasoningDelta):
            self._end_text()
            self._reasoning = True
            self.console.print(Text(terminal_safe(event.text), style="dim italic"), end="")
        elif isinstance(event, ToolStarted) and event.name == TODO_TOOL:
            pass  # its checklist (TodoUpdated) says it all
        elif isinstance(event, TodoUpdated | SubAgentEvent):
            self.pause()
            for line in _plan_lines(event):
                self.console.print(line)
        elif isinstance(event, ToolStarted):
            self.pause()
            where = f" [{terminal_safe(event.server)}]" if event.server else ""
            line = Text("⏺ ", style="cyan")
            line.append(terminal_safe(call_line(event.name, event.arguments)))
            line.append(where, style="dim")
            self.console.print(line)
        elif isinstance(event, ToolProgress):
            known = self._running.calls.get(event.call_id)
            started = known[1] if known else time.monotonic() - event.seconds
            self._running.calls[event.call_id] = (event, started)
            self._show_running()
        elif isinstance(event, ToolRetrying):
            self.pause()
            line = Text(f"  ↻ {terminal_safe(event.name)}: {event.line}", style="yellow")
            self.console.print(line)
        elif isinstance(event, ToolFinished):
            self._running.calls.pop(event.call_id, None)
            if event.name == TODO_TOOL and not event.outcome.is_error:
                return
            self.pause()
            outcome = event.outcome
            if outcome.decision != "allowed":
                style = "yellow"
            elif outcome.is_error:
                style = "red"
            else:
                style = "dim"
            seconds = f"  ({event.seconds:.1f}s)" if event.seconds >= 0.5 else ""
            line = Text(f"  ⎿ {terminal_safe(event.name)}: ", style=style)
            line.append(result_preview(outcome.text) + seconds, style=style)
            self.console.print(line)
            self._show_running()
        elif isinstance(event, Retrying):
            self.pause()
            self.console.print(
                Text(f"  {terminal_safe(event.reason)}; retrying in {event.delay:.1f}s", "yellow")
            )
        elif isinstance(event, Notice):
            self.pause()
            self.console.print(Text(f"  {terminal_safe(event.text)}", style="yellow"))
        elif isinstance(event, TurnEnded):
            self.close()
            if event.error:
                self.console.print(Text(f"✗ {terminal_safe(event.error)}", style="bold red"))

    def pause(self) -> None:
        """Finish the current text block and take the running calls' lines down (before a
        tool line or an approval prompt); the next progress report puts them back."""
        self._end_reasoning()
        self._end_text()
        if self._tools_live is not None:
            self._tools_live.stop()
            self._tools_live = None

    def close(self) -> None:
        self.pause()
        self._running.calls.clear()

    def _show_running(self) -> None:
        if self._tools_live is None and self._running.calls:
            self._tools_live = Live(
                self._running, console=self.console, refresh_per_second=4, transient=True
            )
            self._tools_live.start()

    def _end_text(self) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None
        self._text = ""

    def _end_reasoning(self) -> None:
        if self._reasoning:
            self.console.print()
            self._reasoning = False
