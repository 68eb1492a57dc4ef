"""Requests from the server to the client (roots, sampling, elicitation, ping).

Each is answered in its own task of the engine's task group, so a slow handler (a person
answering a form) holds up nothing else; the server may cancel its own request with
`notifications/cancelled`, which cancels that task and sends no answer. A duplicate id is
dropped, and nothing is answered once the connection is closing.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from ._jsonrpc import is_request_id
from ._pending import INTERNAL_ERROR
from ._transport import JsonObject, Transport
from .errors import McpError, RpcError

__all__ = ["RequestHandler", "ServerRequests"]

log = logging.getLogger("paicli.mcp.rpc")

RequestHandler = Callable[[str, JsonObject | None], Awaitable[JsonObject]]


class ServerRequests:
    """The server's requests in progress over one transport, answered by `handler`."""

    def __init__(self, transport: Transport, handler: RequestHandler) -> None:
        self._transport = transport
        self._handler = handler
        self._tasks: dict[Any, asyncio.Task[None]] = {}
        # Set while the engine's receive loop runs: the answering tasks belong to it.
        self.group: asyncio.TaskGroup | None = None

    def start(self, request_id: Any, method: str, params: Any) -> None:
        """Answer one request in a task of its own."""
        if self.group is None:
            # Closing (or closed): the reader may still deliver late messages; no reply.
            log.debug("dropping server request %s on a closed connection", method)
            return
        if request_id in self._tasks:
            log.warning("dropping server request %s with a duplicate id", method)
            return
        task = self.group.create_task(
            self._answer(request_id, method, params if isinstance(params, dict) else None)
        )
        self._tasks[request_id] = task

    def cancel(self, request_id: object) -> None:
        """The server cancelled its request `request_id`: stop answering it."""
        task = self._tasks.get(request_id) if is_request_id(request_id) else None
        if task is not None:
            task.cancel()

    def cancel_all(self) -> None:
        """The connection is over: stop answering every request."""
        self.group = None
        for task in self._tasks.values():
            task.cancel()

    async def _answer(self, request_id: Any, method: str, params: JsonObject | None) -> None:
        reply: JsonObject = {"jsonrpc": "2.0", "id": request_id}
        try:
            if method == "ping":
                reply["result"] = {}
            else:
                reply["result"] = await self._handler(method, params)
        except asyncio.CancelledError:
            # The server cancelled its own request (or we are closing): no reply is due.
            return
        except RpcError as exc:
            error: JsonObject = {"code": exc.code, "message": exc.message}
            if exc.data is not None:
                error["data"] = exc.data
            reply["error"] = error
        except Exception as exc:
            log.exception("handler for server request %s failed", method)
            reply["error"] = {"code": INTERNAL_ERROR, "message": f"client error: {exc}"}
        finally:
            self._tasks.pop(request_id, None)
        try:
            await self._transport.send(reply)
        except McpError as exc:
            log.debug("could not answer server request %s: %s", method, exc)
