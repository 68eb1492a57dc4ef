"""Typed views of what MCP servers return: tools, content blocks, resources, prompts.

Each type is a frozen, slotted dataclass built by `from_wire` from the server's JSON, tolerant
of missing optional fields and of fields from newer revisions (kept in `meta` or ignored). A
malformed required field raises `ProtocolError` naming the field. Frozen is shallow: a list
or dict field (`content`, `input_schema`, `meta`) is the parsed JSON itself; change a value
with `dataclasses.replace`. A value the specification fixes is a `Literal` where this
client decides it (a content block's `type`); one a server may get wrong (a prompt
message's `role`) stays a string, since the reader is tolerant.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ._frozen import builder3, builder4
from .errors import ProtocolError

__all__ = [
    "AudioContent",
    "BlobResourceContents",
    "CallToolResult",
    "Completion",
    "ContentBlock",
    "EmbeddedResource",
    "GetPromptResult",
    "ImageContent",
    "Implementation",
    "Notification",
    "Prompt",
    "PromptArgument",
    "PromptMessage",
    "ReadResourceResult",
    "Resource",
    "ResourceContents",
    "ResourceLink",
    "ResourceTemplate",
    "Root",
    "TextContent",
    "TextResourceContents",
    "Tool",
    "UnknownContent",
]

Json = dict[str, Any]
#: The `_meta` key of a stand-in tool (see `Tool.unreadable`): why it could not be read.
UNREADABLE_META = "io.paicli/unreadable"


def _str(data: Json, key: str, where: str) -> str:
    value = data.get(key)
    if not isinstance(value, str):
        raise ProtocolError(f"{where}: field {key!r} must be a string, got {value!r:.80}")
    return value


def _opt_str(data: Json, key: str) -> str | None:
    value = data.get(key)
    return value if isinstance(value, str) else None


def _opt_dict(data: Json, key: str) -> Json | None:
    value = data.get(key)
    return value if isinstance(value, dict) else None


def _list(data: Json, key: str, where: str) -> list[Any]:
    value = data.get(key, [])
    if not isinstance(value, list):
        raise ProtocolError(f"{where}: field {key!r} must be a list")
    return value


def _obj(item: Any, where: str) -> Json:
    if not isinstance(item, dict):
        raise ProtocolError(f"{where}: expected an object, got {item!r:.80}")
    return item


@dataclass(frozen=True, slots=True)
class Implementation:
    """A server's (or client's) name and version, as sent in `serverInfo`."""

    name: str
    version: str
    title: str | None = None

    @classmethod
    def from_wire(cls, data: Any) -> Implementation:
        if not isinstance(data, dict):
            return cls(name="unknown", version="unknown")
        name = data.get("name")
        version = data.get("version")
        return cls(
            name=name if isinstance(name, str) else "unknown",
            version=version if isinstance(version, str) else "unknown",
            title=_opt_str(data, "title"),
        )


@dataclass(frozen=True, slots=True)
class Tool:
    """A tool a server offers. `input_schema` is kept exactly as received.

    A tool whose definition could not be read (nested deeper than the parser takes, say)
    while the rest of its `tools/list` answer could, is listed as a stand-in with no
    parameters: `unreadable` says why, and a client should leave it out.
    """

    name: str
    input_schema: Json
    description: str | None = None
    title: str | None = None
    output_schema: Json | None = None
    annotations: Json | None = None
    meta: Json | None = None
    #: 2025-11-25 `execution` (`taskSupport`: "forbidden", "optional", "required").
    execution: Json | None = None

    @property
    def unreadable(self) -> str | None:
        """Why this tool's definition could not be read (None: it was read)."""
        reason = (self.meta or {}).get(UNREADABLE_META)
        return reason if isinstance(reason, str) else None

    @classmethod
    def from_wire(cls, data: Any) -> Tool:
        data = _obj(data, "tool")
        name = _str(data, "name", "tool")
        schema = data.get("inputSchema")
        if not isinstance(schema, dict):
            raise ProtocolError(f"tool {name!r:.100}: inputSchema must be an object")
        return cls(
            name=name,
            input_schema=schema,
            description=_opt_str(data, "description"),
            title=_opt_str(data, "title"),
            output_schema=_opt_dict(data, "outputSchema"),
            annotations=_opt_dict(data, "annotations"),
            meta=_opt_dict(data, "_meta"),
            execution=_opt_dict(data, "execution"),
        )


@dataclass(frozen=True, slots=True)
class TextContent:
    text: str
    annotations: Json | None = None
    type: Literal["text"] = "text"


_text_content = builder3(TextContent, "text", "annotations", "type")  # see `_frozen`


@dataclass(frozen=True, slots=True)
class ImageContent:
    data: str
    mime_type: str
    annotations: Json | None = None
    type: Literal["image"] = "image"


@dataclass(frozen=True, slots=True)
class AudioContent:
    data: str
    mime_type: str
    annotations: Json | None = None
    type: Literal["audio"] = "audio"


@dataclass(frozen=True, slots=True)
class ResourceLink:
    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    annotations: Json | None = None
    type: Literal["resource_link"] = "resource_link"


@dataclass(frozen=True, slots=True)
class TextResourceContents:
    uri: str
    text: str
    mime_type: str | None = None


@dataclass(frozen=True, slots=True)
class BlobResourceContents:
    uri: str
    blob: str
    mime_type: str | None = None


ResourceContents = TextResourceContents | BlobResourceContents


def resource_contents_from_wire(data: Any) -> ResourceContents:
    data = _obj(data, "resource contents")
    uri = _str(data, "uri", "resource contents")
    mime = _opt_str(data, "mimeType")
    if isinstance(data.get("text"), str):
        return TextResourceContents(uri=uri, text=data["text"], mime_type=mime)
    if isinstance(data.get("blob"), str):
        return BlobResourceContents(uri=uri, blob=data["blob"], mime_type=mime)
    raise ProtocolError(f"resource contents {uri!r}: neither 'text' nor 'blob'")


@dataclass(frozen=True, slots=True)
class EmbeddedResource:
    resource: ResourceContents
    annotations: Json | None = None
    type: Literal["resource"] = "resource"


@dataclass(frozen=True, slots=True)
class UnknownContent:
    """A content block of a type this client does not know; `raw` keeps it whole."""

    raw: Json
    type: str = "unknown"


ContentBlock = (
    TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource | UnknownContent
)


def content_from_wire(data: Any) -> ContentBlock:
    """Build one content block; unknown types are kept as `UnknownContent`."""
    data = _obj(data, "content block")
    kind = data.get("type")
    annotations = _opt_dict(data, "annotations")
    if kind == "text":
        # Nearly every block of every tool result: checked here, not through `_str`.
        text = data.get("text")
        if type(text) is str:
            return _text_content(text, annotations, "text")
        return TextContent(_str(data, "text", "text content"), annotations)
    if kind == "image":
        return ImageContent(
            _str(data, "data", "image content"),
            _str(data, "mimeType", "image content"),
            annotations,
        )
    if kind == "audio":
        return AudioContent(
            _str(data, "data", "audio content"),
            _str(data, "mimeType", "audio content"),
            annotations,
        )
    if kind == "resource_link":
        size = data.get("size")
        return ResourceLink(
            uri=_str(data, "uri", "resource link"),
            name=_str(data, "name", "resource link"),
            title=_opt_str(data, "title"),
            description=_opt_str(data, "description"),
            mime_type=_opt_str(data, "mimeType"),
            size=size if isinstance(size, int) else None,
            annotations=annotations,
        )
    if kind == "resource":
        return EmbeddedResource(resource_contents_from_wire(data.get("resource")), annotations)
    return UnknownContent(raw=data, type=kind if isinstance(kind, str) else "unknown")


@dataclass(frozen=True, slots=True)
class CallToolResult:
    """The result of `tools/call`: content blocks, optional structured content, error flag."""

    content: list[ContentBlock]
    structured_content: Any = None
    is_error: bool = False
    meta: Json | None = None

    @classmethod
    def from_wire(cls, data: Json) -> CallToolResult:
        # Built on every tool call: slots set directly (`_frozen`), unless for a subclass.
        return (_call_tool_result if cls is CallToolResult else cls)(
            list(map(content_from_wire, _list(data, "content", "tool result"))),
            data.get("structuredContent"),
            data.get("isError") is True,
            _opt_dict(data, "_meta"),
        )

    @property
    def text(self) -> str:
        """The text blocks joined by newlines (empty when there are none)."""
        return "\n".join(b.text for b in self.content if isinstance(b, TextContent))


_call_tool_result = builder4(CallToolResult, "content", "structured_content", "is_error", "meta")


@dataclass(frozen=True, slots=True)
class Resource:
    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None

    @classmethod
    def from_wire(cls, data: Any) -> Resource:
        data = _obj(data, "resource")
        size = data.get("size")
        return cls(
            uri=_str(data, "uri", "resource"),
            name=_opt_str(data, "name") or data["uri"],
            title=_opt_str(data, "title"),
            description=_opt_str(data, "description"),
            mime_type=_opt_str(data, "mimeType"),
            size=size if isinstance(size, int) else None,
        )


@dataclass(frozen=True, slots=True)
class ResourceTemplate:
    uri_template: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None

    @classmethod
    def from_wire(cls, data: Any) -> ResourceTemplate:
        data = _obj(data, "resource template")
        template = _str(data, "uriTemplate", "resource template")
        return cls(
            uri_template=template,
            name=_opt_str(data, "name") or template,
            title=_opt_str(data, "title"),
            description=_opt_str(data, "description"),
            mime_type=_opt_str(data, "mimeType"),
        )


@dataclass(frozen=True, slots=True)
class ReadResourceResult:
    contents: list[ResourceContents]

    @classmethod
    def from_wire(cls, data: Json) -> ReadResourceResult:
        items = _list(data, "contents", "resources/read result")
        return cls([resource_contents_from_wire(c) for c in items])


@dataclass(frozen=True, slots=True)
class PromptArgument:
    name: str
    description: str | None = None
    required: bool = False


@dataclass(frozen=True, slots=True)
class Prompt:
    name: str
    title: str | None = None
    description: str | None = None
    arguments: list[PromptArgument] = field(default_factory=list)

    @classmethod
    def from_wire(cls, data: Any) -> Prompt:
        data = _obj(data, "prompt")
        args = [
            PromptArgument(
                name=_str(a, "name", "prompt argument"),
                description=_opt_str(a, "description"),
                required=a.get("required") is True,
            )
            for a in (_obj(x, "prompt argument") for x in _list(data, "arguments", "prompt"))
        ]
        return cls(
            name=_str(data, "name", "prompt"),
            title=_opt_str(data, "title"),
            description=_opt_str(data, "description"),
            arguments=args,
        )


@dataclass(frozen=True, slots=True)
class PromptMessage:
    role: str
    content: ContentBlock


@dataclass(frozen=True, slots=True)
class GetPromptResult:
    messages: list[PromptMessage]
    description: str | None = None

    @classmethod
    def from_wire(cls, data: Json) -> GetPromptResult:
        messages = [
            PromptMessage(
                role=_str(m, "role", "prompt message"), content=content_from_wire(m.get("content"))
            )
            for m in (_obj(x, "prompt message") for x in _list(data, "messages", "prompt"))
        ]
        return cls(messages=messages, description=_opt_str(data, "description"))


@dataclass(frozen=True, slots=True)
class Completion:
    values: list[str]
    total: int | None = None
    has_more: bool = False

    @classmethod
    def from_wire(cls, data: Json) -> Completion:
        completion = _obj(data.get("completion"), "completion result")
        values = [v for v in _list(completion, "values", "completion") if isinstance(v, str)]
        total = completion.get("total")
        return cls(
            values=values,
            total=total if isinstance(total, int) else None,
            has_more=completion.get("hasMore") is True,
        )


@dataclass(frozen=True, slots=True)
class Root:
    """A filesystem root the client exposes to servers (`file://` URI)."""

    uri: str
    name: str | None = None

    def to_wire(self) -> Json:
        data: Json = {"uri": self.uri}
        if self.name is not None:
            data["name"] = self.name
        return data


@dataclass(frozen=True, slots=True)
class Notification:
    """A notification from the server (list changes, resource updates, log messages)."""

    method: str
    params: Json
