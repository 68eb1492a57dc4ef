"""`MCPTool`: one tool of an MCP server as a LangChain `BaseTool`.

The tool holds its server's `ServerLink` (shared by every tool of that server) and the loop
the link lives on. `ainvoke` awaits the call on that loop (directly when it is the caller's);
`invoke` blocks the calling thread until it is done. The args schema is the tool's own JSON
Schema, so LangChain passes the model's arguments through unchanged and the server checks
them. A tool pickles as its server's description and its options (`_shared`): unpickled, it
uses the receiving process's one session with that server.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Coroutine, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from langchain_core.tools import BaseTool, ToolException
from pydantic import PrivateAttr

from paicli.langchain._containment import SandboxOption, contained_stdio
from paicli.langchain._content import error_text, to_langchain
from paicli.langchain._link import ServerLink
from paicli.langchain._loop import private_loop, run_on, wait_on
from paicli.langchain._shared import SharedServer
from paicli.langchain.errors import BridgeError, ExecutableProblem
from paicli.mcp import CallToolResult, HttpServer, Limits, StdioServer, Tool, check_command

if TYPE_CHECKING:
    from paicli.langchain._guard import ApproveCallback, CallGuard, PendingGuard

__all__ = ["MCPTool", "langchain_name"]

# LangChain's agents hand tools to providers that accept names of at most 64 characters
# from [a-zA-Z0-9_-].
_NOT_ALLOWED = re.compile(r"[^a-zA-Z0-9_-]")
_MAX_NAME = 64
# A minute is long for a local tool; a deadline is what turns a hung one into an error.
DEFAULT_TIMEOUT = 30.0
# Fields that are the sending process's own: its callback handlers (tracers with clients,
# files, locks) are not sent; pass callbacks in the receiver's config instead.
_NOT_PICKLED = frozenset({"callbacks", "callback_manager"})

Content = str | list[str | dict[str, Any]]


def langchain_name(remote: str) -> str:
    """The name a provider accepts for the server's tool `remote` (the same when it fits)."""
    name = _NOT_ALLOWED.sub("_", remote) or "tool"
    if len(name) <= _MAX_NAME:
        return name
    digest = hashlib.sha256(remote.encode()).hexdigest()[:8]
    return f"{name[: _MAX_NAME - 9]}_{digest}"


def args_schema(tool: Tool) -> dict[str, Any]:
    """The tool's input schema as an object schema LangChain can hand to any provider."""
    schema = dict(tool.input_schema) if isinstance(tool.input_schema, Mapping) else {}
    schema["type"] = "object"
    if not isinstance(schema.get("properties"), Mapping):
        schema["properties"] = {}
    return schema


def resolve_executable(executable: str | os.PathLike[str]) -> str:
    """The absolute path of the program `executable` names, resolved now (a relative path
    against the working directory, a bare name on PATH), checked as `paicli mcp doctor`
    checks one (`check_command`); `ExecutableProblem` says what is wrong and how to fix it."""
    command = os.path.expanduser(os.fspath(executable))
    if not command:
        raise ExecutableProblem("executable_path is empty: give the path of the tool's program")
    check = check_command(command, search_path=os.environ.get("PATH", os.defpath))
    if check.message is not None or check.path is None:
        raise ExecutableProblem(check.message or f"{command!r}: not found")
    return os.path.abspath(check.path)


class MCPTool(BaseTool):
    """A tool of an MCP server (stdio or HTTP, full MCP or the minimal JSON-RPC dialect).

    Made by `MCPTool.from_executable` (one tool, its own server process) or by `load_tools`
    (every tool of a server, one shared session). `invoke` and `ainvoke` return the text the
    model reads; with a tool call as input, a `ToolMessage` whose `artifact` is the tool's
    structured content. A tool's error result raises `ToolException`, a deadline
    `ToolTimeout` (a `TimeoutError`), a dead server `ServerUnavailable` (a `ConnectionError`).
    """

    response_format: Literal["content", "content_and_artifact"] = "content_and_artifact"
    remote_name: str
    """The tool's name on its server (`name` is the same unless it had to be sanitised)."""
    server: str
    """The server's name (its config name, or the executable's file name)."""
    timeout: float | None = None
    """Seconds one call may take; None: the server description's request timeout."""

    _link: ServerLink | None = PrivateAttr(default=None)
    # Set instead of `_link` in a tool that was unpickled: the process's shared session.
    _shared: SharedServer | None = PrivateAttr(default=None)
    _guard: CallGuard | PendingGuard | None = PrivateAttr(default=None)
    _owns_link: bool = PrivateAttr(default=False)

    @classmethod
    def bound(
        cls, link: ServerLink, tool: Tool, *, timeout: float | None, description: str | None
    ) -> MCPTool:
        """A tool of `link`'s server (used by `load_tools` and `from_executable`)."""
        made = cls(
            name=langchain_name(tool.name),
            description=description or tool.description or tool.title or tool.name,
            args_schema=args_schema(tool),
            remote_name=tool.name,
            server=link.label,
            timeout=timeout,
            metadata={"annotations": dict(tool.annotations or {})},
        )
        made._link = link
        return made

    @classmethod
    def from_executable(
        cls,
        *,
        name: str,
        executable_path: str | os.PathLike[str],
        executable_args: Sequence[str] = (),
        description: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        approve: ApproveCallback | None = None,
        audit: bool | str | os.PathLike[str] | None = None,
        sandbox: SandboxOption = None,
        limits: Limits | None = None,
    ) -> MCPTool:
        """The tool `name` of the stdio server `executable_path executable_args...`.

        The server is started now (to read the tool's schema and description) and kept for
        every call; `close()` stops it (so does the end of the program). A relative
        `executable_path` is resolved against the working directory now; a missing or
        unrunnable executable raises `ExecutableProblem` saying how to fix it.
        `sandbox` runs it in an OS sandbox (`True`: `cwd`, else the working folder,
        writable, no network; or a `paicli.mcp.Sandbox`), `limits` bound its memory, CPU
        time, files and processes (`paicli.mcp.Limits`), inside the sandbox too.
        """
        command = resolve_executable(executable_path)
        spec = StdioServer(
            command,
            tuple(executable_args),
            env=dict(env or {}),
            cwd=os.fspath(cwd) if cwd is not None else None,
            name=Path(command).name,
            request_timeout=timeout,
        )
        spec = contained_stdio(spec, sandbox, limits)
        link = ServerLink(spec, private_loop())
        private_loop(link)
        try:
            tools = wait_on(link.loop, link.list_tools)
            found = next((t for t in tools if t.name == name), None)
            if found is None:
                offered = ", ".join(sorted(t.name for t in tools)) or "none"
                raise BridgeError(f"{spec.label} has no tool {name!r} (its tools: {offered})")
            made = cls.bound(link, found, timeout=timeout, description=description)
            made._owns_link = True
            if approve is not None or audit:
                from paicli.langchain._guard import CallGuard  # noqa: PLC0415 - paicli's tools layer, when asked

                made._guard = CallGuard([made], approve=approve, audit=audit)
        except BaseException:
            wait_on(link.loop, link.aclose)
            raise
        return made

    # LangChain reads the type hints of _run/_arun on every call (looking for a config
    # parameter), so they stay as cheap to evaluate as can be: `Any`.
    def _run(self, *args: Any, **kwargs: Any) -> Any:
        return wait_on(self._server_link().loop, self._caller(kwargs))

    async def _arun(self, *args: Any, **kwargs: Any) -> Any:
        return await run_on(self._server_link().loop, self._caller(kwargs))

    def _server_link(self) -> ServerLink:
        if self._shared is not None:
            return self._shared.link()
        if self._link is None:
            raise BridgeError(f"{self.name}: not bound to a server (use from_executable)")
        return self._link

    def _caller(
        self, arguments: dict[str, Any]
    ) -> Callable[[], Coroutine[Any, Any, tuple[Content, Any]]]:
        async def call() -> tuple[Content, Any]:
            if self._guard is not None:
                result = await self._guard.call(self, arguments)
            else:
                result = await self.call_server(arguments)
            if result.is_error:
                raise ToolException(error_text(result))
            return to_langchain(result)

        return call

    def link_spec(self) -> StdioServer | HttpServer:
        """The description of this tool's server."""
        return self._shared.spec if self._shared is not None else self._server_link().spec

    async def call_server(self, arguments: Mapping[str, Any]) -> CallToolResult:
        """Send the call to the server as is (on the link's loop), past approval and audit."""
        return await self._server_link().call(self.remote_name, arguments, self.timeout)

    def close(self) -> None:
        """Stop this tool's server, if the tool owns it (`from_executable`); an unpickled
        tool's shared session stays open for the process."""
        if self._owns_link and self._link is not None:
            wait_on(self._link.loop, self._link.aclose)

    async def aclose(self) -> None:
        if self._owns_link and self._link is not None:
            await run_on(self._link.loop, self._link.aclose)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its fields, its server's description (secrets in `env` or `headers`
        included: the receiver needs them) and its approval and audit options; never a
        session, process, lock or loop."""
        fields = {k: getattr(self, k) for k in type(self).model_fields if k not in _NOT_PICKLED}
        if self._shared is not None:
            shared = self._shared
        else:
            link = self._server_link()
            shared = SharedServer(link.spec, link.connector)
        return (_unpickled, (type(self), fields, shared, self._guard))

    def __enter__(self) -> MCPTool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _unpickled(
    cls: type[MCPTool],
    fields: dict[str, Any],
    shared: SharedServer,
    guard: CallGuard | PendingGuard | None,
) -> MCPTool:
    """A tool sent pickled: its calls use this process's session with its server."""
    made = cls(**fields)
    made._shared = shared
    if guard is not None:
        from paicli.langchain._guard import PendingGuard  # noqa: PLC0415 - loaded with the guard

        if isinstance(guard, PendingGuard):
            guard.adopt(made)
        made._guard = guard
    return made
