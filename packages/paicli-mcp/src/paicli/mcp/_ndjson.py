"""Newline-delimited JSON framing: bytes in, JSON-RPC message objects out.

Memory stays bounded by `max_size`: a line (or a stream with no newline) that grows past it
raises `MessageTooLarge` and the partial line is dropped. Every line, whatever its size, is
parsed the one way `_jsonrpc.parse` does (orjson, one set of limits); a line it refuses
(banners, logs, nesting too deep, a number out of range, a batch where none is allowed) is
skipped with a warning, and so is a JSON object without a `"jsonrpc"` member (a structured
log line); the other lines of the same read are still delivered. While it is parsed, a
large message costs about three times its size (the line, orjson's copy of it, the parsed
objects).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import orjson

from ._jsonrpc import parse
from .errors import MessageTooLarge

__all__ = ["NdjsonDecoder", "encode"]

log = logging.getLogger("paicli.mcp.stdio")

# Some servers (Windows tooling, .NET) start their output with a UTF-8 byte-order mark.
BOM = b"\xef\xbb\xbf"


def encode(message: dict[str, Any]) -> bytes:
    """One message as compact UTF-8 JSON (JSON escapes keep newlines out of the line)."""
    return orjson.dumps(message)


class NdjsonDecoder:
    """Splits a byte stream into lines and hands each JSON object to `deliver`."""

    def __init__(
        self,
        max_size: int,
        deliver: Callable[[dict[str, Any]], None],
        *,
        label: str = "server",
        skipped: Callable[[str], None] | None = None,
    ) -> None:
        self.max_size = max_size
        #: Told why each skipped line was skipped (default: a logged warning per line).
        self.skipped = skipped
        #: Whether an array is a batch of messages (only once 2025-03-26 is agreed).
        self.batches = False
        self._deliver = deliver
        self._where = f"{label}: stdout"
        self._partial = bytearray()

    def feed(self, data: bytes) -> None:
        """Consume a chunk; raises `MessageTooLarge` once a line passes the limit."""
        start = 0
        while (end := data.find(b"\n", start)) >= 0:
            if self._partial:
                # The end of a line that spans reads: complete it in place, then parse it.
                self._partial += data[start:end]
                start = end + 1
                self._check(len(self._partial))
                self._parse_partial()
                continue
            line = data[start:end]
            start = end + 1
            self._check(len(line))
            self._parse(line)
        if start < len(data):
            # Growing one bytearray (realloc, mremap for large sizes) keeps a long message
            # at about its own size in memory, where a list of chunks plus a join needs two.
            self._partial += data[start:] if start else data
            self._check(len(self._partial))

    def finish(self) -> None:
        """The stream ended: a last message without its newline still counts (a server
        that writes its final answer and exits without flushing a newline)."""
        if self._partial.strip():
            self._parse_partial()
        else:
            self._partial = bytearray()

    def _check(self, size: int) -> None:
        if size > self.max_size:
            self._partial = bytearray()
            raise MessageTooLarge(
                f"server sent a message over the {self.max_size} byte limit (at least {size} bytes)"
            )

    def _parse_partial(self) -> None:
        line, self._partial = self._partial, bytearray()
        self._parse(line)

    def _parse(self, line: bytes | bytearray) -> None:
        # JSON whitespace includes "\r", so CRLF framing parses as is.
        if line.startswith(BOM):
            # A view skips the mark without copying what may be a large line.
            with memoryview(line) as view, view[len(BOM) :] as text:
                messages = parse(
                    text, batches=self.batches, where=self._where, skipped=self.skipped
                )
        else:
            messages = parse(line, batches=self.batches, where=self._where, skipped=self.skipped)
        for message in messages:
            if "jsonrpc" in message:
                self._deliver(message)
            else:
                # Structured loggers (pino, bunyan, structlog) write JSON objects to stdout.
                # Every JSON-RPC message names its version, so an object that does not is
                # such a line, and is counted with the rest of the noise, not dropped later
                # by the session with a warning of its own.
                head = repr(bytes(line[:200]))
                self._skip(f"{self._where}: skipping a JSON object that is not JSON-RPC: {head}")

    def _skip(self, why: str) -> None:
        if self.skipped is not None:
            self.skipped(why)
        else:
            log.warning("%s", why)
