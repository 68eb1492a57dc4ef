"""`PaicliAgent`: paicli as an ACP agent (the SDK's `acp.Agent` methods). Each session is
one paicli run: `load_run_settings` in the session's folder with the command line's options,
the editor's MCP servers added as the user's own, `open_runtime` with the editor as the
approver; its id is that of its saved conversation, so `session/load` finds it again."""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, RequestError
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    ClientCapabilities,
    Implementation,
    InitializeResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    SessionAdditionalDirectoriesCapabilities,
    SessionCapabilities,
    SessionMode,
    SessionModeState,
    SetSessionModeResponse,
)

from paicli._version import __version__
from paicli.acp.commands import offered_commands
from paicli.acp.editor_fs import client_files
from paicli.acp.editor_servers import with_editor_servers
from paicli.acp.permission import EditorApprover
from paicli.acp.prompt_text import prompt_text
from paicli.acp.session import EditorSession, TurnFailed, owned
from paicli.acp.updates import history_updates
from paicli.agent.sessions import SavedSession
from paicli.permissions.request import Mode
from paicli.run_settings import RunIO, StartOptions, load_run_settings
from paicli.runtime import Runtime, open_runtime
from paicli.servers.trust import TrustStore, skip_reason

__all__ = ["PaicliAgent"]

log = logging.getLogger("paicli.acp")

# Sessions one connection may hold open (an editor opens one per thread it shows).
MAX_SESSIONS = 32

_MODE_NAMES = {
    Mode.DEFAULT: ("Ask", "Ask before edits, commands and MCP tools"),
    Mode.ACCEPT_EDITS: ("Accept edits", "File edits in the project run without asking"),
    Mode.PLAN: ("Plan", "Read-only tools only: the model proposes"),
    Mode.YOLO: ("Yolo", "Everything runs but what a deny rule names"),
}


class PaicliAgent:
    """The agent side of one editor connection: its sessions, each with its own runtime,
    owned by tasks of `group` (closed when the connection ends)."""

    def __init__(
        self, options: StartOptions, environ: Mapping[str, str], group: asyncio.TaskGroup
    ) -> None:
        self._options = options
        self._environ = environ
        self._group = group
        self._client: Client | None = None
        self._sessions: dict[str, EditorSession] = {}
        self._capabilities: ClientCapabilities | None = None  # said in `initialize`
        self._pending = 0  # sessions being opened

    def on_connect(self, conn: Client) -> None:
        self._client = conn

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        **_: Any,
    ) -> InitializeResponse:
        self._capabilities = client_capabilities
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(
                load_session=True,
                # Images: the model client sends text only.
                prompt_capabilities=PromptCapabilities(
                    image=False, audio=False, embedded_context=True
                ),
                mcp_capabilities=McpCapabilities(http=True, sse=True),
                # additionalDirectories: the session's --add-dir folders.
                session_capabilities=SessionCapabilities(
                    additional_directories=SessionAdditionalDirectoriesCapabilities()
                ),
            ),
            agent_info=Implementation(name="paicli", title="paicli", version=__version__),
            auth_methods=[],
        )

    async def authenticate(self, method_id: str, **_: Any) -> None:
        raise RequestError.invalid_params({"methodId": "paicli has no authentication methods"})

    async def new_session(
        self,
        cwd: str,
        mcp_servers: Sequence[Any] | None = None,
        additional_directories: Sequence[str] | None = None,
        **_: Any,
    ) -> NewSessionResponse:
        where = _Where(cwd, tuple(additional_directories or ()))
        session = await self._opening(where, mcp_servers or [], None)
        self._offer_commands(session)
        return NewSessionResponse(session_id=session.id, modes=_modes(session.runtime))

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: Sequence[Any] | None = None,
        additional_directories: Sequence[str] | None = None,
        **_: Any,
    ) -> LoadSessionResponse:
        where = _Where(cwd, tuple(additional_directories or ()))
        session = await self._opening(where, mcp_servers or [], session_id)
        saved = session.runtime.agent.messages if session.runtime.agent else []
        await session.send(history_updates(saved, session.runtime.redactor.redact_known))
        self._offer_commands(session)
        return LoadSessionResponse(modes=_modes(session.runtime))

    async def prompt(self, prompt: Sequence[Any], session_id: str, **_: Any) -> PromptResponse:
        session = self._session(session_id)
        text = prompt_text(prompt)
        try:
            reason = await session.prompt(text)
        except TurnFailed as exc:
            raise RequestError.internal_error({"details": str(exc)}) from None
        return PromptResponse(stop_reason=reason)

    async def cancel(self, session_id: str, **_: Any) -> None:
        if (session := self._sessions.get(session_id)) is not None:
            session.cancel()

    async def set_session_mode(
        self, mode_id: str, session_id: str, **_: Any
    ) -> SetSessionModeResponse:
        session = self._session(session_id)
        try:
            session.runtime.approvals.switch(Mode(mode_id))
        except ValueError as exc:
            raise RequestError.invalid_params({"modeId": str(exc)}) from None
        return SetSessionModeResponse()

    def _offer_commands(self, session: EditorSession) -> None:
        """The custom commands, told once the session exists for the editor: the task runs
        after this request's answer is written (the channel writes without waiting)."""
        self._group.create_task(_send_quietly(session, [offered_commands(session.runtime)]))

    async def aclose(self) -> None:
        """Every session's runtime closed (their servers stopped)."""
        for session in self._sessions.values():
            session.cancel()
            session.closing.set()

    def _session(self, session_id: str) -> EditorSession:
        session = self._sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params({"sessionId": f"no session {session_id!r}"})
        return session

    async def _opening(
        self, where: _Where, servers: Sequence[Any], saved_id: str | None
    ) -> EditorSession:
        """`_open`, within the sessions one connection may hold (those being opened count)."""
        if len(self._sessions) + self._pending >= MAX_SESSIONS:
            # Each session runs its own servers: a client opening them without end is not
            # an editor. They close with the connection.
            raise RequestError.invalid_request({"sessions": f"at most {MAX_SESSIONS} open"})
        self._pending += 1
        try:
            return await self._open(where, servers, saved_id)
        finally:
            self._pending -= 1

    async def _open(
        self, where: _Where, servers: Sequence[Any], saved_id: str | None
    ) -> EditorSession:
        root, more = await asyncio.to_thread(where.folders)
        if saved_id is not None and saved_id in self._sessions:
            raise RequestError.invalid_params({"sessionId": f"{saved_id} is already open"})
        assert self._client is not None
        options = replace(self._options, add_dirs=(*self._options.add_dirs, *more))
        settings = await asyncio.to_thread(load_run_settings, root, options, self._environ)
        settings = with_editor_servers(settings, servers)
        closing = asyncio.Event()
        approver = EditorApprover(self._client, root)
        ready: asyncio.Future[Runtime] = asyncio.get_running_loop().create_future()
        opening = functools.partial(open_runtime, settings, RunIO(approver=approver))
        self._group.create_task(owned(opening, ready, closing.wait))
        try:
            # Whatever stops this request (an error, the connection closing while the
            # runtime opens) closes the runtime too: its owner waits for `closing`.
            runtime = await ready
            _report(runtime)
            if runtime.agent is None:
                why = runtime.settings.why_not_configured()
                raise RequestError.internal_error({"details": f"paicli: {why}"})
            if saved_id is not None:
                _resume(runtime, saved_id)
            approver.session_id = runtime.conversation_id()
        except BaseException:
            closing.set()
            raise
        files = client_files(self._client, approver.session_id, self._capabilities)
        session = EditorSession(
            approver.session_id, runtime, self._client, closing=closing, files=files
        )
        approver.redact = runtime.redactor.redact_known
        approver.call_prefix = session.call_prefix
        self._sessions[session.id] = session
        return session


@dataclass(frozen=True)
class _Where:
    """Where a session works: its folder and the editor's additional directories (as
    `--add-dir` gives them), each to be an absolute path to a folder."""

    cwd: str
    more: tuple[str, ...] = ()

    def folders(self) -> tuple[Path, tuple[Path, ...]]:
        """The folders (blocking: they are looked at); invalid params naming a bad one."""
        found = []
        for key, value in [("cwd", self.cwd), *(("additionalDirectories", m) for m in self.more)]:
            path = Path(value)
            if not path.is_absolute() or not path.is_dir():
                raise RequestError.invalid_params(
                    {key: f"not an absolute path to a folder: {value}"}
                )
            found.append(path)
        return found[0], tuple(found[1:])


async def _send_quietly(session: EditorSession, updates: list[Any]) -> None:
    try:
        await session.send(updates)
    except (ConnectionError, RequestError) as exc:
        log.debug("an update could not be sent: %s", exc)


def _report(runtime: Runtime) -> None:
    """The run's problems and the project servers it skipped, one line each on stderr (an
    editor has no one to ask whether a repository's servers may start)."""
    for problem in runtime.problems:
        log.warning("paicli: %s", problem)
    store = TrustStore(runtime.home.trust_store)
    for name in runtime.skipped:
        entry = runtime.config.servers[name]
        log.warning("paicli: %s", skip_reason(entry, runtime.project, store))


def _resume(runtime: Runtime, session_id: str) -> None:
    saved: SavedSession | None = runtime.sessions.load(session_id)
    if saved is None:
        raise RequestError.invalid_params({"sessionId": f"no saved conversation {session_id!r}"})
    if (elsewhere := runtime.sessions.elsewhere(saved)) is not None:
        raise RequestError.invalid_params({"sessionId": elsewhere})
    runtime.resume(saved)


def _modes(runtime: Runtime) -> SessionModeState:
    current = runtime.approvals.mode
    offered = [Mode.DEFAULT, Mode.ACCEPT_EDITS, Mode.PLAN]
    if current is Mode.YOLO or runtime.approvals.yolo_allowed:
        offered.append(Mode.YOLO)
    return SessionModeState(
        current_mode_id=current.value,
        available_modes=[
            SessionMode(id=m.value, name=_MODE_NAMES[m][0], description=_MODE_NAMES[m][1])
            for m in offered
        ],
    )
