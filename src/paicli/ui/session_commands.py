"""The REPL's `/resume`, `/doctor` and `/model` listing: handlers the command table
(`ui/commands.py`) calls, kept here so the table stays a table. `/resume` picks one of this
folder's saved conversations (a list on a terminal, or by id); `/doctor` examines every
configured server alone, as `paicli mcp doctor` does, beside the running ones, and says
whether web search is set up; `/model` lists the models the endpoint offers and the provider
presets (whether each can be used here), and on a terminal picks one."""

from __future__ import annotations

import asyncio
import sys
from typing import TYPE_CHECKING

from rich.text import Text

from paicli.escape import one_line, terminal_safe
from paicli.llm.presets import PRESETS
from paicli.llm.settings import switch_model

if TYPE_CHECKING:
    from collections.abc import Mapping

    from rich.console import Console

    from paicli.agent.sessions import SavedSession
    from paicli.runtime import Runtime
    from paicli.user_config import UserConfig


def session_label(session: SavedSession) -> str:
    """How a saved conversation is listed: its id, when, and its first words."""
    return f"{session.id}  {session.updated.replace('T', ' ')[:16]}  {session.title}"


async def resume(runtime: Runtime, console: Console, words: list[str]) -> None:
    """`/resume [ID]`: carry on a saved conversation of this folder in this session."""
    from paicli.ui.picker import pick  # noqa: PLC0415 - prompt_toolkit, at first use

    store = runtime.sessions
    if words:
        session = await asyncio.to_thread(store.load, words[0])
        if session is None:
            console.print(Text(f"No saved conversation {terminal_safe(words[0])!r}.", "yellow"))
            return
        if (elsewhere := store.elsewhere(session)) is not None:
            console.print(Text(terminal_safe(elsewhere), "yellow"))
            return
    else:
        sessions = await asyncio.to_thread(store.recent, 20)
        sessions = [found for found in sessions if found.id != runtime.session_id]
        if not sessions:
            console.print("No other saved conversation in this folder.")
            return
        if not sys.stdin.isatty():
            for found in sessions:
                console.print(Text(one_line(session_label(found), 110)))
            console.print(Text("Choose one with: /resume ID", "dim"))
            return
        chosen = await pick("Resume which conversation?", [session_label(s) for s in sessions])
        if chosen is None:
            console.print(Text("No conversation chosen.", "dim"))
            return
        session = sessions[chosen]
    runtime.resume(session)
    turns = sum(1 for message in session.messages if message["role"] == "user")
    console.print(
        Text(f"Resumed {session.id} ({turns} turns): {one_line(session.title, 80)}", "dim")
    )


async def doctor(runtime: Runtime, console: Console, words: list[str]) -> None:
    """`/doctor [NAME...]`: the doctor's report on the configured servers, and the model."""
    from paicli.doctor import Limits  # noqa: PLC0415
    from paicli.doctor.configured import examine_configured  # noqa: PLC0415
    from paicli.servers.config import ServerEntry  # noqa: PLC0415
    from paicli.servers.trust import TrustStore  # noqa: PLC0415
    from paicli.ui.doctor_view import report_lines  # noqa: PLC0415

    settings = runtime.settings
    model = settings.describe() if settings.configured else settings.why_not_configured()
    console.print(Text(f"Model: {terminal_safe(model)}", "" if settings.configured else "yellow"))
    line = web_search_line(runtime.user_config, runtime.environ)
    console.print(Text(terminal_safe(line), "dim"))
    servers = runtime.config.servers
    unknown = [name for name in words if name not in servers]
    if unknown:
        console.print(Text(f"No server named {terminal_safe(unknown[0])!r} (/mcp lists them)"))
        return
    chosen = [servers[name] for name in words] or [e for e in servers.values() if not e.disabled]
    if not chosen:
        console.print("No MCP servers configured.")
        return
    running = {
        server.name: server.entry
        for server in runtime.manager.servers()
        if isinstance(server.entry, ServerEntry)
    }
    with console.status(Text("examining each MCP server alone…")):
        reports = await examine_configured(
            chosen,
            running,
            runtime.skipped,
            Limits(),
            project=runtime.project,
            store=TrustStore(runtime.home.trust_store),
        )
    for report in reports:
        for line in report_lines(report):
            console.print(Text(terminal_safe(line)))


def web_search_line(config: UserConfig, environ: Mapping[str, str]) -> str:
    """Whether web_search is offered, and through which provider, or how to set one up."""
    from paicli.tools.web.settings import web_settings  # noqa: PLC0415

    search = web_settings(config, environ)[0].search
    if search is None:
        return "Web search: off (set a provider in [web.search] of ~/.paicli/config.toml)"
    return f"Web search: {search.provider} at {search.url}"


async def choose_model(runtime: Runtime, console: Console) -> str | None:
    """`/model` without a name: the models the endpoint offers (`GET /models`), then the
    presets and whether each is usable here; on a terminal, the one picked (None: none).
    An endpoint without a usable list is one line, and the presets and typing a name
    remain."""
    from paicli.ui.picker import pick  # noqa: PLC0415

    current = runtime.settings
    console.print(f"Model: {current.describe() if current.configured else 'none'}")
    models = await _endpoint_models(runtime, console) if current.configured else []
    rows = [f"{name}{'  (in use)' if name == current.model else ''}" for name in models]
    names = list(models)
    for name in PRESETS:
        settings = switch_model(current, name, runtime.environ, runtime.user_config)
        usable = "ready" if settings.configured else one_line(settings.why_not_configured(), 70)
        rows.append(f"preset {name:<10} {settings.model or '-':<28} {usable}")
        names.append(name)
    if not sys.stdin.isatty():
        for row in rows:
            console.print(Text(terminal_safe(row)))
        console.print("Switch with /model NAME (a preset, or a model of the current provider)")
        return None
    if len(models) > MAX_PICKED:
        console.print(Text(f"{len(models)} models: the first {MAX_PICKED} are listed", "dim"))
        keep = [n for n in range(len(rows)) if n < MAX_PICKED or n >= len(models)]
        rows, names = [rows[n] for n in keep], [names[n] for n in keep]
    chosen = await pick("Switch to which model? (/model NAME for any model)", rows)
    if chosen is None:
        console.print(Text("Model unchanged.", "dim"))
        return None
    return names[chosen]


# A picker taller than the terminal cannot show its marked line; the rest go by name.
MAX_PICKED = 30


async def _endpoint_models(runtime: Runtime, console: Console) -> list[str]:
    """The endpoint's models, or none and one line saying why."""
    from paicli.llm.errors import LlmError  # noqa: PLC0415

    try:
        with console.status(Text("asking the endpoint for its models…")):
            models = await runtime.list_models()
    except LlmError as exc:
        console.print(Text(f"No model list: {terminal_safe(str(exc))}", "yellow"))
        return []
    if models:
        console.print(Text(f"The endpoint offers {len(models)} model(s):", "dim"))
    return models
