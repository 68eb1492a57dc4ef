"""User turns as JSON lines on stdin (`--input-format stream-json`), read and checked.

Each line is Claude Code's user message: `{"type": "user", "message": {"role": "user",
"content": "..." | [{"type": "text", "text": "..."}, ...]}}`. A line is hostile input: it is
bounded (`LINE_LIMIT`), must be one JSON object of that shape, and anything else is one
`BadInputLine` naming its line number and what is wrong with it. Blank lines are skipped.

`StdinLines` reads the lines in a daemon thread, so a blocked read never keeps paicli from
stopping (asyncio.run would wait for an executor thread).
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from typing import BinaryIO

from paicli.errors import PaicliError

__all__ = ["LINE_LIMIT", "BadInputLine", "StdinLines", "user_turn"]

# A turn's text is bounded like a piped prompt: far more than any model's window.
LINE_LIMIT = 4 * 1024 * 1024


class BadInputLine(PaicliError):
    """A stdin line that is not a user message (the text names the line and why)."""


def user_turn(line: bytes, number: int) -> str | None:
    """The text of the user message on stdin line `number`, or None for a blank line."""
    if not line.strip():
        return None
    where = f"stdin line {number}"
    try:
        value = json.loads(line)
    except (ValueError, RecursionError) as exc:
        reason = exc.msg if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
        raise BadInputLine(f"{where}: not JSON ({reason})") from None
    if not isinstance(value, dict):
        raise BadInputLine(f"{where}: expected a JSON object, got {type(value).__name__}")
    if value.get("type") != "user":
        raise BadInputLine(f"{where}: expected a message of type 'user', got {_shown(value)}")
    message = value.get("message")
    if not isinstance(message, dict) or message.get("role", "user") != "user":
        raise BadInputLine(f'{where}: "message" must be an object with "role": "user"')
    text = _text(message.get("content"), where)
    if not text.strip():
        raise BadInputLine(f"{where}: the message has no text")
    return text


def _shown(value: dict[str, object]) -> str:
    kind = value.get("type")
    return repr(kind)[:40] if isinstance(kind, str) else "no type"


def _text(content: object, where: str) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise BadInputLine(f'{where}: "content" must be a string or a list of text blocks')
    parts: list[str] = []
    for index, block in enumerate(content):
        if not isinstance(block, dict) or block.get("type") != "text":
            kind = block.get("type") if isinstance(block, dict) else None
            named = repr(kind)[:40] if isinstance(kind, str) else "a non-block"
            raise BadInputLine(
                f"{where}: content block {index} is {named}; only text blocks are supported"
            )
        text = block.get("text")
        if not isinstance(text, str):
            raise BadInputLine(f'{where}: content block {index} has no "text" string')
        parts.append(text)
    return "\n\n".join(parts)


class StdinLines:
    """stdin's lines (bytes, newline kept), each at most `LINE_LIMIT`; None at the end. A
    longer line is a `BadInputLine` from `next`."""

    def __init__(self, stream: BinaryIO | None = None) -> None:
        self._stream = stream if stream is not None else sys.stdin.buffer
        self._loop = asyncio.get_running_loop()
        self._lines: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.number = 0  # the number of the last line returned
        threading.Thread(target=self._pump, name="paicli-stdin", daemon=True).start()

    def _pump(self) -> None:
        try:
            while True:
                line = self._stream.readline(LINE_LIMIT + 1)
                if not line:
                    break
                self._loop.call_soon_threadsafe(self._lines.put_nowait, line)
                if len(line) > LINE_LIMIT:
                    break  # the reader stops at this line: no need to read the rest
        except (OSError, ValueError):
            pass  # stdin closed under the thread: the end of input
        finally:
            try:
                self._loop.call_soon_threadsafe(self._lines.put_nowait, None)
            except RuntimeError:
                pass  # the loop is gone: nobody reads any more

    async def next(self) -> bytes | None:
        line = await self._lines.get()
        if line is None:
            self._lines.put_nowait(None)  # every later read ends too
            return None
        self.number += 1
        if len(line) > LINE_LIMIT:
            limit = LINE_LIMIT // (1024 * 1024)
            raise BadInputLine(f"stdin line {self.number}: longer than {limit} MiB")
        return line
