"""The approval prompt: shows the exact call (escaped) and reads the user's choice.

A file edit is shown as a coloured unified diff (a new file as its lines), and what runs is
exactly what was shown. "For the session" and "always" cover what the request says
(`covers`): the tool, or for a command its prefix (`git diff` commands), never every command.
The agent's approving toolbox serialises prompts, so at most one is on screen at a time.
Ctrl+C at the prompt denies the call and cancels the turn it belongs to. On a terminal one
key answers (y, n, s, p, a, m; Enter is "once"), and keys typed before the question showed
do not (`LineInput.key`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from rich.console import Console
from rich.panel import Panel
from rich.text import Text

from paicli.escape import one_line, terminal_safe
from paicli.permissions.approval import Answer, ApprovalRequest, Choice
from paicli.permissions.hunks import Hunk, hunks
from paicli.ui.line_input import LineInput

CHOICES = {
    "y": Choice.ALLOW_ONCE,
    "s": Choice.ALLOW_SESSION,
    "p": Choice.ALLOW_PROJECT,
    "a": Choice.ALLOW_ALWAYS,
    "n": Choice.DENY,
    "m": Choice.DENY_WITH_MESSAGE,
}
ONCE_ONLY = {"y": Choice.ALLOW_ONCE, "n": Choice.DENY, "m": Choice.DENY_WITH_MESSAGE}
DIFF_STYLES = (("+", "green"), ("-", "red"), ("@@", "cyan"))


def question(request: ApprovalRequest) -> tuple[str, dict[str, Choice]]:
    """The question line and the answers it takes: saved and session answers only when the
    request says what they would cover."""
    covers = request.covers
    if covers is None or request.protected is not None:
        return "Allow? [y] once (Enter)  [n] deny  [m] deny with a message: ", ONCE_ONLY
    what = one_line(covers, 60)
    if covers.startswith("execute_command(") and covers.endswith(")"):
        command = covers[len("execute_command(") : -1]
        what = f"`{one_line(command.removesuffix(':*'), 50)}`"
        what += " commands" if command.endswith(":*") else ""
    text = (
        f"Allow? [y] once (Enter)  [s] {what} for the session  [p] always in this project  "
        "[a] always everywhere  [n] deny  [m] deny with a message: "
    )
    return text, CHOICES


def request_text(request: ApprovalRequest) -> Text:
    """The panel's body: the escaped request, its diff coloured line by line."""
    diff = request.diff()
    lines = request.display().split("\n")
    head = lines[: len(lines) - len(diff)] if diff else lines
    text = Text("\n".join(head))
    for line in diff:
        style = next((s for mark, s in DIFF_STYLES if line.startswith(mark)), "dim")
        text.append("\n" + line, style)
    return text


class TerminalApprover:
    """An `Approver` that asks on the terminal."""

    def __init__(
        self,
        console: Console,
        *,
        before_prompt: Callable[[], None],
        on_interrupt: Callable[[], None],
        lines: LineInput,
        lock: asyncio.Lock | None = None,
    ) -> None:
        self._console = console
        self._before_prompt = before_prompt  # stops live rendering of the turn
        self._on_interrupt = on_interrupt  # cancels the running turn
        self._lines = lines
        # Shared with the questions servers ask (forms, sampling): one question at a time.
        self._lock = lock or asyncio.Lock()

    async def __call__(self, request: ApprovalRequest) -> Answer:
        async with self._lock:
            return await self._ask(request)

    async def _ask(self, request: ApprovalRequest) -> Answer:
        self._before_prompt()
        # display() is already escaped; Text() prints it literally (no markup).
        self._console.print(
            Panel(request_text(request), title="Tool call needs approval", border_style="yellow")
        )
        asked, choices = question(request)
        preview = request.preview
        parts = hunks(preview.before or "", preview.after) if preview is not None else []
        several = preview is not None and preview.before is not None and len(parts) > 1
        if several:
            asked = asked.replace("  [n] deny", "  [h] hunk by hunk  [n] deny", 1)
        while True:
            try:
                # One key, no Enter; Enter is "once", the answer a user expects by default.
                keys = "".join(choices) + ("h" if several else "")
                reply = await self._lines.key(asked, keys, default="y")
            except (KeyboardInterrupt, EOFError):
                self._on_interrupt()
                return Answer(Choice.DENY)
            if reply == "h" and several:
                return await self._by_hunk(parts)
            choice = choices.get(reply)
            if choice is None:
                self._console.print(f"Please answer {', '.join(choices)}.")
                continue
            if choice is Choice.DENY_WITH_MESSAGE:
                try:
                    message = await self._lines.read("Message to the model: ")
                except (KeyboardInterrupt, EOFError):
                    self._on_interrupt()
                    return Answer(Choice.DENY)
                return Answer(choice, message.strip() or None)
            return Answer(choice)

    async def _by_hunk(self, parts: list[Hunk]) -> Answer:
        """Each hunk shown and answered on its own: y applies it, n leaves it out, a applies
        it and the rest, d leaves out it and the rest; the file gets the applied ones."""
        chosen: set[int] = set()
        for number, hunk in enumerate(parts):
            self._console.print(Text(f"Hunk {number + 1} of {len(parts)}:", "bold"))
            self._console.print(_coloured(hunk.lines))
            try:
                reply = await self._lines.key(
                    "Apply it? [y] yes (Enter)  [n] no  [a] this and the rest  "
                    "[d] none of the rest: ",
                    "ynad",
                    default="y",
                )
            except (KeyboardInterrupt, EOFError):
                self._on_interrupt()
                return Answer(Choice.DENY)
            if reply in ("y", "a"):
                chosen.add(number)
            if reply == "a":
                chosen.update(range(number, len(parts)))
            if reply in ("a", "d"):
                break
        return Answer(Choice.ALLOW_ONCE, hunks=frozenset(chosen))


def _coloured(lines: tuple[str, ...]) -> Text:
    """A hunk's diff lines, escaped, coloured as the approval's diff is."""
    text = Text()
    for index, line in enumerate(lines):
        style = next((s for mark, s in DIFF_STYLES if line.startswith(mark)), "dim")
        text.append(("\n" if index else "") + terminal_safe(line), style)
    return text
