"""Reading a message trace (`paicli --trace`, `"trace": true`): records, request/response
pairs, and what a replay answers.

A trace may come from someone else (a bug report), so it is read as hostile: through
`paicli.config_files` (a regular file only, opened without blocking, at most
`MAX_TRACE_BYTES`), each line with a size cap; a line that is not a well-formed record is
counted and skipped, and nothing in it is trusted beyond its JSON types. The records' shape
is the library's (`paicli.mcp.TraceRecorder`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import orjson

from paicli.config_files import ConfigFileError, open_regular
from paicli.errors import PaicliError

__all__ = [
    "MAX_TRACE_BYTES",
    "Exchange",
    "Record",
    "Trace",
    "TraceError",
    "label_of",
    "pair",
    "read_trace",
]

# The library reads messages up to 64 MiB; a record adds its head to that.
MAX_LINE = 65 * 1024 * 1024
# Every record is held in memory (several times its size once parsed): far above a session
# worth reading, far below what would exhaust the machine.
MAX_TRACE_BYTES = 256 * 1024 * 1024
DIRECTIONS = frozenset({"out", "in", "stderr", "http", "event"})

Outcome = Literal["ok", "error", "timeout", "cancelled", "unanswered"]


class TraceError(PaicliError):
    """The trace file cannot be read at all (one line, naming the file)."""


@dataclass(frozen=True, slots=True)
class Record:
    """One line of a trace."""

    t: float
    server: str
    conn: str
    dir: str
    era: str | None
    fields: dict[str, Any]

    @property
    def message(self) -> dict[str, Any] | None:
        msg = self.fields.get("msg")
        return msg if isinstance(msg, dict) else None


@dataclass(slots=True)
class Trace:
    records: list[Record] = field(default_factory=list)
    skipped: int = 0  # lines that were not records

    @property
    def servers(self) -> list[str]:
        return list(dict.fromkeys(r.server for r in self.records))


def read_trace(path: Path, *, server: str | None = None) -> Trace:
    """The records of the trace at `path` (of `server` only, if given), in file order."""
    trace = Trace()
    try:
        file = open_regular(path, str(path), max_bytes=MAX_TRACE_BYTES)
        if file is None:
            raise TraceError(f"{path}: cannot read: no such file")
        with file:
            for line in _lines(file):
                record = _record(line)
                if record is None:
                    trace.skipped += 1
                elif server is None or record.server == server:
                    trace.records.append(record)
    except ConfigFileError as exc:
        raise TraceError(str(exc)) from exc
    return trace


def _lines(file: Any) -> Iterator[bytes]:
    while line := file.readline(MAX_LINE):
        if not line.endswith(b"\n") and len(line) == MAX_LINE:
            while (rest := file.readline(MAX_LINE)) and not rest.endswith(b"\n"):
                pass  # an overlong line is dropped whole, never held whole
            yield b""
            continue
        yield line


def _record(line: bytes) -> Record | None:
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(value, dict):
        return None
    t, server, conn, direction = (value.get(k) for k in ("t", "server", "conn", "dir"))
    era = value.get("era")
    if (
        not isinstance(t, int | float)
        or isinstance(t, bool)
        or not math.isfinite(t)
        or not isinstance(server, str)
        or not isinstance(conn, str | int)
        or isinstance(conn, bool)
        or direction not in DIRECTIONS
        or not (era is None or isinstance(era, str))
    ):
        return None
    keep = {k: v for k, v in value.items() if k not in ("t", "server", "conn", "dir", "era")}
    return Record(float(t), server, str(conn), str(direction), era, keep)


def label_of(message: dict[str, Any]) -> str:
    """`method` and, for a call, its target: `tools/call echo`, `resources/read file:///x`
    (the span name the OpenTelemetry conventions give an MCP request)."""
    method = str(message.get("method"))
    params = message.get("params")
    if isinstance(params, dict):
        for key in ("name", "uri"):
            target = params.get(key)
            if isinstance(target, str) and method in TARGETED:
                return f"{method} {target}"
    return method


TARGETED = frozenset({"tools/call", "prompts/get", "resources/read", "resources/subscribe"})


@dataclass(slots=True)
class Exchange:
    """A request and what became of it."""

    server: str
    conn: str
    id: object
    label: str
    sent: Record  # the request
    reply: Record | None = None  # its response
    cancelled: Record | None = None  # a cancellation (a notification, or the transport's own)
    outcome: Outcome = "unanswered"
    error: str | None = None
    from_server: bool = False  # the server asked (sampling, roots, elicitation, ping)

    @property
    def latency(self) -> float | None:
        end = self.reply or self.cancelled
        return None if end is None else max(0.0, end.t - self.sent.t)


def pair(records: Iterable[Record]) -> tuple[list[Exchange], dict[int, Exchange]]:
    """Every request in order of sending, each with its response or cancellation; and, by
    position in `records`, the exchange a record ended (its response or cancellation)."""
    pairing = _Pairing()
    for index, record in enumerate(records):
        pairing.add(index, record)
    return pairing.done, pairing.ended


def _id_key(value: object) -> str:
    # 1 and "1" are different ids; the key keeps the type.
    return f"{type(value).__name__}:{value}"


class _Pairing:
    def __init__(self) -> None:
        # (server, connection, who asked, id) -> the request waiting for its end
        self.pending: dict[tuple[str, str, str, str], Exchange] = {}
        self.done: list[Exchange] = []
        self.ended: dict[int, Exchange] = {}

    def add(self, index: int, record: Record) -> None:
        message = record.message
        if message is None:
            if record.dir == "event" and record.fields.get("event") == "cancel":
                self._end(index, record, "out", record.fields.get("id"), "cancelled")
            return
        side = record.dir
        if "method" in message and "id" in message:
            exchange = Exchange(
                record.server,
                record.conn,
                message["id"],
                label_of(message),
                record,
                from_server=side == "in",
            )
            self.pending[record.server, record.conn, side, _id_key(message["id"])] = exchange
            self.done.append(exchange)
        elif message.get("method") == "notifications/cancelled" and side == "out":
            params = message.get("params")
            params = params if isinstance(params, dict) else {}
            outcome: Outcome = "timeout" if params.get("reason") == "timeout" else "cancelled"
            self._end(index, record, "out", params.get("requestId"), outcome)
        elif "id" in message and "method" not in message:
            exchange_or_none = self._end(
                index, record, "out" if side == "in" else "in", message["id"], "ok"
            )
            if exchange_or_none is not None:
                exchange_or_none.reply, exchange_or_none.cancelled = record, None
                exchange_or_none.outcome, exchange_or_none.error = _outcome(message)

    def _end(
        self, index: int, record: Record, asked_by: str, request_id: object, outcome: Outcome
    ) -> Exchange | None:
        key = (record.server, record.conn, asked_by, _id_key(request_id))
        exchange = self.pending.pop(key, None)
        if exchange is not None:
            exchange.cancelled, exchange.outcome = record, outcome
            self.ended[index] = exchange
        return exchange


def _outcome(message: dict[str, Any]) -> tuple[Outcome, str | None]:
    error = message.get("error")
    if error is not None:
        text = error.get("message") if isinstance(error, dict) else error
        code = error.get("code") if isinstance(error, dict) else None
        return "error", f"{code}: {text}" if code is not None else str(text)
    result = message.get("result")
    if isinstance(result, dict) and result.get("isError") is True:
        return "error", _first_text(result) or "the tool reported an error"
    return "ok", None


def _first_text(result: dict[str, Any]) -> str | None:
    content = result.get("content")
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                return str(block["text"])
    return None
