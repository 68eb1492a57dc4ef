"""Instruments: wrappers a session applies to its transport (tracing, metrics, spans).

An instrument is `wrap(transport, server_name) -> transport` (a `TraceRecorder`, an
`McpMetrics`, an `McpTelemetry`, or any function). A session is given its instruments, as an
aiohttp session is given its `trace_configs`:

    ClientSession(transport, instruments=[recorder])    # or connect(server, instruments=...)

`instrument(wrap)` is sugar for the default: it adds `wrap` to the process-wide list that a
session given no `instruments` (None) uses; `instruments=()` opts out of that list. Sessions
made where the caller cannot pass anything (deep inside an application) are covered this
way. With no instrument a session costs one empty check when it is created, and nothing per
message.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ._transport import Transport

__all__ = ["Instrument", "Instrumentation", "instrument", "instrumented"]

#: Wraps one session's transport (or returns it unchanged); given the session's name.
Instrument = Callable[[Transport, str], Transport]

# In registration order: the first registered wraps closest to the wire.
_installed: list[Instrument] = []


class Instrumentation:
    """A registered default instrument; `remove()` (or leaving `with`) stops it wrapping new
    sessions (sessions already running keep their wrappers until they close)."""

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
    """Add `wrap` to the default instruments: those of every session created from now on
    that is given no `instruments` of its own::

    recorder = paicli.mcp.TraceRecorder("session.jsonl")
    with paicli.mcp.instrument(recorder):
        async with paicli.mcp.connect(server) as session:
            ...
    """
    _installed.append(wrap)
    return Instrumentation(wrap)


def instrumented(
    transport: Transport, name: str, instruments: Sequence[Instrument] | None
) -> Transport:
    """`transport` wrapped by `instruments` (None: the default ones), for the session named
    `name`; the first wraps closest to the wire."""
    for wrap in tuple(_installed) if instruments is None else instruments:
        transport = wrap(transport, name)
    return transport
