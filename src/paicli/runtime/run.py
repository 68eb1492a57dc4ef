"""`Runtime`: the objects of one run, built by `open_runtime` from its `RunSettings`.

What was loaded at the start is `run` (frozen). What changes during the run changes through
`Runtime`'s own methods: the model in use (`set_model`, `use_model`), the conversation's file
(`resume`, `save_session`), the tokens used (`add_usage`); the UI writes two fields itself:
`/clear` empties `session_id` (the next turn is saved anew) and `/mcp approve` takes a server
off `skipped`.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from paicli.agent.build import build_agent
from paicli.agent.loop import Agent
from paicli.agent.memory import ProjectMemory
from paicli.agent.sessions import SavedSession, SessionStore
from paicli.audit.log import AuditLog, EndReason
from paicli.checkpoints.recorder import Checkpoints
from paicli.home import PaicliHome
from paicli.hooks.session import SessionHooks
from paicli.llm.deferred import DeferredClient
from paicli.llm.errors import LlmError
from paicli.llm.messages import Message
from paicli.llm.settings import ModelSettings, switch_model
from paicli.permissions.approval import ApprovingToolbox
from paicli.redact import Redactor
from paicli.run_settings import RunSettings
from paicli.runtime.context import schema_profile
from paicli.runtime.model import model_client
from paicli.servers.call_limits import limits_by_server
from paicli.servers.config import LoadedConfig, ServerEntry
from paicli.servers.manager import ManagedServer, ServerManager
from paicli.skills.toolbox import SkillToolbox
from paicli.tools.base import Toolbox
from paicli.tools.builtin.sandboxing import CommandSandbox
from paicli.tools.mcp.toolbox import McpToolbox
from paicli.tools.search.offer import ToolOffer
from paicli.user_config import UserConfig

if TYPE_CHECKING:
    from paicli.llm.client import HttpClient

__all__ = ["Runtime"]

log = logging.getLogger("paicli.runtime")


@dataclass
class Runtime:
    run: RunSettings
    settings: ModelSettings  # the model in use (`/model` switches it)
    manager: ServerManager
    mcp: McpToolbox
    audit: AuditLog
    toolbox: Toolbox
    agent: Agent | None
    offer: ToolOffer
    # The run's secrets: the audit log, tool results, the model and the screen share them.
    redactor: Redactor
    approvals: ApprovingToolbox  # the permission mode and session answers
    memory: ProjectMemory  # PAICLI.md, AGENTS.md, CLAUDE.md (agent.memory)
    sessions: SessionStore  # saved conversations (--continue, --resume)
    context: Callable[[], str]  # what the system prompt adds before each request
    skills: SkillToolbox | None = None  # the run's skills and their load_skill tool
    skipped: list[str] = field(default_factory=list)  # unapproved project servers
    problems: list[str] = field(default_factory=list)  # config problems, one line each
    http_client: HttpClient | None = None  # the model's HTTP client, when the caller owns one
    session_id: str = ""  # the file this conversation is saved to (set by `resume` or anew)
    usage: dict[str, int] = field(default_factory=dict)  # the model's token counts so far
    hooks: SessionHooks | None = None  # the run's hooks (UserPromptSubmit, Stop, ...)
    # How the user ended the run, when the REPL knows better than the way it unwound
    # ("interrupted": Ctrl+C twice); the audit log's session end record says it.
    ended_by: EndReason | None = None
    # What each turn changes in the files (`/rewind`, `paicli rewind`); None: not recorded.
    checkpoints: Checkpoints | None = None
    # How commands are contained; its probe starts with the model client (`load_model`).
    sandbox: CommandSandbox | None = None

    @property
    def root(self) -> Path:
        """The folder paicli started in: the file tools work there."""
        return self.run.root

    @property
    def project(self) -> Path:
        """The project root: its MCP servers, settings.json and saved answers."""
        return self.run.project

    @property
    def home(self) -> PaicliHome:
        return self.run.home

    @property
    def user_config(self) -> UserConfig:
        return self.run.user_config

    @property
    def config(self) -> LoadedConfig:
        return self.run.config

    @property
    def environ(self) -> Mapping[str, str]:
        return self.run.environ

    @property
    def max_steps(self) -> int | None:
        """--max-steps (None: the agent's default)."""
        return self.run.options.max_steps

    def add_usage(self, usage: Mapping[str, int]) -> None:
        for key, value in usage.items():
            if isinstance(value, int):
                self.usage[key] = self.usage.get(key, 0) + value

    def load_model(self) -> None:
        """Start loading in the background what the first turn needs, if not yet: the
        sandbox's probe (a thread that imports nothing) and the model client (the openai SDK,
        imported in a thread of its own)."""
        if self.sandbox is not None:
            self.sandbox.prefetch()
        if self.agent is not None and isinstance(self.agent.llm, DeferredClient):
            self.agent.llm.load()

    async def model_loaded(self) -> None:
        """Load the model client and wait for it; a failure is left for the first turn to
        report. The openai SDK is imported in a worker thread while the caller's thread only
        waits: two threads importing at once can fail in Python 3.11 (gh-91351)."""
        if self.agent is not None and isinstance(self.agent.llm, DeferredClient):
            with contextlib.suppress(LlmError):
                await self.agent.llm.client()

    def start_background(self) -> None:
        """What the first prompt did not wait for: the held servers start, the model loads."""
        self.manager.start()
        self.load_model()

    def new_conversation(self) -> None:
        """`/clear`: the conversation starts again, and the next turn is saved anew."""
        if self.agent is not None:
            self.agent.clear()
        if self.skills is not None:
            self.skills.end_grants()
        self.session_id = ""

    def approve_server(self, entry: ServerEntry) -> ManagedServer:
        """Start the project server `entry` the user approved during the session (it was
        skipped at start), with the run's call limits."""
        self.skipped.remove(entry.name)
        limits = limits_by_server([entry], self.run.calls).get(entry.name)
        return self.manager.add(entry, limits)

    def resume(self, session: SavedSession) -> None:
        """Carry on the saved conversation `session`: its messages, saved to its file."""
        self.session_id = session.id
        if self.agent is not None:
            self.agent.restore(session.messages)

    def conversation_id(self) -> str:
        """The id this conversation is saved under (a new one, chosen now, if none yet)."""
        if not self.session_id:
            self.session_id = SessionStore.new_id()
        return self.session_id

    def save_session(self) -> None:
        """Write the conversation to its session file (blocking: run it off the loop)."""
        if self.agent is None:
            return
        try:
            self.sessions.save(
                self.conversation_id(), self.agent.messages, self.settings.model or ""
            )
        except OSError as exc:
            log.warning("the conversation could not be saved: %s", exc)

    def begin_turn(self, prompt: str) -> None:
        """A turn of this conversation starts: what it changes is recorded from now on
        (blocking: the conversation's checkpoints are read the first time)."""
        if self.checkpoints is None or self.agent is None:
            return
        try:
            self.checkpoints.begin(self.conversation_id(), prompt, len(self.conversation()))
        except OSError as exc:
            log.warning("the turn's checkpoint could not be started: %s", exc)

    def end_turn(self) -> None:
        """The turn is over: its checkpoint is written (blocking), before the conversation."""
        if self.checkpoints is None:
            return
        try:
            self.checkpoints.end(self.conversation())
        except OSError as exc:
            log.warning("the turn's checkpoint could not be saved: %s", exc)

    def conversation(self) -> list[Message]:
        """The conversation as it is saved: its messages without the system prompt."""
        if self.agent is None:
            return []
        return [m for m in self.agent.messages if m["role"] != "system"]

    async def set_model(self, name: str) -> ModelSettings:
        """`/model NAME`: switch the model or preset, keeping the conversation. Settings that
        are not usable (a preset with no key) are returned and not applied: the current
        model stays."""
        settings = switch_model(self.settings, name, self.environ, self.user_config)
        if settings.api_key:  # a new key must never reach the model, the screen or the log
            self.redactor.learn([settings.api_key])
        if settings.configured:
            await self.use_model(settings)
        return settings

    async def list_models(self) -> list[str]:
        """The models the current endpoint offers (`GET {base_url}/models`); `LlmError`
        (one line) when it lists none. The key reaches the endpoint only."""
        from paicli.llm.client import LlmClient  # noqa: PLC0415 - the openai SDK

        client = LlmClient(self.settings, max_retries=0, http_client=self.http_client)
        try:
            return await client.list_models()
        finally:
            await client.aclose()

    async def use_model(self, settings: ModelSettings) -> None:
        """Talk to the model `settings` name (configured) from the next request on: the
        agent is built on the first one, and keeps its conversation on a switch."""
        self.settings = settings
        self.mcp.use_profile(schema_profile(settings))
        llm = model_client(settings, self.http_client, self.redactor, self.manager.start)
        if self.agent is None:
            self.agent = build_agent(
                llm,
                self.toolbox,
                root=self.root,
                context_window=settings.context_window,
                max_steps=self.max_steps,
                offer=self.offer,
                context=self.context,
                prompt=self.run.options.system_prompt,
                append=_appended(self.run.options.append_system_prompt, self.run.options.add_dirs),
                prepare=self.skills.catalog.refresh if self.skills is not None else None,
                hooks=self.hooks,
            )
            self.agent.jobs = self.mcp.jobs
        else:
            await self.agent.switch_model(llm, settings.context_window).aclose()
        self.agent.images = settings.images


def _appended(text: str | None, added: Sequence[Path]) -> str | None:
    """`--append-system-prompt`'s text, after a line naming the `--add-dir` folders (the
    model would not know it may use them)."""
    note = (
        "The user also gave you these folders to read and change, besides the project: "
        + ", ".join(str(folder) for folder in added)
        if added
        else None
    )
    return "\n\n".join(part for part in (note, text) if part) or None
