"""`open_runtime`: the wiring of one run from its `RunSettings` and `RunIO` (the composition
root's second half). It never prints and never reads stdin: asking goes through `io`.
Servers start in the background (or, held, once the first prompt is drawn or the model first
answers), so the runtime is usable at once and MCP tools join as their servers become ready."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from paicli.agent.memory import ProjectMemory
from paicli.agent.prompt import context_block
from paicli.agent.sessions import SessionStore
from paicli.agent.todos import TodoToolbox
from paicli.asks.server_asks import ServerAsks, model_sampler
from paicli.audit.guard import guard
from paicli.audit.log import AuditLog
from paicli.checkpoints.recorder import Checkpoints
from paicli.checkpoints.toolbox import CheckpointingToolbox
from paicli.home import user_home
from paicli.hooks.approval import HookApprovals, approved_hooks
from paicli.hooks.engine import HookEngine
from paicli.hooks.session import SessionHooks
from paicli.hooks.toolbox import HookingToolbox
from paicli.llm.settings import ModelSettings
from paicli.observe.tracing import configured
from paicli.permissions.approval import ApprovingToolbox, PermissionStore
from paicli.permissions.policy import Policy, permission_policy
from paicli.project_root import project_root
from paicli.redact import Redactor
from paicli.run_settings import RunIO, RunSettings
from paicli.runtime.context import mode_note, schema_profile, server_instructions
from paicli.runtime.run import Runtime
from paicli.runtime.subagent_host import RunHost
from paicli.servers.config import ServerEntry
from paicli.servers.manager import Connector, ServerManager, build_manager
from paicli.servers.tool_pins import ToolPins
from paicli.servers.trust import TrustStore, approve_servers, withheld_reason
from paicli.skills.catalog import SkillCatalog
from paicli.skills.local import local_skills
from paicli.skills.toolbox import SkillToolbox
from paicli.subagents.toolbox import SubAgentToolbox
from paicli.tools.base import Toolbox
from paicli.tools.builtin.sandboxing import CommandSandbox
from paicli.tools.builtin.toolbox import BuiltinToolbox
from paicli.tools.combined import CombinedToolbox
from paicli.tools.mcp.toolbox import McpToolbox
from paicli.tools.search.offer import SearchToolbox, ToolOffer
from paicli.tools.web.settings import web_settings
from paicli.tools.web.toolbox import WebToolbox

if TYPE_CHECKING:
    from paicli.llm.client import HttpClient

__all__ = ["build_toolbox", "open_runtime"]


@contextlib.asynccontextmanager
async def open_runtime(
    settings: RunSettings,
    io: RunIO | None = None,
    *,
    connector: Connector | None = None,
    http_client: HttpClient | None = None,
) -> AsyncIterator[Runtime]:
    """The run's objects, their servers started (or held: `StartOptions.hold_servers`).
    `connector` reaches the MCP servers (default `paicli.mcp.connect`) and `http_client`
    carries the model's requests (default: the SDK's own); tests pass in-memory ones."""
    io = io or RunIO()
    entries, skipped, problems = _approved_servers(settings, io)
    redactor = Redactor(settings.secrets)
    record = Record(redactor, AuditLog(settings.home.audit_dir, redactor), uuid.uuid4().hex[:12])
    model = _ModelInUse(settings.model)
    hooks, hook_problem = _hooks(settings, io, record)
    if hook_problem is not None:
        problems.append(hook_problem)
    manager = build_manager(
        entries,
        home=settings.home,
        calls=settings.calls,
        handlers=_asks(settings, io, record, model, http_client).handlers,
        on_change=io.on_server_change,
        connector=connector,
        held=settings.options.hold_servers,
    )
    offer = ToolOffer(max_tools=settings.max_tools, enabled=settings.tool_search)
    found, skill_problems = local_skills(settings.home.root, settings.project, settings.plugins)
    skills = SkillToolbox(SkillCatalog(found, manager, skill_problems))
    subagents = SubAgentToolbox(settings.agents, host := RunHost(settings.root))
    checkpoints = Checkpoints(
        settings.home.checkpoints_dir,
        [settings.root, *settings.options.add_dirs],
        skip=[settings.home.root],
    )
    sandbox = command_sandbox(settings)
    mcp, approvals, toolbox, toolbox_problems = build_toolbox(
        settings,
        io,
        manager,
        offer,
        record,
        skills=skills,
        own=(TodoToolbox(), subagents),
        hooks=hooks,
        checkpoints=checkpoints,
        sandbox=sandbox,
    )
    subagents.serve(toolbox)
    memory = ProjectMemory(settings.root, user_dir=settings.home.root)
    problems += [*toolbox_problems, *skill_problems, *(memory.problems if memory.text() else ())]
    traced = [e.name for e in entries if e.trace]
    async with configured(traced, list(settings.secrets), settings.home), manager:
        runtime = Runtime(
            run=settings,
            settings=settings.model,
            manager=manager,
            mcp=mcp,
            audit=record.audit,
            toolbox=toolbox,
            agent=None,
            offer=offer,
            redactor=redactor,
            approvals=approvals,
            memory=memory,
            sessions=SessionStore(settings.home.sessions_dir, settings.root),
            context=_Context(memory, manager, approvals, skills.catalog, hooks),
            skills=skills,
            skipped=skipped,
            problems=problems,
            http_client=http_client,
            hooks=hooks,
            checkpoints=checkpoints,
            sandbox=sandbox,
        )
        model.runtime = runtime
        host.bind(runtime)
        async with _session(runtime, settings.model, record.session_id):
            yield runtime


@contextlib.asynccontextmanager
async def _session(runtime: Runtime, model: ModelSettings, session_id: str) -> AsyncIterator[None]:
    """The run's session, recorded in the audit log as `session_id`: it starts with the model
    `model` names (when configured) and the SessionStart hooks, and ends with the run's MCP
    tasks cancelled, the SessionEnd hooks and the model client closed."""
    hooks = runtime.hooks
    if model.configured:
        await runtime.use_model(model)
    if hooks is not None:
        await hooks.session_start()
    try:
        with runtime.audit.session(session_id, lambda: runtime.ended_by):
            yield
    finally:
        await runtime.mcp.jobs.aclose()  # running MCP tasks are cancelled on their servers
        if hooks is not None:
            await hooks.session_end()
        if runtime.agent is not None:
            with contextlib.suppress(Exception):
                await runtime.agent.llm.aclose()


def _approved_servers(
    settings: RunSettings, io: RunIO
) -> tuple[list[ServerEntry], list[str], list[str]]:
    """The servers the run may start (the user's, and the project's the user approved,
    asked through `io`), the names of those skipped, and the run's problems so far."""
    entries, skipped = approve_servers(
        settings.config.servers.values(),
        settings.project,
        TrustStore(settings.home.trust_store),
        trust_all=settings.options.trust_project,
        ask=io.ask_trust,
        passing=settings.config.passing,
    )
    withheld = [withheld_reason(e) for e in entries if e.withheld and not e.disabled]
    return entries, skipped, [*settings.problems, *withheld]


class _Context:
    """What the system prompt adds before each request: the project's memory, the ready
    servers' instructions, the skills' names and descriptions, and the permission mode's
    note."""

    def __init__(
        self,
        memory: ProjectMemory,
        manager: ServerManager,
        approvals: ApprovingToolbox,
        skills: SkillCatalog,
        hooks: SessionHooks | None = None,
    ) -> None:
        self._memory = memory
        self._manager = manager
        self._approvals = approvals
        self._skills = skills
        self._hooks = hooks

    def __call__(self) -> str:
        block = context_block(self._memory.text(), server_instructions(self._manager))
        started = self._hooks.context if self._hooks is not None else ""
        parts = [block, started, self._skills.prompt_block(), mode_note(self._approvals.mode)]
        return "\n\n".join(filter(None, parts))


@dataclass(frozen=True)
class Record:
    """What the run keeps of itself: the secrets it knows (the redactor), the audit log, and
    the session id both carry."""

    redactor: Redactor
    audit: AuditLog
    session_id: str


class _ModelInUse:
    """The model a server's sampling request goes to: the run's current one (`/model` may
    switch it), and where its token counts are added; bound once the runtime exists,
    before any server task runs (so before one can ask)."""

    def __init__(self, settings: ModelSettings) -> None:
        self.initial = settings
        self.runtime: Runtime | None = None

    def settings(self) -> ModelSettings:
        return self.runtime.settings if self.runtime is not None else self.initial

    def add_usage(self, usage: Mapping[str, int]) -> None:
        if self.runtime is not None:
            self.runtime.add_usage(usage)


def _asks(
    settings: RunSettings,
    io: RunIO,
    record: Record,
    model: _ModelInUse,
    http_client: HttpClient | None,
) -> ServerAsks:
    """How the run answers what its servers ask: roots, forms and sampling."""
    redactor = record.redactor
    return ServerAsks(
        settings.root,
        record.audit,
        session_id=record.session_id,
        elicit=io.elicit,
        approve_sampling=io.approve_sampling,
        model=model_sampler(model.settings, http_client, model.add_usage, redactor),
        unattended=settings.unattended,
        review=io.review_sample,
        learn_secrets=redactor.learn,
    )


def _hooks(
    settings: RunSettings, io: RunIO, record: Record
) -> tuple[SessionHooks | None, str | None]:
    """The run's hooks (None: there are none): the user's, and the project's once the user
    approved exactly them (asked through `io`); one line when the project's do not run."""
    found, problem = approved_hooks(
        settings.hooks,
        settings.project,
        HookApprovals(settings.home.hook_approvals),
        io.ask_hooks,
    )
    if not found.handlers:
        return None, problem
    engine = HookEngine(
        found,
        root=settings.root,
        project=settings.project,
        session_id=record.session_id,
        audit=record.audit,
        sandbox=CommandSandbox(
            settings.sandbox, settings.project, home=user_home(settings.environ)
        ),
        environ=settings.environ,
    )
    return SessionHooks(engine), problem


def command_sandbox(settings: RunSettings) -> CommandSandbox:
    """How the run's commands are contained (its probe starts with `Runtime.load_model`)."""
    added = settings.options.add_dirs  # --add-dir: writable in the sandbox, open to the tools
    choice = replace(settings.sandbox, write=(*settings.sandbox.write, *map(str, added)))
    return CommandSandbox(choice, settings.project, home=user_home(settings.environ))


def build_toolbox(
    settings: RunSettings,
    io: RunIO,
    manager: ServerManager,
    offer: ToolOffer,
    record: Record,
    *,
    skills: SkillToolbox | None = None,
    own: Sequence[Toolbox] = (),
    hooks: SessionHooks | None = None,
    checkpoints: Checkpoints | None = None,
    sandbox: CommandSandbox | None = None,
) -> tuple[McpToolbox, ApprovingToolbox, Toolbox, list[str]]:
    """The run's toolbox, `Audit( Redact( Hooks( Approve( Checkpoint( Builtin ) + MCP +
    search + skills + own ) ) ) )` (`own`: the agent's own tools, the todo list and
    sub-agents; no hooks: no `Hooks`; no `checkpoints`: no `Checkpoint`), with its MCP
    toolbox, its approving wrapper (the mode and session answers live there) and the
    problems met on the way (rules, saved answers, pins)."""
    project = settings.project
    store, policy, policy_problems = _permissions(settings, io)
    pins = ToolPins(settings.home.tool_pins, project=project)
    web, web_problems = web_settings(settings.user_config, settings.environ)
    problems = [*policy_problems, *store.problems, *pins.problems, *web_problems]
    mcp = McpToolbox(
        manager,
        results_dir=settings.home.tool_results_dir,
        profile=schema_profile(settings.model),
        pins=pins,
        audit=record.audit,
        session_id=record.session_id,
    )
    added = settings.options.add_dirs
    sandbox = sandbox or command_sandbox(settings)
    builtin = BuiltinToolbox(
        settings.root,
        home=settings.home,
        environ=settings.environ,
        secret_values=[settings.model.api_key or ""],
        learn_secrets=record.redactor.learn,
        sandbox=sandbox,
        also=added,
    )
    recorded: Toolbox = builtin
    if checkpoints is not None:
        recorded = CheckpointingToolbox(builtin, checkpoints, builtin.paths)
    sources: list[Toolbox] = [recorded, WebToolbox(web), mcp, SearchToolbox(offer), *own]
    if skills is not None:
        sources.append(skills)
    approvals = ApprovingToolbox(
        CombinedToolbox(*sources),
        policy=policy,
        store=store,
        approver=io.approver
        if hooks is None or io.approver is None
        else hooks.notifying(io.approver),
        flag_allow=settings.flag_allow,
        flag_deny=settings.flag_deny,
        yes=settings.options.yes,
        mode=settings.mode,
        root=settings.root,
        project=project,
        previewer=builtin.preview,
        contained=builtin.contained,
        granted=skills.granted if skills is not None else None,
        also=added,
    )
    inner: Toolbox = approvals
    if hooks is not None:
        hooks.engine.follow_mode(lambda: approvals.mode.value)
        inner = HookingToolbox(approvals, hooks.engine)
    toolbox = guard(
        inner, redactor=record.redactor, audit=record.audit, session_id=record.session_id
    )
    return mcp, approvals, toolbox, problems


def _permissions(settings: RunSettings, io: RunIO) -> tuple[PermissionStore, Policy, list[str]]:
    """The saved answers, the rules in force (config, and the project's settings once the user
    accepted them, asked through `io`) and the problems met reading them."""
    # The project's settings and saved answers are the project root's, wherever in it paicli
    # started; the file tools still work in `root` (see ApprovingToolbox for path rules).
    project = settings.project
    store = PermissionStore(
        settings.home.permissions,
        project=project,
        earlier=lambda folder: (
            project_root(folder, settings.environ).resolve() == project.resolve()
        ),
    )
    policy, problems = permission_policy(
        settings.user_config,
        settings.project_settings,
        store,
        trust=settings.options.trust_project,
        ask=io.ask_rules,
    )
    return store, policy, problems
