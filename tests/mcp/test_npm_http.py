"""server-everything (npm) over HTTP: its `streamableHttp` mode and its legacy `sse` mode.

Each mode runs once for the module as a real `node` process on a free loopback port (the
server binds every interface; we only ever connect to 127.0.0.1). Startup is awaited on the
server's own "... on port N" line, never by sleeping. The same session-level checks run over
both transports; server requests (sampling, elicitation) arrive on SSE streams either way.
"""

from __future__ import annotations

import asyncio
import collections
import json
import os
import re
import shutil
import socket
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

import paicli.mcp as m
from tests.conftest import Inbox, recording_handlers, wait_for_tools
from tests.http_servers import stop_process

NODE_MODULES = Path(__file__).resolve().parents[1] / "npm" / "node_modules"
EVERYTHING = NODE_MODULES / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
NODE = shutil.which("node")

pytestmark = [
    pytest.mark.real,
    pytest.mark.npm,
    pytest.mark.skipif(
        not EVERYTHING.is_file(),
        reason="npm reference servers missing: run `make setup` (or `cd tests/npm && npm ci`)",
    ),
    pytest.mark.skipif(NODE is None, reason="node is not on PATH (Node.js 20+ is needed)"),
    pytest.mark.asyncio(loop_scope="module"),
    # The servers are shared by the module: one worker starts them (--dist loadgroup).
    pytest.mark.xdist_group("npm-http"),
]

TIMEOUT = 20.0
ROOT = m.Root("file:///tmp/paicli-npm-http", "project")
CONDITIONAL_TOOLS = {"get-roots-list", "trigger-sampling-request", "trigger-elicitation-request"}
# The URL path of each mode (see server-everything's dist/transports/*.js).
PATHS = {"streamableHttp": "/mcp", "sse": "/sse"}
TRANSPORT_CLASSES = {"streamableHttp": "StreamableHttpTransport", "sse": "LegacySseTransport"}


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


@dataclass
class NodeServer:
    url: str
    output: collections.deque[str]
    _line: asyncio.Event = field(default_factory=asyncio.Event)

    def add(self, raw: bytes) -> None:
        self.output.append(raw.decode(errors="replace").rstrip())
        self._line.set()

    async def wait_for_line(self, text: str) -> None:
        """Until the server has printed a line containing `text` (waits on arrivals)."""
        while True:
            self._line.clear()
            if any(text in line for line in self.output):
                return
            await self._line.wait()


@asynccontextmanager
async def run_everything(mode: str) -> AsyncIterator[NodeServer]:
    """server-everything in `mode` on a free port; yields its MCP URL on 127.0.0.1."""
    assert NODE is not None
    port = free_port()
    process = await asyncio.create_subprocess_exec(
        NODE,
        str(EVERYTHING),
        mode,
        env={**os.environ, "PORT": str(port)},
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        start_new_session=True,  # its own process group, stopped as a whole at the end
    )
    assert process.stdout is not None
    stdout = process.stdout
    # The server logs every request; keep draining its output so it never blocks on the pipe.
    server = NodeServer(f"http://127.0.0.1:{port}{PATHS[mode]}", collections.deque(maxlen=200))
    ready = re.compile(rf"(listening|running) on port {port}\b")
    drain: asyncio.Task[None] | None = None

    async def keep_reading() -> None:
        while line := await stdout.readline():
            server.add(line)

    try:
        async with asyncio.timeout(TIMEOUT):
            while True:
                line = await stdout.readline()
                if not line:
                    raise RuntimeError(f"server-everything {mode} exited: {list(server.output)}")
                server.add(line)
                if ready.search(server.output[-1]):
                    break
        drain = asyncio.get_running_loop().create_task(keep_reading())
        yield server
    finally:
        await stop_process(process)
        if drain is not None:
            drain.cancel()
            with suppress(asyncio.CancelledError):
                await drain


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def servers() -> AsyncIterator[dict[str, NodeServer]]:
    async with AsyncExitStack() as stack:
        started = await asyncio.gather(
            *(stack.enter_async_context(run_everything(mode)) for mode in PATHS)
        )
        yield dict(zip(PATHS, started, strict=True))


@dataclass
class Live:
    mode: str
    session: m.ClientSession
    inbox: Inbox
    asked: dict[str, list[dict[str, Any]]] = field(default_factory=dict)


def http(url: str, **options: Any) -> m.HttpServer:
    return m.HttpServer(url, handshake_timeout=TIMEOUT, request_timeout=TIMEOUT, **options)


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=list(PATHS))
async def live(
    request: pytest.FixtureRequest, servers: dict[str, NodeServer]
) -> AsyncIterator[Live]:
    """One `transport="auto"` session per mode, with all client handlers, shared by the
    tests of that mode."""
    mode: str = request.param
    asked: dict[str, list[dict[str, Any]]] = {}
    handlers = recording_handlers(asked, ROOT, {"name": "Ada", "email": "ada@example.com"})
    inbox = Inbox()
    async with AsyncExitStack() as stack:
        async with asyncio.timeout(TIMEOUT):
            session = await stack.enter_async_context(
                m.connect(http(servers[mode].url), handlers=handlers)
            )
            session.subscribe(inbox)
            await wait_for_tools(session, inbox, CONDITIONAL_TOOLS)
        yield Live(mode, session, inbox, asked)


async def call(live: Live, tool: str, args: dict[str, Any]) -> m.CallToolResult:
    async with asyncio.timeout(TIMEOUT):
        return await live.session.call_tool(tool, args)


# -- the same checks over both transports --------------------------------------------------


async def test_auto_picks_the_transport_the_server_speaks(live: Live) -> None:
    session = live.session
    # Streamable HTTP is tried first; the sse-mode server refuses the POST (404) and auto
    # falls back to the legacy HTTP+SSE transport on the same URL.
    assert type(session.transport).__name__ == TRANSPORT_CLASSES[live.mode]
    assert (session.era, session.protocol_version) == ("legacy", "2025-11-25")
    assert session.server_info.name == "mcp-servers/everything"
    assert {"tools", "prompts", "resources"} <= set(session.server_capabilities)
    if live.mode == "streamableHttp":
        assert isinstance(session.transport, m.StreamableHttpTransport)
        assert session.transport.session_id


async def test_tools_are_listed_and_echo_answers(live: Live) -> None:
    async with asyncio.timeout(TIMEOUT):
        tools = {tool.name: tool for tool in await live.session.list_tools()}
    assert {"echo", "get-sum", "trigger-long-running-operation"} | CONDITIONAL_TOOLS <= set(tools)
    assert tools["echo"].input_schema["required"] == ["message"]
    echo = await call(live, "echo", {"message": "hi über HTTP"})
    assert echo.content == [m.TextContent("Echo: hi über HTTP")]
    total = await call(live, "get-sum", {"a": 2, "b": 3})
    assert total.text == "The sum of 2 and 3 is 5."


async def test_concurrent_calls_each_get_their_own_answer(live: Live) -> None:
    async with asyncio.timeout(TIMEOUT):
        results = await asyncio.gather(
            *(live.session.call_tool("echo", {"message": f"n{i}"}) for i in range(20))
        )
    assert [r.text for r in results] == [f"Echo: n{i}" for i in range(20)]


async def test_progress_reaches_the_callback(live: Live) -> None:
    updates: list[m.Progress] = []
    async with asyncio.timeout(TIMEOUT):
        result = await live.session.call_tool(
            "trigger-long-running-operation",
            {"duration": 0.3, "steps": 3},
            on_progress=updates.append,
        )
    assert result.text == "Long running operation completed. Duration: 0.3 seconds, Steps: 3."
    assert updates == [m.Progress(float(i), 3.0, None) for i in (1, 2, 3)]


async def test_a_sampling_request_is_answered_by_the_handler(live: Live) -> None:
    result = await call(live, "trigger-sampling-request", {"prompt": "hi", "maxTokens": 10})
    header, _, reply = result.text.partition("\n")
    assert header.startswith("LLM sampling result:")
    assert json.loads(reply)["content"] == {"type": "text", "text": "hi from the model"}
    params = live.asked["sampling"][-1]
    assert params["maxTokens"] == 10
    assert params["messages"][0]["content"]["text"].endswith("context: hi")


async def test_an_elicitation_is_answered_by_the_handler(live: Live) -> None:
    result = await call(live, "trigger-elicitation-request", {})
    assert result.content[0] == m.TextContent("✅ User provided the requested information!")
    assert "- Name: Ada" in result.text
    raw = json.loads(result.text.split("Raw result: ", 1)[1])
    assert raw["action"] == "accept"
    assert raw["content"]["email"] == "ada@example.com"
    assert "requestedSchema" in live.asked["elicitation"][-1]


async def test_resources_are_read(live: Live) -> None:
    async with asyncio.timeout(TIMEOUT):
        document = await live.session.read_resource("demo://resource/static/document/features.md")
        text = await live.session.read_resource("demo://resource/dynamic/text/2")
    (doc,) = document.contents
    assert isinstance(doc, m.TextResourceContents)
    assert doc.mime_type == "text/markdown"
    assert doc.text
    (plain,) = text.contents
    assert isinstance(plain, m.TextResourceContents)
    assert plain.text.startswith("Resource 2: This is a plaintext resource")


async def test_an_unknown_resource_is_an_rpc_error(live: Live) -> None:
    async with asyncio.timeout(TIMEOUT):
        with pytest.raises(m.RpcError, match="Resource demo://resource/nope not found"):
            await live.session.read_resource("demo://resource/nope")


# -- forced transports ---------------------------------------------------------------------


async def test_a_config_dict_with_type_sse_goes_straight_to_legacy_sse(
    servers: dict[str, NodeServer],
) -> None:
    entry = {"url": servers["sse"].url, "type": "sse", "startupTimeout": TIMEOUT}
    async with asyncio.timeout(TIMEOUT), m.connect(entry) as session:
        assert type(session.transport).__name__ == "LegacySseTransport"
        assert isinstance(session.transport, m.LegacySseTransport)
        assert (await session.call_tool("echo", {"message": "forced"})).text == "Echo: forced"


async def test_type_http_does_not_fall_back_to_sse(servers: dict[str, NodeServer]) -> None:
    entry = {"url": servers["sse"].url, "type": "http", "startupTimeout": TIMEOUT}
    async with asyncio.timeout(TIMEOUT):
        with pytest.raises(m.HttpError) as error:
            async with m.connect(entry):
                pass
    assert error.value.status == 404


async def test_a_fresh_streamable_session_closes_with_delete(
    servers: dict[str, NodeServer],
) -> None:
    server = servers["streamableHttp"]
    async with asyncio.timeout(TIMEOUT):
        async with m.connect(http(server.url, transport="http")) as session:
            assert isinstance(session.transport, m.StreamableHttpTransport)
            session_id = session.transport.session_id
            assert session_id
            assert (await session.call_tool("echo", {"message": "x"})).text == "Echo: x"
        # The server logs the DELETE it received (closing sent it and awaited the answer).
        await server.wait_for_line(f"Received session termination request for session {session_id}")


async def test_the_server_fetches_roots_unprompted(live: Live) -> None:
    # roots/list is a server request outside any call: over Streamable HTTP it comes on the
    # standalone GET stream, over legacy SSE on the one event stream.
    async with asyncio.timeout(TIMEOUT):
        await live.inbox.wait_for(
            lambda note: (
                note.method == "notifications/message"
                and note.params.get("data") == "Roots updated: 1 root(s) received from client"
            )
        )
