"""An ACP prompt (content blocks) as the text of one user turn: text as is, a linked
resource as its URI, an embedded text resource as a delimited block the text cannot close
early. Anything else (images, audio, binary resources) was not offered in `initialize` and
is refused as invalid params."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from acp import RequestError
from acp.schema import (
    EmbeddedResourceContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

__all__ = ["prompt_text"]


def prompt_text(blocks: Sequence[Any]) -> str:
    parts: list[str] = []
    for block in blocks:
        if isinstance(block, TextContentBlock):
            parts.append(block.text)
        elif isinstance(block, ResourceContentBlock):
            parts.append(f"@{block.uri}")
        elif isinstance(block, EmbeddedResourceContentBlock) and isinstance(
            block.resource, TextResourceContents
        ):
            parts.append(_fenced(block.resource.uri, block.resource.text))
        else:
            kind = getattr(block, "type", type(block).__name__)
            raise RequestError.invalid_params({"prompt": f"{kind} content is not supported"})
    text = "\n".join(parts)
    if not text.strip():
        raise RequestError.invalid_params({"prompt": "the prompt is empty"})
    return text


def _fenced(uri: str, text: str) -> str:
    tag, number = "resource", 1
    while f"</{tag}>" in text:
        number += 1
        tag = f"resource-{number}"
    return f'<{tag} uri="{uri}">\n{text}\n</{tag}>'
