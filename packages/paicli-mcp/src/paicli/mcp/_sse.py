"""Server-sent events: an incremental parser for `text/event-stream` bodies.

Follows the HTML event-stream rules that MCP relies on: `event`, `data` (multi-line, joined
with "\\n"), `id` and `retry` fields, comment lines starting with ":", any of CRLF, LF or
CR as line ends. Memory is bounded: an event larger than `max_size` raises
`MessageTooLarge`.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass

from .errors import MessageTooLarge

__all__ = ["SseEvent", "iter_events"]


@dataclass
class SseEvent:
    event: str
    data: str
    id: str | None
    retry_ms: int | None


async def iter_events(chunks: AsyncIterable[bytes], max_size: int) -> AsyncIterator[SseEvent]:
    """Yield the events of an SSE body. Events with an empty `data` are yielded too
    (priming events carry only an id and a retry)."""
    # A bytearray grows in place and drops consumed lines from the front cheaply; `scan`
    # remembers how far we already looked for a line end, so a long line costs O(n).
    buffer = bytearray()
    scan = 0
    event, size = "", 0
    data: list[str] = []
    event_id: str | None = None
    retry: int | None = None
    seen_field = False
    async for chunk in chunks:
        buffer += chunk
        while True:
            line, ending = _split_line(buffer, scan)
            if ending < 0:
                scan = max(0, len(buffer) - 1)
                break
            del buffer[:ending]
            scan = 0
            if not line:
                if seen_field:
                    yield SseEvent(event or "message", "\n".join(data), event_id, retry)
                event, size, retry, seen_field = "", 0, None, False
                data = []
                continue
            if line.startswith(b":"):
                continue
            name, _, value = line.partition(b":")
            if value.startswith(b" "):
                value = value[1:]
            text = value.decode("utf-8", "replace")
            seen_field = True
            if name == b"data":
                size += len(value) + 1
                if size > max_size:
                    raise MessageTooLarge(f"server sent an event over the {max_size} byte limit")
                data.append(text)
            elif name == b"event":
                event = text
            elif name == b"id":
                if "\0" not in text:
                    event_id = text
            elif name == b"retry" and text.isdigit():
                retry = int(text)
        if len(buffer) > max_size:
            raise MessageTooLarge(f"server sent an event line over the {max_size} byte limit")


def _split_line(buffer: bytearray, start: int) -> tuple[bytes, int]:
    """The first complete line and the index just past its ending, or (b"", -1).
    No line end occurs before `start`."""
    cr = buffer.find(b"\r", start)
    lf = buffer.find(b"\n", start)
    if cr < 0 and lf < 0:
        return b"", -1
    if cr < 0 or (0 <= lf < cr):
        return bytes(buffer[:lf]), lf + 1
    # A CR at the very end may be the first half of a CRLF still in flight.
    if cr == len(buffer) - 1:
        return b"", -1
    return bytes(buffer[:cr]), cr + (2 if buffer[cr + 1 : cr + 2] == b"\n" else 1)
