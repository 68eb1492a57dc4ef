"""The approval prompt: shows the exact call (escaped) and reads the user's choice.

The agent's approving toolbox serialises prompts, so at most one is on screen at a time.
Ctrl+C at the prompt denies the call and cancels the turn it belongs to.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console
from rich.panel import Panel
from rich.text import Text

from paicli.tools.approval import Answer, ApprovalRequest, Choice

from .line_input import LineInput

CHOICES = {
    "y": Choice.ALLOW_ONCE,
    "s": Choice.ALLOW_SESSION,
    "a": Choice.ALLOW_ALWAYS,
    "n": Choice.DENY,
    "m": Choice.DENY_WITH_MESSAGE,
}
QUESTION = (
    "Allow? [y] once  [s] this tool for the session  [a] always (saved)  "
    "[n] deny  [m] deny with a message: "
)


class TerminalApprover:
    """An `Approver` that asks on the terminal."""

    def __init__(
        self,
        console: Console,
        *,
        before_prompt: Callable[[], None],
        on_interrupt: Callable[[], None],
        lines: LineInput,
    ) -> None:
        self._console = console
        self._before_prompt = before_prompt  # stops live rendering of the turn
        self._on_interrupt = on_interrupt  # cancels the running turn
        self._lines = lines

    async def __call__(self, request: ApprovalRequest) -> Answer:
        self._before_prompt()
        # display() is already escaped; Text() prints it literally (no markup).
        self._console.print(
            Panel(Text(request.display()), title="Tool call needs approval", border_style="yellow")
        )
        while True:
            try:
                reply = (await self._lines.read(QUESTION)).strip()
            except (KeyboardInterrupt, EOFError):
                self._on_interrupt()
                return Answer(Choice.DENY)
            choice = CHOICES.get(reply[:1]) if reply else None
            if reply.lower() in ("yes", "no"):
                choice = Choice.ALLOW_ONCE if reply.lower() == "yes" else Choice.DENY
            if choice is None:
                self._console.print("Please answer y, s, a, n or m.")
                continue
            if choice is Choice.DENY_WITH_MESSAGE:
                try:
                    message = await self._lines.read("Message to the model: ")
                except (KeyboardInterrupt, EOFError):
                    self._on_interrupt()
                    return Answer(Choice.DENY)
                return Answer(choice, message.strip() or None)
            return Answer(choice)
