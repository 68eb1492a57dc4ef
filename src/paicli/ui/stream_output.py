"""`paicli -p --output-format json|stream-json`: the run as Claude Code's headless messages
on stdout (`paicli.headless.transcript` makes them), one JSON object per line, each written
whole by `out_json` (valid JSON with every control or invisible character spelled `\\uXXXX`,
known secrets out). `json` writes only the turn's `result`; nothing else ever goes to stdout
in either format: notices and diagnostics go to stderr.
"""

from __future__ import annotations

import dataclasses

from paicli.agent.events import AgentEvent, Notice, Retrying, ToolRetrying, TurnEnded
from paicli.headless.transcript import Message, RunFacts, Transcript
from paicli.ui.output import err, out_json

__all__ = ["JsonPrinter"]


class JsonPrinter:
    """Writes a headless run's messages; the same calls as `EventPrinter`."""

    def __init__(self, fmt: str, *, partial: bool = False) -> None:
        self.streaming = fmt == "stream-json"
        self.transcript = Transcript(partial=partial and self.streaming)
        self.ended: TurnEnded | None = None
        self._finished = False

    def begin(self, session_id: str, facts: RunFacts) -> None:
        """The run's `init` message (stream-json), and the session every message names."""
        self.transcript.session_id = session_id
        if self.streaming:
            self._write(self.transcript.init(facts))

    def begin_turn(self) -> None:
        """Another user turn (stream-json input): its own events and result."""
        self.transcript.begin_turn()
        self.ended = None
        self._finished = False

    def replay(self, text: str) -> None:
        """Echo a user message read from stdin (`--replay-user-messages`)."""
        if self.streaming:
            self._write(self.transcript.user_text(text))

    def __call__(self, event: AgentEvent) -> None:
        if isinstance(event, TurnEnded):
            self.ended = event
        if isinstance(event, Notice | Retrying | ToolRetrying) and not self.streaming:
            err(f"paicli: {_said(event)}")  # with json, stderr is the only place for them
        messages = self.transcript.on(event)  # (json: the result still counts them)
        if self.streaming:
            for message in messages:
                self._write(message)

    def finish(self, ended: TurnEnded) -> None:
        """The turn's `result`, written once whatever ended it."""
        if self._finished:
            return
        self._finished = True
        if ended.error:
            err(f"paicli: {ended.error}")
        self._write(self.transcript.result(ended))

    def interrupted(self) -> None:
        ended = self.ended or TurnEnded("cancelled")
        if ended.reason == "cancelled" and ended.error is None:
            ended = dataclasses.replace(ended, error="interrupted")
        self.finish(ended)

    def failed(self, error: str) -> None:
        """The run failed before or outside the agent's turn: an error result naming why
        (`error` is also the line on stderr)."""
        if self._finished:
            return
        self._finished = True
        err(error)
        self._write(self.transcript.result(TurnEnded("error", error=error), [error]))

    def _write(self, message: Message) -> None:
        out_json(message, indent=None)


def _said(event: Notice | Retrying | ToolRetrying) -> str:
    if isinstance(event, Notice):
        return event.text
    if isinstance(event, Retrying):
        return event.describe()
    return f"{event.name}: {event.line}"
