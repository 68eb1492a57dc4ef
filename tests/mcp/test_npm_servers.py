"""Interop with the official npm reference servers (server-everything, server-filesystem).

They run as real `node` processes from tests/npm/node_modules (installed by `make setup`,
which `make test` always runs). server-everything speaks only the handshake era, so `auto`
must fall back to `initialize`. One everything session, with all client handlers, is shared
by the module; the filesystem tests start their own servers on a temporary directory.
"""

from __future__ import annotations

import asyncio
import base64
import json
import shutil
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

import paicli.mcp as m
from tests.conftest import Inbox, recording_handlers, wait_for_tools

NPM = Path(__file__).resolve().parents[1] / "npm" / "node_modules" / "@modelcontextprotocol"
EVERYTHING = NPM / "server-everything" / "dist" / "index.js"
FILESYSTEM = NPM / "server-filesystem" / "dist" / "index.js"
NODE = shutil.which("node")

pytestmark = [
    pytest.mark.real,
    pytest.mark.npm,
    pytest.mark.skipif(
        not (EVERYTHING.is_file() and FILESYSTEM.is_file()),
        reason="npm reference servers missing: run `make setup` (or `cd tests/npm && npm ci`)",
    ),
    pytest.mark.skipif(NODE is None, reason="node is not on PATH (Node.js 20+ is needed)"),
    pytest.mark.asyncio(loop_scope="module"),
    # The servers are shared by the module: one worker starts them (--dist loadgroup).
    pytest.mark.xdist_group("npm-stdio"),
]

TIMEOUT = 20.0
ROOT = m.Root("file:///tmp/paicli-npm-project", "project")
# Tools server-everything registers once it knows the client's capabilities.
CONDITIONAL_TOOLS = {"get-roots-list", "trigger-sampling-request", "trigger-elicitation-request"}
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def node_server(entry: Path, *args: str) -> m.StdioServer:
    assert NODE is not None
    return m.StdioServer(
        NODE, args=[str(entry), *args], handshake_timeout=TIMEOUT, request_timeout=TIMEOUT
    )


def is_log(data: str) -> Callable[[m.Notification], bool]:
    def match(note: m.Notification) -> bool:
        return note.method == "notifications/message" and note.params.get("data") == data

    return match


@dataclass
class Everything:
    session: m.ClientSession
    inbox: Inbox
    asked: dict[str, list[dict[str, Any]]] = field(default_factory=dict)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def everything() -> AsyncIterator[Everything]:
    asked: dict[str, list[dict[str, Any]]] = {}

    # Leaves out the form fields that have schema defaults; the client fills those in.
    form = {"name": "Ada", "email": "ada@example.com"}
    handlers = recording_handlers(asked, ROOT, form)
    inbox = Inbox()
    async with AsyncExitStack() as stack:
        async with asyncio.timeout(TIMEOUT):
            session = await stack.enter_async_context(
                m.connect(node_server(EVERYTHING, "stdio"), handlers=handlers)
            )
            # Subscribed before the first await, so no notification can slip past.
            session.subscribe(inbox)
            await wait_for_tools(session, inbox, CONDITIONAL_TOOLS)
        yield Everything(session, inbox, asked)


async def call(everything: Everything, tool: str, args: dict[str, Any]) -> m.CallToolResult:
    async with asyncio.timeout(TIMEOUT):
        return await everything.session.call_tool(tool, args)


# -- server-everything: session and tools --------------------------------------------------


async def test_auto_falls_back_to_the_handshake_and_reports_the_server(
    everything: Everything,
) -> None:
    session = everything.session
    assert (session.era, session.protocol_version) == ("legacy", "2025-11-25")
    assert session.server_info == m.Implementation(
        "mcp-servers/everything", "2.0.0", "Everything Reference Server"
    )
    assert {"tools", "prompts", "resources", "logging", "completions"} <= set(
        session.server_capabilities
    )
    assert session.instructions is not None
    assert session.instructions.startswith("# Everything Server")


async def test_conditional_tools_are_announced_with_list_changed(everything: Everything) -> None:
    changes = [n for n in everything.inbox.notes if n.method == "notifications/tools/list_changed"]
    async with asyncio.timeout(TIMEOUT):
        names = {tool.name for tool in await everything.session.list_tools()}
    assert changes
    assert names >= CONDITIONAL_TOOLS
    # Only form elicitation is declared, so the URL-mode tool stays hidden.
    assert "trigger-url-elicitation" not in names


async def test_tools_keep_their_annotations_and_output_schema(everything: Everything) -> None:
    async with asyncio.timeout(TIMEOUT):
        tools = {tool.name: tool for tool in await everything.session.list_tools()}
    assert {"echo", "get-sum", "get-tiny-image", "trigger-long-running-operation"} <= set(tools)
    assert tools["echo"].input_schema["required"] == ["message"]
    assert tools["echo"].annotations is not None
    assert tools["echo"].annotations["readOnlyHint"] is True
    schema = tools["get-structured-content"].output_schema
    assert schema is not None
    assert set(schema["required"]) == {"temperature", "conditions", "humidity"}


async def test_echo_and_get_sum_answer_in_text(everything: Everything) -> None:
    echo = await call(everything, "echo", {"message": "hi"})
    total = await call(everything, "get-sum", {"a": 2, "b": 3})
    assert echo.content == [m.TextContent("Echo: hi")]
    assert total.text == "The sum of 2 and 3 is 5."


async def test_bad_arguments_and_unknown_tools_come_back_as_is_error(
    everything: Everything,
) -> None:
    missing = await call(everything, "echo", {})
    unknown = await call(everything, "no-such-tool", {})
    assert missing.is_error
    assert "Input validation error" in missing.text
    assert unknown.is_error
    assert "Tool no-such-tool not found" in unknown.text


async def test_an_image_arrives_as_image_content(everything: Everything) -> None:
    result = await call(everything, "get-tiny-image", {})
    kinds = [type(block) for block in result.content]
    assert kinds == [m.TextContent, m.ImageContent, m.TextContent]
    image = result.content[1]
    assert isinstance(image, m.ImageContent)
    assert image.mime_type == "image/png"
    assert base64.b64decode(image.data).startswith(PNG_SIGNATURE)


async def test_annotations_are_preserved_on_text_and_image_blocks(everything: Everything) -> None:
    result = await call(
        everything, "get-annotated-message", {"messageType": "error", "includeImage": True}
    )
    text, image = result.content
    assert text == m.TextContent(
        "Error: Operation failed", {"audience": ["user", "assistant"], "priority": 1}
    )
    assert isinstance(image, m.ImageContent)
    assert image.annotations == {"audience": ["user"], "priority": 0.5}


async def test_resource_links_arrive_as_resource_link_blocks(everything: Everything) -> None:
    result = await call(everything, "get-resource-links", {"count": 2})
    links = [block for block in result.content if isinstance(block, m.ResourceLink)]
    assert [(link.uri, link.name, link.mime_type) for link in links] == [
        ("demo://resource/dynamic/blob/1", "Blob Resource 1", "text/plain"),
        ("demo://resource/dynamic/text/2", "Text Resource 2", "text/plain"),
    ]


async def test_an_embedded_resource_arrives_with_its_contents(everything: Everything) -> None:
    result = await call(
        everything, "get-resource-reference", {"resourceType": "Text", "resourceId": 1}
    )
    embedded = [block for block in result.content if isinstance(block, m.EmbeddedResource)]
    assert len(embedded) == 1
    contents = embedded[0].resource
    assert isinstance(contents, m.TextResourceContents)
    assert contents.uri == "demo://resource/dynamic/text/1"
    assert contents.text.startswith("Resource 1: This is a plaintext resource")


async def test_structured_content_matches_its_text_rendering(everything: Everything) -> None:
    result = await call(everything, "get-structured-content", {"location": "Chicago"})
    assert isinstance(result.structured_content, dict)
    assert set(result.structured_content) == {"temperature", "conditions", "humidity"}
    assert json.loads(result.text) == result.structured_content


# -- server-everything: progress, cancellation, timeouts -----------------------------------


async def test_progress_of_a_long_running_operation_reaches_the_callback(
    everything: Everything,
) -> None:
    updates: list[m.Progress] = []
    async with asyncio.timeout(TIMEOUT):
        result = await everything.session.call_tool(
            "trigger-long-running-operation",
            {"duration": 0.4, "steps": 4},
            on_progress=updates.append,
        )
    assert result.text == "Long running operation completed. Duration: 0.4 seconds, Steps: 4."
    assert updates == [m.Progress(float(i), 4.0, None) for i in (1, 2, 3, 4)]


async def test_a_cancelled_call_leaves_the_session_usable(everything: Everything) -> None:
    session = everything.session
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(
            session.call_tool("trigger-long-running-operation", {"duration": 1, "steps": 2}),
            timeout=0.2,
        )
    after = await call(everything, "echo", {"message": "after"})
    assert after.text == "Echo: after"


async def test_a_call_past_its_timeout_raises_and_the_session_goes_on(
    everything: Everything,
) -> None:
    session = everything.session
    async with asyncio.timeout(TIMEOUT):
        with pytest.raises(m.RequestTimeout, match=r"tools/call timed out after 0\.2s"):
            await session.call_tool(
                "trigger-long-running-operation", {"duration": 1, "steps": 2}, timeout=0.2
            )
    after = await call(everything, "echo", {"message": "after"})
    assert after.text == "Echo: after"


# -- server-everything: client handlers ----------------------------------------------------


async def test_a_sampling_request_is_answered_by_the_handler(everything: Everything) -> None:
    result = await call(everything, "trigger-sampling-request", {"prompt": "hi", "maxTokens": 10})
    header, _, reply = result.text.partition("\n")
    assert header.startswith("LLM sampling result:")
    assert json.loads(reply)["content"] == {"type": "text", "text": "hi from the model"}
    params = everything.asked["sampling"][-1]
    assert params["maxTokens"] == 10
    assert params["systemPrompt"] == "You are a helpful test server."
    assert params["messages"][0]["content"]["text"].endswith("context: hi")


async def test_an_elicitation_is_answered_and_schema_defaults_fill_the_rest(
    everything: Everything,
) -> None:
    result = await call(everything, "trigger-elicitation-request", {})
    assert result.content[0] == m.TextContent("✅ User provided the requested information!")
    assert "- Name: Ada" in result.text
    raw = json.loads(result.text.split("Raw result: ", 1)[1])
    assert raw["action"] == "accept"
    assert raw["content"]["email"] == "ada@example.com"
    assert raw["content"]["firstLine"] == "It was a dark and stormy night."
    params = everything.asked["elicitation"][-1]
    assert "firstLine" in params["requestedSchema"]["properties"]


async def test_the_server_fetches_roots_from_the_handler(everything: Everything) -> None:
    async with asyncio.timeout(TIMEOUT):
        await everything.inbox.wait_for(is_log("Roots updated: 1 root(s) received from client"))
    result = await call(everything, "get-roots-list", {})
    assert f"1. {ROOT.name}\n   URI: {ROOT.uri}" in result.text


# -- server-everything: prompts, resources, completion -------------------------------------


async def test_prompts_are_listed_with_their_arguments(everything: Everything) -> None:
    async with asyncio.timeout(TIMEOUT):
        prompts = {prompt.name: prompt for prompt in await everything.session.list_prompts()}
    assert set(prompts) == {"simple-prompt", "args-prompt", "completable-prompt", "resource-prompt"}
    assert [(a.name, a.required) for a in prompts["args-prompt"].arguments] == [
        ("city", True),
        ("state", False),
    ]


async def test_a_prompt_is_rendered_with_its_arguments(everything: Everything) -> None:
    async with asyncio.timeout(TIMEOUT):
        prompt = await everything.session.get_prompt("args-prompt", {"city": "Paris"})
    assert prompt.messages == [m.PromptMessage("user", m.TextContent("What's weather in Paris?"))]


async def test_a_prompt_can_embed_a_blob_resource(everything: Everything) -> None:
    async with asyncio.timeout(TIMEOUT):
        prompt = await everything.session.get_prompt(
            "resource-prompt", {"resourceType": "Blob", "resourceId": "3"}
        )
    embedded = prompt.messages[-1].content
    assert isinstance(embedded, m.EmbeddedResource)
    assert isinstance(embedded.resource, m.BlobResourceContents)
    assert embedded.resource.uri == "demo://resource/dynamic/blob/3"
    assert base64.b64decode(embedded.resource.blob).startswith(b"Resource 3:")


async def test_static_resources_and_templates_are_listed(everything: Everything) -> None:
    async with asyncio.timeout(TIMEOUT):
        resources = await everything.session.list_resources()
        templates = await everything.session.list_resource_templates()
    assert len(resources) == 7
    assert all(r.uri.startswith("demo://resource/static/document/") for r in resources)
    assert {r.mime_type for r in resources} == {"text/markdown"}
    assert [t.uri_template for t in templates] == [
        "demo://resource/dynamic/text/{resourceId}",
        "demo://resource/dynamic/blob/{resourceId}",
    ]


async def test_text_and_blob_resources_are_read(everything: Everything) -> None:
    session = everything.session
    async with asyncio.timeout(TIMEOUT):
        document = await session.read_resource("demo://resource/static/document/features.md")
        text = await session.read_resource("demo://resource/dynamic/text/2")
        blob = await session.read_resource("demo://resource/dynamic/blob/2")
    (doc,) = document.contents
    assert isinstance(doc, m.TextResourceContents)
    assert doc.mime_type == "text/markdown"
    assert doc.text
    (plain,) = text.contents
    assert isinstance(plain, m.TextResourceContents)
    assert plain.text.startswith("Resource 2: This is a plaintext resource")
    (binary,) = blob.contents
    assert isinstance(binary, m.BlobResourceContents)
    assert base64.b64decode(binary.blob).startswith(b"Resource 2: This is a base64 blob")


async def test_an_unknown_resource_is_an_rpc_error(everything: Everything) -> None:
    async with asyncio.timeout(TIMEOUT):
        with pytest.raises(m.RpcError, match="Resource demo://resource/nope not found") as error:
            await everything.session.read_resource("demo://resource/nope")
    assert error.value.code == -32602


async def test_prompt_arguments_complete_using_the_context(everything: Everything) -> None:
    ref = {"type": "ref/prompt", "name": "completable-prompt"}
    async with asyncio.timeout(TIMEOUT):
        departments = await everything.session.complete(ref, "department", "E")
        names = await everything.session.complete(
            ref, "name", "", context={"department": "Engineering"}
        )
    assert departments == m.Completion(["Engineering"], total=1, has_more=False)
    assert names.values == ["Alice", "Bob", "Charlie"]


async def test_resource_template_arguments_complete(everything: Everything) -> None:
    ref = {"type": "ref/resource", "uri": "demo://resource/dynamic/text/{resourceId}"}
    async with asyncio.timeout(TIMEOUT):
        completion = await everything.session.complete(ref, "resourceId", "4")
    assert completion.values == ["4"]


async def test_a_resource_subscription_delivers_updates(everything: Everything) -> None:
    session, inbox = everything.session, everything.inbox
    uri = "demo://resource/static/document/architecture.md"
    async with asyncio.timeout(TIMEOUT):
        await session.subscribe_resource(uri)
        await inbox.wait_for(is_log(f"Received Subscribe Resource request for URI: {uri} "))
        started = await session.call_tool("toggle-subscriber-updates", {})
        try:
            update = await inbox.wait_for(
                lambda note: (
                    note.method == "notifications/resources/updated"
                    and note.params.get("uri") == uri
                )
            )
        finally:
            # Stop the server's 5 s update timer, which would otherwise keep node alive.
            stopped = await session.call_tool("toggle-subscriber-updates", {})
    assert started.text.startswith("Started simulated resource updated notifications")
    assert stopped.text.startswith("Stopped simulated resource updates")
    assert update.params == {"uri": uri}


async def test_ping_is_answered(everything: Everything) -> None:
    async with asyncio.timeout(TIMEOUT):
        await everything.session.ping()  # answered: no error, no timeout


# -- server-filesystem ---------------------------------------------------------------------


async def allowed_directories(session: m.ClientSession) -> list[str]:
    result = await session.call_tool("list_allowed_directories", {})
    header, *directories = result.text.splitlines()
    assert header == "Allowed directories:"
    return directories


@pytest.fixture
def base(tmp_path: Path) -> Path:
    """The test's directory as the server sees it (it resolves symlinks)."""
    return tmp_path.resolve()


async def test_filesystem_tools_are_listed(base: Path) -> None:
    async with asyncio.timeout(TIMEOUT), m.connect(node_server(FILESYSTEM, str(base))) as fs:
        tools = {tool.name: tool for tool in await fs.list_tools()}
    assert fs.server_info.name == "secure-filesystem-server"
    assert {"read_text_file", "write_file", "list_directory", "list_allowed_directories"} <= set(
        tools
    )
    assert tools["write_file"].input_schema["required"] == ["path", "content"]
    assert tools["read_text_file"].output_schema is not None


async def test_a_file_is_written_and_read_back_through_the_tools(base: Path) -> None:
    target = base / "notes.txt"
    async with asyncio.timeout(TIMEOUT), m.connect(node_server(FILESYSTEM, str(base))) as fs:
        wrote = await fs.call_tool("write_file", {"path": str(target), "content": "one\ntwo"})
        read = await fs.call_tool("read_text_file", {"path": str(target)})
        listing = await fs.call_tool("list_directory", {"path": str(base)})
    assert not wrote.is_error
    assert target.read_text() == "one\ntwo"
    assert read.text == "one\ntwo"
    assert read.structured_content == {"content": "one\ntwo"}
    assert listing.text == "[FILE] notes.txt"


async def test_client_roots_replace_the_directories_given_on_the_command_line(
    base: Path,
) -> None:
    allowed = base / "allowed"
    allowed.mkdir()
    outside = base / "outside.txt"
    outside.write_text("secret")
    asked = asyncio.Event()

    async def roots() -> list[m.Root]:
        asked.set()
        return [m.Root(allowed.as_uri(), "allowed")]

    handlers = m.ClientHandlers(roots=roots)
    async with (
        asyncio.timeout(TIMEOUT),
        m.connect(node_server(FILESYSTEM, str(base)), handlers=handlers) as fs,
    ):
        await asked.wait()
        # The server validates the roots asynchronously after our answer and announces
        # nothing when done, so ask it until its allowed list has switched over.
        while await allowed_directories(fs) != [str(allowed)]:
            pass
        refused = await fs.call_tool("read_text_file", {"path": str(outside)})
        inside = await fs.call_tool(
            "write_file", {"path": str(allowed / "ok.txt"), "content": "fine"}
        )
    assert refused.is_error
    assert "Access denied - path outside allowed directories" in refused.text
    assert not inside.is_error
    assert (allowed / "ok.txt").read_text() == "fine"
