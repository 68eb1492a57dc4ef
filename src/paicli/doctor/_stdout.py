"""What a server wrote on stdout, seen byte for byte through the stdio transport's tap.

The transport skips what is not JSON-RPC (with a log line) and waits for a newline that may
never come; to say *why* a handshake got no answer, the doctor looks at the same bytes
itself: complete lines that are not JSON, lines that are not UTF-8, JSON that is not a
JSON-RPC message, the ids of the answers, and a last line still waiting for its newline.
Memory stays bounded: a line longer than `MAX_LINE` is counted, not kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import orjson

from paicli.doctor.findings import excerpt

__all__ = ["StdoutWatch"]

# A line longer than this is not parsed again here (the transport has its own, larger cap);
# the handshake answer of a server with many tools stays well under it.
MAX_LINE = 8 * 1024 * 1024
# Kept of each kind of odd line: the first few show the pattern.
SAMPLES = 3
# Answer ids kept: enough to show a pattern of wrong ids.
MAX_IDS = 20
BOM = b"\xef\xbb\xbf"
# Lines of pretty-printed JSON: lone brackets, or `"key": value` members.
JSON_PUNCTUATION = frozenset(("{", "}", "},", "[", "]", "],"))
JSON_MEMBER = re.compile(r'"[^"\\]*"\s*:')


@dataclass
class StdoutWatch:
    """Counts and samples of what arrived on stdout; `feed` is the transport's tap."""

    total_bytes: int = 0
    lines: int = 0
    messages: int = 0
    not_json: list[str] = field(default_factory=list)
    not_json_count: int = 0
    bad_utf8: list[str] = field(default_factory=list)
    bad_utf8_count: int = 0
    not_rpc: list[str] = field(default_factory=list)
    not_rpc_count: int = 0
    answer_ids: list[object] = field(default_factory=list)
    #: Bytes that arrived after the server was told to stop (its stdin closed): output that
    #: sat in a buffer until the process exited.
    late_bytes: int = 0
    #: Non-JSON lines that are LSP-style `Content-Length:` headers, and pieces of JSON
    #: spread over several lines (pretty-printed): each has its own fix.
    content_length: int = 0
    fragments: int = 0
    #: Lines shaped like a JSON object that do not parse.
    broken_json: int = 0
    broken: list[str] = field(default_factory=list)
    closed: bool = False
    _partial: bytearray = field(default_factory=bytearray)
    _partial_size: int = 0

    def feed(self, data: bytes) -> None:
        if self.closed:
            self.late_bytes += len(data)
            return
        self.total_bytes += len(data)
        start = 0
        while (end := data.find(b"\n", start)) >= 0:
            self._take(data[start:end])
            start = end + 1
        self._keep(data[start:])

    def close(self) -> None:
        """The server is being stopped: what it writes from now on is only counted."""
        self.closed = True

    @property
    def pending(self) -> int:
        """Bytes of a last line still without its newline."""
        return self._partial_size

    def pending_excerpt(self) -> str:
        return excerpt(self._partial[:1024].decode("utf-8", "backslashreplace"))

    def _keep(self, piece: bytes) -> None:
        self._partial_size += len(piece)
        if len(self._partial) + len(piece) <= MAX_LINE:
            self._partial += piece

    def _take(self, piece: bytes) -> None:
        """`piece` ends the current line: look at the whole line."""
        size = self._partial_size + len(piece)
        line = bytes(self._partial) + piece if self._partial else piece
        self._partial.clear()
        self._partial_size = 0
        self.lines += 1
        if size > MAX_LINE:
            return
        self._look_at(line.rstrip(b"\r"))

    def _look_at(self, line: bytes) -> None:
        if line.startswith(BOM):
            line = line[len(BOM) :]
        if not line.strip():
            return
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            self.bad_utf8_count += 1
            if len(self.bad_utf8) < SAMPLES:
                around = line[max(exc.start - 60, 0) : exc.start + 20]
                shown = around.decode("utf-8", "backslashreplace")
                self.bad_utf8.append(f"byte {exc.start}: {excerpt(shown)!r}")
            return
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError:
            self._not_json(text)
            return
        # A batch (protocol 2025-03-26) is a list of messages.
        batch = value if isinstance(value, list) and value else [value]
        for message in batch:
            if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
                self.not_rpc_count += 1
                if len(self.not_rpc) < SAMPLES:
                    self.not_rpc.append(excerpt(text))
                return
        for message in batch:
            self.messages += 1
            is_answer = "method" not in message and ("result" in message or "error" in message)
            if is_answer and len(self.answer_ids) < MAX_IDS:
                self.answer_ids.append(message.get("id"))

    def _not_json(self, text: str) -> None:
        """Sort a line that is not JSON: a broken message, or other text (logs, LSP
        headers, pieces of pretty-printed JSON), sampled in `not_json`."""
        stripped = text.strip()
        if len(stripped) > 2 and stripped[0] == "{" and stripped[-1] == "}":
            # Meant as a message, but broken: an unescaped backslash (a Windows path), a
            # quote or control character inside a string, a trailing comma.
            self.broken_json += 1
            if len(self.broken) < SAMPLES:
                self.broken.append(excerpt(text))
            return
        self.not_json_count += 1
        if stripped.lower().startswith("content-length:"):
            self.content_length += 1
        elif stripped in JSON_PUNCTUATION or JSON_MEMBER.match(stripped):
            self.fragments += 1
        if len(self.not_json) < SAMPLES:
            self.not_json.append(excerpt(text))
