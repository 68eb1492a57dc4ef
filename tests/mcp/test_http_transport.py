"""Streamable HTTP and legacy HTTP+SSE against real servers on 127.0.0.1: the official SDK's
server in its modes, and our fault server (dropped streams, lost sessions, slow, huge and
mistyped bodies, silence, 401). Fault handling added later (2026 header mismatches and
broken streams, TLS, refused connections, the GET stream) is in test_http_faults.py."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack
from typing import Any

import pytest
import pytest_asyncio

import paicli.mcp as m
from paicli.mcp._versions import ProtocolChoice
from tests.conftest import Inbox, recording_handlers
from tests.http_servers import run_http_server
from tests.transports import RecordingTransport

# Real processes, sockets or terminals are the point here (not the in-memory tier).
pytestmark = pytest.mark.real

TIMEOUT = 30.0
ROOT = m.Root("file:///tmp/paicli-http", "project")


def http(url: str, **options: Any) -> m.HttpServer:
    options.setdefault("handshake_timeout", 10)
    options.setdefault("request_timeout", 10)
    return m.HttpServer(url, **options)


async def counter(session: m.ClientSession, tool: str) -> int:
    return int(json.loads((await session.call_tool(tool)).text))


# -- the official SDK's server ----------------------------------------------------------------


def shared_sdk_server(test: Callable[..., Any]) -> Callable[..., Any]:
    """These tests share one SDK server per set of options for the module: each test opens
    its own sessions, and starting the SDK costs most of a second of CPU a time. They are one
    xdist group, so one worker starts the servers (--dist loadgroup), not each worker."""
    for mark in (pytest.mark.asyncio(loop_scope="module"), pytest.mark.xdist_group("sdk-http")):
        test = mark(test)
    return test


class SdkServers:
    """tests/server_programs/sdk_http_server.py, started on first use once per set of options."""

    def __init__(self, stack: AsyncExitStack) -> None:
        self._stack = stack
        self._urls: dict[tuple[str, ...], str] = {}

    async def url(self, *options: str) -> str:
        if options not in self._urls:
            server = run_http_server("sdk_http_server.py", *options)
            self._urls[options] = await self._stack.enter_async_context(server)
        return self._urls[options]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def sdk_servers() -> AsyncIterator[SdkServers]:
    async with AsyncExitStack() as stack:
        yield SdkServers(stack)


@pytest.mark.parametrize(
    ("mode", "protocol", "era"),
    [
        ((), "auto", "modern"),
        ((), "legacy", "legacy"),
        (("--json-response",), "legacy", "legacy"),
        (("--json-response",), "auto", "modern"),
        (("--stateless",), "legacy", "legacy"),
        (("--stateless", "--json-response"), "legacy", "legacy"),
    ],
)
@shared_sdk_server
async def test_sdk_streamable_http_server_in_each_mode(
    mode: tuple[str, ...], protocol: str, era: str, sdk_servers: SdkServers
) -> None:
    asked: dict[str, list[dict[str, Any]]] = {}
    handlers = recording_handlers(asked, ROOT, {"name": "Ada"})
    async with asyncio.timeout(TIMEOUT):
        url = await sdk_servers.url(*mode)
        async with m.connect(http(url, protocol=protocol), handlers=handlers) as session:
            assert session.era == era
            assert type(session.transport).__name__ == "StreamableHttpTransport"
            names = {tool.name for tool in await session.list_tools()}
            assert {"echo", "add", "greet", "count"} <= names
            assert (await session.call_tool("echo", {"text": "über"})).text == "über"
            assert (await session.call_tool("add", {"a": 2, "b": 3})).structured_content == {
                "total": 5
            }
            progress: list[m.Progress] = []
            done = await session.call_tool("count", {"steps": 2}, on_progress=progress.append)
            assert done.text == "counted to 2"
            if "--json-response" not in mode:
                assert [p.progress for p in progress] == [1.0, 2.0]
            back_channel = "--json-response" not in mode or era == "modern"
            if "--stateless" not in mode and back_channel:
                # A server ask mid-call: an SSE-borne request (legacy) or input_required (2026).
                assert (await session.call_tool("greet")).text == "hello Ada"
            resource = await session.read_resource("test://static/hello")
            assert resource.contents[0] == m.TextResourceContents(
                "test://static/hello", "hello resource", "text/plain"
            )


@shared_sdk_server
async def test_sdk_legacy_sse_server_is_reached_by_falling_back(sdk_servers: SdkServers) -> None:
    async with asyncio.timeout(TIMEOUT):
        url = await sdk_servers.url("--transport", "sse")
        async with m.connect({"url": url, "startupTimeout": 10}) as session:
            assert type(session.transport).__name__ == "LegacySseTransport"
            assert session.transport.traits.kind == "sse"
            assert session.era == "legacy"
            assert (await session.call_tool("echo", {"text": "old"})).text == "old"


@shared_sdk_server
async def test_forced_sse_type_goes_straight_to_the_legacy_transport(
    sdk_servers: SdkServers,
) -> None:
    async with asyncio.timeout(TIMEOUT):
        url = await sdk_servers.url("--transport", "sse")
        async with m.connect({"url": url, "type": "sse"}) as session:
            assert type(session.transport).__name__ == "LegacySseTransport"
            assert {"echo", "add"} <= {tool.name for tool in await session.list_tools()}


@shared_sdk_server
async def test_forced_http_type_does_not_fall_back(sdk_servers: SdkServers) -> None:
    async with asyncio.timeout(TIMEOUT):
        url = await sdk_servers.url("--transport", "sse")
        with pytest.raises(m.HttpError, match="HTTP 405"):
            async with m.connect({"url": url, "type": "http"}):
                pass


# -- our fault server -------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["normal", "json"])
async def test_session_id_is_kept_and_deleted_on_close(mode: str) -> None:
    async with (
        asyncio.timeout(TIMEOUT),
        run_http_server("http_fault_server.py", "--mode", mode) as url,
    ):
        async with m.connect(http(url)) as session:
            assert session.era == "legacy"
            assert session.transport.session_id  # type: ignore[attr-defined]
            assert (await session.call_tool("echo", {"text": "a"})).text == "a"
            results = await asyncio.gather(
                *(session.call_tool("echo", {"text": str(i)}) for i in range(50))
            )
            assert [r.text for r in results] == [str(i) for i in range(50)]
        async with m.connect(http(url)) as probe:
            assert await counter(probe, "deleted_sessions") == 1


async def test_a_dropped_stream_is_resumed_with_last_event_id() -> None:
    async with (
        asyncio.timeout(TIMEOUT),
        run_http_server("http_fault_server.py", "--mode", "drop_stream") as url,
    ):
        async with m.connect(http(url)) as session:
            assert (await session.call_tool("echo", {"text": "back"})).text == "back"
            assert await counter(session, "resume_count") >= 1


async def test_a_lost_session_is_initialized_again_and_the_tool_call_is_not_repeated() -> None:
    async with (
        asyncio.timeout(TIMEOUT),
        run_http_server("http_fault_server.py", "--mode", "session_loss") as url,
    ):
        async with m.connect(http(url)) as session:
            first = session.transport.session_id  # type: ignore[attr-defined]
            with pytest.raises(m.SessionExpired) as info:
                await session.call_tool("echo", {"text": "once"})
            assert info.value.renewed
            assert "lost its session (HTTP 404)" in str(info.value)
            assert "not sent again" in str(info.value)
            # The tool call reached the server once; the new session serves the next one.
            assert len(json.loads((await session.call_tool("tool_calls")).text)) == 1
            assert (await session.call_tool("echo", {"text": "again"})).text == "again"
            assert session.transport.session_id != first  # type: ignore[attr-defined]
            assert await counter(session, "initialize_count") == 2


async def test_a_request_that_is_not_a_tool_call_is_sent_again_in_the_new_session() -> None:
    async with (
        asyncio.timeout(TIMEOUT),
        run_http_server(
            "http_fault_server.py", "--mode", "session_loss", "--lose-on", "tools/list"
        ) as url,
    ):
        async with m.connect(http(url)) as session:
            assert "echo" in [tool.name for tool in await session.list_tools()]
            assert await counter(session, "initialize_count") == 2
            assert await counter(session, "tools_list_count") == 1


async def test_a_session_not_found_error_with_400_is_a_lost_session_too() -> None:
    async with (
        asyncio.timeout(TIMEOUT),
        run_http_server("http_fault_server.py", "--mode", "session_error") as url,
    ):
        async with m.connect(http(url)) as session:
            with pytest.raises(m.SessionExpired, match=r"HTTP 400") as info:
                await session.call_tool("echo", {"text": "once"})
            assert info.value.renewed
            assert await counter(session, "initialize_count") == 2


async def test_a_session_that_cannot_be_established_again_says_so() -> None:
    async with (
        asyncio.timeout(TIMEOUT),
        run_http_server("http_fault_server.py", "--mode", "session_gone") as url,
    ):
        async with m.connect(http(url)) as session:
            with pytest.raises(m.SessionExpired) as info:
                await session.call_tool("echo", {"text": "once"})
            assert not info.value.renewed
            message = str(info.value)
            assert "lost its session (HTTP 404), and a new one could not be established" in message
            assert "initialize was answered with HTTP 404" in message
            # The next request tries again, and says the same.
            with pytest.raises(m.SessionExpired, match="could not be established"):
                await session.list_tools()


async def test_a_new_session_after_a_lost_one_tells_subscribers_the_tools_may_have_changed() -> (
    None
):
    inbox = Inbox()
    async with (
        asyncio.timeout(TIMEOUT),
        run_http_server("http_fault_server.py", "--mode", "session_loss") as url,
    ):
        async with m.connect(http(url)) as session:
            session.subscribe(inbox)
            with pytest.raises(m.SessionExpired):
                await session.call_tool("echo", {"text": "again"})
            note = await inbox.wait_for(lambda n: n.method == "notifications/tools/list_changed")
            assert note.params == {}


async def test_a_slow_body_hits_the_request_deadline() -> None:
    async with (
        asyncio.timeout(TIMEOUT),
        run_http_server("http_fault_server.py", "--mode", "slow_body") as url,
    ):
        async with m.connect(http(url)) as session:
            with pytest.raises(m.RequestTimeout):
                await session.call_tool("echo", {"text": "x"}, timeout=0.5)


async def test_a_huge_body_is_refused_with_bounded_memory() -> None:
    async with (
        asyncio.timeout(TIMEOUT),
        run_http_server("http_fault_server.py", "--mode", "huge_body") as url,
    ):
        async with m.connect(http(url, max_message_size=4 * 1024 * 1024)) as session:
            with pytest.raises(m.MessageTooLarge):
                await session.call_tool("echo", {"text": "x"})
            # Only that request failed; the session goes on.
            assert (await session.call_tool("resume_count")).is_error is False


async def test_a_wrong_content_type_is_a_clear_error() -> None:
    async with (
        asyncio.timeout(TIMEOUT),
        run_http_server("http_fault_server.py", "--mode", "wrong_content_type") as url,
    ):
        with pytest.raises(m.HttpError, match="unexpected content type 'text/html'"):
            async with m.connect(http(url, protocol="legacy")):
                pass


async def test_a_server_that_never_answers_times_out_the_handshake() -> None:
    async with (
        asyncio.timeout(TIMEOUT),
        run_http_server("http_fault_server.py", "--mode", "never_answers") as url,
    ):
        with pytest.raises(m.RequestTimeout, match="initialize timed out"):
            async with m.connect(http(url, protocol="legacy", handshake_timeout=0.5)):
                pass


async def test_401_is_an_authentication_error_naming_the_server() -> None:
    async with (
        asyncio.timeout(TIMEOUT),
        run_http_server("http_fault_server.py", "--mode", "unauthorized") as url,
    ):
        with pytest.raises(m.AuthenticationError, match=r"remote: HTTP 401") as info:
            async with m.connect(http(url, name="remote")):
                pass
    assert info.value.status == 401
    assert info.value.www_authenticate is not None


async def test_a_2024_server_refusing_post_is_reached_over_legacy_sse() -> None:
    async with (
        asyncio.timeout(TIMEOUT),
        run_http_server("http_fault_server.py", "--mode", "legacy_only_sse") as url,
    ):
        async with m.connect(http(url)) as session:
            assert type(session.transport).__name__ == "LegacySseTransport"
            assert (await session.call_tool("echo", {"text": "sse"})).text == "sse"


@shared_sdk_server
async def test_custom_headers_reach_the_server(sdk_servers: SdkServers) -> None:
    async with asyncio.timeout(TIMEOUT):
        url = await sdk_servers.url("--json-response")
        server = http(url, headers={"X-Api-Key": "secret"}, protocol="legacy")
        async with m.connect(server) as session:
            assert (await session.call_tool("echo", {"text": "with key"})).text == "with key"


@pytest.mark.parametrize(
    ("protocol", "era", "notifies"), [("legacy", "legacy", True), ("auto", "modern", False)]
)
@shared_sdk_server
async def test_a_deadline_cancels_the_call_and_the_session_goes_on(
    protocol: ProtocolChoice, era: str, notifies: bool, sdk_servers: SdkServers
) -> None:
    # 2025 eras send notifications/cancelled; 2026 closes the request's stream instead.
    async with asyncio.timeout(TIMEOUT):
        url = await sdk_servers.url()
        spec = http(url, protocol=protocol)
        wire = RecordingTransport(m.StreamableHttpTransport(spec.url))
        timeouts = m.Timeouts(spec.handshake_timeout, spec.request_timeout)
        async with m.ClientSession(wire, protocol=protocol, timeouts=timeouts) as session:
            assert session.era == era
            start = len(wire.sent)
            with pytest.raises(m.RequestTimeout):
                await session.call_tool("wait", {"seconds": 30}, timeout=0.3)
            call = wire.sent[start]
            assert call["method"] == "tools/call"
            # The session first offers the transport the cancellation: only 2026 takes it.
            assert wire.cancelled == [(call["id"], not notifies)]
            notice = {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": call["id"], "reason": "timeout"},
            }
            assert wire.sent[start + 1 :] == ([notice] if notifies else [])
            assert (await session.call_tool("echo", {"text": "next"})).text == "next"


@shared_sdk_server
async def test_caller_cancellation_of_an_http_call_stays_a_cancellation(
    sdk_servers: SdkServers,
) -> None:
    async with asyncio.timeout(TIMEOUT):
        url = await sdk_servers.url()
        wire = RecordingTransport(m.StreamableHttpTransport(url))
        async with m.ClientSession(wire, protocol="legacy") as session:
            call = asyncio.ensure_future(session.call_tool("wait", {"seconds": 30}))
            await wire.sending("tools/call")
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
            assert (await session.call_tool("echo", {"text": "after"})).text == "after"


@pytest.mark.parametrize(
    ("session_id", "problem"),
    [
        ("abc def", "has ' ' at character 4"),
        ("caf\u00e9", "has '\\udce9' at character 4"),  # Latin-1 é: not even UTF-8
        ("x" * 1025, "is 1,025 characters long"),
    ],
)
async def test_an_unusable_session_id_fails_the_connection_with_one_line(
    session_id: str, problem: str
) -> None:
    async with run_http_server("http_fault_server.py", "--session-id", session_id) as url:
        with pytest.raises(m.McpError) as failed:
            async with asyncio.timeout(10), m.connect(http(url, protocol="legacy")):
                pass
    message = str(failed.value)
    assert f"the server's Mcp-Session-Id {problem}" in message
    assert "visible ASCII" in message and "\n" not in message
    assert session_id not in message


async def test_a_session_id_of_1_kib_of_visible_ascii_is_used() -> None:
    session_id = "!~" * 512
    async with (
        run_http_server("http_fault_server.py", "--session-id", session_id) as url,
        m.connect(http(url, protocol="legacy")) as session,
    ):
        assert (await session.call_tool("echo", {"text": "ok"})).text == "ok"
