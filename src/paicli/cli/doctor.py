"""`paicli mcp doctor [NAME...] [--json]` and `paicli mcp doctor -- COMMAND [ARGS...]`: start
each server alone and report what is wrong with it, one line per finding with its fix.
Exit status 0 when every server is healthy, 1 when a problem was found, 2 for a usage error.

Servers come from the config files; project servers run only once approved, as for every
other command that starts them. Servers are examined one after another, so one server's
load cannot make another look slow.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

from paicli.cli._signals import run_until_signalled
from paicli.doctor import SLOW_START, Limits, ServerReport, examine
from paicli.doctor.configured import examine_configured
from paicli.home import PaicliHome
from paicli.mcp import StdioServer
from paicli.project_root import project_root
from paicli.servers.config import load_config
from paicli.servers.trust import TrustStore, approve_servers
from paicli.ui.doctor_view import show_reports
from paicli.ui.output import err
from paicli.ui.trust_prompt import ask_on_terminal

OPTIONS_WITH_VALUE = ("--timeout", "--slow")


def run(options: argparse.Namespace) -> int:
    return run_until_signalled(doctor(options))


async def doctor(options: argparse.Namespace) -> int:
    names, command = _split(options)
    if names is None:
        return 2
    limits = Limits(timeout=options.timeout, slow=options.slow or SLOW_START)
    # The findings say what the library's warnings would (lines skipped, ids dropped), with
    # the fix; its own log lines would only repeat them out of order.
    logging.getLogger("paicli.mcp").setLevel(logging.ERROR)
    if command:
        server = StdioServer(command[0], args=command[1:])
        reports = [await examine(_name_of(command), server, limits)]
    else:
        found = await _configured(names, options, limits)
        if found is None:
            return 2
        reports = found
    show_reports(reports, as_json=options.json)
    return 0 if all(report.healthy for report in reports) else 1


def _name_of(command: list[str]) -> str:
    """A name for a server given as a command: its script's (`python3 weather.py` is
    `weather`), else its program's; tool names are checked as the model would see them."""
    scripts = [
        arg for arg in command[1:] if not arg.startswith("-") and "." in os.path.basename(arg)
    ]
    return Path(scripts[0] if scripts else command[0]).stem or "server"


def _split(options: argparse.Namespace) -> tuple[list[str] | None, list[str]]:
    """Server names and the command after `--`; options given among the names (argparse's
    remainder keeps them) are applied. None for the names on a usage error."""
    words = list(options.target)
    command: list[str] = []
    if "--" in words:
        at = words.index("--")
        words, command = words[:at], words[at + 1 :]
        if not command:
            err("paicli mcp doctor: give the server command after --")
            return None, []
    names = []
    while words:
        word = words.pop(0)
        if word == "--json":
            options.json = True
        elif word == "--trust-project":  # (the fix its own finding gives, after a name)
            options.trust_project = True
        elif word in OPTIONS_WITH_VALUE and words:
            try:
                setattr(options, word[2:], float(words.pop(0)))
            except ValueError:
                err(f"paicli mcp doctor: {word} needs a number of seconds")
                return None, []
        elif word.startswith("-"):
            err(f"paicli mcp doctor: unknown option {word!r}")
            return None, []
        else:
            names.append(word)
    if names and command:
        err("paicli mcp doctor: give server names or a command after --, not both")
        return None, []
    return names, command


async def _configured(
    names: list[str], options: argparse.Namespace, limits: Limits
) -> list[ServerReport] | None:
    project = project_root(Path.cwd())
    config = load_config(project)
    for problem in config.errors:
        err(f"paicli: {problem.message}")  # (it names its file)
    unknown = [name for name in names if name not in config.servers]
    if unknown:
        err(f"paicli mcp doctor: no server named {unknown[0]!r} (see paicli mcp list)")
        return None
    chosen = [config.servers[name] for name in names] or [
        entry for entry in config.servers.values() if not entry.disabled
    ]
    # Only the servers examined are asked about, as `paicli mcp get NAME` would.
    store = TrustStore(PaicliHome.from_environ().trust_store)
    allowed, skipped = approve_servers(
        chosen,
        project,
        store,
        trust_all=options.trust_project,
        ask=ask_on_terminal if sys.stdin.isatty() else None,
        passing=config.passing,
    )
    # An allowed entry is the one that runs: loaded again when it passes a secret.
    running = {entry.name: entry for entry in allowed}
    return await examine_configured(
        chosen, running, list(skipped), limits, project=project, store=store
    )
