"""Everything one run of paicli needs, assembled from the config files, the environment and
the command line: model settings, the MCP servers, the composed toolbox, the agent.

Shared by the REPL and one-shot mode; it never prints and never reads stdin (asking the user
goes through the callbacks it is given). Servers start in the background: the runtime is
usable at once, and MCP tools join as their servers become ready.
"""

from __future__ import annotations

import contextlib
import logging
import os
import uuid
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from paicli.agent.loop import DEFAULT_MAX_STEPS, Agent, ModelClient
from paicli.agent.memory import ProjectMemory
from paicli.agent.prompt import context_block, system_prompt
from paicli.agent.sessions import SavedSession, SessionStore
from paicli.asks.server_asks import (
    Elicitor,
    SampleReviewer,
    SamplingApprover,
    ServerAsks,
    model_sampler,
    unattended_elicitation,
)
from paicli.audit.log import AuditingToolbox, AuditLog
from paicli.home import PaicliHome, user_home
from paicli.llm.deferred import DeferredClient, StreamingClient
from paicli.llm.errors import LlmError
from paicli.llm.schema import Profile
from paicli.llm.settings import ModelSettings, resolve_settings, switch_model
from paicli.mcp import HttpServer, StdioServer, connect
from paicli.observe import metrics
from paicli.observe.tracing import configured
from paicli.permissions.approval import (
    Approver,
    ApprovingToolbox,
    Mode,
    PermissionStore,
    Policy,
    ProjectSettings,
    flag_rules,
    project_settings,
)
from paicli.project_root import project_root
from paicli.redact import Redactor, environment_secrets
from paicli.servers.call_limits import call_defaults, limits_by_server
from paicli.servers.catalogue import Catalogue
from paicli.servers.config import LoadedConfig, load_config
from paicli.servers.manager import ChangeCallback, Connector, ServerManager, ServerState
from paicli.servers.tool_pins import ToolPins
from paicli.servers.trust import TrustAsk, TrustStore, approve_servers, withheld_reason
from paicli.tools.base import Toolbox
from paicli.tools.builtin.toolbox import BuiltinToolbox, project_root_warning
from paicli.tools.combined import CombinedToolbox
from paicli.tools.mcp.toolbox import McpToolbox
from paicli.tools.redacting import RedactingModel, RedactingToolbox
from paicli.tools.search.offer import SearchToolbox, ToolOffer
from paicli.user_config import UserConfig, load_user_config

if TYPE_CHECKING:
    from paicli.llm.client import HttpClient

log = logging.getLogger("paicli.runtime")


@dataclass
class Runtime:
    root: Path
    home: PaicliHome
    user_config: UserConfig
    settings: ModelSettings
    config: LoadedConfig
    manager: ServerManager
    mcp: McpToolbox
    audit: AuditLog
    toolbox: Toolbox
    agent: Agent | None
    offer: ToolOffer = field(default_factory=ToolOffer)
    # The run's secrets: the audit log, tool results and the screen share them.
    redactor: Redactor = field(default_factory=Redactor)
    environ: Mapping[str, str] = field(default_factory=dict)
    max_steps: int | None = None  # --max-steps (None: the agent's default)
    skipped: list[str] = field(default_factory=list)  # unapproved project servers
    # The project root (`project_root`): its MCP servers, settings.json and saved answers.
    project: Path | None = None
    problems: list[str] = field(default_factory=list)  # config problems, one line each
    http_client: HttpClient | None = None  # the model's HTTP client, when the caller owns one
    memory: ProjectMemory | None = None  # PAICLI.md, AGENTS.md, CLAUDE.md (agent.memory)
    sessions: SessionStore | None = None  # saved conversations (--continue, --resume)
    approvals: ApprovingToolbox | None = None  # the permission mode and session answers
    session_id: str = ""  # the file this conversation is saved to (set by `resume` or anew)
    usage: dict[str, int] = field(default_factory=dict)  # the model's token counts so far

    def add_usage(self, usage: Mapping[str, int]) -> None:
        for key, value in usage.items():
            if isinstance(value, int):
                self.usage[key] = self.usage.get(key, 0) + value

    context: Callable[[], str] | None = None  # what the system prompt adds before each request

    def load_model(self) -> None:
        """Start loading the model client in the background (the openai SDK), if not yet."""
        if self.agent is not None and isinstance(self.agent.llm, DeferredClient):
            self.agent.llm.load()

    def start_background(self) -> None:
        """What the first prompt did not wait for: the held servers start, the model loads."""
        self.manager.start()
        self.load_model()

    def resume(self, session: SavedSession) -> None:
        """Carry on the saved conversation `session`: its messages, saved to its file."""
        self.session_id = session.id
        if self.agent is not None:
            self.agent.restore(session.messages)

    def save_session(self) -> None:
        """Write the conversation to its session file (blocking: run it off the loop)."""
        if self.sessions is None or self.agent is None:
            return
        if not self.session_id:
            self.session_id = SessionStore.new_id()
        try:
            self.sessions.save(self.session_id, self.agent.messages, self.settings.model or "")
        except OSError as exc:
            log.warning("the conversation could not be saved: %s", exc)

    async def set_model(self, name: str) -> ModelSettings:
        """`/model NAME`: switch the model or preset, keeping the conversation. Settings that
        are not usable (a preset with no key) are returned and not applied: the current
        model stays."""
        settings = switch_model(self.settings, name, self.environ, self.user_config)
        if settings.api_key:  # a new key must never reach the model, the screen or the log
            self.redactor.learn([settings.api_key])
        if not settings.configured:
            return settings
        self.settings = settings
        self.mcp.profile = schema_profile(settings)
        llm = _client(settings, self.http_client, self.redactor, on_answer=self.manager.start)
        if self.agent is None:
            self.agent = _agent(
                llm,
                self.toolbox,
                self.root,
                settings,
                self.max_steps,
                offer=self.offer,
                context=self.context,
            )
        else:
            old, self.agent.llm = self.agent.llm, llm
            self.agent.context_window = settings.context_window
            await old.aclose()
        return settings


def schema_profile(settings: ModelSettings) -> Profile:
    """Gemini models (through Google's or a router's OpenAI-compatible endpoint) take only
    an OpenAPI subset of JSON Schema; every other provider takes the default profile."""
    where = f"{settings.model or ''} {settings.base_url or ''}".lower()
    return "gemini" if "gemini" in where or "generativelanguage" in where else "default"


def config_secrets(config: LoadedConfig) -> list[str]:
    """Values from server configs that must never reach a log: env values and headers."""
    secrets: list[str] = []
    for entry in config.servers.values():
        spec = entry.spec
        if isinstance(spec, StdioServer):
            secrets += list((spec.env or {}).values())
        elif isinstance(spec, HttpServer):
            secrets += list((spec.headers or {}).values())
    return secrets


@contextlib.asynccontextmanager
async def open_runtime(
    *,
    root: Path,
    flags: Mapping[str, str | None],
    approver: Approver | None,
    hold_servers: bool = False,
    flag_allow: tuple[str, ...] = (),
    flag_deny: tuple[str, ...] = (),
    yes: bool = False,
    mode: Mode | None = None,
    ask_rules: RulesAsk | None = None,
    trust_project: bool = False,
    ask_trust: TrustAsk | None = None,
    on_server_change: ChangeCallback | None = None,
    environ: Mapping[str, str] | None = None,
    max_steps: int | None = None,
    connector: Connector | None = None,
    http_client: HttpClient | None = None,
    elicit: Elicitor | None = None,
    approve_sampling: SamplingApprover | None = None,
    review_sample: SampleReviewer | None = None,
    mcp_config: Sequence[Path] = (),
    strict_mcp_config: bool = False,
) -> AsyncIterator[Runtime]:
    """`connector` reaches the MCP servers (default `paicli.mcp.connect`) and `http_client`
    carries the model's requests (default: the SDK's own); tests pass in-memory ones.
    `elicit` and `approve_sampling` ask the user what servers ask (none: `paicli -p`);
    `review_sample` shows the model's sampled answer before it goes to the server.
    `mcp_config` are `--mcp-config` files (checked by the caller), `strict_mcp_config` runs
    their servers alone.
    `hold_servers`: no server process starts until `Runtime.start_background()`, the first
    wait for a server, or the model's first answer (so none competes with the first prompt
    or request for the machine)."""
    env = os.environ if environ is None else environ
    home = PaicliHome.from_environ(env)
    user_config = load_user_config(home)
    settings, problems = resolve_settings(flags=flags, environ=env, user_config=user_config)
    problems = [*user_config.problems, *problems]
    project = project_root(root, env)
    config = load_config(
        project,
        home=home,
        environ=env,
        user_config=user_config,
        extra_files=mcp_config,
        only_extra=strict_mcp_config,
    )
    problems += [p.message for p in config.errors]  # (each names its file)
    problems += [f"warning: {w}" for w in config.warnings]
    entries, skipped = approve_servers(
        config.servers.values(),
        project,
        TrustStore(home.trust_store),
        trust_all=trust_project,
        ask=ask_trust,
        passing=config.passing,
    )
    problems += [withheld_reason(e) for e in entries if e.withheld and not e.disabled]
    offer, offer_problems = tool_offer(user_config)
    problems += offer_problems
    # The project's settings and saved answers are the project root's, wherever in it paicli
    # started; the file tools still work in `root` (see ApprovingToolbox for path rules).
    store = PermissionStore(
        home.permissions,
        project=project,
        earlier=lambda folder: project_root(folder, env).resolve() == project.resolve(),
    )
    policy, policy_problems = permission_policy(
        user_config, project_settings(project), store, trust=trust_project, ask=ask_rules
    )
    problems += [*policy_problems, *store.problems]
    flag_allow, allow_problems = flag_rules(flag_allow, "--allow")
    flag_deny, deny_problems = flag_rules(flag_deny, "--deny")
    problems += [*allow_problems, *deny_problems]
    if mode is None:
        mode, mode_problem = configured_mode(user_config)
        problems += mode_problem
    if (too_wide := project_root_warning(root, user_home(env))) is not None:
        problems.append(too_wide)
    secrets = [*config_secrets(config), *environment_secrets(env)]
    if settings.api_key:
        secrets.append(settings.api_key)
    redactor = Redactor(secrets)
    audit = AuditLog(home.audit_dir, redactor)
    defaults, limit_problems = call_defaults(env, user_config)
    problems += limit_problems
    session_id = uuid.uuid4().hex[:12]
    unattended, ask_problems = unattended_elicitation(user_config)
    problems += ask_problems
    asks = ServerAsks(
        root,
        audit,
        session_id=session_id,
        elicit=elicit,
        approve_sampling=approve_sampling,
        # `runtime` is bound below, before any server task runs (so before one can ask).
        model=model_sampler(
            lambda: runtime.settings,
            http_client,
            lambda usage: runtime.add_usage(usage),  # noqa: PLW0108 - runtime is not bound yet
            redactor,
        ),
        unattended=unattended,
        review=review_sample,
        learn_secrets=redactor.learn,
    )
    manager = ServerManager(
        entries,
        handlers=asks.handlers,
        call_limits=limits_by_server(entries, defaults),
        on_change=on_server_change,
        log_dir=home.mcp_logs_dir,
        connector=connector or connect,
        catalogue=Catalogue(home.catalogue_dir),
        held=hold_servers,
    )
    pins = ToolPins(home.tool_pins, project=project)
    problems += pins.problems
    mcp = McpToolbox(
        manager,
        results_dir=home.tool_results_dir,
        profile=schema_profile(settings),
        pins=pins,
        audit=audit,
        session_id=session_id,
    )
    builtin = BuiltinToolbox(
        root,
        home=home,
        environ=env,
        secret_values=[settings.api_key or ""],
        learn_secrets=redactor.learn,
    )
    approvals = ApprovingToolbox(
        CombinedToolbox(builtin, mcp, SearchToolbox(offer)),
        policy=policy,
        store=store,
        approver=approver,
        flag_allow=flag_allow,
        flag_deny=flag_deny,
        yes=yes,
        mode=mode,
        root=root,
        project=project,
        previewer=builtin.preview,
    )
    toolbox: Toolbox = AuditingToolbox(
        RedactingToolbox(approvals, redactor),
        audit,
        session_id=session_id,
    )
    traced = [e.name for e in entries if e.trace]
    memory = ProjectMemory(root, user_dir=home.root)
    if memory.text():
        problems += memory.problems

    def context() -> str:
        block = context_block(memory.text(), server_instructions(manager))
        return "\n\n".join(filter(None, [block, mode_note(approvals.mode)]))

    async with configured(traced, secrets, home), manager:
        agent = (
            _agent(
                _client(settings, http_client, redactor, on_answer=manager.start),
                toolbox,
                root,
                settings,
                max_steps,
                offer=offer,
                context=context,
            )
            if settings.configured
            else None
        )
        runtime = Runtime(
            root=root,
            home=home,
            user_config=user_config,
            settings=settings,
            config=config,
            manager=manager,
            mcp=mcp,
            audit=audit,
            toolbox=toolbox,
            agent=agent,
            offer=offer,
            redactor=redactor,
            environ=env,
            max_steps=max_steps,
            skipped=skipped,
            project=project,
            problems=problems,
            http_client=http_client,
            memory=memory,
            context=context,
            sessions=SessionStore(home.sessions_dir, root),
            approvals=approvals,
        )
        try:
            yield runtime
        finally:
            if runtime.agent is not None:
                with contextlib.suppress(Exception):
                    await runtime.agent.llm.aclose()


RulesAsk = Callable[[ProjectSettings], bool]


def permission_policy(
    user_config: UserConfig,
    project: ProjectSettings,
    store: PermissionStore,
    *,
    trust: bool,
    ask: RulesAsk | None,
) -> tuple[Policy, list[str]]:
    """The user's rules plus the project's: its deny rules always, its allow rules once the
    user accepted exactly these (asked through `ask`, remembered) or with `trust`."""
    policy, problems = Policy.from_config(user_config)
    problems += project.problems
    policy = policy | Policy(deny=project.policy.deny)
    allow = project.policy.allow
    if not allow:
        return policy, problems
    if trust or store.settings_accepted(project.digest):
        return policy | Policy(allow=allow), problems
    if ask is not None and ask(project):
        if (problem := store.accept_settings(project.digest)) is not None:
            problems.append(problem)
        return policy | Policy(allow=allow), problems
    problems.append(
        f"{project.path}: its {len(allow)} allow rule(s) are not applied until you accept "
        "them (paicli asks in a terminal; --trust-project applies them for one run)"
    )
    return policy, problems


def configured_mode(user_config: UserConfig) -> tuple[Mode, list[str]]:
    """The permission mode `[permissions] mode` sets in config.toml (default: `default`).
    `yolo` is refused there: it is for one run, chosen on the command line."""
    where = user_config.source or "config.toml"
    table = user_config.values.get("permissions")
    value = table.get("mode") if isinstance(table, dict) else None
    if value is None:
        return Mode.DEFAULT, []
    try:
        mode = Mode.parse(str(value))
    except ValueError as exc:
        return Mode.DEFAULT, [f"{where}: permissions.mode: {exc}"]
    if mode is Mode.YOLO:
        return Mode.DEFAULT, [
            f"{where}: permissions.mode: yolo is never a default; pass --permission-mode yolo "
            "for one run"
        ]
    return mode, []


def mode_note(mode: Mode) -> str:
    """What the system prompt says about the permission mode (nothing for the default)."""
    if mode is Mode.PLAN:
        return (
            "Permission mode: plan. Only read-only tools run; every other call is refused. "
            "Explore and read what you need, then answer with a concrete plan (files to change, "
            "commands to run) and wait: the user approves it and leaves plan mode."
        )
    if mode is Mode.ACCEPT_EDITS:
        return "Permission mode: accept-edits. File edits in the project run without asking."
    return ""


def tool_offer(user_config: UserConfig) -> tuple[ToolOffer, list[str]]:
    """Tool search settings from config.toml: `tool_search = false` offers every tool on
    every request; `max_tools = N` defers MCP tools when more than N tools would be offered
    (default: when their definitions pass 10% of the model's context window)."""
    where = user_config.source or "config"
    problems: list[str] = []
    enabled = user_config.values.get("tool_search", True)
    if not isinstance(enabled, bool):
        problems.append(f"{where}: tool_search must be true or false")
        enabled = True
    limit = user_config.values.get("max_tools")
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 1):
        problems.append(f"{where}: max_tools must be a positive whole number")
        limit = None
    return ToolOffer(max_tools=limit, enabled=enabled), problems


def _client(
    settings: ModelSettings,
    http_client: HttpClient | None,
    redactor: Redactor,
    on_answer: Callable[[], object] | None = None,
) -> DeferredClient:
    """The model client for `settings`, the openai SDK loaded on first use (or `load()`),
    every request without the secrets `redactor` knows. `on_answer` is called once a request
    has been answered (see `LlmClient`)."""
    if not settings.base_url or not settings.model:
        raise LlmError(settings.why_not_configured())  # at startup, as LlmClient would
    metered = metrics.active()  # --metrics-port: tokens and latency measured

    def build() -> StreamingClient:
        from paicli.llm.client import LlmClient  # noqa: PLC0415 - openai loads only when needed

        client = LlmClient(settings, http_client=http_client, on_answer=on_answer)
        return RedactingModel(client if metered is None else metered.model(client), redactor)

    return DeferredClient(build)


def _agent(
    llm: ModelClient,
    toolbox: Toolbox,
    root: Path,
    settings: ModelSettings,
    max_steps: int | None,
    *,
    offer: ToolOffer | None,
    context: Callable[[], str] | None = None,
) -> Agent:
    return Agent(
        llm,
        toolbox,
        system_prompt=system_prompt(root),
        context_window=settings.context_window,
        max_steps=max_steps or DEFAULT_MAX_STEPS,
        offer=offer,
        context=context,
    )


def server_instructions(manager: ServerManager) -> dict[str, str]:
    """The `instructions` of every server that is up (what it says of its own tools)."""
    found: dict[str, str] = {}
    for server in manager.servers():
        session = server.session
        if server.state is ServerState.READY and session is not None and session.instructions:
            found[server.name] = session.instructions
    return found
