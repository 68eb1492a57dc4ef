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
Tasks (long-running tool calls, both eras): `session.call_tool_as_task(...)` returns a
`TaskHandle` (`status`, `await result(timeout)`, `cancel()`, `update(...)`; `paicli.mcp.tasks`).

This package never imports the rest of paicli (agent, UI, integrations).
"""

from typing import TYPE_CHECKING

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

if TYPE_CHECKING:
    from ._connect import connect
    from ._era_cache import EraCache
    from ._executable import CommandCheck, check_command
    from ._http import StreamableHttpTransport
    from ._instrument import Instrumentation, instrument
    from ._legacy_sse import LegacySseTransport
    from ._limits import Limits
    from ._memory import MemoryTransport
    from ._minimal import Dialect
    from ._pending import Progress
    from ._sandbox.command import SandboxedCommand, sandbox_command
    from ._sandbox.profile import Sandbox
    from ._sandbox.support import SandboxSupport, check_sandbox
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
    from .handlers import ClientHandlers
    from .session import ClientSession, Timeouts
    from .skills import Skill, SkillContent, SkillFile
    from .tasks import TaskFailed, TaskHandle, TaskInfo, TaskStatus, TaskTimeout
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

# Each name but the errors is loaded on first use (`from paicli.mcp import Sandbox` loads the
# sandbox profile, not the session, the transports or aiohttp): a program that never connects
# does not pay for connecting.
_LAZY = {
    "AudioContent": "types",
    "BlobResourceContents": "types",
    "CallToolResult": "types",
    "ClientHandlers": "handlers",
    "ClientSession": "session",
    "CommandCheck": "_executable",
    "Completion": "types",
    "ContentBlock": "types",
    "Dialect": "_minimal",
    "EmbeddedResource": "types",
    "EraCache": "_era_cache",
    "GetPromptResult": "types",
    "HttpServer": "_server_spec",
    "ImageContent": "types",
    "Implementation": "types",
    "Instrumentation": "_instrument",
    "LegacySseTransport": "_legacy_sse",
    "Limits": "_limits",
    "MemoryTransport": "_memory",
    "Notification": "types",
    "ProcessTransport": "_transport",
    "Progress": "_pending",
    "Prompt": "types",
    "PromptArgument": "types",
    "PromptMessage": "types",
    "ReadResourceResult": "types",
    "Resource": "types",
    "ResourceLink": "types",
    "ResourceTemplate": "types",
    "Root": "types",
    "Sandbox": "_sandbox.profile",
    "SandboxSupport": "_sandbox.support",
    "SandboxedCommand": "_sandbox.command",
    "Skill": "skills",
    "SkillContent": "skills",
    "SkillFile": "skills",
    "StdioServer": "_server_spec",
    "StdioTransport": "_stdio",
    "StreamableHttpTransport": "_http",
    "TaskFailed": "tasks",
    "TaskHandle": "tasks",
    "TaskInfo": "tasks",
    "TaskStatus": "tasks",
    "TaskTimeout": "tasks",
    "TextContent": "types",
    "TextResourceContents": "types",
    "Timeouts": "session",
    "Tool": "types",
    "TraceRecorder": "_trace",
    "Transport": "_transport",
    "TransportTraits": "_transport",
    "TransportWatcher": "_transport",
    "TransportWrapper": "_transport",
    "UnknownContent": "types",
    "check_command": "_executable",
    "check_sandbox": "_sandbox.support",
    "connect": "_connect",
    "instrument": "_instrument",
    "sandbox_command": "_sandbox.command",
    "server_from_dict": "_server_spec",
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
    "TaskFailed",
    "TaskHandle",
    "TaskInfo",
    "TaskStatus",
    "TaskTimeout",
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
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    # `from .module import name`, through the import statement's machinery (-X importtime)
    try:
        loaded = __import__(module, globals(), None, [name], 1)
    except AttributeError as exc:
        # Told as it is: `from paicli.mcp import name` would turn an AttributeError into
        # "cannot import name" without its cause, and `hasattr` into False.
        raise ImportError(f"paicli.mcp.{name} cannot be loaded: {exc}", name=__name__) from exc
    value = getattr(loaded, name)
    globals()[name] = value  # the next look-up finds it without this function
    return value


def __dir__() -> list[str]:
    """The module's names and the public ones not loaded yet (completion, `inspect`)."""
    return sorted({*globals(), *__all__})
