"""The Streamable HTTP transport's POSTs one layer below `aiohttp.ClientSession.request`
(`paicli.mcp._http_direct`), against a hand-written endpoint on loopback (tests/raw_http.py):
what `ClientSession.request` would do for them still happens (cookies kept and sent back,
configured headers under the transport's own), a client passed in keeps the whole of
`ClientSession.request` (its trace hooks see every request), a small body goes out from
the request's `send` (no task of aiohttp's writes it) and any other through aiohttp's own,
and the layer is used only with the aiohttp releases it was written for."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Generator, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import aiohttp
import pytest

import paicli.mcp as m
from paicli.mcp._http_direct import INLINE_LIMIT, InlineRequest, direct_post, supported
from paicli.mcp._http_exchange import HTTP_TIMEOUT
from tests.raw_http import Request, default_answer, raw_http_server

pytestmark = pytest.mark.real

TIMEOUT = 20.0
T = TypeVar("T")


def http(url: str, **options: Any) -> m.HttpServer:
    options.setdefault("handshake_timeout", 10)
    options.setdefault("request_timeout", 10)
    return m.HttpServer(url, transport="http", **options)


def sticky(request: Request) -> bytes | None:
    """A load balancer's sticky-session cookie, set on the answer to `initialize`."""
    if request.message.get("method") != "initialize":
        return None
    head, _, rest = default_answer(request).partition(b"\r\n")
    return head + b"\r\nSet-Cookie: node=b-2; Path=/; HttpOnly\r\n" + rest


async def test_a_sticky_session_cookie_goes_back_with_every_later_request() -> None:
    async with asyncio.timeout(TIMEOUT), raw_http_server(sticky) as server:
        # A host name: aiohttp's cookie jar ignores cookies from IP addresses.
        url = server.url.replace("127.0.0.1", "localhost")
        async with m.connect(http(url)) as session:
            assert (await session.call_tool("echo", {"text": "one"})).text == "one"
            assert (await session.call_tool("echo", {"text": "two"})).text == "two"
    methods = [r.message.get("method") for r in server.requests if r.method == "POST"]
    after = methods.index("initialize") + 1
    assert methods[after:] == ["notifications/initialized", "tools/call", "tools/call"]
    posts = [r for r in server.requests if r.method == "POST"][after:]
    assert [r.headers.get("cookie") for r in posts] == ["node=b-2"] * 3
    before = [r for r in server.requests if r.method == "POST"][:after]
    assert all("cookie" not in r.headers for r in before)


async def test_configured_headers_go_under_the_transports_own() -> None:
    configured = {"X-Api-Key": "secret", "content-type": "text/plain", "Accept": "text/html"}
    async with asyncio.timeout(TIMEOUT), raw_http_server() as server:
        async with m.connect(http(server.url, headers=configured)) as session:
            await session.call_tool("echo", {"text": "x"})
    posts = [r for r in server.requests if r.method == "POST"]
    assert len(posts) >= 3
    for request in posts:
        assert request.headers["x-api-key"] == "secret"
        assert request.headers["content-type"] == "application/json"
        assert request.headers["accept"] == "application/json, text/event-stream"


async def test_a_client_passed_in_keeps_its_trace_hooks_for_every_request() -> None:
    seen: list[str] = []

    async def on_start(_: object, __: object, params: aiohttp.TraceRequestStartParams) -> None:
        seen.append(params.method)

    trace = aiohttp.TraceConfig()
    trace.on_request_start.append(on_start)
    async with asyncio.timeout(TIMEOUT), raw_http_server() as server:
        client = aiohttp.ClientSession(trace_configs=[trace])
        transport = m.StreamableHttpTransport(server.url, client=client)
        async with m.ClientSession(transport) as session:
            await session.call_tool("echo", {"text": "x"})
    assert seen == [r.method for r in server.requests]
    assert seen.count("POST") >= 3


async def test_a_refused_connection_on_a_direct_post_is_one_line_naming_the_server() -> None:
    async with raw_http_server() as server:
        url = server.url
    with pytest.raises(m.McpError, match="cannot connect to") as info:
        async with asyncio.timeout(TIMEOUT), m.connect(http(url, handshake_timeout=5)):
            pass
    assert "\n" not in str(info.value)


@contextmanager
def body_writers() -> Iterator[list[str]]:
    """The tasks aiohttp starts to write request bodies (`ClientRequest.write_bytes`) while
    the block runs, by name: the loop's task factory sees every task made."""
    loop = asyncio.get_running_loop()
    started: list[str] = []
    factory = loop.get_task_factory()

    def counting(
        loop: asyncio.AbstractEventLoop, coro: Generator[Any, None, T] | Coroutine[Any, Any, T], /
    ) -> asyncio.Future[T]:
        name = getattr(coro, "__qualname__", "")
        if name.endswith("write_bytes"):
            started.append(name)
        return asyncio.Task(coro, loop=loop)

    loop.set_task_factory(counting)
    try:
        yield started
    finally:
        loop.set_task_factory(factory)


async def test_a_small_body_goes_out_from_send_and_a_large_one_through_aiohttps_writer() -> None:
    small, large = "s" * 100, "L" * (INLINE_LIMIT * 4)
    async with asyncio.timeout(TIMEOUT), raw_http_server() as server:
        async with m.connect(http(server.url)) as session:
            with body_writers() as started:
                assert (await session.call_tool("echo", {"text": small})).text == small
            assert started == []
            with body_writers() as started:
                assert (await session.call_tool("echo", {"text": large})).text == large
            assert started == ["ClientRequest.write_bytes"]
    calls = [r for r in server.requests if r.message.get("method") == "tools/call"]
    assert [r.message["params"]["arguments"]["text"] for r in calls] == [small, large]
    for request in calls:
        assert request.headers["content-length"] == str(len(request.body))
        assert request.headers["content-type"] == "application/json"


async def test_a_connector_closing_every_connection_still_says_so_on_a_direct_post() -> None:
    async with asyncio.timeout(TIMEOUT), raw_http_server() as server:
        client = aiohttp.ClientSession(
            timeout=HTTP_TIMEOUT, connector=aiohttp.TCPConnector(force_close=True)
        )
        async with client:
            direct = direct_post(client, server.url)
            assert direct is not None
            headers = {"Content-Type": "application/json"}
            message = b'{"jsonrpc": "2.0", "method": "notifications/initialized"}'
            with body_writers() as started:
                response = await direct.post(headers, message)
                response.release()
            assert started == ["ClientRequest.write_bytes"]
    assert response.status == 202
    assert server.requests[0].headers["connection"] == "close"
    assert server.requests[0].body == message


@pytest.mark.parametrize("size", [20, INLINE_LIMIT, INLINE_LIMIT + 1])
async def test_a_direct_post_sends_what_client_session_request_sends(size: int) -> None:
    body = b'{"pad": "' + b"x" * (size - 11) + b'"}'
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    async with asyncio.timeout(TIMEOUT), raw_http_server() as server:
        async with aiohttp.ClientSession(
            headers={"X-Api-Key": "k", "accept": "text/html"}, timeout=HTTP_TIMEOUT
        ) as client:
            direct = direct_post(client, server.url)
            assert direct is not None
            for _ in range(2):  # the second one from the template made by the first
                (await direct.post(headers, body)).release()
            async with client.post(server.url, headers=headers, data=body) as response:
                await response.read()
    first, second, reference = server.requests
    assert len(body) == size
    assert first == second == reference
    assert first.headers["content-length"] == str(size)


async def test_a_small_body_on_a_connection_paused_for_writing_goes_out_through_aiohttp() -> None:
    async with asyncio.timeout(TIMEOUT), raw_http_server() as server:
        async with aiohttp.ClientSession(timeout=HTTP_TIMEOUT) as client:
            direct = direct_post(client, server.url)
            assert direct is not None
            assert client.connector is not None
            request = direct._request({"Content-Type": "application/json"}, b"{}")
            connection = await client.connector.connect(request, [], HTTP_TIMEOUT)
            protocol = connection.protocol
            assert protocol is not None
            protocol.set_response_params(read_until_eof=True)
            protocol.pause_writing()  # as the transport does when its buffer is full
            with body_writers() as started:
                response = await request.send(connection)
            assert started == ["ClientRequest.write_bytes"]
            protocol.resume_writing()
            await response.start(connection)
            response.release()
    assert response.status == 202
    assert server.requests[0].body == b"{}"
    assert server.requests[0].headers["content-length"] == "2"


JSON = {"Content-Type": "application/json"}


async def test_headers_made_for_each_request_still_have_their_body_written_with_them() -> None:
    # (2026 requests carry headers of their own: no template to copy, a request each.)
    async with aiohttp.ClientSession(timeout=HTTP_TIMEOUT) as client:
        direct = direct_post(client, "http://127.0.0.1:9/mcp")
        assert direct is not None
        for body in (b"{}", b'{"a": 1}', b"[]"):
            request = direct._request({**JSON, "Mcp-Method": "tools/call"}, body)
            assert isinstance(request, InlineRequest)
            assert request.inline == body
            assert request.headers["Content-Length"] == str(len(body))
            assert request.headers["Mcp-Method"] == "tools/call"


@pytest.mark.parametrize(
    "headers",
    [
        {**JSON, "Content-Length": "2"},
        {**JSON, "Transfer-Encoding": "chunked"},
        {**JSON, "Expect": "100-continue"},
        {"Accept": "application/json"},  # no type: aiohttp adds its own
    ],
)
async def test_headers_aiohttp_acts_on_leave_even_a_small_body_to_aiohttp(
    headers: dict[str, str],
) -> None:
    async with aiohttp.ClientSession(timeout=HTTP_TIMEOUT) as client:
        direct = direct_post(client, "http://127.0.0.1:9/mcp")
        assert direct is not None
        assert isinstance(direct._request(JSON, b"{}"), InlineRequest)
        assert not isinstance(direct._request(headers, b"{}"), InlineRequest)


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ("3.14.0", True),
        ("3.14.5", True),
        ("3.13.3", False),
        ("3.15.0", False),
        ("4.0.0a1", False),
        ("garbage", False),
        ("", False),
    ],
)
def test_the_direct_layer_is_used_only_with_the_aiohttp_releases_it_was_written_for(
    version: str, expected: bool
) -> None:
    assert supported(version) is expected


def test_the_locked_aiohttp_is_one_the_direct_layer_was_written_for() -> None:
    # Fails when uv.lock moves to another aiohttp minor release: read `_http_direct` against
    # its request layer (ClientSession._request), then add the release to SUPPORTED.
    assert supported(aiohttp.__version__), aiohttp.__version__
