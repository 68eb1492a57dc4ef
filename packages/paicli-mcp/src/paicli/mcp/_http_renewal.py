"""The Streamable HTTP transport's upkeep of its session (2025-03-26 to 2025-11-25): what
the answers to `initialize` and `notifications/initialized` say about it, and what happens
when the server forgets it (a new session once, then the message again unless it is a tool
call). Mixed into `StreamableHttpTransport`; the session itself is `_http_session`."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import aiohttp
import orjson

from ._http_exchange import exchange
from ._http_session import HttpSession, session_id_problem
from ._transport import TransportWatcher
from .errors import ProtocolError, SessionExpired

__all__ = ["SessionUpkeep"]

Message = dict[str, Any]
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"


def is_modern(message: Message) -> bool:
    """Whether a message is a 2026-07-28 request (it carries the per-request version)."""
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return "method" in message and isinstance(meta, dict) and isinstance(meta.get(VERSION_KEY), str)


class SessionUpkeep:
    """Mixed into `StreamableHttpTransport`: keeping and renewing the server's session."""

    _session: HttpSession
    _label: str
    _url: str
    _client: aiohttp.ClientSession
    _watcher: TransportWatcher | None
    _fail: Callable[..., None]
    _post: Callable[..., Any]
    _headers_for: Callable[..., Mapping[str, str]]
    _deliver: Callable[..., None]
    _open_get_stream: Callable[[], None]

    def _took_session(self, method: str, request_id: Any, headers: Mapping[str, str]) -> bool:
        """Keep what a successful answer to a SESSION_METHODS request says about the
        session: the id the answer to `initialize` names (False, with the request failed,
        when it is unusable), the GET stream once `notifications/initialized` went through."""
        if method == "initialize":
            session_id = headers.get("mcp-session-id")
            problem = session_id_problem(session_id) if session_id else None
            if problem is not None:
                self._fail(request_id, ProtocolError(f"{self._label}: {problem}"))
                return False
            if session_id:
                self._session.id = session_id
                self._session.stateful = True
        elif method == "notifications/initialized":
            self._open_get_stream()
        return True

    def _may_have_lost_session(self, method: str | None) -> bool:
        """Whether an error status on a request of `method` may mean a forgotten session."""
        return self._session.stateful and method != "initialize"

    async def _session_lost(
        self, message: Message, modern: bool, generation: int, status: int
    ) -> None:
        """The server forgot our session (`status`): establish a new one, then send the
        message again, unless it is a tool call (which may not be safe to repeat: the
        caller knows the tool, and decides) or an answer to the old session's request."""
        if "method" not in message or not await self._renew(message, generation, status):
            return
        if message.get("method") == "tools/call":
            text = f"{self._lost(status)}; a new session was established, but the call was not "
            lost = SessionExpired(text + "sent again", renewed=True, status=status)
            self._fail(message.get("id"), lost)
        else:
            await self._post(message, modern=modern, after_reinit=True)

    async def _renew(self, message: Message, generation: int, status: int | None) -> bool:
        """Establish a new session; when that fails, fail `message` saying so."""
        problem = await self._session.renew(generation, self._post_plain, self._renewed)
        if problem is None:
            return True
        text = f"{self._lost(status)}, and a new one could not be established: {problem}"
        self._fail(message.get("id"), SessionExpired(text, renewed=False, status=status))
        return False

    def _lost(self, status: int | None) -> str:
        when = f" (HTTP {status})" if status is not None else ""
        return f"{self._label}: the server lost its session{when}"

    async def _post_plain(self, message: Message) -> aiohttp.ClientResponse:
        """One POST of `message` with its usual headers, nothing more (re-initialization)."""
        data, headers = orjson.dumps(message), self._headers_for(message, is_modern(message))
        return await exchange(
            self._client,
            self._label,
            "POST",
            self._url,
            data=data,
            headers=headers,
            watcher=self._watcher,
        )

    def _renewed(self) -> None:
        # The new session may offer other tools than the lost one: whoever listens for list
        # changes re-reads them.
        self._deliver({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
