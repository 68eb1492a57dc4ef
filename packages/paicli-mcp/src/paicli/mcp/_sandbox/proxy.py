"""The network allow-list: a small HTTP proxy (plain requests and CONNECT tunnels) through
which a sandboxed process reaches the listed hosts and nothing else.

It listens on a Unix socket (bound into a bubblewrap sandbox, where `forward` serves it as
127.0.0.1:3128) or on 127.0.0.1 (Seatbelt). A host not on the list is answered 403 with
one line naming it. A listed name that resolves to an address of this machine or of a
private network (loopback, private, link-local such as a cloud metadata service) is refused
too, unless the entry is that address itself: a listed name must not lead back in. Plain
HTTP is one request per connection (`Connection: close`); a tunnel carries whatever the
client speaks (TLS) until either side closes.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import re
import socket
from collections import deque
from collections.abc import Mapping, Sequence
from urllib.parse import urlsplit

__all__ = ["FilteringProxy", "HostRules"]

# Real clients send request heads of a few KiB; a longer one is refused, so the proxy holds
# little per connection.
HEAD_LIMIT = 16 * 1024
# A client that has not sent its request head after this long is stuck or hostile.
HEAD_TIMEOUT = 10.0
# Reaching an allowed host: DNS and a TCP handshake take well under this on any network.
CONNECT_TIMEOUT = 10.0
# A sandboxed process may not hold more of paicli's descriptors than this (two each).
MAX_CONNECTIONS = 64
READ_CHUNK = 64 * 1024
# Closing: tunnels are cut at once; this bounds waiting for their tasks to finish.
CLOSE_GRACE = 1.0
_HOST = re.compile(r"[a-z0-9_.-]+|\[[0-9a-f:.]+\]")


class Refused(Exception):
    """The proxy will not forward this request: (status, one line for the client)."""

    def __init__(self, status: int, reason: str, line: str) -> None:
        super().__init__(line)
        self.status, self.reason, self.line = status, reason, line


class HostRules:
    """Allow-list entries (`example.com`, `*.example.com`, an address, each optionally with
    `:port`, as `profile.check_host` normalises them)."""

    def __init__(self, entries: Sequence[str]) -> None:
        self._rules: list[tuple[str, int | None]] = []
        for entry in entries:
            host, port = _split(entry, None)
            self._rules.append((host, port))

    def allows(self, host: str, port: int) -> bool:
        for pattern, only in self._rules:
            if only is not None and only != port:
                continue
            if pattern == host or (pattern.startswith("*.") and host.endswith(pattern[1:])):
                return True
        return False


def _split(target: str, default: int | None) -> tuple[str, int | None]:
    """`host:port` (or `[v6]:port`) into a bare lower-case host and the port."""
    host, port = target.strip().lower(), ""
    if host.startswith("["):
        host, _, rest = host[1:].partition("]")
        port = rest.removeprefix(":")
    elif host.count(":") == 1:
        host, port = host.split(":")
    host = host.rstrip(".")
    with contextlib.suppress(ValueError):
        host = str(ipaddress.ip_address(host))
    return host, int(port) if port.isdigit() else default


def _reply(status: int, reason: str, line: str) -> bytes:
    body = (line + "\n").encode()
    head = (
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode() + body


class FilteringProxy:
    """The proxy of one sandbox. `aliases` maps names to loopback addresses the proxy uses
    instead of DNS (a local server under a public-looking name, for tests)."""

    def __init__(self, hosts: Sequence[str], *, aliases: Mapping[str, str] | None = None) -> None:
        self.rules = HostRules(hosts)
        self._aliases = dict(aliases or {})
        for name, address in self._aliases.items():
            if not ipaddress.ip_address(address).is_loopback:
                raise ValueError(f"alias {name!r} must name a loopback address")
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        # The last refusals, one line each, for a caller that reports them.
        self.refused: deque[str] = deque(maxlen=20)

    async def start_unix(self, path: str) -> None:
        self._server = await asyncio.start_unix_server(self._serve, path, limit=HEAD_LIMIT)

    async def start_tcp(self) -> int:
        """Listen on 127.0.0.1; the port."""
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, limit=HEAD_LIMIT)
        port: int = self._server.sockets[0].getsockname()[1]
        return port

    def close(self) -> None:
        """Stop listening and cut every connection (then `wait_closed`)."""
        if self._server is not None:
            self._server.close()
        for task in self._tasks:
            task.cancel()

    async def wait_closed(self) -> None:
        """Wait (bounded) until the connections' tasks are done."""
        if self._tasks:
            await asyncio.wait(self._tasks, timeout=CLOSE_GRACE)
        if self._server is not None:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(CLOSE_GRACE):
                    await self._server.wait_closed()

    async def aclose(self) -> None:
        self.close()
        await self.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            if len(self._tasks) > MAX_CONNECTIONS:
                raise Refused(503, "Too Many Connections", "paicli sandbox: too many connections")
            await self._forward(reader, writer)
        except Refused as refusal:
            if refusal.status == 403:
                self.refused.append(refusal.line)
            with contextlib.suppress(OSError):
                writer.write(_reply(refusal.status, refusal.reason, refusal.line))
                await writer.drain()
        except (OSError, EOFError, asyncio.IncompleteReadError):
            pass  # the client went away
        except asyncio.CancelledError:
            # Only close() cancels these tasks; asyncio would log a connection's task that
            # ends cancelled as an error, so it ends quietly instead.
            pass
        finally:
            writer.close()
            self._tasks.discard(task)

    async def _forward(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            async with asyncio.timeout(HEAD_TIMEOUT):
                head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.LimitOverrunError:
            line = "paicli sandbox: request header too large"
            raise Refused(431, "Request Header Fields Too Large", line) from None
        except TimeoutError:
            return
        method, target, lines = _parse(head)
        if method == "CONNECT":
            host, port = _split(target, 443)
            path = None
        else:
            url = urlsplit(target)
            if url.scheme != "http" or not url.hostname:
                raise Refused(400, "Bad Request", "paicli sandbox: expected an http:// URL")
            host, port = _split(url.netloc.rpartition("@")[2], 80)
            path = (url.path or "/") + (f"?{url.query}" if url.query else "")
        if not _HOST.fullmatch(host) or port is None:
            raise Refused(400, "Bad Request", "paicli sandbox: not a host name")
        if not self.rules.allows(host, port):
            line = f"paicli sandbox: {host} is not on the network allow-list"
            raise Refused(403, f"Forbidden: {host} is not on the allow-list", line)
        address = await self._address(host, port)
        try:
            async with asyncio.timeout(CONNECT_TIMEOUT):
                up_reader, up_writer = await asyncio.open_connection(address, port)
        except (OSError, TimeoutError) as exc:
            line = f"paicli sandbox: cannot reach {host}:{port}: {exc.strerror or 'timed out'}"
            raise Refused(502, "Bad Gateway", line) from None
        try:
            if path is None:
                writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            else:
                up_writer.write(_origin_head(method, path, lines))
            await _splice(reader, writer, up_reader, up_writer)
        finally:
            up_writer.close()

    async def _address(self, host: str, port: int) -> str:
        """Where to connect for an allowed `host`: an alias, the address itself, or the
        first public address its name resolves to."""
        if host in self._aliases:
            return self._aliases[host]
        with contextlib.suppress(ValueError):
            return str(ipaddress.ip_address(host.strip("[]")))  # listed as an address
        loop = asyncio.get_running_loop()
        try:
            infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as exc:
            raise Refused(502, "Bad Gateway", f"paicli sandbox: cannot resolve {host}") from exc
        for info in infos:
            address = ipaddress.ip_address(info[4][0])
            if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
                address = address.ipv4_mapped
            if address.is_global:
                return str(address)
        line = f"paicli sandbox: {host} resolves to a local or private address, refused"
        raise Refused(403, "Forbidden: a local or private address", line)


def _parse(head: bytes) -> tuple[str, str, list[str]]:
    """Method, target and header lines of a request head."""
    text = head.decode("latin-1")
    request, *lines = text.split("\r\n")
    parts = request.split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise Refused(400, "Bad Request", "paicli sandbox: not an HTTP request")
    return parts[0].upper(), parts[1], [line for line in lines if line]


_HOP_HEADERS = ("proxy-connection", "proxy-authorization", "connection", "keep-alive")


def _origin_head(method: str, path: str, lines: list[str]) -> bytes:
    """The request as the server should see it: origin-form target, hop-by-hop and proxy
    headers dropped, one request per connection."""
    kept = [line for line in lines if line.split(":", 1)[0].strip().lower() not in _HOP_HEADERS]
    return "\r\n".join([f"{method} {path} HTTP/1.1", *kept, "Connection: close", "", ""]).encode(
        "latin-1"
    )


async def _splice(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    up_reader: asyncio.StreamReader,
    up_writer: asyncio.StreamWriter,
) -> None:
    async with asyncio.TaskGroup() as group:
        group.create_task(_pipe(reader, up_writer))
        group.create_task(_pipe(up_reader, writer))


async def _pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    """Copy until end of file, then pass the end on (a half-close)."""
    try:
        while data := await source.read(READ_CHUNK):
            sink.write(data)
            await sink.drain()
        if sink.can_write_eof():
            sink.write_eof()
    except OSError:
        sink.close()  # one side failed: the other learns it by its connection closing
