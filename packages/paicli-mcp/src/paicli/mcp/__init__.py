"""paicli.mcp: a fast, standalone MCP client.

    async with paicli.mcp.connect(StdioServer("my-server", args=["--flag"])) as session:
        tools = await session.list_tools()
        result = await session.call_tool("echo", {"text": "hi"}, timeout=10)

This package never imports the rest of paicli (agent, UI, integrations).
"""

from ._connect import connect
from ._rpc import Progress
from ._server_spec import HttpServer, StdioServer, server_from_dict
from .errors import (
    AuthenticationError,
    ConnectionClosed,
    HandlerError,
    HttpError,
    McpError,
    MessageTooLarge,
    ProtocolError,
    RequestTimeout,
    RpcError,
    ServerConfigError,
    UnsupportedVersion,
)
from .handlers import ClientHandlers
from .session import ClientSession
from .types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    Completion,
    ContentBlock,
    EmbeddedResource,
    GetPromptResult,
    ImageContent,
    Implementation,
    Notification,
    Prompt,
    PromptArgument,
    PromptMessage,
    ReadResourceResult,
    Resource,
    ResourceLink,
    ResourceTemplate,
    Root,
    TextContent,
    TextResourceContents,
    Tool,
    UnknownContent,
)

__all__ = [
    "AudioContent",
    "AuthenticationError",
    "BlobResourceContents",
    "CallToolResult",
    "ClientHandlers",
    "ClientSession",
    "Completion",
    "ConnectionClosed",
    "ContentBlock",
    "EmbeddedResource",
    "GetPromptResult",
    "HandlerError",
    "HttpError",
    "HttpServer",
    "ImageContent",
    "Implementation",
    "McpError",
    "MessageTooLarge",
    "Notification",
    "Progress",
    "Prompt",
    "PromptArgument",
    "PromptMessage",
    "ProtocolError",
    "ReadResourceResult",
    "RequestTimeout",
    "Resource",
    "ResourceLink",
    "ResourceTemplate",
    "Root",
    "RpcError",
    "ServerConfigError",
    "StdioServer",
    "TextContent",
    "TextResourceContents",
    "Tool",
    "UnknownContent",
    "UnsupportedVersion",
    "connect",
    "server_from_dict",
]
