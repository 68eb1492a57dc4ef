"""Prometheus metrics (`paicli.mcp.metrics`) and OpenTelemetry spans (`paicli.mcp.otel`)
of sessions, through the public instrument seam. In memory, except where a real process
or real HTTP scrape is the point."""

from __future__ import annotations

import asyncio
import urllib.request
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from prometheus_client import CollectorRegistry
from prometheus_client.parser import text_string_to_metric_families

from paicli import mcp
from paicli.mcp.metrics import McpMetrics
from paicli.mcp.otel import McpTelemetry
from tests.conftest import fault_server
from tests.memory_servers import fault_in_memory
from tests.transports import RecordingTransport

TIMEOUT = 20


async def calls(session: mcp.ClientSession) -> None:
    """One call that works, one that fails, one that times out."""
    assert (await session.call_tool("echo", {"text": "hi"})).text == "hi"
    with pytest.raises(mcp.RpcError):
        await session.call_tool("no_such_tool", {})
    with pytest.raises(mcp.RequestTimeout):
        await session.call_tool("sleep", {"seconds": 30}, timeout=0.1)


async def test_tool_calls_durations_in_flight_and_up_are_counted() -> None:
    registry = CollectorRegistry()
    metrics = McpMetrics.attach(registry)
    try:
        async with asyncio.timeout(TIMEOUT), fault_in_memory() as transport:
            async with mcp.ClientSession(transport, name="fault") as session:
                await calls(session)
                assert registry.get_sample_value("mcp_server_up", {"server": "fault"}) == 1
    finally:
        metrics.detach()

    def value(name: str, **labels: str) -> float | None:
        return registry.get_sample_value(name, {"server": "fault", **labels})

    assert value("mcp_tool_calls_total", tool="echo", outcome="ok") == 1
    assert value("mcp_tool_calls_total", tool="no_such_tool", outcome="error") == 1
    assert value("mcp_tool_calls_total", tool="sleep", outcome="timeout") == 1
    assert value("mcp_tool_duration_seconds_count", tool="echo") == 1
    assert value("mcp_requests_in_flight") == 0
    assert value("mcp_server_up") == 0


async def test_a_new_connection_after_one_ended_counts_a_restart_with_its_reason() -> None:
    registry = CollectorRegistry()
    metrics = McpMetrics(registry)
    with mcp.instrument(metrics):
        for _ in range(2):
            async with asyncio.timeout(TIMEOUT), fault_in_memory() as transport:
                async with mcp.ClientSession(transport, name="fault") as session:
                    await session.list_tools()
    labels = {"server": "fault", "reason": "stopped"}
    assert registry.get_sample_value("mcp_server_restarts_total", labels) == 1


@pytest.mark.real
async def test_a_crash_is_the_reason_of_the_next_restart_and_metrics_scrape_over_http() -> None:
    from paicli.observe.metrics import serve  # noqa: PLC0415 - the app's endpoint

    metrics, port = serve("127.0.0.1", 0)
    try:
        async with asyncio.timeout(TIMEOUT):
            async with mcp.connect(fault_server(name="fault")) as session:
                with pytest.raises(mcp.ConnectionClosed):
                    await session.call_tool("exit", {"code": 3})
            async with mcp.connect(fault_server(name="fault")) as session:
                await session.call_tool("echo", {"text": "again"})
            text = await asyncio.to_thread(scrape, port)
    finally:
        metrics.close()
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }
    assert samples[("mcp_server_restarts_total", (("reason", "crash"), ("server", "fault")))] == 1
    key = ("mcp_tool_calls_total", (("outcome", "closed"), ("server", "fault"), ("tool", "exit")))
    assert samples[key] == 1
    ok = ("mcp_tool_calls_total", (("outcome", "ok"), ("server", "fault"), ("tool", "echo")))
    assert samples[ok] == 1
    assert samples[("mcp_server_up", (("server", "fault"),))] == 0


def scrape(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        body: bytes = response.read()
    return body.decode()


async def test_spans_follow_the_mcp_conventions_and_carry_trace_context() -> None:
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    telemetry = McpTelemetry(tracer_provider, MeterProvider(metric_readers=[reader]))
    async with asyncio.timeout(TIMEOUT), fault_in_memory() as transport:
        wire = RecordingTransport(transport)
        with mcp.instrument(telemetry):
            async with mcp.ClientSession(wire, name="fault") as session:
                await calls(session)
    spans = {span.name: span for span in exporter.get_finished_spans()}
    assert {"initialize", "tools/call echo", "tools/call no_such_tool", "tools/call sleep"} <= set(
        spans
    )
    echo = spans["tools/call echo"]
    attributes: dict[str, Any] = dict(echo.attributes or {})
    assert attributes["mcp.method.name"] == "tools/call"
    assert attributes["gen_ai.tool.name"] == "echo"
    assert attributes["gen_ai.operation.name"] == "execute_tool"
    assert attributes["mcp.protocol.version"] == "2025-11-25"
    assert attributes["network.transport"] == "tcp"  # a memory pair has no process
    assert "error.type" not in attributes
    assert spans["tools/call no_such_tool"].attributes["error.type"] == "-32602"  # type: ignore[index]
    assert spans["tools/call sleep"].attributes["error.type"] == "timeout"  # type: ignore[index]
    # The server got the span's context in _meta; the caller's message was not changed.
    sent = next(m for m in wire.sent if m.get("params", {}).get("name") == "echo")
    traceparent = sent["params"]["_meta"]["traceparent"]
    context = echo.get_span_context()
    assert context is not None
    assert traceparent.startswith(f"00-{context.trace_id:032x}-{context.span_id:016x}-")
    data = reader.get_metrics_data()
    assert data is not None
    names = {
        metric.name
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
    }
    assert "mcp.client.operation.duration" in names


@pytest.mark.real
async def test_an_http_session_id_is_only_ever_hashed_in_spans() -> None:
    from tests.http_servers import run_http_server  # noqa: PLC0415

    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    with mcp.instrument(McpTelemetry(tracer_provider)):
        async with (
            asyncio.timeout(TIMEOUT),
            run_http_server("http_fault_server.py") as url,
            mcp.connect(mcp.HttpServer(url, name="web")) as session,
        ):
            await session.call_tool("echo", {"text": "hi"})
            raw = session.transport.inner.session_id  # type: ignore[attr-defined]
    echo = next(s for s in exporter.get_finished_spans() if s.name == "tools/call echo")
    attributes = dict(echo.attributes or {})
    assert raw and attributes["mcp.session.id"] == mcp._trace.hashed(raw)
    assert raw not in str(attributes)
