"""Reading a line from the user: prompt_toolkit on a terminal, plain lines from a pipe.

`paicli` with stdin not a terminal (`printf '/mcp\n' | paicli`) reads one prompt or slash
command per line; the REPL and the approval prompt read through the same interface, so a
script can answer approvals too. End of input raises EOFError, like Ctrl+D.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from typing import Protocol

from prompt_toolkit import PromptSession

from paicli.ui.output import out


class LineInput(Protocol):
    async def read(self, prompt: str, *, secret: bool = False) -> str:
        """One line without its newline; EOFError at the end, KeyboardInterrupt on Ctrl+C.
        `secret`: what is typed is not shown (a password a server's form asks for)."""
        ...


class TerminalInput:
    """A plain prompt_toolkit prompt (no history), for answers such as approvals."""

    def __init__(self) -> None:
        # Made at the first question, not before the REPL's prompt (it costs milliseconds).
        self._session: PromptSession[str] | None = None

    async def read(self, prompt: str, *, secret: bool = False) -> str:
        if self._session is None:
            self._session = PromptSession()
        # handle_sigint=False: prompt_toolkit's own SIGINT handler would replace the REPL's
        # (loop.add_signal_handler keeps one per signal) and not give it back on exit, so
        # Ctrl+C could no longer cancel a running turn. In raw mode Ctrl+C is a key anyway.
        # is_password is passed every time: the session keeps the last value given.
        return await self._session.prompt_async(prompt, handle_sigint=False, is_password=secret)


class PipeInput:
    """Lines from a non-terminal stdin, read by a daemon thread.

    A daemon thread rather than `asyncio.to_thread`: a thread blocked in `readline` must not
    keep the process alive when paicli is stopped (asyncio.run waits for executor threads).
    """

    def __init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._lines: asyncio.Queue[str | None] = asyncio.Queue()
        threading.Thread(target=self._pump, name="paicli-stdin", daemon=True).start()

    def _pump(self) -> None:
        for line in sys.stdin:
            self._loop.call_soon_threadsafe(self._lines.put_nowait, line.rstrip("\n"))
        self._loop.call_soon_threadsafe(self._lines.put_nowait, None)

    async def read(self, prompt: str, *, secret: bool = False) -> str:
        out(prompt, end="")
        line = await self._lines.get()
        if line is None:
            self._lines.put_nowait(None)  # every later read ends too
            out()
            raise EOFError
        # Echoed, so a transcript reads like a terminal session; a secret is not.
        out("(hidden)" if secret else line)
        return line
