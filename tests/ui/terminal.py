"""A program in a real pseudo-terminal, driven like a user would: keys in, screen text out.

The child gets the pty as its controlling terminal (so Ctrl+C in cooked mode becomes a real
SIGINT, as in a shell) and a fixed 120x40 window. Output is read as it arrives (an event-loop
reader, never a sleep); `expect` waits, under a timeout, for text or a pattern in the output
with ANSI escape sequences removed, and moves past each match so a later `expect` only sees
newer output.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import fcntl
import os
import re
import signal
import struct
import termios
from collections.abc import Mapping, Sequence
from pathlib import Path

from tests.zygote import ZygoteChild, spawn_on_fds

COLUMNS, ROWS = 120, 40
EXPECT_TIMEOUT = 30.0  # generous: a 2-core machine running the suite in parallel is slow
STOP_TIMEOUT = 10.0  # paicli's own shutdown ladder for its servers is bounded well below this

# CSI (colours, cursor moves, modes), OSC (titles, links), and the short two-byte escapes.
ANSI = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"
    r"|\x1b[()][0-9A-Za-z]"
    r"|\x1b[=>78MDEc]"
)

KEYS = {"ctrl-c": "\x03", "ctrl-d": "\x04", "tab": "\t", "shift-tab": "\x1b[Z", "enter": "\r"}


def strip_ansi(text: str) -> str:
    return ANSI.sub("", text)


def _become_terminal_owner() -> None:
    """In the child, after setsid(): make its stdin (the pty) the controlling terminal."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class Terminal:
    """One child process on a pty, started by `spawn`; `aclose()` stops it and frees the pty."""

    def __init__(self, process: asyncio.subprocess.Process | ZygoteChild, master: int) -> None:
        self.process = process
        self._master = master
        self._raw = ""
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._seen = 0  # offset in the stripped text up to which `expect` has matched
        self._arrived = asyncio.Event()
        self._eof = False
        asyncio.get_running_loop().add_reader(master, self._read)

    @classmethod
    async def spawn(cls, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str]) -> Terminal:
        """`argv` on a new pty; `python -m paicli.cli ...` is forked from a zygote where that
        applies (tests/zygote.py), as the same session leader with the pty as its terminal."""
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
        # The pty's size, not COLUMNS/LINES inherited from the runner (pytest-xdist workers
        # set 80x24), decides where the program wraps.
        env = {**env, "COLUMNS": str(COLUMNS), "LINES": str(ROWS)}
        try:
            fds = (slave, slave, slave)
            forked = spawn_on_fds(argv, cwd=cwd, env=env, fds=fds, session=True, terminal=True)
            process = forked or await asyncio.create_subprocess_exec(
                *argv,
                cwd=cwd,
                env=env,
                stdin=slave,
                stdout=slave,
                stderr=slave,
                start_new_session=True,
                preexec_fn=_become_terminal_owner,
            )
        finally:
            os.close(slave)
        return cls(process, master)

    # -- output -----------------------------------------------------------------------------

    def _read(self) -> None:
        try:
            data = os.read(self._master, 65536)
        except OSError:  # EIO: every copy of the slave side is closed
            data = b""
        if not data:
            self._eof = True
            asyncio.get_running_loop().remove_reader(self._master)
        else:
            self._raw += self._decoder.decode(data)
        self._arrived.set()

    @property
    def raw(self) -> str:
        """Everything printed so far, exactly."""
        return self._raw

    @property
    def text(self) -> str:
        """Everything printed so far, escapes removed."""
        return strip_ansi(self._raw)

    @property
    def recent(self) -> str:
        """What was printed after the last `expect` match."""
        return self.text[self._seen :]

    async def expect(
        self, pattern: str | re.Pattern[str], timeout: float = EXPECT_TIMEOUT
    ) -> re.Match[str]:
        """Wait until `pattern` (literal text, or a compiled regex) appears in new output."""
        wanted = pattern if isinstance(pattern, re.Pattern) else re.compile(re.escape(pattern))
        try:
            async with asyncio.timeout(timeout):
                while True:
                    self._arrived.clear()
                    found = wanted.search(self.text, self._seen)
                    if found is not None:
                        self._seen = found.end()
                        return found
                    if self._eof:
                        raise EOFError
                    await self._arrived.wait()
        except (TimeoutError, EOFError) as exc:
            why = "the program closed the terminal" if self._eof else f"{timeout}s passed"
            raise AssertionError(
                f"{wanted.pattern!r} did not appear ({why}); new output:\n{self.recent}"
            ) from exc

    # -- input ------------------------------------------------------------------------------

    def send(self, text: str) -> None:
        os.write(self._master, text.encode())

    def send_keys(self, *keys: str) -> None:
        """Named keys: ctrl-c, ctrl-d, tab, shift-tab, enter."""
        self.send("".join(KEYS[key] for key in keys))

    def line(self, text: str) -> None:
        """Type `text` and press Enter."""
        self.send(text + KEYS["enter"])

    def local_modes(self) -> int:
        """The terminal's local modes (termios `c_lflag`: ECHO, ICANON...) as set now."""
        return int(termios.tcgetattr(self._master)[3])

    # -- the end ----------------------------------------------------------------------------

    async def exit_code(self, timeout: float = STOP_TIMEOUT) -> int:
        async with asyncio.timeout(timeout):
            code = await self.process.wait()
            while not self._eof:  # the rest of its output
                self._arrived.clear()
                await self._arrived.wait()
        return code

    async def aclose(self) -> None:
        """Stop the program if it is still running (SIGTERM, then SIGKILL) and free the pty."""
        if self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            try:
                async with asyncio.timeout(STOP_TIMEOUT):
                    await self.process.wait()
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                await self.process.wait()
        if not self._eof:
            asyncio.get_running_loop().remove_reader(self._master)
        os.close(self._master)
