"""Instruments: wrappers applied to the transport of every session, however it was made.

`instrument(wrap)` registers `wrap(transport, server_name) -> transport`; every
`ClientSession` created afterwards runs over what it returns (`connect()`, an application's
server manager and a session built by hand alike). Message tracing (`TraceRecorder`),
metrics and OpenTelemetry spans attach this way. With nothing registered a session costs one
empty-list check when it is created, and nothing per message.
"""

from __future__ import annotations

from collections.abc import Callable

from ._transport import Transport

__all__ = ["Instrument", "Instrumentation", "instrument", "instrumented"]

#: Wraps one session's transport (or returns it unchanged); given the session's name.
Instrument = Callable[[Transport, str], Transport]

# In registration order: the first registered wraps closest to the wire.
_installed: list[Instrument] = []


class Instrumentation:
    """A registered instrument; `remove()` (or leaving `with`) stops it wrapping new sessions
    (sessions already running keep their wrappers until they close)."""

    def __init__(self, wrap: Instrument) -> None:
        self.wrap = wrap

    def remove(self) -> None:
        """Unregister; safe to call twice."""
        if self.wrap in _installed:
            _installed.remove(self.wrap)

    def __enter__(self) -> Instrumentation:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


def instrument(wrap: Instrument) -> Instrumentation:
    """Wrap the transport of every session created from now on with `wrap`::

    recorder = paicli.mcp.TraceRecorder("session.jsonl")
    with paicli.mcp.instrument(recorder):
        async with paicli.mcp.connect(server) as session:
            ...
    """
    _installed.append(wrap)
    return Instrumentation(wrap)


def instrumented(transport: Transport, name: str) -> Transport:
    """`transport` wrapped by every registered instrument, for the session named `name`."""
    for wrap in tuple(_installed):
        transport = wrap(transport, name)
    return transport
