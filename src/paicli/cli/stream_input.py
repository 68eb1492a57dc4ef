"""`paicli -p --input-format stream-json`: a conversation driven by a program, one user
message per stdin line (Claude Code's shape, read by `paicli.headless.input`), each run as
its own turn with its own `result`, until stdin ends. A line that is not a user message
ends the run with one error result naming the line (exit 2); lines sent while a turn runs
wait for it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from paicli.headless.input import BadInputLine, StdinLines, user_turn
from paicli.runtime import Runtime
from paicli.ui.oneshot import Printer

__all__ = ["stream_turns"]

Turn = Callable[..., Awaitable[int]]


async def stream_turns(
    runtime: Runtime, prompt: str, printer: Printer, turn: Turn, *, saving: bool, replay: bool
) -> int:
    """Run `turn` for the prompt given on the command line (if any), then for each stdin
    line (echoed first with `replay`); the exit code of the first turn that did not
    answer, else 0."""
    lines = StdinLines()
    pending = prompt if prompt not in ("", "-") else None
    code = 0
    turns = 0
    while True:
        if pending is not None:
            text: str | None = pending
            pending = None
        else:
            try:
                line = await lines.next()
                if line is None:
                    break
                text = user_turn(line, lines.number)
                if text is not None and replay:
                    printer.replay(text)
            except BadInputLine as exc:
                printer.begin_turn()
                printer.failed(f"paicli -p: {exc}")
                return 2
        if text is None:
            continue
        if turns:
            printer.begin_turn()
        turns += 1
        answered = await turn(runtime, text, printer, saving=saving)
        code = code or answered
    if turns == 0:
        printer.failed("paicli -p: no user message on stdin")
        return 2
    return code
