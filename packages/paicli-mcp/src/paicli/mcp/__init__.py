"""paicli.mcp: a fast, standalone MCP client.

    async with paicli.mcp.connect(StdioServer("my-server", args=["--flag"])) as session:
        tools = await session.list_tools()
        result = await session.call_tool("echo", {"text": "hi"}, timeout=10)

A session runs over any `Transport` (`send`, `receive`, `aclose`, and its `TransportTraits`):
`StdioTransport`, `StreamableHttpTransport`, `LegacySseTransport`, the in-memory
`MemoryTransport.pair()` for tests, or your own (subclass `Transport`, or `TransportWrapper`
to observe another one). `session.process` is the `ProcessTransport` of a stdio server (pid,
stderr tail). Instruments wrap a session's transport: `ClientSession(..., instruments=[...])`
or `connect(..., instruments=[...])`, with `instrument(wrap)` as the default for sessions
given none; `TraceRecorder` records every message.
`StdioServer(sandbox=Sandbox.for_project(root))` runs a server in an OS sandbox;
`sandbox_command` wraps any command the same way, and `check_sandbox()` says what works here.
Skills (SEP-2640): `session.list_skills()`, `get_skill(uri)` and `read_skill(skill, path)`,
which verifies each file against the skill's entry (`paicli.mcp.skills`).

This package never imports the rest of paicli (agent, UI, integrations).
"""

from typing import TYPE_CHECKING

from ._connect import connect
from ._executable import CommandCheck, check_command
from ._instrument import Instrumentation, instrument
from ._limits import Limits
from ._memory import MemoryTransport
from ._minimal import Dialect
from ._negotiate import EraCache
from ._pending import Progress
from ._sandbox.profile import Sandbox
from ._server_spec import HttpServer, StdioServer, server_from_dict
from ._stdio import StdioTransport
from ._trace import TraceRecorder
from ._transport import (
    ProcessTransport,
    Transport,
    TransportTraits,
    TransportWatcher,
    TransportWrapper,
)
from .errors import (
    AuthenticationError,
    ClosedOnProbe,
    ConnectionClosed,
    HandlerError,
    HttpError,
    LoginRequired,
    McpError,
    MessageTooLarge,
    OAuthError,
    ProtocolError,
    RequestTimeout,
    RpcError,
    SandboxUnavailable,
    ServerConfigError,
    SessionExpired,
    SkillVerificationError,
    UnsupportedVersion,
)
from .handlers import ClientHandlers
from .session import ClientSession, Timeouts
from .skills import Skill, SkillContent, SkillFile
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

if TYPE_CHECKING:
    from ._http import StreamableHttpTransport
    from ._legacy_sse import LegacySseTransport
    from ._sandbox.command import SandboxedCommand, sandbox_command
    from ._sandbox.support import SandboxSupport, check_sandbox

# Loaded on first use: a session that never sandboxes anything does not pay for them.
_SANDBOX_NAMES = {
    "SandboxedCommand": "command",
    "sandbox_command": "command",
    "SandboxSupport": "support",
    "check_sandbox": "support",
}

__all__ = [
    "AudioContent",
    "AuthenticationError",
    "BlobResourceContents",
    "CallToolResult",
    "ClientHandlers",
    "ClientSession",
    "ClosedOnProbe",
    "CommandCheck",
    "Completion",
    "ConnectionClosed",
    "ContentBlock",
    "Dialect",
    "EmbeddedResource",
    "EraCache",
    "GetPromptResult",
    "HandlerError",
    "HttpError",
    "HttpServer",
    "ImageContent",
    "Implementation",
    "Instrumentation",
    "LegacySseTransport",
    "Limits",
    "LoginRequired",
    "McpError",
    "MemoryTransport",
    "MessageTooLarge",
    "Notification",
    "OAuthError",
    "ProcessTransport",
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
    "Sandbox",
    "SandboxSupport",
    "SandboxUnavailable",
    "SandboxedCommand",
    "ServerConfigError",
    "SessionExpired",
    "Skill",
    "SkillContent",
    "SkillFile",
    "SkillVerificationError",
    "StdioServer",
    "StdioTransport",
    "StreamableHttpTransport",
    "TextContent",
    "TextResourceContents",
    "Timeouts",
    "Tool",
    "TraceRecorder",
    "Transport",
    "TransportTraits",
    "TransportWatcher",
    "TransportWrapper",
    "UnknownContent",
    "UnsupportedVersion",
    "check_command",
    "check_sandbox",
    "connect",
    "instrument",
    "sandbox_command",
    "server_from_dict",
]


def __getattr__(name: str) -> object:
    # The HTTP transports import aiohttp, which scripts that use only stdio servers never pay for.
    if name == "StreamableHttpTransport":
        from ._http import StreamableHttpTransport  # noqa: PLC0415

        return StreamableHttpTransport
    if name == "LegacySseTransport":
        from ._legacy_sse import LegacySseTransport  # noqa: PLC0415

        return LegacySseTransport
    if name in _SANDBOX_NAMES:
        import importlib  # noqa: PLC0415

        module = importlib.import_module(f"._sandbox.{_SANDBOX_NAMES[name]}", __name__)
        return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
