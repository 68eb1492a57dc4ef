"""What a server asks of the user in the REPL: an elicitation form, a sampling request.

Each question names the server, shows what it sent escaped, and is read on the same line
input and under the same lock as tool approvals, so two questions never talk over each other.
A form checks every answer against its field before going on; the user can decline or
cancel at the start and at the end, and Ctrl+C (or the end of input) cancels. Servers ask
while paicli works on a turn or a command; one that asks while paicli waits at its prompt is
declined with a line saying so (a second prompt cannot run beside the REPL's own).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from rich.console import Console
from rich.panel import Panel
from rich.text import Text

from paicli.asks.elicitation import FormError, FormField
from paicli.asks.server_asks import (
    MAX_SHOWN_MESSAGES,
    ElicitAnswer,
    ElicitationRequest,
    SamplingRequest,
)
from paicli.escape import json_for_terminal, one_line, terminal_safe
from paicli.ui.line_input import LineInput

START = "Fill in the form? [y] yes  [d] decline  [c] cancel: "
SEND = "Send these answers? [y] send  [d] decline  [c] cancel: "
SAMPLE = "Let your model answer it? [y] yes  [n] no: "
SEND_SAMPLE = "Send this answer to the server? [y] yes  [n] no: "
# Each message a server wants answered is shown on one line of at most this many characters.
MESSAGE_WIDTH = 200
# A server's message to the user is shown whole up to this length (it explains the form).
MAX_MESSAGE = 2000


def _secret_warning(server: str, fields: list[str]) -> str:
    names = ", ".join(terminal_safe(name) for name in fields)
    return (
        f"⚠ {server} asks for a secret ({names}): what you type is hidden. Give it only if "
        "you trust this server with it."
    )


class TerminalAsks:
    """Asks the user on the terminal; `busy()` says whether paicli is working (a turn or a
    command runs), `before_prompt` stops the live rendering of the turn."""

    def __init__(
        self,
        console: Console,
        *,
        lines: LineInput,
        lock: asyncio.Lock,
        before_prompt: Callable[[], None],
        busy: Callable[[], bool],
    ) -> None:
        self._console = console
        self._lines = lines
        self._lock = lock
        self._before_prompt = before_prompt
        self._busy = busy

    async def elicit(self, request: ElicitationRequest) -> ElicitAnswer:
        server = terminal_safe(request.server)
        if not self._busy():
            self._idle_notice(f"{server} asked for input")
            return ElicitAnswer("decline")
        async with self._lock:
            self._before_prompt()
            message = terminal_safe(request.message[:MAX_MESSAGE])
            self._console.print(
                Panel(
                    Text(message or "(no message)"),
                    title=Text(f"MCP server {server} asks for input"),
                    border_style="cyan",
                )
            )
            if secrets := [field.name for field in request.fields if field.secret]:
                self._console.print(Text(one_line(_secret_warning(server, secrets), 300), "yellow"))
            try:
                return await self._form(request)
            except (KeyboardInterrupt, EOFError):
                self._console.print(Text("  Cancelled.", "dim"))
                return ElicitAnswer("cancel")

    async def _form(self, request: ElicitationRequest) -> ElicitAnswer:
        start = await self._choice(START, {"y": "accept", "d": "decline", "c": "cancel"})
        if start != "accept":
            return ElicitAnswer("decline" if start == "decline" else "cancel")
        content: dict[str, object] = {}
        for field in request.fields:
            value = await self._field(field)
            if value is not None:
                content[field.name] = value
        for field in request.fields:
            shown = content.get(field.name, field.default)
            if shown is None:
                value = "(left empty)"
            else:
                value = "(hidden)" if field.secret else json_for_terminal(shown, indent=None)
            self._console.print(Text(one_line(f"  {field.name}: {value}", 160)))
        send = await self._choice(SEND, {"y": "accept", "d": "decline", "c": "cancel"})
        if send == "accept":
            return ElicitAnswer("accept", content)
        return ElicitAnswer("decline" if send == "decline" else "cancel")

    async def _field(self, field: FormField) -> object:
        required = " (required)" if field.required and field.default is None else ""
        self._console.print(Text(one_line(f"{field.title}{required}", 118), "bold"))
        if field.description:
            self._console.print(Text(one_line(field.description, 300), "dim"))
        for number, label in enumerate(field.labels, 1):
            self._console.print(Text(one_line(f"  {number}. {label}", 118)))
        default = ""
        if field.default is not None:
            shown = "hidden" if field.secret else json_for_terminal(field.default, indent=None)
            default = f" [{one_line(shown, 60)}]"
        hint = f"{field.hint()}, hidden" if field.secret else field.hint()
        question = one_line(f"{field.name} ({hint}){default}: ", 160)
        while True:
            try:
                return field.parse(await self._lines.read(question, secret=field.secret))
            except FormError as exc:
                self._console.print(Text(one_line(str(exc), 200), "yellow"))

    async def _choice(self, question: str, choices: dict[str, str]) -> str:
        while True:
            reply = (await self._lines.read(question)).strip().lower()
            if reply[:1] in choices:
                return choices[reply[:1]]
            self._console.print(f"Please answer {', '.join(choices)}.")

    async def approve_sampling(self, request: SamplingRequest) -> bool:
        server = terminal_safe(request.server)
        if not self._busy():
            self._idle_notice(f"{server} asked for a completion from your model")
            return False
        async with self._lock:
            self._before_prompt()
            lines = [f"Up to {request.max_tokens:,} tokens from your model, for:"]
            if request.system_prompt:
                lines.append(one_line(f"system: {request.system_prompt}", MESSAGE_WIDTH))
            shown = request.messages[:MAX_SHOWN_MESSAGES]
            lines += [one_line(f"{role}: {text}", MESSAGE_WIDTH) for role, text in shown]
            if len(request.messages) > len(shown):
                lines.append(f"… and {len(request.messages) - len(shown)} more messages")
            return await self._yes(
                "\n".join(lines),
                f"MCP server {server} asks your model (sampling)",
                SAMPLE,
                "  Refused; the server is told.",
            )

    async def review_sample(self, request: SamplingRequest, answer: str) -> bool:
        """Show the model's answer (escaped, cut) and ask whether it goes to the server."""
        server = terminal_safe(request.server)
        async with self._lock:
            self._before_prompt()
            shown = answer if len(answer) <= MAX_MESSAGE else answer[:MAX_MESSAGE] + " …[cut]"
            return await self._yes(
                terminal_safe(shown) or "(empty)",
                f"Your model's answer for {server}",
                SEND_SAMPLE,
                "  Not sent; the server is told.",
            )

    async def _yes(self, body: str, title: str, question: str, refused: str) -> bool:
        """`body` in a panel, then `question`: True for a yes; anything else, Ctrl+C or the
        end of input is a no, and `refused` says so."""
        self._console.print(Panel(Text(body), title=Text(title), border_style="cyan"))
        try:
            reply = (await self._lines.read(question)).strip().lower()
        except (KeyboardInterrupt, EOFError):
            reply = ""
        if reply in ("y", "yes"):
            return True
        self._console.print(Text(refused, "dim"))
        return False

    def _idle_notice(self, what: str) -> None:
        self._console.print(Text(f"{what} while paicli waited at its prompt; declined.", "yellow"))
