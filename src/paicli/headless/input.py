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
import os
import sys
import threading

from paicli.errors import PaicliError

__all__ = ["LINE_LIMIT", "BadInputLine", "StdinLines", "user_turn"]

# A turn's text is bounded like a piped prompt: far more than any model's window.
LINE_LIMIT = 4 * 1024 * 1024
CHUNK = 64 * 1024


class BadInputLine(PaicliError):
    """A stdin line that is not a user message (the text names the line and why)."""


def user_turn(line: bytes, number: int) -> str | None:
    """The text of the user message on stdin line `number`, or None for a blank line."""
    if not line.strip():
        return None
    where = f"stdin line {number}"
    try:
        value = json.loads(line)
    except UnicodeDecodeError as exc:  # a ValueError, but no JSONDecodeError
        raise BadInputLine(f"{where}: not UTF-8 (byte {exc.start + 1})") from None
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
    longer line is a `BadInputLine` from `next`, and the end of reading.

    The thread reads the file descriptor itself (`os.read`), not `sys.stdin.buffer`: a
    daemon thread blocked inside a buffered reader holds its lock, and the interpreter
    aborts when it finds that lock taken at exit (a signal while stdin is still open)."""

    def __init__(self, fd: int | None = None) -> None:
        self._fd = sys.stdin.fileno() if fd is None else fd
        self._loop = asyncio.get_running_loop()
        self._lines: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.number = 0  # the number of the last line returned
        threading.Thread(target=self._pump, name="paicli-stdin", daemon=True).start()

    def _put(self, line: bytes | None) -> None:
        try:
            self._loop.call_soon_threadsafe(self._lines.put_nowait, line)
        except RuntimeError:
            pass  # the loop is gone: nobody reads any more

    def _pump(self) -> None:
        pending = bytearray()
        while (chunk := self._read()) and self._split(pending, chunk):
            pass
        if pending and len(pending) <= LINE_LIMIT:
            self._put(bytes(pending))  # a last line without its newline
        self._put(None)

    def _read(self) -> bytes:
        try:
            return os.read(self._fd, CHUNK)
        except OSError:
            return b""  # stdin closed under the thread: the end of input

    def _split(self, pending: bytearray, chunk: bytes) -> bool:
        """Each whole line of `pending` + `chunk` handed over; False once one is too long
        (`next` says so, and reading stops there)."""
        searched = len(pending)
        pending += chunk
        start = 0
        while (end := pending.find(b"\n", max(start, searched))) >= 0:
            line = bytes(pending[start : end + 1])
            self._put(line)
            start = end + 1
            if len(line) > LINE_LIMIT:
                pending.clear()
                return False
        del pending[:start]
        if len(pending) > LINE_LIMIT:
            self._put(bytes(pending))
            pending.clear()
            return False
        return True

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
