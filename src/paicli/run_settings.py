"""The composition root's input: one frozen `RunSettings` for a run, loaded once and purely.

Flags, the environment and the config files (config.toml, the mcpServers files, a project's
settings.json) become one value at the entry: `load_run_settings` reads files and decides
nothing interactively, starts nothing and asks nothing; every problem it meets is a line in
`problems`, never an exception. The UI's callbacks travel beside it as one `RunIO` value.
`runtime.open_runtime` turns the two into objects through the builders beside their owners
(`servers.manager.build_manager`, `runtime.open.build_toolbox`, `audit.guard.guard`, and
`agent.build.build_agent` once a model is configured), for the REPL and `-p`; `paicli mcp ...`
builds its servers with the same `build_manager`, the LangChain bridge its wrappers with the
same `guard`.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from paicli.asks.server_asks import (
    Action,
    Elicitor,
    SampleReviewer,
    SamplingApprover,
    unattended_elicitation,
)
from paicli.home import PaicliHome, user_home
from paicli.hooks.approval import HooksAsk
from paicli.hooks.settings import HookSet, load_hooks
from paicli.llm.settings import ModelSettings, resolve_settings
from paicli.mcp import HttpServer, StdioServer
from paicli.permissions.approval import (
    Approver,
    Mode,
    ProjectSettings,
    flag_rules,
    project_settings,
)
from paicli.plugins.manifest import Plugin
from paicli.plugins.registry import enabled_plugins
from paicli.project_root import project_root
from paicli.redact import environment_secrets
from paicli.servers.call_limits import CallDefaults, call_defaults
from paicli.servers.config import LoadedConfig, load_config
from paicli.servers.manager import ChangeCallback
from paicli.servers.trust import TrustAsk
from paicli.subagents.definitions import AgentCatalog, load_agents
from paicli.tools.builtin.sandboxing import SandboxMode, SandboxSettings, sandbox_settings
from paicli.tools.builtin.toolbox import project_root_warning
from paicli.user_config import UserConfig, load_user_config

__all__ = [
    "RulesAsk",
    "RunIO",
    "RunSettings",
    "StartOptions",
    "config_secrets",
    "configured_mode",
    "load_run_settings",
    "start_options",
]

RulesAsk = Callable[[ProjectSettings], bool]


@dataclass(frozen=True)
class StartOptions:
    """What the command line says about a run: the model flags (`--provider`, `--model`,
    `--base-url`), the rule flags, the mode and the server files."""

    flags: Mapping[str, str | None] = field(default_factory=dict)
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    yes: bool = False
    mode: Mode | None = None  # None: config.toml's, else `default`
    trust_project: bool = False
    max_steps: int | None = None
    mcp_config: tuple[Path, ...] = ()  # --mcp-config files (checked by the caller)
    strict_mcp_config: bool = False  # their servers alone
    # No server process starts until the first prompt is drawn, a wait for a server, or the
    # model's first answer (so none competes with them for the machine).
    hold_servers: bool = False
    sandbox: SandboxMode | None = None  # --sandbox (None: config.toml's, else on)
    system_prompt: str | None = None  # --system-prompt-file's text (None: paicli's own)
    append_system_prompt: str | None = None  # --append-system-prompt
    # --add-dir: more folders the file tools and commands may use (absolute, checked by the
    # caller to be folders).
    add_dirs: tuple[Path, ...] = ()


@dataclass(frozen=True)
class RunIO:
    """How a run reaches its user: who approves calls (none: `paicli -p`), who answers the
    project's questions (its servers, its rules), what servers ask (forms, sampling), and who
    hears of server changes. Each is optional: what has no one to ask is not done."""

    approver: Approver | None = None
    ask_rules: RulesAsk | None = None
    ask_trust: TrustAsk | None = None
    ask_hooks: HooksAsk | None = None  # a project's hooks, before they may run
    on_server_change: ChangeCallback | None = None
    elicit: Elicitor | None = None
    approve_sampling: SamplingApprover | None = None
    review_sample: SampleReviewer | None = None


@dataclass(frozen=True)
class RunSettings:
    """Everything a run is configured with, as loaded at its start (see the module)."""

    root: Path  # the folder paicli started in (the file tools work there)
    project: Path  # its project root: servers, settings.json, saved answers
    home: PaicliHome
    environ: Mapping[str, str]
    user_config: UserConfig
    model: ModelSettings
    config: LoadedConfig
    project_settings: ProjectSettings
    flag_allow: tuple[str, ...]  # --allow rules, parsed (a bad one is a problem line)
    flag_deny: tuple[str, ...]
    mode: Mode
    calls: CallDefaults
    unattended: Action  # how `-p` answers a form
    max_tools: int | None
    tool_search: bool
    secrets: tuple[str, ...]  # what must never reach a log, the screen or the model
    sandbox: SandboxSettings  # where commands run (the user's config and --sandbox only)
    options: StartOptions
    hooks: HookSet = field(default_factory=HookSet)  # all found; a project's run once approved
    problems: tuple[str, ...] = ()  # one line each, naming its file where there is one
    agents: AgentCatalog = field(default_factory=AgentCatalog)  # the sub-agents' definitions
    plugins: tuple[Plugin, ...] = ()  # the enabled plugins, read (paicli.plugins)


def start_options(
    arguments: argparse.Namespace,
    flags: Mapping[str, str | None],
    *,
    hold_servers: bool,
) -> StartOptions:
    """The options of a run from the command line's parsed `arguments` (the REPL's and
    `-p`'s share them) and its model `flags`; `system_prompt_text` is `--system-prompt-file`'s
    text, read at the entry (which reports a file that cannot be read)."""
    return StartOptions(
        flags=dict(flags),
        allow=tuple(arguments.allow),
        deny=tuple(arguments.deny),
        yes=bool(getattr(arguments, "yes", False)),
        mode=arguments.mode,
        trust_project=bool(arguments.trust_project),
        max_steps=arguments.max_steps or None,
        mcp_config=tuple(Path(f) for f in arguments.mcp_config),
        strict_mcp_config=bool(arguments.strict_mcp_config),
        hold_servers=hold_servers,
        sandbox=getattr(arguments, "sandbox", None),
        system_prompt=getattr(arguments, "system_prompt_text", None),
        append_system_prompt=getattr(arguments, "append_system_prompt", None),
        add_dirs=tuple(Path(folder) for folder in getattr(arguments, "add_dir", None) or ()),
    )


def load_run_settings(
    root: Path, options: StartOptions, environ: Mapping[str, str] | None = None
) -> RunSettings:
    """The settings of a run started in `root` with `options` (see the module)."""
    env = os.environ if environ is None else environ
    home = PaicliHome.from_environ(env)
    user_config = load_user_config(home)
    model, problems = resolve_settings(flags=options.flags, environ=env, user_config=user_config)
    problems = [*user_config.problems, *problems]
    project = project_root(root, env)
    plugins, problems_of_plugins = enabled_plugins(home.root, project)
    problems += [*problems_of_plugins, *(w for p in plugins for w in p.warnings)]
    config = load_config(
        project,
        home=home,
        environ=env,
        user_config=user_config,
        extra_files=list(options.mcp_config),
        only_extra=options.strict_mcp_config,
        plugins=plugins,
    )
    problems += [p.message for p in config.errors]  # (each names its file)
    problems += [f"warning: {w}" for w in config.warnings]
    max_tools, tool_search, offer_problems = _tool_offer(user_config)
    flag_allow, allow_problems = flag_rules(options.allow, "--allow")
    flag_deny, deny_problems = flag_rules(options.deny, "--deny")
    mode, mode_problems = (
        (options.mode, []) if options.mode is not None else configured_mode(user_config)
    )
    calls, limit_problems = call_defaults(env, user_config)
    where = str(user_config.source or "config.toml")
    sandbox, sandbox_problems = sandbox_settings(
        user_config.values.get("sandbox"), where, options.sandbox
    )
    unattended, ask_problems = unattended_elicitation(user_config)
    problems += [*offer_problems, *allow_problems, *deny_problems, *mode_problems]
    if (too_wide := project_root_warning(root, user_home(env))) is not None:
        problems.append(too_wide)
    problems += [*limit_problems, *ask_problems, *sandbox_problems]
    agents = load_agents(root, project, home.root, plugins)
    problems += agents.problems
    hooks = load_hooks(home.root, project, plugins)
    problems += hooks.problems
    secrets = [*config_secrets(config), *environment_secrets(env)]
    if model.api_key:
        secrets.append(model.api_key)
    return RunSettings(
        root=root,
        project=project,
        home=home,
        environ=env,
        user_config=user_config,
        model=model,
        config=config,
        project_settings=project_settings(project),
        flag_allow=flag_allow,
        flag_deny=flag_deny,
        mode=mode,
        calls=calls,
        unattended=unattended,
        max_tools=max_tools,
        tool_search=tool_search,
        secrets=tuple(secrets),
        sandbox=sandbox,
        options=options,
        hooks=hooks,
        problems=tuple(problems),
        agents=agents,
        plugins=tuple(plugins),
    )


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


def _tool_offer(user_config: UserConfig) -> tuple[int | None, bool, list[str]]:
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
    return limit, enabled, problems
