"""OpenTelemetry spans and the `mcp.client.operation.duration` metric for MCP requests
(extra `paicli-mcp[otel]`, opentelemetry-api), following the semantic conventions for MCP.

    from paicli.mcp.otel import McpTelemetry
    telemetry = McpTelemetry()                 # the global providers
    async with paicli.mcp.connect(server, instruments=[telemetry]) as session: ...
    McpTelemetry.attach()      # or: the default of every session from now on

Each request is a CLIENT span named `{mcp.method.name} {target}` (`tools/call echo`), with
`mcp.method.name`, `jsonrpc.request.id`, `mcp.protocol.version` (once agreed),
`mcp.session.id` (an HTTP session id, hashed: the raw id is a bearer of the session),
`gen_ai.tool.name` and `gen_ai.operation.name` = `execute_tool` for a tool call,
`gen_ai.prompt.name` or `mcp.resource.uri` for those requests, `network.transport`, and on
failure `error.type` (the JSON-RPC code, `tool_error`, `timeout`, `cancelled`, `closed`) and
`rpc.response.status_code`. The trace context goes to the server in `params._meta`
(`traceparent`, `tracestate`). Imported only by its users.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from opentelemetry import metrics, propagate, trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from ._instrument import Instrumentation, instrument
from ._observe import Observed, Outcome, Request
from ._trace import hashed
from ._transport import JsonObject, Transport, process_of

__all__ = ["McpTelemetry"]

SCOPE = "paicli.mcp"


class McpTelemetry:
    """The instrument making spans and the duration metric, from the given (or global)
    tracer and meter providers."""

    def __init__(
        self,
        tracer_provider: trace.TracerProvider | None = None,
        meter_provider: metrics.MeterProvider | None = None,
    ) -> None:
        self.tracer = trace.get_tracer(SCOPE, tracer_provider=tracer_provider)
        meter = metrics.get_meter(SCOPE, meter_provider=meter_provider)
        self.duration = meter.create_histogram(
            "mcp.client.operation.duration",
            unit="s",
            description="Duration of MCP requests as the client saw them",
        )
        self._instrumentation: Instrumentation | None = None

    @classmethod
    def attach(
        cls,
        tracer_provider: trace.TracerProvider | None = None,
        meter_provider: metrics.MeterProvider | None = None,
    ) -> McpTelemetry:
        """Spans and metrics for every session created from now on that is given no
        `instruments` of its own (`detach()` stops it)."""
        telemetry = cls(tracer_provider, meter_provider)
        telemetry._instrumentation = instrument(telemetry)
        return telemetry

    def detach(self) -> None:
        if self._instrumentation is not None:
            self._instrumentation.remove()

    def __call__(self, transport: Transport, server: str) -> Transport:
        return _Traced(transport, server, self)


class _Traced(Observed):
    def __init__(self, inner: Transport, server: str, telemetry: McpTelemetry) -> None:
        super().__init__(inner, server)
        self._telemetry = telemetry
        # A stdio server is a child process on pipes; the others speak over TCP.
        self._network = "pipe" if process_of(inner) is not None else "tcp"
        self._session: str | None = None

    def started(self, request: Request, message: JsonObject) -> JsonObject:
        name = f"{request.method} {request.target}" if request.target else request.method
        attributes: dict[str, Any] = {
            "mcp.method.name": request.method,
            "jsonrpc.request.id": str(request.id),
            "network.transport": self._network,
        }
        if self.version is not None:
            attributes["mcp.protocol.version"] = self.version
        if self._session is not None:
            attributes["mcp.session.id"] = self._session
        if request.target is not None:
            if request.method == "tools/call":
                attributes["gen_ai.tool.name"] = request.target
                attributes["gen_ai.operation.name"] = "execute_tool"
            elif request.method == "prompts/get":
                attributes["gen_ai.prompt.name"] = request.target
            else:
                attributes["mcp.resource.uri"] = request.target
        span = self._telemetry.tracer.start_span(name, kind=SpanKind.CLIENT, attributes=attributes)
        request.state = span
        carrier: dict[str, str] = {}
        propagate.inject(carrier, context=trace.set_span_in_context(span))
        if not carrier:
            return message
        # A copy: the caller's message (and its params) stay as they were.
        params = message.get("params")
        params = dict(params) if isinstance(params, dict) else {}
        meta = params.get("_meta")
        params["_meta"] = {**(meta if isinstance(meta, dict) else {}), **carrier}
        return {**message, "params": params}

    def ended(self, request: Request, outcome: Outcome, error_type: str | None, at: float) -> None:
        span = request.state
        attributes: dict[str, str] = {"mcp.method.name": request.method}
        if request.method == "tools/call" and request.target is not None:
            attributes["gen_ai.tool.name"] = request.target
        if error_type is not None:
            attributes["error.type"] = error_type
            span.set_attribute("error.type", error_type)
            if error_type.lstrip("-").isdigit():
                span.set_attribute("rpc.response.status_code", error_type)
            span.set_status(Status(StatusCode.ERROR))
        span.end()
        self._telemetry.duration.record(at - request.started, attributes)

    def http_response(self, method: str, url: str, status: int, headers: Mapping[str, str]) -> None:
        session = headers.get("mcp-session-id")
        if session is not None:
            self._session = hashed(session)
        super().http_response(method, url, status, headers)
