"""A small web site on 127.0.0.1 for the web tools' tests (aiohttp, in the test process):
each test gives its routes as `{path: handler}`. Tests using it are in the real tier."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager

from aiohttp import web

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
HOST = "127.0.0.1"
SHUTDOWN_TIMEOUT = 1.0  # a handler left hanging by a test ends with the site


@asynccontextmanager
async def web_site(routes: Mapping[str, Handler]) -> AsyncIterator[str]:
    """Serve `routes` (GET) on a free port; yield the site's base URL (`http://127.0.0.1:N`)."""
    app = web.Application()
    for path, handler in routes.items():
        app.router.add_get(path, handler)
    runner = web.AppRunner(
        app, handler_cancellation=True, access_log=None, shutdown_timeout=SHUTDOWN_TIMEOUT
    )
    await runner.setup()
    site = web.TCPSite(runner, HOST, 0)
    await site.start()
    try:
        yield f"http://{HOST}:{runner.addresses[0][1]}"
    finally:
        await runner.cleanup()


def html(body: str, *, status: int = 200) -> Handler:
    """A handler answering `body` as an HTML page."""

    async def answer(request: web.Request) -> web.StreamResponse:
        return web.Response(text=body, status=status, content_type="text/html")

    return answer


def redirect(location: str, status: int = 302) -> Handler:
    """A handler redirecting to `location` (relative or absolute)."""

    async def answer(request: web.Request) -> web.StreamResponse:
        return web.Response(status=status, headers={"Location": location})

    return answer
