"""Prometheus metrics of MCP sessions (extra `paicli-mcp[metrics]`, prometheus-client).

    from paicli.mcp.metrics import McpMetrics
    metrics = McpMetrics()                   # the default registry
    async with paicli.mcp.connect(server, instruments=[metrics]) as session: ...
    metrics = McpMetrics.attach()            # or: the default of every session from now on
    prometheus_client.start_http_server(9464, addr="127.0.0.1")

Metrics, labelled by the session's name (`server`):

- `mcp_tool_calls_total{server, tool, outcome}`: outcome `ok`, `error` (an error reply or a
  tool's `isError`), `timeout`, `cancelled`, `closed` (the connection ended first);
- `mcp_tool_duration_seconds{server, tool}`: a histogram of tool calls' durations;
- `mcp_requests_in_flight{server}`: requests of any method sent and not yet ended;

(Counting happens once a sent message has left, or within 50 ms: a scrape may be that late.)
- `mcp_server_up{server}`: 1 once the protocol is agreed, 0 once the connection ends;
- `mcp_server_restarts_total{server, reason}`: a new connection of a server whose last one
  ended; reason `crash`, `exit`, `closed`, `stopped` (by the client: a requested restart)
  or `memory_limit` (and the other resource limits).

This module is imported only by its users: `import paicli.mcp` never loads
prometheus-client.
"""

from __future__ import annotations

from typing import Any

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge, Histogram

from ._instrument import Instrumentation, instrument
from ._observe import Observed, Outcome, Request
from ._transport import JsonObject, Transport

__all__ = ["McpMetrics"]

# Tool calls take from a millisecond (a local lookup) to minutes (a build, a crawl).
DURATION_BUCKETS = (0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300)


class McpMetrics:
    """The MCP metrics, registered in `registry`, and the instrument that feeds them."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        registry = REGISTRY if registry is None else registry
        self.tool_calls = Counter(
            "mcp_tool_calls",
            "MCP tool calls by outcome",
            ["server", "tool", "outcome"],
            registry=registry,
        )
        self.tool_duration = Histogram(
            "mcp_tool_duration_seconds",
            "Duration of MCP tool calls",
            ["server", "tool"],
            buckets=DURATION_BUCKETS,
            registry=registry,
        )
        self.server_up = Gauge(
            "mcp_server_up", "Whether the MCP server's session is up", ["server"], registry=registry
        )
        self.restarts = Counter(
            "mcp_server_restarts",
            "New connections of an MCP server after its last one ended",
            ["server", "reason"],
            registry=registry,
        )
        self.in_flight = Gauge(
            "mcp_requests_in_flight",
            "MCP requests sent and not yet answered",
            ["server"],
            registry=registry,
        )
        # Why each server's last connection ended, until its next one starts.
        self._ended: dict[str, str] = {}
        self._instrumentation: Instrumentation | None = None

    @classmethod
    def attach(cls, registry: CollectorRegistry | None = None) -> McpMetrics:
        """Metrics fed by every session created from now on that is given no
        `instruments` of its own (`detach()` stops that)."""
        metrics = cls(registry)
        metrics._instrumentation = instrument(metrics)
        return metrics

    def detach(self) -> None:
        if self._instrumentation is not None:
            self._instrumentation.remove()

    def __call__(self, transport: Transport, server: str) -> Transport:
        """The instrument: `transport` wrapped to feed these metrics."""
        reason = self._ended.pop(server, None)
        if reason is not None:
            self.restarts.labels(server, reason).inc()
        return _Metered(transport, server, self)

    def ended_connection(self, server: str, reason: str) -> None:
        self._ended[server] = reason
        self.server_up.labels(server).set(0)


class _Metered(Observed):
    defer = True  # counting can wait for the server to be busy

    def __init__(self, inner: Transport, server: str, metrics: McpMetrics) -> None:
        super().__init__(inner, server)
        self._metrics = metrics
        self._in_flight = metrics.in_flight.labels(server)
        # Each tool's labelled children, looked up once (a lookup takes a lock).
        self._calls: dict[tuple[str, str], Any] = {}
        self._durations: dict[str, Any] = {}

    def started(self, request: Request, message: JsonObject) -> JsonObject:
        self._in_flight.inc()
        return message

    def ended(self, request: Request, outcome: Outcome, error_type: str | None, at: float) -> None:
        self._in_flight.dec()
        if request.method == "tools/call":
            tool = request.target or ""
            calls = self._calls.get((tool, outcome))
            if calls is None:
                calls = self._metrics.tool_calls.labels(self.server, tool, outcome)
                self._calls[tool, outcome] = calls
            calls.inc()
            duration = self._durations.get(tool)
            if duration is None:
                duration = self._durations[tool] = self._metrics.tool_duration.labels(
                    self.server, tool
                )
            duration.observe(at - request.started)

    def connected(self) -> None:
        self._metrics.server_up.labels(self.server).set(1)

    def disconnected(self, reason: str) -> None:
        self._metrics.ended_connection(self.server, reason)
