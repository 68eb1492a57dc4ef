"""MCP servers kept warm across the tasks one worker runs.

A worker runs one task at a time, each a full paicli run with its own `ServerManager`. This
`Connector` (given to `open_runtime`) lends each run the sessions an earlier task of this
worker opened with the same server specification (name and every compared field: command,
args, env, cwd, limits, sandbox...), and opens a new one otherwise. A lent session outlives
the run: it is opened and closed by a holder task of `WarmServers`, not by the run's
supervisor, and closed when the worker ends. A session that died is never lent again.

What a server asks (roots, sampling, forms) goes to the run it is lent to now: the session
is opened with handlers that forward to the current run's.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

from paicli.mcp import ClientHandlers, ClientSession, EraCache, HttpServer, StdioServer, connect
from paicli.mcp.errors import RpcError
from paicli.mcp.types import Root

__all__ = ["WarmServers"]

Json = dict[str, Any]
METHOD_NOT_FOUND = -32601


class _Forwarding:
    """Handlers answering for whichever run holds the session now."""

    def __init__(self) -> None:
        self.current: ClientHandlers | None = None

    def handlers(self) -> ClientHandlers:
        return ClientHandlers(roots=self._roots, sampling=self._sampling, elicitation=self._form)

    async def _roots(self) -> Sequence[Root]:
        current = self.current
        if current is None or current.roots is None:
            return []
        return await current.roots() if callable(current.roots) else current.roots

    async def _sampling(self, params: Json) -> Json:
        return await self._forward(params, lambda h: h.sampling, "sampling")

    async def _form(self, params: Json) -> Json:
        return await self._forward(params, lambda h: h.elicitation, "elicitation")

    async def _forward(
        self,
        params: Json,
        pick: Callable[[ClientHandlers], Callable[[Json], Awaitable[Json]] | None],
        what: str,
    ) -> Json:
        handler = pick(self.current) if self.current is not None else None
        if handler is None:
            raise RpcError(METHOD_NOT_FOUND, f"{what} is not supported by this client")
        return await handler(params)


@dataclasses.dataclass
class _Held:
    session: ClientSession
    forwarding: _Forwarding
    close: asyncio.Event


class WarmServers:
    """The worker's warm sessions (`async with`; see the module). Call it as a Connector."""

    def __init__(self) -> None:
        self._held: dict[tuple[str, str], _Held] = {}
        self._group: asyncio.TaskGroup | None = None
        self.opened = 0  # sessions opened so far (a warm lend opens none)

    async def __aenter__(self) -> WarmServers:
        self._group = asyncio.TaskGroup()
        await self._group.__aenter__()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        for held in self._held.values():
            held.close.set()
        self._held.clear()
        assert self._group is not None
        await self._group.__aexit__(None, None, None)

    def __call__(
        self,
        spec: StdioServer | HttpServer,
        /,
        *,
        name: str,
        handlers: ClientHandlers | None,
        era_cache: EraCache,
    ) -> contextlib.AbstractAsyncContextManager[ClientSession]:
        return self._lend(spec, name, handlers)

    @contextlib.asynccontextmanager
    async def _lend(
        self, spec: StdioServer | HttpServer, name: str, handlers: ClientHandlers | None
    ) -> AsyncIterator[ClientSession]:
        key = (name, _identity(spec))
        held = self._held.get(key)
        if held is None or held.session.closed is not None:
            if held is not None:
                held.close.set()
            held = self._held[key] = await self._open(spec, name)
        held.forwarding.current = handlers
        try:
            yield held.session
        finally:
            held.forwarding.current = None

    async def _open(self, spec: StdioServer | HttpServer, name: str) -> _Held:
        assert self._group is not None, "WarmServers is used inside `async with`"
        opened: asyncio.Future[_Held] = asyncio.get_running_loop().create_future()
        forwarding = _Forwarding()
        self._group.create_task(self._hold(spec, name, forwarding, opened))
        held = await opened
        self.opened += 1
        return held

    async def _hold(
        self,
        spec: StdioServer | HttpServer,
        name: str,
        forwarding: _Forwarding,
        opened: asyncio.Future[_Held],
    ) -> None:
        """Open the session, lend it until told to close, then close it (bounded, by
        `connect`). A failure to open goes to the run that asked."""
        close = asyncio.Event()
        cache = EraCache()
        try:
            async with connect(
                spec, name=name, handlers=forwarding.handlers(), era_cache=cache
            ) as session:
                if opened.cancelled():  # the run that asked is gone: nobody to lend it to
                    return
                opened.set_result(_Held(session, forwarding, close))
                await close.wait()
        except Exception as exc:  # the run that asked reports it, as any failed start
            if not opened.done():
                opened.set_exception(exc)


def _identity(spec: StdioServer | HttpServer) -> str:
    """What makes two specifications the same server: every compared field."""
    fields = [(f.name, repr(getattr(spec, f.name))) for f in dataclasses.fields(spec) if f.compare]
    return repr((type(spec).__name__, fields))
