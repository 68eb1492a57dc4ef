"""Newline-delimited JSON framing: bytes in, JSON-RPC message objects out.

Memory stays bounded by `max_size`: a line (or a stream with no newline) that grows past it
raises `MessageTooLarge` and the partial line is dropped. Lines that are not JSON objects
(banners, logs) are logged and skipped.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

import orjson

from .errors import MessageTooLarge

__all__ = ["NdjsonDecoder", "encode"]

log = logging.getLogger("paicli.mcp.stdio")

# From this size on a message is parsed the memory-lean way (see _parse_large).
LARGE_MESSAGE = 1024 * 1024
# Some servers (Windows tooling, .NET) start their output with a UTF-8 byte-order mark.
BOM = b"\xef\xbb\xbf"


def encode(message: dict[str, Any]) -> bytes:
    """One message as compact UTF-8 JSON (JSON escapes keep newlines out of the line)."""
    return orjson.dumps(message)


class NdjsonDecoder:
    """Splits a byte stream into lines and hands each JSON object to `deliver`."""

    def __init__(self, max_size: int, deliver: Callable[[dict[str, Any]], None]) -> None:
        self.max_size = max_size
        self._deliver = deliver
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
        if len(line) < LARGE_MESSAGE:
            self._parse(line)
            return
        # orjson copies its whole input while parsing, so a large message would peak at three
        # times its size. Decoding first lets us free the bytes before parsing: two times.
        try:
            text = line.decode().removeprefix("\ufeff")
        except UnicodeDecodeError:
            _skip(line)
            return
        del line
        try:
            message = json.loads(text)
        except json.JSONDecodeError:
            _skip(text[:200].encode())
            return
        self._route(message, text)

    def _parse(self, line: bytes | bytearray) -> None:
        if line.startswith(BOM):
            line = line[len(BOM) :]
        try:
            # JSON whitespace includes "\r", so CRLF framing parses as is.
            message = orjson.loads(line)
        except orjson.JSONDecodeError:
            _skip(line)
            return
        self._route(message, line)

    def _route(self, message: Any, line: bytes | bytearray | str) -> None:
        if isinstance(message, dict):
            self._deliver(message)
        elif isinstance(message, list):
            # A JSON-RPC batch (2025-03-26 only): deliver its members one by one.
            for member in message:
                if isinstance(member, dict):
                    self._deliver(member)
        else:
            log.warning("skipping non-object JSON on server stdout: %.200r", line[:200])


def _skip(line: bytes | bytearray) -> None:
    if line.isspace() or not line:
        return
    # Banners and log lines on stdout break the spec but are common; skip them.
    log.warning("skipping non-JSON line on server stdout: %.200r", bytes(line[:200]))
