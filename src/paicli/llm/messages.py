"""The conversation as the model endpoint takes it: chat-completions messages and tool
definitions, typed.

TypedDicts, not classes: the agent keeps its history in exactly the shape it sends, so there is
no conversion to get wrong, and these describe the same dictionaries as the openai SDK's own
request types (which stay out of everything but `paicli.llm.client`).
"""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

__all__ = [
    "AssistantMessage",
    "FunctionCall",
    "FunctionDefinition",
    "Message",
    "SystemMessage",
    "ToolCall",
    "ToolDefinition",
    "ToolMessage",
    "UserMessage",
]


class SystemMessage(TypedDict):
    role: Literal["system"]
    content: str


class UserMessage(TypedDict):
    role: Literal["user"]
    content: str


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
