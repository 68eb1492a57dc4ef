"""Stdio servers that predate the 2026 revision and exit when their first message is not
`initialize` (the Rust SDK before rmcp 3.0, e.g. `@openai/codex-shell-tool-mcp` 0.97): the
probe costs them their process, so `connect()` starts them again once with `initialize`,
and remembers the verdict. Real processes: the fault server's `initialize_first` mode."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from paicli.mcp import (
    ClientSession,
    ClosedOnProbe,
    ConnectionClosed,
    EraCache,
    StdioServer,
    StdioTransport,
    connect,
)
from tests.conftest import fault_server

pytestmark = pytest.mark.real

REFUSAL = "Error: expect initialized request, but received: server/discover"


async def test_a_server_that_exits_on_the_probe_is_started_again_with_initialize(
    tmp_path: Path,
) -> None:
    log = tmp_path / "server.log"
    cache = EraCache()
    spec = fault_server("initialize_first", stderr_file=str(log))
    async with asyncio.timeout(20), connect(spec, era_cache=cache) as session:
        assert session.era == "legacy"
        assert session.probe_fallback is None
        result = await session.call_tool("echo", {"text": "hi"})
        assert result.content[0].text == "hi"  # type: ignore[union-attr]
    assert cache.get(spec.identity) == "legacy"
    assert log.read_text().count(REFUSAL) == 1
    # The verdict is kept: the next start of the same command line skips the probe.
    async with asyncio.timeout(20), connect(spec, era_cache=cache) as session:
        assert session.era == "legacy"
    assert log.read_text().count(REFUSAL) == 1


async def test_a_session_on_a_transport_says_the_server_exited_on_the_probe() -> None:
    spec = fault_server("initialize_first")
    transport = await StdioTransport.start(spec.command, spec.args)
    with pytest.raises(ClosedOnProbe) as caught:
        async with asyncio.timeout(20), ClientSession(transport, name="old-rust"):
            pass
    assert caught.value.exit_code == 1
    assert REFUSAL in caught.value.stderr_tail


async def test_a_server_that_dies_at_every_start_is_started_twice_only(tmp_path: Path) -> None:
    starts = tmp_path / "starts"
    code = f"open({str(starts)!r}, 'a').write('x'); import sys; sys.exit(3)"
    cache = EraCache()
    spec = StdioServer(sys.executable, args=["-c", code])
    with pytest.raises(ConnectionClosed) as caught:
        async with asyncio.timeout(20), connect(spec, era_cache=cache):
            pass
    assert type(caught.value) is ConnectionClosed  # the second start's own failure
    assert caught.value.exit_code == 3
    assert starts.read_text() == "xx"
    assert cache.get(spec.identity) is None


async def test_a_server_pinned_to_legacy_is_never_probed(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    spec = fault_server("initialize_first", stderr_file=str(log), protocol="legacy")
    async with asyncio.timeout(20), connect(spec) as session:
        assert session.era == "legacy"
    assert REFUSAL not in log.read_text()
