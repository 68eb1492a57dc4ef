"""The model's tokens and latency in `paicli --metrics-port`'s registry: the real LlmClient
against the scripted model in memory, measured by the app's wrapper."""

from __future__ import annotations

import asyncio
from contextlib import aclosing

from prometheus_client import CollectorRegistry

from paicli.llm.client import LlmClient
from paicli.llm.settings import ModelSettings
from paicli.mcp.metrics import McpMetrics
from paicli.observe.metrics import AppMetrics
from tests.llm_memory import MemoryLlm


async def test_the_model_s_tokens_and_request_time_are_counted() -> None:
    registry = CollectorRegistry()
    metrics = AppMetrics(registry, McpMetrics(registry))
    reply = {"text": "ok", "usage": {"prompt_tokens": 12, "completion_tokens": 3}}
    async with MemoryLlm([reply, reply]) as llm:
        settings = ModelSettings(model="scripted-model", base_url=llm.base_url, api_key="k")
        client = metrics.model(LlmClient(settings, http_client=llm.http_client()))
        try:
            for _ in range(2):
                async with asyncio.timeout(10), aclosing(client.stream([], [])) as stream:
                    async for _event in stream:
                        pass
        finally:
            await client.aclose()
    assert registry.get_sample_value("paicli_model_tokens_total", {"kind": "prompt"}) == 24
    assert registry.get_sample_value("paicli_model_tokens_total", {"kind": "completion"}) == 6
    assert registry.get_sample_value("paicli_model_request_duration_seconds_count") == 2
