"""`paicli --metrics-port PORT`: Prometheus metrics of a paicli run on 127.0.0.1 (or
`--metrics-host`), needing the `metrics` extra (prometheus-client).

The MCP metrics are the library's (`paicli.mcp.metrics.McpMetrics`, attached to every
session); the model's are added here: `paicli_model_tokens_total{kind}` (`prompt`,
`completion`, as the endpoint reports them) and `paicli_model_request_duration_seconds`
(from sending a request to its last streamed event). Nothing here imports prometheus-client
until `serve` is called, so a run without the flag pays nothing.
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing
from typing import TYPE_CHECKING, Any, Protocol

from paicli.errors import PaicliError
from paicli.llm.events import Completion

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

    from paicli.mcp.metrics import McpMetrics

__all__ = ["AppMetrics", "MetricsUnavailable", "active", "serve"]

_active: AppMetrics | None = None


class MetricsUnavailable(PaicliError):
    """prometheus-client is not installed (`--metrics-port` needs the `metrics` extra)."""


class StreamingModel(Protocol):
    def stream(
        self, messages: Sequence[Any], tools: Sequence[Any]
    ) -> AsyncGenerator[Any, None]: ...

    async def aclose(self) -> None: ...


class AppMetrics:
    """This run's registry, MCP metrics, model metrics and HTTP endpoint."""

    def __init__(self, registry: CollectorRegistry, mcp: McpMetrics) -> None:
        from prometheus_client import Counter, Histogram  # noqa: PLC0415 - see the module

        self.registry = registry
        self.mcp = mcp
        self.tokens = Counter(
            "paicli_model_tokens", "Tokens the model endpoint reported", ["kind"], registry=registry
        )
        self.model_duration = Histogram(
            "paicli_model_request_duration_seconds",
            "From sending a model request to its last streamed event",
            buckets=(0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 80, 160),
            registry=registry,
        )
        self._server: Any = None

    def model(self, inner: StreamingModel) -> StreamingModel:
        """`inner` (the model client) measured."""
        return _MeasuredModel(inner, self)

    def close(self) -> None:
        global _active  # noqa: PLW0603 - one endpoint per process
        self.mcp.detach()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if _active is self:
            _active = None


def serve(host: str, port: int) -> tuple[AppMetrics, int]:
    """Start the endpoint on `host:port` (0: any free port) and meter every MCP session from
    now on; returns the metrics and the port. Raises MetricsUnavailable or OSError."""
    global _active  # noqa: PLW0603 - one endpoint per process
    try:
        from prometheus_client import CollectorRegistry, start_http_server  # noqa: PLC0415
    except ImportError as exc:
        raise MetricsUnavailable(
            "--metrics-port needs the metrics extra: pip install 'paicli-cli[metrics]'"
        ) from exc
    from paicli.mcp.metrics import McpMetrics  # noqa: PLC0415

    registry = CollectorRegistry()
    server, _thread = start_http_server(port, addr=host, registry=registry)
    metrics = AppMetrics(registry, McpMetrics.attach(registry))
    metrics._server = server
    _active = metrics
    return metrics, int(server.server_port)


def active() -> AppMetrics | None:
    """The metrics of this run, when `--metrics-port` asked for them."""
    return _active


class _MeasuredModel:
    def __init__(self, inner: StreamingModel, metrics: AppMetrics) -> None:
        self._inner = inner
        self._metrics = metrics

    async def stream(
        self, messages: Sequence[Any], tools: Sequence[Any]
    ) -> AsyncGenerator[Any, None]:
        started = time.perf_counter()
        try:
            async with aclosing(self._inner.stream(messages, tools)) as events:
                async for event in events:
                    if isinstance(event, Completion) and event.usage is not None:
                        self._metrics.tokens.labels("prompt").inc(event.usage.prompt_tokens)
                        self._metrics.tokens.labels("completion").inc(event.usage.completion_tokens)
                    yield event
        finally:
            self._metrics.model_duration.observe(time.perf_counter() - started)

    async def aclose(self) -> None:
        await self._inner.aclose()
