"""One per-call measurement of one LangChain MCP bridge, in this (fresh) process.

    python bench/langchain_worker.py BRIDGE '{"calls": N, "warmup": W}'

BRIDGE is `paicli` (`load_tools` under `async with`, then `await tool.ainvoke`),
`paicli-sync` (`with load_tools(...)`, then `tool.invoke` from plain synchronous code),
`adapters` (langchain-mcp-adapters as its docs show first: `MultiServerMCPClient.get_tools()`,
which opens a new session, so a new server process, for every call) or `adapters-session`
(its persistent session: `client.session(...)` and `load_mcp_tools(session)`). The adapters
run in their own virtual environment (see langchain_bridge.py), so this file imports only
what its BRIDGE needs. Every bridge calls the `echo` tool of bench/servers/echo_server.py.
The last stdout line is `RESULT {json}`.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import statistics
import sys
import time
import traceback
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

SERVER = str(Path(__file__).resolve().parent / "servers" / "echo_server.py")
TEXT = "hello, benchmark"
Call = Callable[[], Awaitable[Any]]


@asynccontextmanager
async def paicli_echo() -> AsyncIterator[Call]:
    from paicli.langchain import load_tools  # noqa: PLC0415 - each bridge imports only its own
    from paicli.mcp import StdioServer  # noqa: PLC0415 - each bridge imports only its own

    async with load_tools(StdioServer(sys.executable, [SERVER]), include=["echo"]) as tools:
        (echo,) = tools
        yield lambda: echo.ainvoke({"text": TEXT})


def adapters_client() -> Any:
    from langchain_mcp_adapters.client import MultiServerMCPClient  # noqa: PLC0415 - each bridge imports only its own

    server = {"command": sys.executable, "args": [SERVER], "transport": "stdio"}
    return MultiServerMCPClient({"echo": server})


@asynccontextmanager
async def adapters_echo() -> AsyncIterator[Call]:
    tools = await adapters_client().get_tools()
    echo = next(t for t in tools if t.name == "echo")
    yield lambda: echo.ainvoke({"text": TEXT})


@asynccontextmanager
async def adapters_session_echo() -> AsyncIterator[Call]:
    from langchain_mcp_adapters.tools import load_mcp_tools  # noqa: PLC0415 - each bridge imports only its own

    async with adapters_client().session("echo") as session:
        tools = await load_mcp_tools(session)
        echo = next(t for t in tools if t.name == "echo")
        yield lambda: echo.ainvoke({"text": TEXT})


PREIMPORT = {
    "paicli": ("paicli.langchain",),
    "adapters": ("langchain_mcp_adapters.client", "langchain_mcp_adapters.tools"),
}
BRIDGES = {
    "paicli": paicli_echo,
    "adapters": adapters_echo,
    "adapters-session": adapters_session_echo,
}


def summary(latencies_ns: list[int], elapsed_s: float, connect_s: float) -> dict[str, Any]:
    latencies_ns.sort()
    calls = len(latencies_ns)
    return {
        "calls": calls,
        "p50_us": latencies_ns[calls // 2] / 1e3,
        "mean_us": statistics.fmean(latencies_ns) / 1e3,
        "calls_per_s": calls / elapsed_s,
        "connect_ms": connect_s * 1e3,
    }


def check(said: Any) -> None:
    # Each bridge returns the tool's text: as a string, or as a list of text blocks.
    text = said if isinstance(said, str) else "".join(b["text"] for b in said)
    if text != TEXT:
        raise AssertionError(f"echo returned {said!r}")


async def measure_async(bridge: str, calls: int, warmup: int) -> dict[str, Any]:
    clock = time.perf_counter_ns
    t0 = time.perf_counter()
    async with BRIDGES[bridge]() as echo:
        connect_s = time.perf_counter() - t0
        for _ in range(warmup):
            check(await echo())
        latencies = [0] * calls
        start = time.perf_counter()
        for i in range(calls):
            began = clock()
            said = await echo()
            latencies[i] = clock() - began
            check(said)
        return summary(latencies, time.perf_counter() - start, connect_s)


def measure_sync(calls: int, warmup: int) -> dict[str, Any]:
    from paicli.langchain import load_tools  # noqa: PLC0415 - each bridge imports only its own
    from paicli.mcp import StdioServer  # noqa: PLC0415 - each bridge imports only its own

    clock = time.perf_counter_ns
    t0 = time.perf_counter()
    with load_tools(StdioServer(sys.executable, [SERVER]), include=["echo"]) as tools:
        connect_s = time.perf_counter() - t0
        (echo,) = tools
        for _ in range(warmup):
            check(echo.invoke({"text": TEXT}))
        latencies = [0] * calls
        start = time.perf_counter()
        for i in range(calls):
            began = clock()
            said = echo.invoke({"text": TEXT})
            latencies[i] = clock() - began
            check(said)
        return summary(latencies, time.perf_counter() - start, connect_s)


def main() -> int:
    bridge, params = sys.argv[1], json.loads(sys.argv[2])
    calls, warmup = int(params["calls"]), int(params["warmup"])
    # Imported before the clock starts: "open" is starting the server and listing its tools.
    for module in PREIMPORT["paicli" if bridge.startswith("paicli") else "adapters"]:
        importlib.import_module(module)
    try:
        if bridge == "paicli-sync":
            result = measure_sync(calls, warmup)
        else:
            result = asyncio.run(measure_async(bridge, calls, warmup))
    except Exception as exc:
        traceback.print_exc()
        print("RESULT " + json.dumps({"error": f"{type(exc).__name__}: {exc}"}))
        return 1
    print("RESULT " + json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
