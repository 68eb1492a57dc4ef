"""Typed results built from the wire shapes of the specification's examples."""

from __future__ import annotations

import dataclasses

import pytest

import paicli.mcp.types
from paicli.mcp import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ProtocolError,
    ResourceLink,
    TextContent,
    TextResourceContents,
    Tool,
    UnknownContent,
)
from paicli.mcp._frozen import builder3


def test_every_content_block_type_is_parsed() -> None:
    result = CallToolResult.from_wire(
        {
            "content": [
                {"type": "text", "text": "hi", "annotations": {"audience": ["user"]}},
                {"type": "image", "data": "aW1n", "mimeType": "image/png"},
                {"type": "audio", "data": "YXVk", "mimeType": "audio/wav"},
                {"type": "resource_link", "uri": "file:///a.txt", "name": "a", "size": 3},
                {
                    "type": "resource",
                    "resource": {"uri": "file:///b", "mimeType": "text/plain", "text": "b"},
                },
                {"type": "resource", "resource": {"uri": "file:///c", "blob": "Yw=="}},
                {"type": "hologram", "data": "?"},
            ],
            "structuredContent": {"n": 1},
            "isError": True,
        }
    )
    assert result.content == [
        TextContent("hi", {"audience": ["user"]}),
        ImageContent("aW1n", "image/png"),
        AudioContent("YXVk", "audio/wav"),
        ResourceLink("file:///a.txt", "a", size=3),
        EmbeddedResource(TextResourceContents("file:///b", "b", "text/plain")),
        EmbeddedResource(BlobResourceContents("file:///c", "Yw==")),
        UnknownContent({"type": "hologram", "data": "?"}, "hologram"),
    ]
    assert result.structured_content == {"n": 1}
    assert result.is_error is True
    assert result.text == "hi"


def test_a_result_without_optional_fields_is_complete_and_not_an_error() -> None:
    result = CallToolResult.from_wire({"content": []})
    assert result == CallToolResult(content=[])


def test_a_malformed_block_names_the_field() -> None:
    with pytest.raises(ProtocolError, match="image content: field 'mimeType'"):
        CallToolResult.from_wire({"content": [{"type": "image", "data": "x"}]})


def test_a_tool_keeps_its_schema_exactly_as_received() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {"n": {"type": "integer"}},
        "properties": {"n": {"$ref": "#/$defs/n"}},
    }
    tool = Tool.from_wire(
        {"name": "t", "inputSchema": schema, "annotations": {"readOnlyHint": True}}
    )
    assert tool.input_schema is schema
    assert tool.annotations == {"readOnlyHint": True}


def test_a_tool_without_an_input_schema_is_a_protocol_error() -> None:
    with pytest.raises(ProtocolError, match="tool 'broken': inputSchema"):
        Tool.from_wire({"name": "broken"})


def test_every_type_is_frozen_and_slotted() -> None:
    tool = Tool.from_wire({"name": "echo", "inputSchema": {"type": "object"}})
    with pytest.raises(dataclasses.FrozenInstanceError):
        tool.name = "other"  # type: ignore[misc]
    assert not hasattr(tool, "__dict__")
    assert dataclasses.replace(tool, name="other").name == "other"
    for name in dir(paicli.mcp.types):
        value = getattr(paicli.mcp.types, name)
        if isinstance(value, type) and dataclasses.is_dataclass(value):
            params = value.__dataclass_params__  # type: ignore[attr-defined]
            assert params.frozen and "__slots__" in vars(value), name


def test_a_tool_result_from_the_wire_is_the_one_its_constructor_makes() -> None:
    # (`from_wire` sets the slots of a result and its text blocks directly: `_frozen`.)
    wire = {"content": [{"type": "text", "text": "hi"}], "isError": True, "_meta": {"k": 1}}
    result = CallToolResult.from_wire(wire)
    made = CallToolResult([TextContent("hi")], None, True, {"k": 1})
    assert result == made and repr(result) == repr(made)
    block = result.content[0]
    assert isinstance(block, TextContent)
    assert block.type == "text" and block.annotations is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.is_error = False  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        block.text = "other"  # type: ignore[misc]
    assert dataclasses.replace(result, is_error=False).is_error is False

    @dataclasses.dataclass(frozen=True, slots=True)
    class Annotated(CallToolResult):
        note: str = "mine"

    assert type(Annotated.from_wire(wire)) is Annotated


def test_a_frozen_builder_names_every_field_of_a_frozen_slotted_class_in_order() -> None:
    @dataclasses.dataclass(frozen=True, slots=True)
    class Three:
        a: int
        b: int
        c: int = 3

    assert builder3(Three, "a", "b", "c")(1, 2, 3) == Three(1, 2, 3)
    with pytest.raises(TypeError, match="every field"):
        builder3(Three, "a", "c", "b")

    @dataclasses.dataclass(slots=True)
    class Loose:
        a: int
        b: int
        c: int

    with pytest.raises(TypeError, match="every field"):
        builder3(Loose, "a", "b", "c")
