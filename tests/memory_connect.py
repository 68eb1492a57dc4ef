"""A `ServerManager` connector that runs the test servers inside the test process.

A server described as config files describe it (a stdio command line) is mapped to the same
server code on an in-memory transport: arguments that run tests/server_programs/fault_server.py give
`fault_in_memory` with the same options, tests/server_programs/sdk_server.py gives `sdk_in_memory`,
tests/server_programs/skills_server.py gives `skills_in_memory`, task_server.py `task_in_memory`.
The session is built as `paicli.mcp.connect` builds it from the description (label, protocol,
timeouts, identity), so the manager, the toolboxes and the agent run unchanged. Anything
else is refused: a test of the in-memory tier cannot quietly start a real server.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path

from paicli.mcp import (
    ClientHandlers,
    ClientSession,
    EraCache,
    HttpServer,
    MemoryTransport,
    StdioServer,
    Timeouts,
    Transport,
)
from tests.conftest import SERVER_PROGRAMS
from tests.memory_servers import fault_in_memory, skills_in_memory, task_in_memory

__all__ = ["NoMemoryServer", "memory_connector"]


class NoMemoryServer(ValueError):
    """The description names no server that can run in memory."""


@asynccontextmanager
async def memory_connector(
    spec: StdioServer | HttpServer,
    /,
    *,
    name: str,
    handlers: ClientHandlers | None,
    era_cache: EraCache,
    wrap: Callable[[Transport], Transport] | None = None,
) -> AsyncIterator[ClientSession]:
    """Serve `spec` in this process and yield an open session with it (a `Connector`);
    `wrap` puts a `TransportWrapper` of the test's around the client's end."""
    async with (
        _server_for(spec) as transport,
        ClientSession(
            transport if wrap is None else wrap(transport),
            name=spec.label,  # as connect() names a typed description's session
            protocol=spec.protocol,
            timeouts=Timeouts(spec.handshake_timeout, spec.request_timeout),
            handlers=handlers,
            era_cache=era_cache,
            identity=spec.identity,
        ) as session,
    ):
        yield session


def _server_for(spec: StdioServer | HttpServer) -> AbstractAsyncContextManager[MemoryTransport]:
    script = _script(spec)
    if script == "fault_server.py":
        assert isinstance(spec, StdioServer)
        mode, extra = _fault_options(spec.args[1:])
        return fault_in_memory(mode, *extra)
    if script == "sdk_server.py" and isinstance(spec, StdioServer) and len(spec.args) == 1:
        # The official SDK loads only here: a process that imports tests.runtimes without
        # serving it (tests/llm/test_deferred.py) pays nothing for it. (The in-memory tier
        # loads it before its block on Popen, tests/conftest.py.)
        from tests.sdk_memory import sdk_in_memory  # noqa: PLC0415

        return sdk_in_memory()
    if script == "skills_server.py" and isinstance(spec, StdioServer):
        return _skills(spec.args[1:])
    if script == "task_server.py" and isinstance(spec, StdioServer):
        return _tasks(spec.args[1:])
    raise NoMemoryServer(
        f"{spec.label}: only tests/server_programs/fault_server.py, sdk_server.py, "
        "skills_server.py and task_server.py run in memory "
        f"(got {spec.identity}); mark the test @pytest.mark.real to run other servers"
    )


@asynccontextmanager
async def _skills(args: Sequence[str]) -> AsyncIterator[MemoryTransport]:
    tamper = args[args.index("--tamper") + 1] if "--tamper" in args else None
    async with skills_in_memory(Path(args[0]), tamper=tamper) as (transport, _):
        yield transport


@asynccontextmanager
async def _tasks(args: Sequence[str]) -> AsyncIterator[MemoryTransport]:
    async with task_in_memory(*args) as (transport, _):
        yield transport


def _script(spec: StdioServer | HttpServer) -> str | None:
    """The test server script a stdio description runs, if it runs one of ours."""
    if not isinstance(spec, StdioServer) or not spec.args:
        return None
    script = Path(spec.args[0]).resolve()
    return script.name if script.parent == SERVER_PROGRAMS.resolve() else None


def _fault_options(args: Sequence[str]) -> tuple[str, list[str]]:
    """(mode, the other options) of a fault server's command line."""
    extra = list(args)
    if "--mode" not in extra:
        return "normal", extra
    at = extra.index("--mode")
    mode = extra[at + 1]
    del extra[at : at + 2]
    return mode, extra
