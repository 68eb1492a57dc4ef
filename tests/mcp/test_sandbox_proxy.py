"""The allow-list's proxy on 127.0.0.1, spoken to as an HTTP client would: plain requests,
CONNECT tunnels, refusals in one line, and names that would lead back into this machine."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

import pytest

from paicli.mcp._sandbox.proxy import HEAD_LIMIT, FilteringProxy, HostRules
from tests.sandboxes import listener

pytestmark = pytest.mark.real
ALIASES = {"allowed.test": "127.0.0.1", "denied.test": "127.0.0.1"}


@asynccontextmanager
async def proxy(hosts: Sequence[str]) -> AsyncIterator[tuple[FilteringProxy, int]]:
    running = FilteringProxy(hosts, aliases=ALIASES)
    port = await running.start_tcp()
    try:
        yield running, port
    finally:
        await running.aclose()


async def exchange(port: int, request: bytes) -> bytes:
    """Send `request` to the proxy; everything it answers until it closes."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request)
    async with asyncio.timeout(10):
        answer = await reader.read()
    writer.close()
    return answer


def test_host_rules_match_names_subdomains_and_ports() -> None:
    rules = HostRules(["example.com", "*.pypi.org", "api.test:8443", "10.0.0.1"])
    assert rules.allows("example.com", 443) and rules.allows("example.com", 80)
    assert not rules.allows("www.example.com", 443)
    assert rules.allows("files.pypi.org", 443) and not rules.allows("pypi.org", 443)
    assert rules.allows("api.test", 8443) and not rules.allows("api.test", 443)
    assert rules.allows("10.0.0.1", 22) and not rules.allows("10.0.0.2", 22)


async def test_a_plain_request_reaches_an_allowed_host_in_origin_form() -> None:
    async with listener() as (port, seen), proxy(["allowed.test"]) as (_, proxy_port):
        request = (
            f"GET http://allowed.test:{port}/a?b=1 HTTP/1.1\r\nHost: allowed.test:{port}\r\n"
            "Proxy-Connection: keep-alive\r\n\r\n"
        )
        answer = await exchange(proxy_port, request.encode())
    assert answer.endswith(b"\r\n\r\nhello")
    assert seen == ["GET /a?b=1 HTTP/1.1"]


async def test_a_tunnel_to_an_allowed_host_carries_bytes_both_ways() -> None:
    async with listener() as (port, seen), proxy(["allowed.test"]) as (_, proxy_port):
        reader, writer = await asyncio.open_connection("127.0.0.1", proxy_port)
        writer.write(f"CONNECT allowed.test:{port} HTTP/1.1\r\n\r\n".encode())
        async with asyncio.timeout(10):
            assert await reader.readuntil(b"\r\n\r\n") == (
                b"HTTP/1.1 200 Connection established\r\n\r\n"
            )
            writer.write(b"GET /tunnelled HTTP/1.1\r\n\r\n")
            assert (await reader.read()).endswith(b"hello")
        writer.close()
    assert seen == ["GET /tunnelled HTTP/1.1"]


async def test_a_host_not_on_the_list_gets_a_403_of_one_line_naming_it() -> None:
    async with listener() as (port, seen), proxy(["allowed.test"]) as (running, proxy_port):
        for request in (
            f"CONNECT denied.test:{port} HTTP/1.1\r\n\r\n",
            f"GET http://denied.test:{port}/ HTTP/1.1\r\n\r\n",
        ):
            answer = await exchange(proxy_port, request.encode())
            head, _, body = answer.partition(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 403 Forbidden: denied.test is not on the allow-list")
            assert body == b"paicli sandbox: denied.test is not on the network allow-list\n"
    assert not seen
    assert (
        list(running.refused)
        == ["paicli sandbox: denied.test is not on the network allow-list"] * 2
    )


async def test_a_listed_name_that_resolves_to_this_machine_is_refused() -> None:
    """A name on the list must not lead back to this machine's services."""
    async with listener() as (port, seen), proxy(["localhost", "127.0.0.1"]) as (_, proxy_port):
        answer = await exchange(proxy_port, f"CONNECT localhost:{port} HTTP/1.1\r\n\r\n".encode())
        assert answer.endswith(b"localhost resolves to a local or private address, refused\n")
        assert not seen
        # An address listed as itself is the user's explicit choice.
        reader, writer = await asyncio.open_connection("127.0.0.1", proxy_port)
        writer.write(f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n".encode())
        async with asyncio.timeout(10):
            answer = await reader.readuntil(b"\r\n\r\n")
        writer.close()
        assert answer == b"HTTP/1.1 200 Connection established\r\n\r\n"


async def test_malformed_and_oversized_requests_are_refused() -> None:
    async with proxy(["allowed.test"]) as (_, proxy_port):
        assert (await exchange(proxy_port, b"hello\r\n\r\n")).startswith(b"HTTP/1.1 400 ")
        https = b"GET https://allowed.test/ HTTP/1.1\r\n\r\n"
        assert (await exchange(proxy_port, https)).startswith(b"HTTP/1.1 400 ")
        huge = b"GET http://allowed.test/ HTTP/1.1\r\nX: " + b"a" * HEAD_LIMIT + b"\r\n\r\n"
        assert (await exchange(proxy_port, huge)).startswith(b"HTTP/1.1 431 ")


def test_an_alias_must_name_a_loopback_address() -> None:
    with pytest.raises(ValueError, match="must name a loopback address"):
        FilteringProxy(["a.test"], aliases={"a.test": "10.0.0.1"})
