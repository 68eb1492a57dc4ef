"""The transport contract: move JSON-RPC messages between the session and one server.

A transport sends one message, receives one message (raising `ConnectionClosed` once the
peer is gone), and closes. It never builds requests, matches ids or runs handshakes: the
session does. Everything else the session may ask of a transport is declared here with a
default, so a new transport implements three methods and overrides only what it does
differently, and nothing is ever probed for with `getattr`.

`TransportWrapper` forwards every part of the contract to an inner transport; subclass it
to observe or alter traffic (tracing, metrics, fault injection). What is not a message (a
stdio server's stderr lines, HTTP responses) reaches a `TransportWatcher` given to `watch`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from .errors import McpError
    from .types import Tool

__all__ = [
    "Era",
    "ErrorSink",
    "JsonObject",
    "MessageSink",
    "RequestId",
    "Transport",
    "TransportWatcher",
    "TransportWrapper",
]

JsonObject = dict[str, Any]
# JSON-RPC ids: this client's requests use ints; a server's requests may use either.
RequestId = int | str
# The two protocol eras: the `initialize` handshake (up to 2025-11-25), and the stateless
# 2026-07-28 revision.
Era = Literal["legacy", "modern"]
MessageSink = Callable[[JsonObject], None]
ErrorSink = Callable[[RequestId, "McpError"], None]


class TransportWatcher(Protocol):
    """Told what a transport sees besides messages. Both calls run on the event loop, in the
    transport's own callbacks: they must be quick and must not raise."""

    def stderr_line(self, text: str) -> None:
        """One line the server wrote to stderr (stdio), as the transport keeps it."""

    def http_response(self, method: str, url: str, status: int, headers: Mapping[str, str]) -> None:
        """One HTTP exchange's response: its request method and URL, status and headers."""


class Transport(ABC):
    """What every transport (stdio, Streamable HTTP, legacy SSE, in-memory) implements.

    Required: `send`, `receive`, `aclose`. The rest has defaults that fit a plain message
    pipe; override what the transport does its own way.
    """

    #: What carries the messages, as status displays name it: "stdio", "http" (Streamable
    #: HTTP), "sse" (legacy HTTP+SSE), "memory", or a custom transport's own word.
    kind: str = "custom"
    #: Only the `initialize` handshake era can be spoken (the legacy HTTP+SSE transport):
    #: negotiation skips the 2026 discovery probe.
    legacy_only: bool = False
    #: How long the discovery probe waits for an answer before negotiation falls back to
    #: the handshake. Over HTTP a legacy server answers with a status at once, so only a
    #: hung server is silent; a pipe gives no such sign of a server that ignores the
    #: probe, so stdio waits briefly (a slow modern server is found by the handshake's
    #: -32022 and probed again).
    discovery_timeout: float = 10.0

    @abstractmethod
    async def send(self, message: JsonObject) -> None:
        """Deliver one JSON-RPC message to the peer; raise `ConnectionClosed` if it is gone.

        A send may carry a request's whole exchange and deliver its response before it
        returns (HTTP: the response is the POST's body). A send still running when the
        request's deadline passes is cancelled, so it must be cancellable at any await."""

    @abstractmethod
    async def receive(self) -> JsonObject:
        """Return the next message from the peer; raise `ConnectionClosed` at the end."""

    @abstractmethod
    async def aclose(self) -> None:
        """Close the transport and release its resources (bounded); safe to call twice."""

    def deliver_to(self, sink: MessageSink, on_error: ErrorSink) -> bool:
        """Offer push delivery: hand every incoming message to `sink` as it arrives, and a
        failure that concerns one request only (an HTTP status, a broken stream) to
        `on_error`. Return True if the transport took it; `receive()` then only raises
        `ConnectionClosed` at the end. The default (False) leaves the session calling
        `receive()` in a loop."""
        return False

    def cancel_request(self, request_id: RequestId) -> bool:
        """Cancel one in-flight request the transport's own way (a 2026 HTTP request is
        cancelled by closing its response stream). Return True if that was done, so the
        session sends nothing; the default (False) has the session send
        `notifications/cancelled`."""
        return False

    def negotiated(self, era: Era, version: str) -> None:
        """Called once the protocol is agreed, before any other message of the session
        (HTTP sends the agreed version as a header on every later request; stdio and HTTP
        read a JSON array as a batch only once 2025-03-26 is agreed)."""
        return None

    async def restart(self) -> bool:
        """Replace the peer with a fresh one (stdio: a new server process, the old one
        stopped), so a session can go on after a server stopped answering. Return True if
        that was done; the default (False) cannot, and the session goes on as it is."""
        return False

    def input_unread(self) -> bool:
        """Whether the peer has yet to read part of what was sent to it (stdio: bytes still
        in the server's stdin pipe); False when that cannot be known. Negotiation starts the
        discovery probe's clock only once the server has read the probe, so a server that
        is still starting is not taken for one that ignores the probe."""
        return False

    def tools_listed(self, tools: Sequence[Tool]) -> list[Tool]:
        """Called with each complete tool list; returns the tools usable over this
        transport (2026 HTTP drops tools whose `x-mcp-header` annotations are invalid)."""
        return list(tools)

    @property
    def pid(self) -> int | None:
        """The server's process id, for transports that run one; else None."""
        return None

    def stderr_lines(self) -> list[str]:
        """The server's last stderr lines, for transports that run a process; else []."""
        return []

    def skipped_lines(self) -> int:
        """How many lines the server wrote that were not messages (stdio: banners and logs
        on stdout), skipped after one warning; 0 when the transport cannot tell."""
        return 0

    def watch(self, watcher: TransportWatcher | None) -> None:
        """Report stderr lines and HTTP responses to `watcher` from now on (None: stop).
        The default has nothing to report."""
        return None


class TransportWrapper(Transport):
    """A transport around another one: every part of the contract is forwarded to `inner`.

    Subclass it and override `send`, `observe_incoming` (called with every message from the
    peer, whether it arrives by `receive()` or by push delivery) or anything else::

        class Counting(TransportWrapper):
            sent = received = 0

            async def send(self, message: JsonObject) -> None:
                self.sent += 1
                await super().send(message)

            def observe_incoming(self, message: JsonObject) -> None:
                self.received += 1
    """

    def __init__(self, inner: Transport) -> None:
        self.inner = inner
        self.kind = inner.kind
        self.legacy_only = inner.legacy_only
        self.discovery_timeout = inner.discovery_timeout

    def observe_incoming(self, message: JsonObject) -> None:
        """Hook: sees every message from the peer before the session does."""
        return None

    async def send(self, message: JsonObject) -> None:
        await self.inner.send(message)

    async def receive(self) -> JsonObject:
        message = await self.inner.receive()
        self.observe_incoming(message)
        return message

    async def aclose(self) -> None:
        await self.inner.aclose()

    def deliver_to(self, sink: MessageSink, on_error: ErrorSink) -> bool:
        def observed(message: JsonObject) -> None:
            self.observe_incoming(message)
            sink(message)

        return self.inner.deliver_to(observed, on_error)

    def cancel_request(self, request_id: RequestId) -> bool:
        return self.inner.cancel_request(request_id)

    def negotiated(self, era: Era, version: str) -> None:
        self.inner.negotiated(era, version)

    async def restart(self) -> bool:
        return await self.inner.restart()

    def input_unread(self) -> bool:
        return self.inner.input_unread()

    def tools_listed(self, tools: Sequence[Tool]) -> list[Tool]:
        return self.inner.tools_listed(tools)

    @property
    def pid(self) -> int | None:
        return self.inner.pid

    def stderr_lines(self) -> list[str]:
        return self.inner.stderr_lines()

    def skipped_lines(self) -> int:
        return self.inner.skipped_lines()

    def watch(self, watcher: TransportWatcher | None) -> None:
        self.inner.watch(watcher)
