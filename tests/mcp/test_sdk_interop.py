"""Interop with a server built on the official `mcp` SDK, in both protocol eras.

The server (tests/server_programs/sdk_server.py) runs in this process on the in-memory transport
(tests/sdk_memory.py); the tests marked `real` run it as a subprocess over stdio. One session
per era, with all three client handlers, is shared by the module; tests that need a
differently configured client open their own session.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest
import pytest_asyncio

import paicli.mcp as m
from paicli.mcp._versions import ProtocolChoice
from tests.conftest import Inbox, recording_handlers, sdk_server
from tests.processes import server_process
from tests.sdk_memory import sdk_in_memory
from tests.transports import RecordingTransport

pytestmark = [
    pytest.mark.asyncio(loop_scope="module"),
    # One worker opens the module's shared SDK sessions (an SDK server each), not every one.
    pytest.mark.xdist_group("sdk-stdio"),
    # The SDK warns when its own tools log (logging is deprecated in 2026-07-28); in a
    # subprocess nobody sees that, in this process the suite would turn it into an error.
    pytest.mark.filterwarnings("ignore:The logging capability is deprecated"),
]

TIMEOUT = 20.0
ROOT = m.Root("file:///tmp/paicli-interop-project", "project")
# The SDK answers a resolver whose client capability is missing with this code.
MISSING_CAPABILITY = -32021


def sdk_spec(protocol: ProtocolChoice) -> m.StdioServer:
    return sdk_server(protocol=protocol, handshake_timeout=TIMEOUT, request_timeout=TIMEOUT)


@dataclass
class Sdk:
    """A live session plus what its handlers were asked and what it was notified of."""

    session: m.ClientSession
    inbox: Inbox
    asked: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    protocol: ProtocolChoice = "auto"  # the era pinned in the server's description

    async def logs_during(self, call: Awaitable[object]) -> list[tuple[str, str]]:
        """(level, data) of the log messages that arrived while `call` ran. The server
        sends a tool's logs before its result on the same stream, so none can be late."""
        start = len(self.inbox.notes)
        await call
        return [
            (note.params["level"], note.params["data"])
            for note in self.inbox.notes[start:]
            if note.method == "notifications/message"
        ]


async def broken_model(params: dict[str, Any]) -> dict[str, Any]:
    raise RuntimeError("no model available")


@asynccontextmanager
async def open_sdk(
    protocol: ProtocolChoice, handlers: m.ClientHandlers | None = None
) -> AsyncIterator[Sdk]:
    asked: dict[str, list[dict[str, Any]]] = {}
    inbox = Inbox()
    async with AsyncExitStack() as stack:
        async with asyncio.timeout(TIMEOUT):
            transport = await stack.enter_async_context(sdk_in_memory())
            session = await stack.enter_async_context(
                m.ClientSession(
                    transport,
                    name="sdk",
                    protocol=protocol,
                    timeouts=m.Timeouts(TIMEOUT, TIMEOUT),
                    handlers=handlers or recording_handlers(asked, ROOT, {"name": "Ada"}),
                )
            )
        session.subscribe(inbox)
        yield Sdk(session, inbox, asked, protocol)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def legacy_sdk() -> AsyncIterator[Sdk]:
    async with open_sdk("legacy") as sdk:
        yield sdk


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def modern_sdk() -> AsyncIterator[Sdk]:
    async with open_sdk("modern") as sdk:
        yield sdk


@pytest.fixture(params=["legacy", "modern"])
def sdk(request: pytest.FixtureRequest) -> Sdk:
    """The shared session of each era in turn."""
    result: Sdk = request.getfixturevalue(f"{request.param}_sdk")
    return result


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=["legacy", "modern"])
async def sampling_only(request: pytest.FixtureRequest) -> AsyncIterator[Sdk]:
    """A client that declares only sampling, with a model that always fails."""
    async with open_sdk(request.param, m.ClientHandlers(sampling=broken_model)) as sdk:
        yield sdk


# -- negotiation ---------------------------------------------------------------------------


async def test_each_pinned_era_is_negotiated_and_reports_the_server(sdk: Sdk) -> None:
    session = sdk.session
    expected = {"legacy": "2025-11-25", "modern": "2026-07-28"}[session.era]
    assert session.era == sdk.protocol
    assert session.protocol_version == expected
    assert session.server_info.name == "sdk-test-server"
    assert session.instructions == "Test server for paicli interop."
    assert {"tools", "resources", "prompts"} <= session.server_capabilities.keys()


@pytest.mark.real
async def test_auto_picks_the_modern_era_of_a_dual_era_server_over_stdio() -> None:
    async with asyncio.timeout(TIMEOUT), m.connect(sdk_spec("auto")) as session:
        assert session.era == "modern"
        assert session.protocol_version == "2026-07-28"
        assert (await session.call_tool("echo", {"text": "auto"})).text == "auto"
        assert isinstance(server_process(session).pid, int)


@pytest.mark.real
async def test_a_pinned_handshake_version_is_offered_and_kept() -> None:
    async with asyncio.timeout(TIMEOUT), m.connect(sdk_spec("2025-06-18")) as session:
        assert session.era == "legacy"
        assert session.protocol_version == "2025-06-18"
        assert (await session.call_tool("echo", {"text": "pinned"})).text == "pinned"


@pytest.mark.real
async def test_a_legacy_pin_does_not_decide_what_auto_picks_later() -> None:
    async with asyncio.timeout(TIMEOUT):
        async with m.connect(sdk_spec("legacy")) as session:
            assert session.era == "legacy"
        async with m.connect(sdk_spec("auto")) as session:
            assert session.era == "modern"


# -- tools ---------------------------------------------------------------------------------


async def test_tools_are_listed_with_schemas(sdk: Sdk) -> None:
    async with asyncio.timeout(TIMEOUT):
        tools = {tool.name: tool for tool in await sdk.session.list_tools()}
    assert set(tools) == {
        "echo",
        "add",
        "search",
        "fail",
        "wait",
        "count",
        "greet",
        "think",
        "roots",
    }
    assert tools["echo"].description == "Echo the text back."
    assert tools["echo"].input_schema["required"] == ["text"]
    assert tools["add"].output_schema is not None
    assert tools["add"].output_schema["properties"]["total"]["type"] == "integer"


async def test_a_tool_returns_text_and_its_wrapped_structured_result(sdk: Sdk) -> None:
    async with asyncio.timeout(TIMEOUT):
        result = await sdk.session.call_tool("echo", {"text": "hi there"})
    assert result.content == [m.TextContent("hi there")]
    assert result.structured_content == {"result": "hi there"}
    assert not result.is_error


async def test_a_tool_returns_structured_content_matching_its_output_schema(sdk: Sdk) -> None:
    async with asyncio.timeout(TIMEOUT):
        result = await sdk.session.call_tool("add", {"a": 2, "b": 3})
    assert result.structured_content == {"total": 5}
    assert '"total": 5' in result.text


async def test_a_failing_tool_comes_back_as_is_error_not_an_exception(sdk: Sdk) -> None:
    async with asyncio.timeout(TIMEOUT):
        result = await sdk.session.call_tool("fail", {"reason": "boom"})
    assert result.is_error
    assert result.text == "Error executing tool fail"
    assert result.structured_content is None


async def test_progress_reaches_the_callback_in_order(sdk: Sdk) -> None:
    updates: list[m.Progress] = []
    async with asyncio.timeout(TIMEOUT):
        result = await sdk.session.call_tool("count", {"steps": 3}, on_progress=updates.append)
    assert result.text == "counted to 3"
    assert updates == [m.Progress(float(i), 3.0, f"step {i}") for i in (1, 2, 3)]


async def test_legacy_server_without_logging_capability_rejects_set_level_but_still_logs(
    legacy_sdk: Sdk,
) -> None:
    session = legacy_sdk.session
    assert "logging" not in session.server_capabilities
    async with asyncio.timeout(TIMEOUT):
        with pytest.raises(m.RpcError) as error:
            await session.set_logging_level("warning")
        logs = await legacy_sdk.logs_during(session.call_tool("count", {"steps": 2}))
    assert error.value.code == -32601
    # The SDK sends tool logs regardless of the (rejected) level.
    assert logs == [("info", "counted 1"), ("info", "counted 2")]


async def test_modern_era_delivers_logs_at_the_requested_level(modern_sdk: Sdk) -> None:
    session = modern_sdk.session
    async with asyncio.timeout(TIMEOUT):
        await session.set_logging_level("warning")
        quiet = await modern_sdk.logs_during(session.call_tool("count", {"steps": 2}))
        await session.set_logging_level("info")
        logs = await modern_sdk.logs_during(session.call_tool("count", {"steps": 2}))
    assert quiet == []
    assert logs == [("info", "counted 1"), ("info", "counted 2")]


# -- client handlers -----------------------------------------------------------------------


async def test_elicitation_is_answered_by_the_handler(sdk: Sdk) -> None:
    async with asyncio.timeout(TIMEOUT):
        result = await sdk.session.call_tool("greet", {})
    assert result.text == "hello Ada"
    params = sdk.asked["elicitation"][-1]
    assert params["message"] == "What is your name?"
    assert params["requestedSchema"]["required"] == ["name"]


async def test_sampling_is_answered_by_the_handler(sdk: Sdk) -> None:
    async with asyncio.timeout(TIMEOUT):
        result = await sdk.session.call_tool("think", {})
    assert result.text == "hi from the model"
    params = sdk.asked["sampling"][-1]
    assert params["maxTokens"] == 20
    assert params["messages"] == [{"role": "user", "content": {"type": "text", "text": "say hi"}}]


async def test_roots_are_answered_from_the_handler(sdk: Sdk) -> None:
    async with asyncio.timeout(TIMEOUT):
        result = await sdk.session.call_tool("roots", {})
    assert result.text == ROOT.uri


async def test_a_missing_handler_gives_a_readable_capability_error(sampling_only: Sdk) -> None:
    session = sampling_only.session
    async with asyncio.timeout(TIMEOUT):
        with pytest.raises(m.RpcError, match="did not declare the form elicitation") as asked:
            await session.call_tool("greet", {})
        with pytest.raises(m.RpcError, match="did not declare the roots capability") as rooted:
            await session.call_tool("roots", {})
        still = await session.call_tool("echo", {"text": "still here"})
    assert asked.value.code == rooted.value.code == MISSING_CAPABILITY
    assert still.text == "still here"


async def test_a_failing_handler_surfaces_its_message_to_the_caller(sampling_only: Sdk) -> None:
    # Legacy: the client answers the server's request with -32603 and the server relays it
    # (RpcError). Modern: the handler runs inside call_tool and fails it with HandlerError.
    async with asyncio.timeout(TIMEOUT):
        with pytest.raises((m.RpcError, m.HandlerError), match="no model available"):
            await sampling_only.session.call_tool("think", {})
        still = await sampling_only.session.call_tool("echo", {"text": "still here"})
    assert still.text == "still here"


# -- resources, prompts, ping --------------------------------------------------------------


async def test_resources_and_templates_are_listed(sdk: Sdk) -> None:
    async with asyncio.timeout(TIMEOUT):
        resources = await sdk.session.list_resources()
        templates = await sdk.session.list_resource_templates()
    assert [(r.uri, r.name, r.mime_type) for r in resources] == [
        ("test://static/hello", "hello", "text/plain")
    ]
    assert [(t.uri_template, t.name) for t in templates] == [("test://items/{item_id}", "item")]


async def test_static_and_templated_resources_are_read(sdk: Sdk) -> None:
    async with asyncio.timeout(TIMEOUT):
        static = await sdk.session.read_resource("test://static/hello")
        item = await sdk.session.read_resource("test://items/42")
    assert static.contents == [
        m.TextResourceContents("test://static/hello", "hello resource", "text/plain")
    ]
    assert item.contents == [m.TextResourceContents("test://items/42", "item 42", "text/plain")]


async def test_prompts_are_listed_with_their_arguments(sdk: Sdk) -> None:
    async with asyncio.timeout(TIMEOUT):
        prompts = await sdk.session.list_prompts()
    assert [p.name for p in prompts] == ["review"]
    assert prompts[0].arguments == [
        m.PromptArgument("code", required=True),
        m.PromptArgument("style", required=False),
    ]


async def test_a_prompt_is_rendered_with_its_arguments(sdk: Sdk) -> None:
    async with asyncio.timeout(TIMEOUT):
        default = await sdk.session.get_prompt("review", {"code": "x = 1"})
        styled = await sdk.session.get_prompt("review", {"code": "x = 1", "style": "long"})
    assert default.messages == [
        m.PromptMessage("user", m.TextContent("Review this (short): x = 1"))
    ]
    assert styled.messages[0].content == m.TextContent("Review this (long): x = 1")


async def test_ping_is_answered(sdk: Sdk) -> None:
    async with asyncio.timeout(TIMEOUT):
        await sdk.session.ping()  # answered: no error, no timeout


# -- subscriptions -------------------------------------------------------------------------


def is_ack(note: m.Notification) -> bool:
    return note.method == "notifications/subscriptions/acknowledged"


async def test_modern_subscriptions_open_a_listen_stream_and_track_resources() -> None:
    async with asyncio.timeout(TIMEOUT), open_sdk("modern") as sdk:
        # open_sdk subscribed the inbox: a listen stream for the list changes the server
        # declared is acknowledged first.
        ack = await sdk.inbox.wait_for(is_ack)
        assert ack.params["notifications"]["toolsListChanged"] is True
        seen = len(sdk.inbox.notes)
        await sdk.session.subscribe_resource("test://static/hello")
        # A new stream replaces the old one, now with the resource in its filter.
        ack = await sdk.inbox.wait_for(is_ack, start=seen)
        assert ack.params["notifications"]["resourceSubscriptions"] == ["test://static/hello"]
        assert (await sdk.session.call_tool("echo", {"text": "still"})).text == "still"


async def test_legacy_resource_subscriptions_use_subscribe_requests() -> None:
    uri = "test://static/hello"
    async with asyncio.timeout(TIMEOUT), sdk_in_memory() as transport:
        wire = RecordingTransport(transport)
        async with m.ClientSession(wire, protocol="legacy") as session:
            handshake = len(wire.sent)
            session.subscribe(Inbox())  # in the 2026 era this opens a listen stream
            # The SDK server declares no subscription support, so it answers "method not
            # found", naming the method it was sent.
            assert session.server_capabilities["resources"]["subscribe"] is False
            with pytest.raises(m.RpcError) as subscribing:
                await session.subscribe_resource(uri)
            with pytest.raises(m.RpcError) as unsubscribing:
                await session.unsubscribe_resource(uri)
    assert [(sent["method"], sent["params"]) for sent in wire.sent[handshake:]] == [
        ("resources/subscribe", {"uri": uri}),
        ("resources/unsubscribe", {"uri": uri}),
    ]
    assert (subscribing.value.code, subscribing.value.data) == (-32601, "resources/subscribe")
    assert (unsubscribing.value.code, unsubscribing.value.data) == (-32601, "resources/unsubscribe")
