"""paicli against a real Streamable HTTP server built on the official Python SDK 1.x (the
`mcp` 1.30 of most deployed Python servers), run from its own venv (.venv-sdk1).

SDK 1.x answers the 2026 `server/discover` probe with HTTP 400 and an error whose id is
"server-error". That must decide the fallback to `initialize` at once: it used to cost the
10 s probe timeout."""

from __future__ import annotations

import asyncio

import pytest

import paicli.mcp as m
from tests.http_servers import run_http_server, sdk1_python

pytestmark = pytest.mark.real


@pytest.mark.parametrize("mode", [(), ("--json-response",)], ids=["sse", "json"])
async def test_an_sdk1_http_server_is_reached_at_once_and_its_tools_work(
    mode: tuple[str, ...],
) -> None:
    server = run_http_server("sdk1_http_server.py", *mode, python=sdk1_python())
    async with asyncio.timeout(60), server as url:
        spec = m.HttpServer(url, handshake_timeout=30, request_timeout=30)
        async with m.connect(spec) as session:
            assert session.era == "legacy"
            assert session.protocol_version in ("2025-06-18", "2025-11-25")
            assert session.server_info.name == "sdk1-test-server"
            # The probe was sent, refused at once, and the handshake followed: with the
            # old behaviour this was the whole 10 s probe timeout.
            assert session.probe_fallback is not None and session.probe_fallback < 1.0
            assert {t.name for t in await session.list_tools()} == {"echo", "add"}
            assert (await session.call_tool("echo", {"text": "v1"})).text == "v1"
            assert (await session.call_tool("add", {"a": 2, "b": 3})).text == "5"
