"""The transport contract: move JSON-RPC messages between the session and one server.

Every transport does three things: `send` one message, `receive` one (raising
`ConnectionClosed` once the peer is gone), and `aclose`; and it states its `traits`, a frozen
record of what the session must know about it. The contract carries no ids, handshakes or
tools: the session owns those.

What only some transports do is an optional, typed `Protocol`, checked with `isinstance`
where it is used (at most once per session or per rare event, never per message):

- `PushDelivery`: messages handed straight from the read callback (stdio, HTTP, legacy SSE);
- `AgreementHook`: told the agreed era and version (batches, the HTTP version header);
- `CancelHook`: cancels a request its own way (2026 HTTP: closing its response stream);
- `ToolsHook`: filters each tool list (2026 HTTP: invalid `x-mcp-header` annotations);
- `Watchable`: reports what is not a message (stderr lines, HTTP responses) to a watcher;
- `ProcessTransport`: runs the server as a local process (pid, exit status, stderr tail,
  skipped stdout lines, unread input, restart).

`TransportWrapper` forwards the contract and every hook to an inner transport, so a wrapper
(tracing, metrics, fault injection) is transparent; process details are found through
wrappers with `process_of`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

if TYPE_CHECKING:
    from .errors import McpError
    from .types import Tool

__all__ = [
    "AgreementHook",
    "CancelHook",
    "Era",
    "ErrorSink",
    "JsonObject",
    "MessageSink",
    "ProcessTransport",
    "PushDelivery",
    "RequestId",
    "ToolsHook",
    "Transport",
    "TransportTraits",
    "TransportWatcher",
    "TransportWrapper",
    "Watchable",
    "process_of",
]

JsonObject = dict[str, Any]
# JSON-RPC ids: this client's requests use ints; a server's requests may use either.
RequestId = int | str
# The two protocol eras: the `initialize` handshake (up to 2025-11-25), and the stateless
# 2026-07-28 revision.
Era = Literal["legacy", "modern"]
MessageSink = Callable[[JsonObject], None]
ErrorSink = Callable[[RequestId, "McpError"], None]


@dataclass(frozen=True, slots=True)
class TransportTraits:
    """What a session needs to know about a transport; fixed for the transport's life."""

    #: What carries the messages, as status displays name it: "stdio", "http" (Streamable
    #: HTTP), "sse" (legacy HTTP+SSE), "memory", or a custom transport's own word.
    kind: str = "custom"
    #: Only the `initialize` handshake era can be spoken (the legacy HTTP+SSE transport):
    #: negotiation skips the 2026 discovery probe.
    legacy_only: bool = False
    #: How long the discovery probe waits for an answer before negotiation falls back to the
    #: handshake. Over HTTP a legacy server answers with a status at once, so only a hung
    #: server is silent; a pipe gives no such sign of a server that ignores the probe, so
    #: stdio waits briefly (a slow modern server is found by the handshake's -32022 and
    #: probed again).
    discovery_timeout: float = 10.0


class Transport(ABC):
    """What every transport (stdio, Streamable HTTP, legacy SSE, in-memory) implements:
    `send`, `receive`, `aclose`, and `traits` (the class default fits a custom transport)."""

    traits: TransportTraits = TransportTraits()

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


class TransportWatcher(Protocol):
    """Told what a transport sees besides messages. Both calls run on the event loop, in the
    transport's own callbacks: they must be quick and must not raise."""

    def stderr_line(self, text: str) -> None:
        """One line the server wrote to stderr (stdio), as the transport keeps it."""

    def http_response(self, method: str, url: str, status: int, headers: Mapping[str, str]) -> None:
        """One HTTP exchange's response: its request method and URL, status and headers."""


@runtime_checkable
class PushDelivery(Protocol):
    """A transport that can push each incoming message instead of queueing it."""

    def deliver_to(self, sink: MessageSink, on_error: ErrorSink) -> bool:
        """Hand every incoming message to `sink` as it arrives, and a failure that concerns
        one request only (an HTTP status, a broken stream) to `on_error`. Return True if
        taken (`receive()` then only raises `ConnectionClosed` at the end); False leaves
        the session calling `receive()` in a loop. It saves the event-loop turn that a
        receiving task costs per message."""
        ...


@runtime_checkable
class AgreementHook(Protocol):
    """A transport whose framing or headers depend on the agreed protocol."""

    def negotiated(self, era: Era, version: str) -> None:
        """Called once the protocol is agreed, before any other message of the session, and
        again if a 2026 retry switches the version (HTTP sends the version as a header;
        stdio and HTTP read a JSON array as a batch only once 2025-03-26 is agreed)."""
        ...


@runtime_checkable
class CancelHook(Protocol):
    """A transport that may cancel an in-flight request without a message."""

    def cancel_request(self, request_id: RequestId) -> bool:
        """Cancel one in-flight request the transport's own way (a 2026 HTTP request is
        cancelled by closing its response stream). True if that was done, so the session
        sends nothing; False has the session send `notifications/cancelled`."""
        ...


@runtime_checkable
class ToolsHook(Protocol):
    """A transport that needs to see, and may narrow, each complete tool list."""

    def tools_listed(self, tools: Sequence[Tool]) -> list[Tool]:
        """The tools usable over this transport (2026 HTTP drops tools whose
        `x-mcp-header` annotations are invalid, and remembers the others' headers)."""
        ...


@runtime_checkable
class Watchable(Protocol):
    """A transport that sees more than messages: stderr lines, HTTP responses."""

    def watch(self, watcher: TransportWatcher | None) -> None:
        """Report stderr lines and HTTP responses to `watcher` from now on (None: stop)."""
        ...


@runtime_checkable
class ProcessTransport(Protocol):
    """A transport that runs its server as a local process (stdio)."""

    @property
    def pid(self) -> int:
        """The server's process id (also its process group id)."""
        ...

    @property
    def returncode(self) -> int | None:
        """The exit status once the process has exited, else None."""
        ...

    def stderr_lines(self) -> list[str]:
        """The server's last stderr lines."""
        ...

    @property
    def exit_reason(self) -> str | None:
        """How the process ended, in words ("exited with code 1", "killed with SIGKILL:
        still running 2 s after SIGTERM"), or None while it runs."""
        ...

    def skipped_lines(self) -> int:
        """How many lines the server wrote on stdout that were not messages (banners,
        logs), skipped after one warning."""
        ...

    def input_unread(self) -> bool:
        """Whether the server has yet to read part of what was sent to it (bytes still in
        its stdin pipe). Negotiation starts the discovery probe's clock only once the
        server has read the probe, so a server still starting is not taken for one that
        ignores the probe."""
        ...

    async def restart(self) -> bool:
        """Replace the server with a fresh process (the old one stopped), so a session can
        go on after a server stopped answering. False if that cannot be done (the
        transport is closed): the session goes on as it is."""
        ...


def process_of(transport: Transport) -> ProcessTransport | None:
    """The process behind `transport`, looking through wrappers; None if there is none."""
    while not isinstance(transport, ProcessTransport):
        if not isinstance(transport, TransportWrapper):
            return None
        transport = transport.inner
    return transport


class TransportWrapper(Transport):
    """A transport around another one: `send`, `receive`, `aclose`, `traits` and every
    optional hook are forwarded to `inner` (a hook the inner transport lacks answers as if
    absent: no push delivery, no transport-level cancellation, tools unchanged).

    Subclass it and override `send`, `observe_incoming` (called with every message from the
    peer, whether it arrives by `receive()` or by push delivery) or a hook::

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
        self.traits = inner.traits

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

    # -- optional hooks, forwarded ---------------------------------------------------------

    def deliver_to(self, sink: MessageSink, on_error: ErrorSink) -> bool:
        inner = self.inner
        if not isinstance(inner, PushDelivery):
            return False

        def observed(message: JsonObject) -> None:
            self.observe_incoming(message)
            sink(message)

        return inner.deliver_to(observed, on_error)

    def negotiated(self, era: Era, version: str) -> None:
        if isinstance(self.inner, AgreementHook):
            self.inner.negotiated(era, version)

    def cancel_request(self, request_id: RequestId) -> bool:
        return isinstance(self.inner, CancelHook) and self.inner.cancel_request(request_id)

    def tools_listed(self, tools: Sequence[Tool]) -> list[Tool]:
        if isinstance(self.inner, ToolsHook):
            return self.inner.tools_listed(tools)
        return list(tools)

    def watch(self, watcher: TransportWatcher | None) -> None:
        if isinstance(self.inner, Watchable):
            self.inner.watch(watcher)
