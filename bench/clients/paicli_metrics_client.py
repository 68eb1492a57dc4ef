"""paicli.mcp with the Prometheus instrument on every session, as `paicli --metrics-port`
runs it (bench/run.py reports its cost against plain paicli in the same run)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

from prometheus_client import CollectorRegistry

from paicli.mcp.metrics import McpMetrics

from . import paicli_client
from .paicli_client import PaicliSession


@asynccontextmanager
async def connect(command: str, args: Sequence[str]) -> AsyncIterator[PaicliSession]:
    metrics = McpMetrics.attach(CollectorRegistry())
    try:
        async with paicli_client.connect(command, args) as session:
            yield session
    finally:
        metrics.detach()


@asynccontextmanager
async def connect_http(url: str) -> AsyncIterator[PaicliSession]:
    metrics = McpMetrics.attach(CollectorRegistry())
    try:
        async with paicli_client.connect_http(url) as session:
            yield session
    finally:
        metrics.detach()
