"""Message tracing: every message of a session, and what its transport saw, as JSON lines.

A `TraceRecorder` is an instrument (`ClientSession(..., instruments=[recorder])`, or for
every session `paicli.mcp.instrument(recorder)`), or wraps one transport
(`recorder(transport, "name")`). Each line is one record:

    {"t": 1764750000.123456, "server": "fs", "conn": "5f3a9c.1", "dir": "out", "era": "legacy",
     "size": 87, "msg": {...}}

`dir` is `out` (sent), `in` (received), `stderr` (`text`), `http` (`method`, `url`,
`status`, `headers`: the ones that explain an exchange) or `event` (`event`: `open`,
`negotiated`, `cancel`, `closed`, with details). `conn` numbers the connections the recorder
saw (`RUN.N`, RUN random per recorder), so a restarted server's ids, or another process's
appending to the same file, do not mix with these; `size` is the message as compact JSON,
before redaction. Records are encoded after a sent message has left (while the server works
on it) or by a timer, and written with one `write` every 100 ms (or 64 KiB), so tracing
costs little per message; `flush()` and `close()` write the rest. The file is created 0600.
Nothing is redacted unless `redact` is given: it receives each message, stderr line and
header value and returns what may be written.
"""

from __future__ import annotations

import asyncio
import os
import stat
import time
from collections.abc import Callable, Collection, Mapping
from itertools import count
from typing import Any

import orjson

from ._transport import (
    Era,
    JsonObject,
    RequestId,
    Transport,
    TransportWatcher,
    TransportWrapper,
    Watchable,
    process_of,
)
from .errors import ConnectionClosed

__all__ = ["TraceRecorder"]

# A trace is read after the fact; a tenth of a second late costs nothing, while a write per
# message would cost a system call each.
FLUSH_DELAY = 0.1
FLUSH_SIZE = 64 * 1024
# Messages held unencoded at most (a burst is encoded in pieces, memory stays bounded).
RAW_LIMIT = 1024
# Response headers that explain an exchange. The session id is a bearer of the session, so
# only its hash is written.
HTTP_HEADERS = ("content-type", "mcp-protocol-version", "retry-after", "www-authenticate")
SESSION_HEADER = "mcp-session-id"

Redact = Callable[[Any], Any]


def hashed(value: str) -> str:
    """A short stable digest of `value`, to tell sessions apart without revealing them."""
    import hashlib  # noqa: PLC0415 - OpenSSL loads only when an HTTP session is traced

    return "sha256:" + hashlib.sha256(value.encode("utf-8", "replace")).hexdigest()[:16]


class TraceRecorder:
    """Writes the traffic of the sessions it wraps to one JSON-lines file.

    `target` is a path (appended to, created 0600) or an open file descriptor; `servers`
    limits recording to sessions of those names (default: all). Use it from one event loop.
    """

    def __init__(
        self,
        target: str | os.PathLike[str] | int,
        *,
        redact: Redact | None = None,
        servers: Collection[str] | None = None,
    ) -> None:
        if isinstance(target, int):
            self._fd, self._owns_fd = target, False
        else:
            flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
            self._fd, self._owns_fd = os.open(target, flags, 0o600), True
            # An existing file keeps its mode on open; a trace is private whatever it was.
            if stat.S_ISREG(os.fstat(self._fd).st_mode):
                os.fchmod(self._fd, 0o600)
        self._redact = redact
        self._servers = frozenset(servers) if servers is not None else None
        self._run = os.urandom(3).hex()
        self._connections = count(1)
        # Messages and records not yet encoded (see `_later`), then lines not yet written.
        self._raw: list[tuple[Any, Any, Any]] = []
        self._pending: list[bytes] = []
        self._pending_size = 0
        self._flush_timer: asyncio.TimerHandle | None = None
        self._closed = False
        #: Writes that failed (the disk filled up, the file was a closed pipe).
        self.failures = 0

    def __call__(self, transport: Transport, server: str) -> Transport:
        """The instrument: `transport` wrapped to record its traffic (or unchanged when the
        recorder is limited to other servers, or closed)."""
        if self._closed or (self._servers is not None and server not in self._servers):
            return transport
        conn = f"{self._run}.{next(self._connections)}"
        return TracingTransport(transport, self, server, conn)

    # -- records -----------------------------------------------------------------------------

    def message(self, prefix: bytes, message: JsonObject) -> None:
        """A message record (the hot path: one per message). `prefix` is the record's
        fields after `t` and before `size`, as JSON text (`,"server":...,`)."""
        self._later((time.time(), prefix, message))

    def record(self, head: dict[str, Any], **fields: Any) -> None:
        """A record that is not a message; its string fields pass `redact`."""
        self._later((None, head, fields))

    def _later(self, item: tuple[Any, Any, Any]) -> None:
        # Encoding and redaction wait: `catch_up` runs them once a sent message is on its
        # way (so the work overlaps the server's), the flush timer for the rest.
        if self._closed:
            return
        self._raw.append(item)
        if len(self._raw) >= RAW_LIMIT:
            self._format()
        self._arm()

    def catch_up(self) -> None:
        """Encode what is waiting (called after a message left: the server is busy)."""
        if self._raw:
            self._format()

    def _format(self) -> None:
        raw, self._raw = self._raw, []
        redact = self._redact
        for t, head, body in raw:
            if t is None:  # a record that is not a message
                fields = body if redact is None else {k: redact(v) for k, v in body.items()}
                self._add(orjson.dumps({**head, **fields}, default=repr) + b"\n")
                continue
            encoded = orjson.dumps(body, default=repr)
            size = len(encoded)
            if redact is not None:
                clean = redact(body)
                if clean is not body:
                    encoded = orjson.dumps(clean, default=repr)
            self._add(b'{"t":%.6f%s"size":%d,"msg":%s}\n' % (t, head, size, encoded))

    def _add(self, line: bytes) -> None:
        self._pending.append(line)
        self._pending_size += len(line)
        if self._pending_size >= FLUSH_SIZE:
            self.flush()

    def _arm(self) -> None:
        if self._flush_timer is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                self.flush()
                return
            self._flush_timer = loop.call_later(FLUSH_DELAY, self.flush)

    def flush(self) -> None:
        """Write what is buffered (one `write` call, so concurrent writers of one file
        interleave whole records)."""
        if self._raw:
            self._format()
        if self._flush_timer is not None:
            self._flush_timer.cancel()
            self._flush_timer = None
        if not self._pending:
            return
        data = b"".join(self._pending)
        self._pending.clear()
        self._pending_size = 0
        try:
            while data:
                data = data[os.write(self._fd, data) :]
        except OSError:
            self.failures += 1

    def close(self) -> None:
        """Write what is buffered and close the file; later traffic is not recorded."""
        if self._closed:
            return
        self.flush()
        self._closed = True
        if self._owns_fd:
            os.close(self._fd)


class TracingTransport(TransportWrapper):
    """Records everything that passes through to its recorder (see `TraceRecorder`)."""

    def __init__(self, inner: Transport, recorder: TraceRecorder, server: str, conn: str) -> None:
        super().__init__(inner)
        self._recorder = recorder
        self._server = server
        self._conn = conn
        self._era: Era | None = None
        self._prefixes = self._message_prefixes()
        self._outer: TransportWatcher | None = None
        self._ended = False
        if isinstance(inner, Watchable):
            inner.watch(self)
        process = process_of(inner)
        self._event("open", pid=process.pid if process is not None else None)

    def _head(self, direction: str) -> dict[str, Any]:
        return {
            "t": round(time.time(), 6),
            "server": self._server,
            "conn": self._conn,
            "dir": direction,
            "era": self._era,
        }

    def _message_prefixes(self) -> dict[str, bytes]:
        """The constant part of this connection's message records, per direction."""
        return {
            direction: b"," + orjson.dumps(self._head(direction))[:-1].split(b",", 1)[1] + b","
            for direction in ("out", "in")
        }

    def _event(self, event: str, **details: Any) -> None:
        self._recorder.record(self._head("event"), event=event, **details)

    async def send(self, message: JsonObject) -> None:
        self._recorder.message(self._prefixes["out"], message)
        await self.inner.send(message)
        self._recorder.catch_up()

    def observe_incoming(self, message: JsonObject) -> None:
        self._recorder.message(self._prefixes["in"], message)

    async def receive(self) -> JsonObject:
        try:
            return await super().receive()
        except ConnectionClosed as exc:
            self._end(str(exc), exc.exit_code)
            raise

    def negotiated(self, era: Era, version: str) -> None:
        self._era = era
        self._prefixes = self._message_prefixes()
        self._event("negotiated", version=version)
        super().negotiated(era, version)

    def cancel_request(self, request_id: RequestId) -> bool:
        done = super().cancel_request(request_id)
        if done:  # cancelled without a message (2026 HTTP: the stream was closed)
            self._event("cancel", id=request_id)
        return done

    async def aclose(self) -> None:
        try:
            await self.inner.aclose()
        finally:
            self._end("closed by the client", None)

    def _end(self, reason: str, exit_code: int | None) -> None:
        if not self._ended:
            self._ended = True
            self._event("closed", reason=reason, exit_code=exit_code)
            self._recorder.flush()

    # -- TransportWatcher --------------------------------------------------------------------

    def watch(self, watcher: TransportWatcher | None) -> None:
        self._outer = watcher  # ours stays on the inner transport; we pass everything on

    def stderr_line(self, text: str) -> None:
        self._recorder.record(self._head("stderr"), text=text)
        if self._outer is not None:
            self._outer.stderr_line(text)

    def http_response(self, method: str, url: str, status: int, headers: Mapping[str, str]) -> None:
        kept = {k: v for k in HTTP_HEADERS if (v := headers.get(k)) is not None}
        if (session := headers.get(SESSION_HEADER)) is not None:
            kept[SESSION_HEADER] = hashed(session)
        self._recorder.record(
            self._head("http"), method=method, url=url, status=status, headers=kept
        )
        if self._outer is not None:
            self._outer.http_response(method, url, status, headers)
