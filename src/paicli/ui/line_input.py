"""Reading a line from the user: prompt_toolkit on a terminal, plain lines from a pipe.

`paicli` with stdin not a terminal (`printf '/mcp\n' | paicli`) reads one prompt or slash
command per line; the REPL and the approval prompt read through the same interface, so a
script can answer approvals too. End of input raises EOFError, like Ctrl+D.

`key` is a question answered by one key, without Enter (an approval): on a terminal the keys
typed before it showed wait for the next prompt and those typed along with the answer are
dropped, so neither a line typed ahead nor the Enter after a habitual "y" answers a question
(`paicli.ui.one_key.typed_before`; `read` sets early keys aside too); from a pipe it is the
first letter of a line.
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

    async def key(self, prompt: str, keys: str, *, default: str) -> str:
        """One of `keys` (lower-case letters), pressed without Enter; Enter answers
        `default`. EOFError at the end, KeyboardInterrupt on Ctrl+C."""
        ...


class TerminalInput:
    """A plain prompt_toolkit prompt (no history), for answers such as approvals."""

    def __init__(self) -> None:
        # Made at the first question, not before the REPL's prompt (it costs milliseconds).
        self._session: PromptSession[str] | None = None

    async def read(self, prompt: str, *, secret: bool = False) -> str:
        from paicli.ui.one_key import typed_before  # noqa: PLC0415 - at the first question only

        if self._session is None:
            self._session = PromptSession()
        # handle_sigint=False: prompt_toolkit's own SIGINT handler would replace the REPL's
        # (loop.add_signal_handler keeps one per signal) and not give it back on exit, so
        # Ctrl+C could no longer cancel a running turn. In raw mode Ctrl+C is a key anyway.
        # is_password is passed every time: the session keeps the last value given.
        with typed_before(keep_after=True):
            return await self._session.prompt_async(prompt, handle_sigint=False, is_password=secret)

    async def key(self, prompt: str, keys: str, *, default: str) -> str:
        from paicli.ui.one_key import read_key  # noqa: PLC0415 - at the first question only

        return await read_key(prompt, keys, default=default)


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

    async def key(self, prompt: str, keys: str, *, default: str) -> str:
        """A line's first letter ("yes" is y); an empty line is `default`, any other
        letter is returned as it is, for the caller to ask again."""
        line = (await self.read(prompt)).strip().lower()
        return line[:1] or default
