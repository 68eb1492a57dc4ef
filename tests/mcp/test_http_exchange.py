"""HTTP exchanges against a hand-written endpoint on 127.0.0.1 (tests/raw_http.py): bodies
capped after decompression, bodies cut short, batches, redirects kept within the server's
origin, and refusals that say what was refused and why."""

from __future__ import annotations

import asyncio
import gzip
import json
from typing import Any

import pytest

import paicli.mcp as m
from tests.raw_http import Request, json_response, raw_http_server, response, rpc_result

# Real sockets are the point here (not the in-memory tier).
pytestmark = pytest.mark.real

TIMEOUT = 20.0
MB = 1_000_000


def http(url: str, **options: Any) -> m.HttpServer:
    options.setdefault("handshake_timeout", 10)
    options.setdefault("request_timeout", 10)
    return m.HttpServer(url, transport="http", **options)


def on_call(answer: Any) -> Any:
    """Answer tools/call with `answer(request)`; everything else as a normal server."""

    def reply(request: Request) -> bytes | None:
        if request.message.get("method") != "tools/call":
            return None
        return answer(request)  # type: ignore[no-any-return]

    return reply


# -- bodies ------------------------------------------------------------------------------------


def gzip_reply(request: Request, size: int) -> bytes:
    text = " " * size
    content = {"content": [{"type": "text", "text": text}]}
    body = gzip.compress(json.dumps(rpc_result(request, content)).encode())
    headers = {"Content-Type": "application/json", "Content-Encoding": "gzip"}
    return response(200, body, headers=headers, content_length=len(body))


async def test_a_gzip_body_is_capped_by_what_it_expands_to() -> None:
    # 60 MB of JSON in a body of about 60 KB, under a 1 MB cap.
    bomb = on_call(lambda request: gzip_reply(request, 60 * MB))
    async with asyncio.timeout(TIMEOUT), raw_http_server(bomb) as server:
        async with m.connect(http(server.url, max_message_size=MB)) as session:
            with pytest.raises(m.MessageTooLarge, match="over the 1000000 byte limit"):
                await session.call_tool("echo")


async def test_a_gzip_event_stream_is_capped_by_what_it_expands_to() -> None:
    def bomb(request: Request) -> bytes:
        event = b"data: " + json.dumps(rpc_result(request, {"x": " " * 60 * MB})).encode()
        body = gzip.compress(event + b"\n\n")
        headers = {"Content-Type": "text/event-stream", "Content-Encoding": "gzip"}
        return response(200, body, headers=headers, content_length=len(body))

    async with asyncio.timeout(TIMEOUT), raw_http_server(on_call(bomb)) as server:
        async with m.connect(http(server.url, max_message_size=MB)) as session:
            with pytest.raises(m.MessageTooLarge, match="over the 1000000 byte limit"):
                await session.call_tool("echo")


async def test_a_gzip_body_under_the_cap_is_read_whole() -> None:
    small = on_call(lambda request: gzip_reply(request, MB // 2))
    async with asyncio.timeout(TIMEOUT), raw_http_server(small) as server:
        async with m.connect(http(server.url, max_message_size=MB)) as session:
            assert len((await session.call_tool("echo")).text) == MB // 2


def cut(request: Request, *, declared: bool) -> bytes:
    whole = json.dumps(rpc_result(request, {"content": [{"type": "text", "text": "hello"}]}))
    body = whole.encode()[:40]
    headers = {"Content-Type": "application/json"}
    return response(200, body, headers=headers, content_length=len(whole) if declared else None)


async def test_a_json_body_cut_short_by_the_connection_fails_the_call_at_once() -> None:
    # No Content-Length: the body ends where the connection does, mid-text.
    async with (
        asyncio.timeout(TIMEOUT),
        raw_http_server(on_call(lambda r: cut(r, declared=False))) as server,
    ):
        async with m.connect(http(server.url, request_timeout=60)) as session:
            with pytest.raises(m.HttpError) as info:
                await session.call_tool("echo", {"text": "hello"})
    assert str(info.value) == (
        f"{server.url}: the JSON response to tools/call holds no valid answer to it (cut "
        'short, or not JSON-RPC): "{"jsonrpc": "2.0", "id": 3, "result": {""'
    )


async def test_a_body_shorter_than_its_content_length_fails_the_call_saying_so() -> None:
    async with (
        asyncio.timeout(TIMEOUT),
        raw_http_server(on_call(lambda r: cut(r, declared=True))) as server,
    ):
        async with m.connect(http(server.url, request_timeout=60)) as session:
            with pytest.raises(m.HttpError, match=r"was cut short: .*received 40 of \d+ bytes"):
                await session.call_tool("echo", {"text": "hello"})


@pytest.mark.parametrize(("protocol", "batches"), [("2025-03-26", True), ("2025-11-25", False)])
async def test_a_batch_body_answers_a_call_only_in_a_2025_03_26_session(
    protocol: str, batches: bool
) -> None:
    def batch(request: Request) -> bytes:
        text = {"content": [{"type": "text", "text": "in a batch"}]}
        return json_response([rpc_result(request, text)])

    async with asyncio.timeout(TIMEOUT), raw_http_server(on_call(batch)) as server:
        async with m.connect(http(server.url, protocol=protocol)) as session:
            if batches:
                assert (await session.call_tool("echo")).text == "in a batch"
            else:
                with pytest.raises(m.HttpError, match="holds no valid answer"):
                    await session.call_tool("echo")


# -- refusals ----------------------------------------------------------------------------------


async def test_a_403_shows_the_servers_reason_escaped_and_bounded() -> None:
    reason = b"Access is only allowed at localhost:3000\x1b]0;pwned\x07\n\n" + b"y" * 1000

    def forbidden(request: Request) -> bytes:
        return response(
            403, reason, headers={"Content-Type": "text/plain"}, content_length=len(reason)
        )

    async with asyncio.timeout(TIMEOUT), raw_http_server(forbidden) as server:
        with pytest.raises(m.AuthenticationError) as info:
            async with m.connect(http(server.url)):
                pass
    text = str(info.value)
    assert text.startswith(
        f'{server.url}: HTTP 403 Forbidden: "Access is only allowed at localhost:3000'
        "\\x1b]0;pwned\\x07 yyyy"
    )
    assert text.endswith('yyy…"')
    assert len(text) < len(server.url) + 340
    assert text.isprintable()
    assert "needs credentials" not in text


async def test_a_refused_resumption_says_it_was_the_resumption_that_was_refused() -> None:
    def primed_then_closed(request: Request) -> bytes:
        # A priming event with an id, then the end of the stream before the response.
        headers = {"Content-Type": "text/event-stream"}
        return response(200, b"id: ev-1\nretry: 10\ndata:\n\n", headers=headers)

    async with asyncio.timeout(TIMEOUT), raw_http_server(on_call(primed_then_closed)) as server:
        async with m.connect(http(server.url)) as session:
            with pytest.raises(m.HttpError) as info:
                await session.call_tool("echo")
    assert str(info.value) == (
        f"{server.url}: resuming the response stream of tools/call (GET) was refused: "
        "HTTP 405 Method Not Allowed"
    )
    resumption = server.requests[-1]
    assert (resumption.method, resumption.headers["last-event-id"]) == ("GET", "ev-1")


async def test_look_alike_ids_on_a_stream_do_not_end_the_wait_for_the_answer() -> None:
    # The id as a float, a string and a bool (1.0 == 1 and True == 1 in Python), then the
    # answer: only the last answers the call, so the stream is read on to it.
    def look_alikes(request: Request) -> bytes:
        real = request.message["id"]
        events = b""
        for fake_id, text in ((float(real), "float"), (str(real), "string"), (True, "bool")):
            fake = {"jsonrpc": "2.0", "id": fake_id, "result": {"content": [text_block(text)]}}
            events += b"data: " + json.dumps(fake).encode() + b"\n\n"
        answer = rpc_result(request, {"content": [text_block("the answer")]})
        events += b"data: " + json.dumps(answer).encode() + b"\n\n"
        return response(200, events, headers={"Content-Type": "text/event-stream"})

    async with asyncio.timeout(TIMEOUT), raw_http_server(on_call(look_alikes)) as server:
        async with m.connect(http(server.url)) as session:
            assert (await session.call_tool("echo")).text == "the answer"


def text_block(text: str) -> dict[str, str]:
    return {"type": "text", "text": text}


# -- redirects ---------------------------------------------------------------------------------


async def test_a_redirect_to_another_origin_is_refused_and_the_other_origin_gets_nothing() -> None:
    async with asyncio.timeout(TIMEOUT), raw_http_server() as elsewhere:

        def away(request: Request) -> bytes:
            return response(307, headers={"Location": elsewhere.url})

        async with raw_http_server(away) as server:
            with pytest.raises(m.HttpError) as info:
                async with m.connect(http(server.url, headers={"X-Api-Key": "secret"})):
                    pass
    origin, other = server.url.removesuffix("/mcp"), elsewhere.url.removesuffix("/mcp")
    assert f"on another origin ({other}, not {origin})" in str(info.value)
    assert "not followed, so the configured headers are not sent there" in str(info.value)
    assert elsewhere.requests == []


async def test_a_redirect_within_the_origin_is_followed_with_method_body_and_headers() -> None:
    def moved(request: Request) -> bytes | None:
        if request.path == "/mcp":
            return response(301, headers={"Location": "/mcp/"})
        return None

    async with asyncio.timeout(TIMEOUT), raw_http_server(moved) as server:
        async with m.connect(http(server.url, headers={"X-Api-Key": "secret"})) as session:
            assert (await session.call_tool("echo", {"text": "moved"})).text == "moved"
    # Each request went to /mcp, then again to /mcp/ with its method and body.
    sent = [(r.method, r.body) for r in server.requests if r.path == "/mcp"]
    followed = [(r.method, r.body) for r in server.requests if r.path == "/mcp/"]
    assert followed == sent
    assert ("POST", b"") not in followed
    assert all(r.headers["x-api-key"] == "secret" for r in server.requests)


async def test_a_redirect_loop_within_the_origin_ends_after_five_redirects() -> None:
    def loop(request: Request) -> bytes:
        return response(307, headers={"Location": "/mcp"})

    async with asyncio.timeout(TIMEOUT), raw_http_server(loop) as server:
        with pytest.raises(m.HttpError, match="more than 5 redirects from POST"):
            async with m.connect(http(server.url)):
                pass
    assert len(server.requests) == 2 * 6  # the probe, then initialize: 1 + 5 each
