"""Every kind of MCP content as LangChain content: text stays text, media become standard
content blocks, structured content is the artifact, and nothing a server sends is dropped
silently."""

from __future__ import annotations

from paicli.langchain._content import error_text, to_langchain
from paicli.mcp import (
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ResourceLink,
    TextContent,
    TextResourceContents,
    UnknownContent,
)


def test_text_only_results_are_one_string() -> None:
    result = CallToolResult([TextContent("one"), TextContent("two")])
    assert to_langchain(result) == ("one\ntwo", None)


def test_resources_become_text_or_file_blocks() -> None:
    result = CallToolResult(
        [
            ResourceLink(uri="file:///a.txt", name="a.txt"),
            EmbeddedResource(TextResourceContents(uri="file:///b.txt", text="bee")),
            EmbeddedResource(BlobResourceContents(uri="file:///c.bin", blob="AAEC")),
        ]
    )
    content, artifact = to_langchain(result)
    assert content == [
        {"type": "text", "text": "[resource a.txt: file:///a.txt]"},
        {"type": "text", "text": "bee"},
        {"type": "file", "base64": "AAEC", "mime_type": "application/octet-stream"},
    ]
    assert artifact is None


def test_unknown_content_is_named_not_dropped() -> None:
    result = CallToolResult([UnknownContent(raw={"type": "hologram"}, type="hologram")])
    assert to_langchain(result) == ("[unsupported content of type 'hologram']", None)


def test_structured_content_alone_is_also_the_text_the_model_reads() -> None:
    result = CallToolResult([], structured_content={"ok": True, "note": "é"})
    assert to_langchain(result) == ('{"ok": true, "note": "é"}', {"ok": True, "note": "é"})


def test_an_error_without_text_still_says_something() -> None:
    assert error_text(CallToolResult([], is_error=True)) == (
        "the tool reported an error without a message"
    )
