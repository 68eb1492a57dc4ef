"""An HTTP server examined: reached with `connect()`, reported by what the session sees
(reachable, the protocol agreed, its tools); its process, if any, is not ours to watch."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from paicli.doctor._explain import explain_agreement
from paicli.doctor._settings import Limits
from paicli.doctor._tools import check_tools
from paicli.doctor.findings import ServerReport
from paicli.mcp import HttpServer, McpError, RequestTimeout, connect

__all__ = ["examine_http"]


async def examine_http(name: str, spec: HttpServer, limits: Limits) -> ServerReport:
    report = ServerReport(name, "http")
    if limits.timeout is not None:
        spec = replace(spec, handshake_timeout=limits.timeout, request_timeout=limits.timeout)
    loop = asyncio.get_running_loop()
    started = loop.time()
    phase = "the handshake"
    try:
        async with connect(spec, name=name) as session:
            explain_agreement(report, session, loop.time() - started, limits.slow)
            phase = "tools/list"
            if "tools" in session.server_capabilities:
                check_tools(report, name, await session.list_tools())
    except RequestTimeout as exc:
        report.add("no-answer", "error", f"no answer to {exc.method} within {exc.seconds:g} s")
    except McpError as exc:
        report.add(
            "unreachable" if phase == "the handshake" else "protocol-error",
            "error",
            f"{phase} failed: {exc}",
            "check the URL, that the server is running, and its headers"
            if phase == "the handshake"
            else None,
        )
    return report
