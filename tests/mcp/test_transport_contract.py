"""The public transport seam: a session on any `Transport`, wrappers that see all traffic,
and the in-memory pair. All in memory."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from paicli import mcp
from paicli.mcp._transport import AgreementHook, CancelHook, PushDelivery, ToolsHook, Watchable
from tests.memory_servers import fault_in_memory

JsonObject = dict[str, Any]


class Counting(mcp.TransportWrapper):
    """The wrapper of docs/architecture.md."""

    def __init__(self, inner: mcp.Transport) -> None:
        super().__init__(inner)
        self.sent = self.received = 0

    async def send(self, message: JsonObject) -> None:
        self.sent += 1
        await super().send(message)

    def observe_incoming(self, message: JsonObject) -> None:
        self.received += 1


class ThreeMethods(mcp.Transport):
    """The smallest transport: only what the contract requires, over another one."""

    def __init__(self, inner: mcp.Transport) -> None:
        self.inner = inner

    async def send(self, message: JsonObject) -> None:
        await self.inner.send(message)

    async def receive(self) -> JsonObject:
        return await self.inner.receive()

    async def aclose(self) -> None:
        await self.inner.aclose()


async def test_a_wrapper_sees_every_message_both_ways() -> None:
    async with asyncio.timeout(10), fault_in_memory() as transport:
        counting = Counting(transport)
        async with mcp.ClientSession(counting, name="counted") as session:
            await session.list_tools()
            assert (await session.call_tool("echo", {"text": "hi"})).text == "hi"
    # discover probe, initialize, initialized, tools/list, tools/call
    assert counting.sent == 5
    # the probe's error, initialize's result, tools/list, tools/call
    assert counting.received == 4


async def test_a_transport_with_only_the_three_required_methods_carries_a_session() -> None:
    async with asyncio.timeout(10), fault_in_memory("modern") as transport:
        async with mcp.ClientSession(ThreeMethods(transport), name="bare") as session:
            assert session.era == "modern"
            assert session.process is None
            assert (await session.call_tool("echo", {"text": "bare"})).text == "bare"


def test_the_contract_is_three_methods_and_traits_and_every_hook_is_optional() -> None:
    client, _server = mcp.MemoryTransport.pair()
    hooks = (PushDelivery, AgreementHook, CancelHook, ToolsHook, Watchable, mcp.ProcessTransport)
    assert not any(isinstance(client, hook) for hook in hooks)
    assert client.traits == mcp.TransportTraits(kind="memory")
    assert ThreeMethods(client).traits == mcp.TransportTraits()  # a custom transport's
    with pytest.raises(AttributeError):
        client.traits.kind = "stdio"  # type: ignore[misc]
    # A wrapper passes the hooks on (as absent, here) and keeps its inner transport's traits.
    counting = Counting(client)
    assert counting.traits is client.traits
    assert counting.deliver_to(lambda _: None, lambda _id, _exc: None) is False
    assert counting.cancel_request(1) is False
    assert not isinstance(counting, mcp.ProcessTransport)


async def test_the_session_state_is_read_only_and_needs_an_open_session() -> None:
    client, _server = mcp.MemoryTransport.pair()
    session = mcp.ClientSession(client, name="closed")
    with pytest.raises(mcp.ProtocolError, match="not open yet"):
        _ = session.era
    with pytest.raises(AttributeError):
        session.era = "modern"  # type: ignore[misc]


async def test_the_memory_pair_copies_messages_and_refuses_what_is_not_json() -> None:
    client, server = mcp.MemoryTransport.pair()
    message: JsonObject = {"jsonrpc": "2.0", "method": "x", "params": {"items": [1]}}
    await client.send(message)
    message["params"]["items"].append(2)
    assert await server.receive() == {"jsonrpc": "2.0", "method": "x", "params": {"items": [1]}}
    with pytest.raises(TypeError, match="not JSON"):
        await client.send({"jsonrpc": "2.0", "method": "x", "params": {"bad": object()}})


async def test_closing_one_end_ends_the_other_after_what_was_sent() -> None:
    client, server = mcp.MemoryTransport.pair()
    await server.send({"jsonrpc": "2.0", "method": "last"})
    await server.aclose()
    assert (await client.receive())["method"] == "last"
    with pytest.raises(mcp.ConnectionClosed):
        await client.receive()
    with pytest.raises(mcp.ConnectionClosed):
        await client.send({"jsonrpc": "2.0", "method": "late"})
