"""Era and version negotiation against legacy, modern, silent and broken servers."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from paicli.mcp import (
    ClientHandlers,
    ConnectionClosed,
    EraCache,
    HandlerError,
    ProtocolError,
    RequestTimeout,
    RpcError,
    connect,
)
from paicli.mcp._versions import HandshakeVersion
from tests.conftest import fault_server
from tests.memory_servers import memory_fault_session
from tests.scripted_server import INITIALIZE_RESULT, Json, result, scripted_session


async def test_legacy_server_is_probed_then_initialized() -> None:
    async with asyncio.timeout(20), memory_fault_session() as session:
        assert session.era == "legacy"
        assert session.protocol_version == "2025-11-25"
        assert session.server_info.name == "fault-normal"
        assert "tools" in session.server_capabilities


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
async def test_every_handshake_version_can_be_pinned(version: HandshakeVersion) -> None:
    async with asyncio.timeout(20), memory_fault_session(protocol=version) as session:
        assert session.era == "legacy"
        assert session.protocol_version == version
        assert session.probe_fallback is None  # pinned: no probe


async def test_modern_server_is_used_statelessly() -> None:
    async with asyncio.timeout(20), memory_fault_session("modern") as session:
        assert session.era == "modern"
        assert session.protocol_version == "2026-07-28"
        assert session.server_info.name == "fault-modern"
        assert session.probe_fallback is None
        # The modern server refuses any request without the per-request _meta.
        assert (await session.call_tool("echo", {"text": "hi"})).text == "hi"


async def test_unsupported_version_error_is_retried_once_with_a_mutual_version() -> None:
    session_in_memory = memory_fault_session("modern", "--reject-first-version")
    async with asyncio.timeout(20), session_in_memory as session:
        assert session.era == "modern"
        assert (await session.call_tool("echo", {"text": "hi"})).text == "hi"


async def test_input_required_is_answered_through_the_handlers_and_state_echoed() -> None:
    async def elicitation(params: dict[str, object]) -> dict[str, object]:
        return {"action": "accept", "content": {"confirmed": True}}

    handlers = ClientHandlers(elicitation=elicitation)
    async with asyncio.timeout(20), memory_fault_session("modern", handlers=handlers) as session:
        echoed = json.loads((await session.call_tool("mrtr")).text)
    assert echoed == {
        "inputResponses": {"q1": {"action": "accept", "content": {"confirmed": True}}},
        "requestState": "opaque-state-123",
    }


async def test_a_silent_probe_falls_back_to_the_handshake_after_its_timeout() -> None:
    session_in_memory = memory_fault_session("legacy_silent_discover", handshake_timeout=0.5)
    async with asyncio.timeout(20), session_in_memory as session:
        assert session.era == "legacy"
        # It waited half the deadline (the other half is the handshake's), and says so.
        assert session.probe_fallback is not None and 0.2 <= session.probe_fallback < 0.5


async def test_the_verdict_is_remembered_for_the_same_server_in_the_same_cache() -> None:
    cache = EraCache()
    async with (
        asyncio.timeout(20),
        memory_fault_session("legacy_silent_discover", handshake_timeout=0.5, era_cache=cache),
    ):
        pass
    assert cache.get(("memory", "legacy_silent_discover")) == "legacy"
    # A second probe would wait 10 s for the silent server; the remembered verdict skips it.
    patient = memory_fault_session("legacy_silent_discover", handshake_timeout=30, era_cache=cache)
    async with asyncio.timeout(5), patient as session:
        assert session.era == "legacy"


@pytest.mark.real
async def test_connect_remembers_a_verdict_per_command_line_in_the_cache_it_is_given() -> None:
    cache = EraCache()
    quick = fault_server("legacy_silent_discover", handshake_timeout=0.5)
    async with asyncio.timeout(20), connect(quick, era_cache=cache):
        pass
    patient = fault_server("legacy_silent_discover", handshake_timeout=30)
    assert cache.get(patient.identity) == "legacy"
    async with asyncio.timeout(5), connect(patient, era_cache=cache) as session:
        assert session.era == "legacy"


async def test_pinning_modern_against_a_legacy_server_fails_clearly() -> None:
    with pytest.raises(ProtocolError, match="does not speak protocol 2026-07-28"):
        async with asyncio.timeout(20), memory_fault_session(protocol="modern"):
            pass


async def test_an_unknown_handshake_version_is_refused() -> None:
    with pytest.raises(ProtocolError, match=r"'1999-01-01', which paicli does not support"):
        async with asyncio.timeout(20), memory_fault_session("unknown_version"):
            pass


async def test_a_server_that_never_answers_the_handshake_times_out() -> None:
    with pytest.raises(
        RequestTimeout,
        match=r"handshake \(server/discover, then initialize\) timed out after 0\.3s",
    ):
        async with asyncio.timeout(20), memory_fault_session("no_handshake", handshake_timeout=0.3):
            pass


@pytest.mark.real
async def test_a_server_exiting_during_the_handshake_reports_exit_code_and_stderr() -> None:
    with pytest.raises(ConnectionClosed) as info:
        async with asyncio.timeout(20), connect(fault_server("exit_during_handshake")):
            pass
    assert info.value.exit_code == 2
    assert "cannot start: missing API key" in str(info.value)


async def test_list_tools_follows_every_page() -> None:
    async with asyncio.timeout(20), memory_fault_session("paginated") as session:
        names = [t.name for t in await session.list_tools()]
    assert names == [f"tool{i}" for i in range(1, 7)]


async def test_list_tools_stops_on_a_repeated_cursor() -> None:
    async with asyncio.timeout(20), memory_fault_session("paginated", "--repeat-cursor") as session:
        names = [t.name for t in await session.list_tools()]
    assert names == ["tool1", "tool2", "tool3", "tool4"]


@pytest.mark.real
async def test_a_config_dict_works_like_a_typed_description() -> None:
    typed = fault_server()
    entry = {"command": typed.command, "args": list(typed.args), "startupTimeout": 5}
    async with asyncio.timeout(20), connect(entry, name="fault") as session:
        assert session.name == "fault"
        assert session.timeouts.handshake == 5
        assert (await session.call_tool("echo", {"text": "dict"})).text == "dict"


async def test_input_required_without_a_handler_fails_the_call_with_a_handler_error() -> None:
    async with asyncio.timeout(20), memory_fault_session("modern") as session:
        with pytest.raises(HandlerError, match="could not answer the server's elicitation/create"):
            await session.call_tool("mrtr")
        assert (await session.call_tool("echo", {"text": "after"})).text == "after"


# -- negotiation that never costs seconds ----------------------------------------------------


async def test_one_deadline_covers_the_probe_and_the_handshake() -> None:
    # Before, the probe and the handshake each had the full 0.5 s: 1 s in all.
    session = memory_fault_session("no_handshake", handshake_timeout=0.5)
    with pytest.raises(RequestTimeout, match=r"\(server/discover, then initialize\).* after 0.5s"):
        async with asyncio.timeout(0.9), session:
            pass


@pytest.mark.real
async def test_a_stdio_server_that_ignores_the_probe_costs_no_probe_timeout() -> None:
    # The default handshake timeout is 30 s and the probe used to wait 10 s of it.
    async with asyncio.timeout(5), connect(fault_server("legacy_silent_discover")) as session:
        assert session.era == "legacy"
        assert (await session.call_tool("echo", {"text": "quick"})).text == "quick"


@pytest.mark.real
async def test_a_slow_starting_modern_stdio_server_is_still_found_modern() -> None:
    # It answers nothing for a second: the probe gives up, the handshake gets -32022, and
    # the server is probed again with the time left.
    server = fault_server("modern", "--start-delay", "1")
    async with asyncio.timeout(20), connect(server) as session:
        assert session.era == "modern"
        assert (await session.call_tool("echo", {"text": "late"})).text == "late"


@pytest.mark.real
async def test_a_byte_order_mark_before_the_first_message_is_ignored() -> None:
    async with asyncio.timeout(20), connect(fault_server("normal", "--bom")) as session:
        assert session.era == "legacy"
        assert (await session.call_tool("echo", {"text": "bom"})).text == "bom"


# -- the handshake's answer ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("dropped", "named"),
    [
        (("capabilities",), "no 'capabilities' object"),
        (("serverInfo",), "no 'serverInfo' object"),
        (("capabilities", "serverInfo"), "no 'capabilities' and no 'serverInfo' object"),
    ],
)
async def test_an_initialize_result_without_capabilities_or_server_info_is_refused(
    dropped: tuple[str, ...], named: str
) -> None:
    def script(message: Json) -> list[Any] | None:
        if message.get("method") != "initialize":
            return None
        answer = {k: v for k, v in INITIALIZE_RESULT.items() if k not in dropped}
        return [result(message, answer)]

    with pytest.raises(ProtocolError) as info:
        async with asyncio.timeout(20), scripted_session(script):
            pass
    assert str(info.value) == (
        f"scripted: the server's answer to initialize has {named}, which the handshake requires"
    )


async def test_an_error_answer_to_initialize_says_the_handshake_was_refused() -> None:
    def script(message: Json) -> list[Any] | None:
        if message.get("method") != "initialize":
            return None
        error = {"code": -32602, "message": "Unsupported protocol version", "data": {"x": 1}}
        return [{"jsonrpc": "2.0", "id": message["id"], "error": error}]

    with pytest.raises(RpcError) as info:
        async with asyncio.timeout(20), scripted_session(script):
            pass
    assert str(info.value) == (
        "scripted: the server refused the handshake (initialize): "
        "Unsupported protocol version (code -32602)"
    )
    assert (info.value.code, info.value.data) == (-32602, {"x": 1})
    assert isinstance(info.value.__cause__, RpcError)
