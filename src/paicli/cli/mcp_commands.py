"""`paicli mcp list|get|tools|call|lock|logs|add|add-json|import|remove|approve|trace|login|
logout`: the configured servers from a shell (`probe`, `replay` and `doctor` have modules of
their own).

Servers come from the config files (`paicli.servers.config`); project servers run only once
approved (`paicli.servers.trust`). This module decides what runs; `paicli.ui.mcp_shell` shows
the outcome (progress on stderr, results on stdout).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
import uuid
from pathlib import Path

from paicli.audit.log import AuditLog
from paicli.cli._mcp_add import add as add_entry
from paicli.cli._mcp_add import project_of
from paicli.cli._mcp_add_json import add_json
from paicli.cli._mcp_import import import_servers
from paicli.cli._parser import NO_SERVERS
from paicli.cli._signals import run_until_signalled
from paicli.home import PaicliHome
from paicli.observe.tracing import configured
from paicli.project_root import project_root
from paicli.redact import Redactor, environment_secrets
from paicli.run_settings import RunSettings, StartOptions, config_secrets, load_run_settings
from paicli.servers.catalogue import catalogue_key
from paicli.servers.config import (
    ConfigWriteError,
    LoadedConfig,
    ServerEntry,
    load_config,
    name_problem,
    remove_server,
    shown_name,
)
from paicli.servers.containment import loosening, sandbox_line, support_for
from paicli.servers.errors import ServerError
from paicli.servers.manager import ManagedServer, ServerManager, ServerState, build_manager
from paicli.servers.oauth import LoginFailed, log_in, log_out
from paicli.servers.tool_pins import ToolPins, from_project
from paicli.servers.traces import TraceError, read_trace
from paicli.servers.trust import (
    TrustStore,
    approve_servers,
    describe,
    needs_approval,
    skip_lines,
    withheld_reason,
)
from paicli.tools.mcp.results import to_model_result
from paicli.ui import mcp_shell
from paicli.ui.mcp_view import log_lines
from paicli.ui.output import err, out
from paicli.ui.screen_secrets import redacting
from paicli.ui.trace_view import show_trace
from paicli.ui.trust_prompt import ask_on_terminal


def run(options: argparse.Namespace) -> int:
    command = options.mcp_command
    if command == "add":
        return add(options)
    if command == "add-json":
        return add_json(options, config_path, project())
    if command == "import":
        return import_servers(options, config_path, project())
    if command == "remove":
        return remove(options)
    if command == "logs":
        return logs(options)
    if command == "approve":
        return approve(options)
    if command == "trace":
        return trace(options)
    if command == "login":
        return run_until_signalled(login(options))
    if command == "logout":
        return run_until_signalled(logout(options))
    return run_until_signalled(with_servers(options))


# -- OAuth logins -------------------------------------------------------------------------------


def _http_entry(config: LoadedConfig, name: str, command: str) -> ServerEntry | None:
    entry = config.servers.get(name)
    if entry is None:
        err(f"paicli mcp {command}: no server named {name!r} (see paicli mcp list)")
        return None
    if entry.spec is None:
        err(f"paicli mcp {command}: {entry.error}")
        return None
    return entry


async def login(options: argparse.Namespace) -> int:
    config = load_config(project())
    entry = _http_entry(config, options.name, "login")
    if entry is None:
        return 1
    allowed, _ = approved(config, options.trust_project)
    if options.name not in {e.name for e in allowed}:
        return 1  # `approved` said why

    def show(url: str) -> None:
        err(f"Log in to {options.name} in your browser. If it does not open, visit:")
        err(f"  {url}")

    port = entry.oauth.callback_port if entry.oauth is not None else None
    try:
        tools = await log_in(
            entry.spec,
            options.name,
            show=show,
            callback_port=port,
            open_browser=not options.no_browser,
        )
    except LoginFailed as exc:
        err(f"paicli mcp login: {options.name}: {exc}")
        return 1
    out(f"✓ Logged in to {options.name} ({tools} tools).")
    return 0


async def logout(options: argparse.Namespace) -> int:
    entry = _http_entry(load_config(project()), options.name, "logout")
    if entry is None:
        return 1
    try:
        forgot = await log_out(entry.spec, options.name)
    except LoginFailed as exc:
        err(f"paicli mcp logout: {options.name}: {exc}")
        return 1
    out(f"Logged out of {options.name}." if forgot else f"{options.name} had no login to forget.")
    return 0


def trace(options: argparse.Namespace) -> int:
    try:
        recorded = read_trace(Path(options.file), server=options.server)
    except TraceError as exc:
        err(f"paicli mcp trace: {exc}")
        return 1
    show_trace(recorded, slow_ms=options.slow)
    return 0


# -- config editing -------------------------------------------------------------------------


def project() -> Path:
    """The project this command runs for: the nearest folder up with `.paicli/`,
    `.mcp.json` or `.git` (`project_root`)."""
    return project_root(Path.cwd())


def config_path(scope: str) -> Path:
    if scope == "project":
        return project() / ".paicli" / "mcp.json"
    if scope == "local":
        return PaicliHome.from_environ().local_mcp_config(project())
    return PaicliHome.from_environ().mcp_config


def add(options: argparse.Namespace) -> int:
    return add_entry(options, config_path)


def remove(options: argparse.Namespace) -> int:
    scopes = [options.scope] if options.scope else ["local", "project", "user"]
    for scope in scopes:
        path = config_path(scope)
        try:
            if remove_server(path, options.name, inside=project_of(scope, path)):
                out(f"Removed server {options.name!r} from {path}")
                return 0
        except ConfigWriteError as exc:
            err(f"paicli mcp remove: {exc}")
            return 1
    err(f"paicli mcp remove: no server named {options.name!r} in {' or '.join(scopes)} config")
    return 1


def logs(options: argparse.Namespace) -> int:
    problem = name_problem(options.name)
    if problem is not None:
        err(f"paicli mcp logs: {options.name!r}: {problem}")
        return 2
    path = PaicliHome.from_environ().mcp_log(options.name)
    try:
        lines = log_lines(path, options.lines)
    except FileNotFoundError:
        err(f"paicli mcp logs: no log for {options.name!r} yet ({path})")
        return 1
    with redacting(screen_redactor(load_config(project()))):
        mcp_shell.show_logs(options.name, lines)
    return 0


def approve(options: argparse.Namespace) -> int:
    """`paicli mcp approve NAME [--secret VAR]...`: the project server approved as its entry
    is now (a "no" said before is forgotten), so the next run starts it without asking, and
    passes it each secret-looking variable named (one the user said no to included)."""
    config = load_config(project())
    entry = config.servers.get(options.name)
    if entry is None:
        err(f"paicli mcp approve: no server named {shown_name(options.name)} (see paicli mcp list)")
        return 1
    if not needs_approval(entry):
        out(f"{options.name!r} is your own ({entry.scope}) server: it needs no approval.")
        return 0
    if entry.spec is None:
        err(f"paicli mcp approve: {entry.error}")
        return 1
    unknown = [name for name in options.secret if name not in entry.unallowed_secrets]
    if unknown:
        reads = ", ".join(entry.unallowed_secrets) or "none"
        err(
            f"paicli mcp approve: {options.name!r} reads no secret-looking {unknown[0]!r} to "
            f"pass (it reads: {reads})"
        )
        return 1
    store = TrustStore(PaicliHome.from_environ().trust_store)
    store.approve(project(), entry)
    if options.secret:
        store.answer_secrets(project(), entry, dict.fromkeys(options.secret, True))
    with redacting(screen_redactor(config)):
        out(f"Approved project server {options.name!r} ({entry.source}) as it is now:")
        out(f"  {describe(entry)}")
        if entry.containment is not None:
            out(f"OS sandbox: {sandbox_line(entry.containment)}")
        for warning in loosening(entry.containment):
            out(f"Warning: it {warning}")
        if options.secret:
            out(f"It is passed {', '.join(options.secret)}.")
    return 0


# -- commands that start servers --------------------------------------------------------------


def approved(config: LoadedConfig, trust_flag: bool) -> tuple[list[ServerEntry], list[str]]:
    """The entries allowed to run, and the names of unapproved project servers skipped."""
    ask = ask_on_terminal if sys.stdin.isatty() else None
    store = TrustStore(PaicliHome.from_environ().trust_store)
    allowed, skipped = approve_servers(
        config.servers.values(),
        project(),
        store,
        trust_all=trust_flag,
        ask=ask,
        passing=config.passing,
    )
    for line in skip_lines([config.servers[name] for name in skipped], project(), store):
        err(f"paicli: {line}")
    for entry in allowed:
        if entry.withheld and not entry.disabled:
            err(f"paicli: {withheld_reason(entry)}")
    return allowed, skipped


def screen_redactor(config: LoadedConfig) -> Redactor:
    """What must never be shown: the config's env and header values, the environment's
    secret-named variables (and, by shape, keys and tokens whatever they are)."""
    return Redactor([*config_secrets(config), *environment_secrets(os.environ)])


async def with_servers(options: argparse.Namespace) -> int:
    settings = load_run_settings(
        Path.cwd(),
        StartOptions(
            trust_project=options.trust_project,
            mcp_config=tuple(Path(f) for f in getattr(options, "mcp_config", ())),
            strict_mcp_config=bool(getattr(options, "strict_mcp_config", False)),
        ),
    )
    with redacting(screen_redactor(settings.config)):
        return await _with_servers(options, settings)


async def _with_servers(options: argparse.Namespace, settings: RunSettings) -> int:
    config = settings.config
    for problem in settings.problems:
        err(f"paicli: {problem}")  # (each names its file, as the home-relative path)
    entries, skipped = approved(config, options.trust_project)
    only = getattr(options, "name", None)
    if only is not None:
        if only not in config.servers:
            err(f"paicli mcp: no server named {only!r} (see paicli mcp list)")
            return 1
        if only in skipped:
            return 1  # not started: `approved` said why (unapproved, or declined)
        entries = [e for e in entries if e.name == only]
    if not entries and not skipped:
        if config.errors:  # a broken file is not "no servers": the error said what is wrong
            return 1
        out(NO_SERVERS)
        return 0
    home = settings.home
    traced = [e.name for e in entries if e.trace]
    # The catalogue is written (not read: these commands show live servers), so a later
    # REPL or one-shot starts without waiting for them.
    async with (
        configured(traced, config_secrets(config), home),
        build_manager(
            entries,
            home=home,
            calls=settings.calls,
            on_change=mcp_shell.Progress(),
            read_catalogue=False,
        ) as manager,
    ):
        await mcp_shell.wait_showing_installs(manager)
        servers = manager.servers()
        support = await support_for(s.entry.containment for s in servers)
        ready = [s for s in servers if s.state is ServerState.READY]
        if options.mcp_command in ("list", "tools") and only is None:
            mcp_shell.show_totals(servers)
        if options.mcp_command == "list":
            mcp_shell.show_list(servers, skipped, options.json, support)
            # For scripts: not 0 when a server failed (or needs a login) or a file is broken.
            failed = any(s.state is ServerState.ERROR for s in servers)
            return 1 if failed or config.errors else 0
        if options.mcp_command == "get":
            if only is None:
                return 2
            server = manager.get(only)
            mcp_shell.show_server(server, options.json, support)
            return 0 if server.state is ServerState.READY else 1
        if options.mcp_command == "tools":
            mcp_shell.show_tools(ready, options.json, full=options.full, schema=options.schema)
            return 0
        if options.mcp_command == "lock":
            return lock(
                ready,
                ToolPins(home.tool_pins, project=project()),
                AuditLog(home.audit_dir, screen_redactor(config)),
                update=options.update,
                project=options.project,
                as_json=options.json,
            )
        return await call(manager, options)


def lock(
    servers: list[ManagedServer],
    pins: ToolPins,
    audit: AuditLog,
    *,
    update: bool,
    project: bool,
    as_json: bool,
) -> int:
    """`paicli mcp lock [--update] [--project]`: each ready server's tools against their pins;
    1 when a definition changed and was not re-pinned (`--update` re-pins it, and the audit
    log records each change so accepted). `--project` writes the project's
    `.paicli/mcp.lock` (for committing) from its own servers' tools as they are now: the
    user's servers are theirs, not the repository's."""
    if project:
        own = [s for s in servers if from_project(s.entry)]
        if not own:
            err(
                "paicli mcp lock --project: none of this project's servers is running "
                "(approve them, or pass --trust-project); nothing written"
            )
            return 1
        written = pins.write_lock({s.name: s.tools for s in own})
        mcp_shell.show_lock_written(written, sum(len(s.tools) for s in own))
        return 0
    reports: list[mcp_shell.PinReport] = []
    session = uuid.uuid4().hex[:12]  # (the audit records of this one command)
    for server in servers:
        key = catalogue_key(server.entry)
        if key is None:
            continue
        first = pins.pinned(key) is None
        review = pins.review(key, server.name, server.tools, project=from_project(server.entry))
        if update:
            pins.pin(key, server.name, server.tools)
            for change in review.changed:
                audit.tool_changed(change, session=session, accepted=True, decided_by="user")
        reports.append(mcp_shell.PinReport(server.name, len(server.tools), first, review, update))
    mcp_shell.show_pins(reports, as_json)
    return 0 if update or not any(r.review.changed for r in reports) else 1


async def call(manager: ServerManager, options: argparse.Namespace) -> int:
    try:
        arguments = json.loads(options.arguments)
    except json.JSONDecodeError as exc:
        err(f"paicli mcp call: arguments are not valid JSON: {exc}")
        return 2
    if not isinstance(arguments, dict):
        err("paicli mcp call: arguments must be a JSON object")
        return 2
    server = manager.get(options.name)
    if server.state is not ServerState.READY:
        why = server.error or server.state.value  # (a disabled server has no error)
        err(f"paicli mcp call: server {options.name!r} is not ready: {why}")
        return 1
    started = time.monotonic()
    try:
        result = await manager.call_tool(options.name, options.tool, arguments)
    except ServerError as exc:
        err(f"paicli mcp call: {exc}")
        return 1
    shown = await asyncio.to_thread(
        to_model_result,
        result,
        server=options.name,
        tool=options.tool,
        results_dir=PaicliHome.from_environ().tool_results_dir,
    )
    mcp_shell.show_result(shown.text, is_error=shown.is_error, seconds=time.monotonic() - started)
    return 1 if shown.is_error else 0
