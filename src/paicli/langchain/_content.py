"""A tool result in LangChain's terms: the content the model reads, and the artifact.

Text stays text: a result of text blocks only is one string. Images, audio and binary
resources become LangChain's standard content blocks (base64 with a MIME type), next to text
blocks, so a multimodal model sees them. Structured content is the artifact (the tools use
`response_format="content_and_artifact"`); when a result has nothing else, its JSON text is
the content too, so the model is never handed an empty answer.
"""

from __future__ import annotations

import json
from typing import Any

from paicli.mcp import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
)

__all__ = ["error_text", "to_langchain"]

Block = dict[str, Any]


def to_langchain(result: CallToolResult) -> tuple[str | list[str | Block], Any]:
    """`(content, artifact)` for a successful result."""
    blocks = [_block(b) for b in result.content]
    artifact = result.structured_content
    if not blocks and artifact is not None:
        return json.dumps(artifact, ensure_ascii=False), artifact
    if all(b["type"] == "text" for b in blocks):
        return "\n".join(b["text"] for b in blocks), artifact
    return list[str | Block](blocks), artifact


def error_text(result: CallToolResult) -> str:
    """What an error result says, for `ToolException`."""
    texts = [_block(b).get("text") for b in result.content]
    said = "\n".join(t for t in texts if isinstance(t, str))
    return said or "the tool reported an error without a message"


def _block(block: ContentBlock) -> Block:
    if isinstance(block, TextContent):
        return {"type": "text", "text": block.text}
    if isinstance(block, ImageContent):
        return {"type": "image", "base64": block.data, "mime_type": block.mime_type}
    if isinstance(block, AudioContent):
        return {"type": "audio", "base64": block.data, "mime_type": block.mime_type}
    if isinstance(block, ResourceLink):
        return {"type": "text", "text": f"[resource {block.name}: {block.uri}]"}
    if isinstance(block, EmbeddedResource):
        resource = block.resource
        if isinstance(resource, TextResourceContents):
            return {"type": "text", "text": resource.text}
        if isinstance(resource, BlobResourceContents):
            mime = resource.mime_type or "application/octet-stream"
            return {"type": "file", "base64": resource.blob, "mime_type": mime}
    return {"type": "text", "text": f"[unsupported content of type {block.type!r}]"}
