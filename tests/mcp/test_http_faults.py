"""Streamable HTTP failure handling against our fault server on 127.0.0.1: 2026 header
mismatches and broken response streams, TLS and connection failures, and the legacy GET
stream being reopened when it drops."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import paicli.mcp as m
from paicli.mcp import _http_stream
from tests.conftest import Inbox
from tests.http_servers import run_http_server

# Real processes, sockets or terminals are the point here (not the in-memory tier).
pytestmark = pytest.mark.real

TIMEOUT = 30.0
HEADER_MISMATCH = -32020


def http(url: str, **options: Any) -> m.HttpServer:
    options.setdefault("handshake_timeout", 10)
    options.setdefault("request_timeout", 10)
    return m.HttpServer(url, **options)


async def counter(session: m.ClientSession, tool: str) -> Any:
    return json.loads((await session.call_tool(tool)).text)


def get_stream(session: m.ClientSession) -> asyncio.Task[None]:
    task = session.transport._get_stream  # type: ignore[attr-defined]
    assert task is not None
    return task  # type: ignore[no-any-return]


def closed_port() -> int:
    """A port nothing listens on: bound by us for a moment, then released."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


# -- 2026: -32020 header mismatch -------------------------------------------------------------


async def test_a_header_mismatch_relists_tools_and_retries_the_call_once() -> None:
    async with (
        asyncio.timeout(TIMEOUT),
        run_http_server("http_fault_server.py", "--mode", "header_mismatch") as url,
    ):
        async with m.connect(http(url)) as session:
            assert session.era == "modern"
            await session.list_tools()
            assert (await session.call_tool("echo", {"text": "again"})).text == "again"
            assert await counter(session, "tools_list_count") == 2
            assert len(await counter(session, "tool_calls")) == 2


async def test_a_header_mismatch_every_time_fails_after_exactly_one_retry() -> None:
    async with (
        asyncio.timeout(TIMEOUT),
        run_http_server("http_fault_server.py", "--mode", "header_mismatch", "--always") as url,
    ):
        async with m.connect(http(url)) as session:
            with pytest.raises(m.RpcError) as info:
                await session.call_tool("echo", {"text": "never"})
            assert info.value.code == HEADER_MISMATCH
            assert len(await counter(session, "tool_calls")) == 2
            assert await counter(session, "tools_list_count") == 1


# -- 2026: a response stream that breaks before the response ----------------------------------


async def test_a_broken_2026_response_stream_is_sent_again_under_a_new_id() -> None:
    async with (
        asyncio.timeout(TIMEOUT),
        run_http_server("http_fault_server.py", "--mode", "broken_response_stream") as url,
    ):
        async with m.connect(http(url)) as session:
            assert session.era == "modern"
            assert (await session.call_tool("echo", {"text": "second"})).text == "second"
            first, second = await counter(session, "tool_calls")
            assert first != second


async def test_a_2026_stream_that_breaks_again_fails_the_call_at_once() -> None:
    args = ("--mode", "broken_response_stream", "--always")
    async with asyncio.timeout(TIMEOUT), run_http_server("http_fault_server.py", *args) as url:
        # A deadline far beyond the test's own: the failure must not wait for it.
        async with m.connect(http(url, name="remote", request_timeout=3600)) as session:
            with pytest.raises(m.ConnectionClosed) as info:
                await session.call_tool("echo", {"text": "lost"})
            message = str(info.value)
            assert message.startswith("remote: the response stream for tools/call ended")
            assert "\n" not in message
            # Sent twice, and the session goes on.
            assert len(await counter(session, "tool_calls")) == 2


# -- TLS, refused connections, silence --------------------------------------------------------


@pytest.fixture
def self_signed_certificate(tmp_path: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and its key, made with the openssl command."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("the openssl command is not installed; it makes the test certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    options = "req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1"
    san = "subjectAltName=IP:127.0.0.1"
    command = [openssl, *options.split(), "-addext", san, "-keyout", str(key), "-out", str(cert)]
    subprocess.run(command, check=True, capture_output=True, timeout=60)
    return cert, key


def tls_server(certificate: tuple[Path, Path]) -> contextlib.AbstractAsyncContextManager[str]:
    """The fault server (normal mode) serving HTTPS with `certificate`; its URL."""
    cert, key = certificate
    return run_http_server("http_fault_server.py", "--tls-cert", str(cert), "--tls-key", str(key))


async def test_an_untrusted_certificate_is_a_one_line_tls_error_naming_the_server(
    self_signed_certificate: tuple[Path, Path],
) -> None:
    async with asyncio.timeout(TIMEOUT), tls_server(self_signed_certificate) as url:
        assert url.startswith("https://127.0.0.1:")
        with pytest.raises(m.HttpError) as info:
            async with m.connect(http(url, name="remote")):
                pass
    message = str(info.value)
    assert message.startswith(f"remote: TLS failure connecting to {url}: ")
    assert "certificate verify failed" in message
    assert "\n" not in message


# Run with the test's certificate as the only trusted one (aiohttp makes its TLS context when
# it is imported, from the default paths, which SSL_CERT_FILE replaces).
TRUSTING_CLIENT = """
import asyncio, sys
import paicli.mcp as m

async def main(url):
    server = m.HttpServer(url, transport="http", handshake_timeout=10, request_timeout=10)
    async with m.connect(server) as session:
        for text in ("one", "x" * 40_000):  # a body written with its headers, one aiohttp's
            print(len((await session.call_tool("echo", {"text": text})).text))

asyncio.run(main(sys.argv[1]))
"""


async def test_a_trusted_certificate_carries_small_and_large_calls(
    self_signed_certificate: tuple[Path, Path],
) -> None:
    cert, _ = self_signed_certificate
    async with asyncio.timeout(TIMEOUT), tls_server(self_signed_certificate) as url:
        child = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            TRUSTING_CLIENT,
            url,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "SSL_CERT_FILE": str(cert)},
        )
        out, err = await child.communicate()
    assert child.returncode == 0, err.decode()
    assert out.decode().split() == ["3", "40000"]


async def test_connection_refused_is_one_line_naming_the_server_and_url() -> None:
    url = f"http://127.0.0.1:{closed_port()}/mcp"
    with pytest.raises(m.HttpError) as info:
        async with asyncio.timeout(TIMEOUT), m.connect(http(url, name="remote")):
            pass
    message = str(info.value)
    assert message.startswith(f"remote: cannot connect to {url}: ")
    assert "\n" not in message


async def test_a_server_that_never_answers_is_a_timeout_naming_the_server() -> None:
    async with (
        asyncio.timeout(TIMEOUT),
        run_http_server("http_fault_server.py", "--mode", "never_answers") as url,
    ):
        with pytest.raises(m.RequestTimeout) as info:
            async with m.connect(http(url, name="remote", handshake_timeout=0.5)):
                pass
    assert str(info.value).startswith("remote: ")


def is_log_message(note: m.Notification) -> bool:
    return note.method == "notifications/message"


# -- the legacy GET stream --------------------------------------------------------------------


async def test_a_dropped_get_stream_is_reopened_from_its_last_event_id() -> None:
    # The server refuses two reopenings in three and checks Last-Event-ID on each; three
    # notifications mean the client resumed from the right id every time and reset its
    # failure count after each success (else it would give up after the fourth reopening).
    inbox = Inbox()
    async with (
        asyncio.timeout(TIMEOUT),
        run_http_server("http_fault_server.py", "--mode", "drop_get_stream") as url,
    ):
        async with m.connect(http(url)) as session:
            session.subscribe(inbox)
            seen = 0
            for n in (3, 6, 9):
                note = await inbox.wait_for(is_log_message, start=seen)
                assert note.params["data"] == f"reopening {n}"
                seen = inbox.notes.index(note) + 1


async def test_get_stream_reopening_gives_up_after_failures_in_a_row() -> None:
    async with (
        asyncio.timeout(TIMEOUT),
        run_http_server("http_fault_server.py", "--mode", "drop_get_stream", "--always") as url,
    ):
        async with m.connect(http(url)) as session:
            await asyncio.wait({get_stream(session)})
            assert await counter(session, "resume_count") == 1 + _http_stream.MAX_RESUMES


async def test_a_405_to_the_get_stream_means_none_is_offered() -> None:
    async with (
        asyncio.timeout(TIMEOUT),
        run_http_server("http_fault_server.py", "--mode", "normal") as url,
    ):
        async with m.connect(http(url)) as session:
            await asyncio.wait({get_stream(session)})
            assert await counter(session, "resume_count") == 1


async def test_closing_the_transport_stops_reopening_the_get_stream_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # After its first refusal the client would wait hours to reopen the stream.
    monkeypatch.setattr(_http_stream, "GET_BACKOFF_FACTOR", 1e6)
    async with (
        asyncio.timeout(TIMEOUT),
        run_http_server("http_fault_server.py", "--mode", "drop_get_stream", "--always") as url,
    ):
        async with m.connect(http(url)) as session:
            task = get_stream(session)
            while await counter(session, "resume_count") < 2:
                pass  # each turn is a round trip to the server
            assert not task.done()
        assert task.cancelled()


async def test_a_discovery_probe_whose_stream_ends_empty_falls_back_to_the_handshake() -> None:
    async with (
        asyncio.timeout(TIMEOUT),
        run_http_server("http_fault_server.py", "--mode", "broken_discover") as url,
    ):
        async with m.connect(http(url)) as session:
            assert session.era == "legacy"
            assert (await session.call_tool("echo", {"text": "hi"})).text == "hi"


# -- cancellation: 2026 closes the request's stream, earlier eras notify -----------------------


@pytest.mark.parametrize(
    ("mode", "era", "notified"),
    [("modern", "modern", []), ("normal", "legacy", ["notifications/cancelled"])],
)
async def test_a_timed_out_call_is_cancelled_the_way_its_era_says(
    mode: str, era: str, notified: list[str]
) -> None:
    # 2026: closing the request's stream is the cancellation; a notifications/cancelled POST
    # would be answered 400. Before 2026 a dropped stream is no cancellation: notify.
    async with (
        asyncio.timeout(TIMEOUT),
        run_http_server("http_fault_server.py", "--mode", mode) as url,
    ):
        async with m.connect(http(url)) as session:
            assert session.era == era
            with pytest.raises(m.RequestTimeout):
                await session.call_tool("sleep", {"seconds": 30}, timeout=0.2)
            cancelled = [n for n in await counter(session, "notifications") if "cancel" in n]
            assert cancelled == notified


async def test_a_cancelled_2026_call_posts_no_notification() -> None:
    async with (
        asyncio.timeout(TIMEOUT),
        run_http_server("http_fault_server.py", "--mode", "modern") as url,
    ):
        async with m.connect(http(url)) as session:
            call = asyncio.ensure_future(session.call_tool("sleep", {"seconds": 30}))
            # The call is in flight once the server has counted it.
            while not await counter(session, "tool_calls"):
                pass
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
            assert await counter(session, "notifications") == []
            assert (await session.call_tool("echo", {"text": "after"})).text == "after"


async def test_an_sdk_1x_server_refusing_the_probe_is_reached_at_once() -> None:
    # Its 400 carries an error with id "server-error"; that error answers the probe, so the
    # handshake follows at once instead of after the 10 s probe timeout.
    async with (
        asyncio.timeout(TIMEOUT),
        run_http_server("http_fault_server.py", "--mode", "sdk1_discover") as url,
    ):
        async with asyncio.timeout(3), m.connect(http(url)) as session:
            assert session.era == "legacy"
            assert (await session.call_tool("echo", {"text": "sdk1"})).text == "sdk1"
