"""`open_runtime`: the wiring of one run from its `RunSettings` and `RunIO` (the composition
root's second half). It never prints and never reads stdin: asking goes through `io`.
Servers start in the background (or, held, once the first prompt is drawn or the model first
answers), so the runtime is usable at once and MCP tools join as their servers become ready."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from paicli.agent.memory import ProjectMemory
from paicli.agent.prompt import context_block
from paicli.agent.sessions import SessionStore
from paicli.asks.server_asks import ServerAsks, model_sampler
from paicli.audit.guard import guard
from paicli.audit.log import AuditLog
from paicli.home import user_home
from paicli.llm.settings import ModelSettings
from paicli.observe.tracing import configured
from paicli.permissions.approval import ApprovingToolbox, PermissionStore
from paicli.permissions.policy import permission_policy
from paicli.project_root import project_root
from paicli.redact import Redactor
from paicli.run_settings import RunIO, RunSettings
from paicli.runtime.context import mode_note, schema_profile, server_instructions
from paicli.runtime.run import Runtime
from paicli.servers.config import ServerEntry
from paicli.servers.manager import Connector, ServerManager, build_manager
from paicli.servers.tool_pins import ToolPins
from paicli.servers.trust import TrustStore, approve_servers, withheld_reason
from paicli.tools.base import Toolbox
from paicli.tools.builtin.sandboxing import CommandSandbox
from paicli.tools.builtin.toolbox import BuiltinToolbox
from paicli.tools.combined import CombinedToolbox
from paicli.tools.mcp.toolbox import McpToolbox
from paicli.tools.search.offer import SearchToolbox, ToolOffer

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
    mcp, approvals, toolbox, toolbox_problems = build_toolbox(settings, io, manager, offer, record)
    memory = ProjectMemory(settings.root, user_dir=settings.home.root)
    problems += [*toolbox_problems, *(memory.problems if memory.text() else ())]
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
            context=_Context(memory, manager, approvals),
            skipped=skipped,
            problems=problems,
            http_client=http_client,
        )
        model.runtime = runtime
        if settings.model.configured:
            await runtime.use_model(settings.model)
        try:
            yield runtime
        finally:
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
    servers' instructions, and the permission mode's note."""

    def __init__(
        self, memory: ProjectMemory, manager: ServerManager, approvals: ApprovingToolbox
    ) -> None:
        self._memory = memory
        self._manager = manager
        self._approvals = approvals

    def __call__(self) -> str:
        block = context_block(self._memory.text(), server_instructions(self._manager))
        return "\n\n".join(filter(None, [block, mode_note(self._approvals.mode)]))


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


def build_toolbox(
    settings: RunSettings,
    io: RunIO,
    manager: ServerManager,
    offer: ToolOffer,
    record: Record,
) -> tuple[McpToolbox, ApprovingToolbox, Toolbox, list[str]]:
    """The run's toolbox, `Audit( Redact( Approve( Builtin + MCP + search ) ) )`, with its
    MCP toolbox, its approving wrapper (the mode and session answers live there) and the
    problems met on the way (rules, saved answers, pins)."""
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
    policy, policy_problems = permission_policy(
        settings.user_config,
        settings.project_settings,
        store,
        trust=settings.options.trust_project,
        ask=io.ask_rules,
    )
    pins = ToolPins(settings.home.tool_pins, project=project)
    problems = [*policy_problems, *store.problems, *pins.problems]
    mcp = McpToolbox(
        manager,
        results_dir=settings.home.tool_results_dir,
        profile=schema_profile(settings.model),
        pins=pins,
        audit=record.audit,
        session_id=record.session_id,
    )
    added = settings.options.add_dirs  # --add-dir: writable in the sandbox, open to the tools
    sandbox_choice = replace(settings.sandbox, write=(*settings.sandbox.write, *map(str, added)))
    sandbox = CommandSandbox(sandbox_choice, settings.project, home=user_home(settings.environ))
    sandbox.prefetch()
    builtin = BuiltinToolbox(
        settings.root,
        home=settings.home,
        environ=settings.environ,
        secret_values=[settings.model.api_key or ""],
        learn_secrets=record.redactor.learn,
        sandbox=sandbox,
        also=added,
    )
    approvals = ApprovingToolbox(
        CombinedToolbox(builtin, mcp, SearchToolbox(offer)),
        policy=policy,
        store=store,
        approver=io.approver,
        flag_allow=settings.flag_allow,
        flag_deny=settings.flag_deny,
        yes=settings.options.yes,
        mode=settings.mode,
        root=settings.root,
        project=project,
        previewer=builtin.preview,
        contained=builtin.contained,
        also=added,
    )
    toolbox = guard(
        approvals, redactor=record.redactor, audit=record.audit, session_id=record.session_id
    )
    return mcp, approvals, toolbox, problems
