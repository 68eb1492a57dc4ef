"""The REPL's input line in a real pseudo-terminal: text printed while the prompt is on the
screen goes above it, and the terminal stays in raw mode meanwhile (in cooked mode a key
typed at that moment is the terminal's: Ctrl+D an end of file, Ctrl+C a signal)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from paicli.ui.prompt_line import PROMPT

from .terminal import Terminal

pytestmark = pytest.mark.real

# A prompt, and a task printing three lines above it once it is drawn; each write notes
# whether the terminal was in canonical (cooked) mode at that moment (the prompt's own
# drawing goes through it too).
SCRIPT = r"""
import asyncio, sys, termios
from pathlib import Path
from paicli.ui.prompt_line import LineState, prompt_session, read_line

class Noting:
    def __init__(self, stream):
        self.stream, self.cooked, self.on = stream, [], False
        self.encoding, self.errors = stream.encoding, stream.errors
    def write(self, text):
        if self.on:
            self.cooked.append(bool(termios.tcgetattr(0)[3] & termios.ICANON))
        return self.stream.write(text)
    def flush(self):
        self.stream.flush()
    def isatty(self):
        return True
    def fileno(self):
        return self.stream.fileno()

async def main():
    noting = Noting(sys.stdout)
    sys.stdout = noting
    session = prompt_session(LineState(), Path(sys.argv[1]))
    drawn = asyncio.Event()
    session.app.after_render += lambda _: drawn.set()

    async def talk():
        await drawn.wait()
        noting.on = True
        for n in range(3):
            print(f"line {n} above the prompt")
            await asyncio.sleep(0)
        print("partial", end="")
        sys.stdout.flush()
        print(" and its end")
        noting.on = False

    talking = asyncio.ensure_future(talk())
    line = await read_line(session)
    await talking
    print(f"read {line!r}; cooked while writing: {any(noting.cooked)} ({len(noting.cooked)})")

asyncio.run(main())
"""


async def test_text_printed_above_a_live_prompt_keeps_the_terminal_raw(tmp_path: Path) -> None:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "TERM": "xterm-256color",
        "PROMPT_TOOLKIT_NO_CPR": "1",
        **({"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {}),
    }
    history = tmp_path / "history"
    term = await Terminal.spawn([sys.executable, "-c", SCRIPT, str(history)], cwd=tmp_path, env=env)
    try:
        await term.expect("line 2 above the prompt")
        await term.expect("partial and its end")
        await term.expect(PROMPT.strip())  # drawn again below what was printed
        term.line("typed after")
        await term.expect("read 'typed after'; cooked while writing: False")
        assert await term.exit_code() == 0
    finally:
        await term.aclose()
    assert history.read_text().strip().endswith("+typed after")
