"""The conversation as the model endpoint takes it: chat-completions messages and tool
definitions, typed.

TypedDicts, not classes: the agent keeps its history in exactly the shape it sends, so there is
no conversion to get wrong, and these describe the same dictionaries as the openai SDK's own
request types (which stay out of everything but `paicli.llm.client`).
"""

from __future__ import annotations

import re
from typing import Literal, NotRequired, TypedDict

__all__ = [
    "AssistantMessage",
    "ContentPart",
    "FunctionCall",
    "FunctionDefinition",
    "ImagePart",
    "ImageUrl",
    "Message",
    "SystemMessage",
    "TextPart",
    "ToolCall",
    "ToolDefinition",
    "ToolMessage",
    "UserMessage",
    "content_text",
    "whole_text",
]


class SystemMessage(TypedDict):
    role: Literal["system"]
    content: str


class TextPart(TypedDict):
    type: Literal["text"]
    text: str


class ImageUrl(TypedDict):
    url: str  # data:image/png;base64,...


class ImagePart(TypedDict):
    type: Literal["image_url"]
    image_url: ImageUrl


ContentPart = TextPart | ImagePart


class UserMessage(TypedDict):
    role: Literal["user"]
    content: str | list[ContentPart]  # parts only when images go with the text


class FunctionCall(TypedDict):
    name: str
    arguments: str  # the model's JSON text, as it sent it


class ToolCall(TypedDict):
    id: str
    type: Literal["function"]
    function: FunctionCall


class AssistantMessage(TypedDict):
    role: Literal["assistant"]
    content: str | None  # None only next to tool calls
    tool_calls: NotRequired[list[ToolCall]]


class ToolMessage(TypedDict):
    """The result of one tool call, answering the call with the same id."""

    role: Literal["tool"]
    tool_call_id: str
    content: str


Message = SystemMessage | UserMessage | AssistantMessage | ToolMessage


class FunctionDefinition(TypedDict):
    name: str
    description: str
    parameters: dict[str, object]  # JSON Schema of the arguments


class ToolDefinition(TypedDict):
    """One entry of a request's `tools` list."""

    type: Literal["function"]
    function: FunctionDefinition


# What an image counts for in the rough estimates of `paicli.agent.context` (providers bill a
# few hundred to about 1,600 tokens per image; its base64 text is not what the model reads).
IMAGE_CHARS = 6_400


def content_text(content: str | list[ContentPart] | None) -> str:
    """A message's text: the content itself, or its text parts joined (an image as
    `[image]`)."""
    if content is None or isinstance(content, str):
        return content or ""
    return "\n\n".join(part["text"] if part["type"] == "text" else "[image]" for part in content)


# A str holds code points, so a surrogate in one is always unpaired: JSON can spell one
# (`"\\udcff"`: a stream-json line, an editor's prompt, a model's reply) and a command line's
# undecodable byte becomes one. No request can be encoded with one in it.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def whole_text(text: str) -> str:
    """`text` fit for the conversation: each unpaired surrogate replaced by U+FFFD, as an
    undecodable byte of a pipe is (left in, it failed every later request of the
    conversation)."""
    return _LONE_SURROGATE.sub("\ufffd", text)
