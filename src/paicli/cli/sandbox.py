"""`paicli sandbox`: run one command in the OS sandbox the way `execute_command` would (the
project writable, the rest read-only, secret stores hidden, the network off unless allowed,
the model keys out of its environment), its exit code passed through; `--check` says which
mechanisms work here and what the profile allows."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path
from typing import Literal

from paicli.escape import one_line
from paicli.home import PaicliHome, user_home
from paicli.mcp import (
    Sandbox,
    SandboxUnavailable,
    ServerConfigError,
    check_sandbox,
    sandbox_command,
)
from paicli.project_root import project_root
from paicli.tools.builtin.command import command_environment
from paicli.tools.builtin.sandboxing import CommandSandbox, SandboxSettings, sandbox_settings
from paicli.ui.output import err, out
from paicli.user_config import load_user_config

__all__ = ["run"]

# What `paicli sandbox` exits with when the sandbox cannot be set up at all (as `env` does
# for a command it cannot run).
CANNOT_RUN = 125


def run(options: argparse.Namespace) -> int:
    """`paicli sandbox` (see the module)."""
    argv = options.argv[1:] if options.argv[:1] == ["--"] else options.argv
    sandbox, problems = _sandbox(options)
    for problem in problems:
        err(f"paicli: {problem}")
    if options.check:
        return _check(sandbox)
    if not argv:
        err("paicli sandbox: give a command after --, e.g. paicli sandbox -- ls ~/.ssh")
        return 2
    if sandbox.mechanism() is None:
        err(f"paicli sandbox: {one_line(sandbox.missing())}")
        return CANNOT_RUN
    return asyncio.run(_run(argv, sandbox.profile))


def _sandbox(options: argparse.Namespace) -> tuple[CommandSandbox, list[str]]:
    """The profile to try: execute_command's (the user's `[sandbox]` hosts and folders), or a
    project server's, with `--network` over the network."""
    home = PaicliHome.from_environ(os.environ)
    user_config = load_user_config(home)
    where = str(user_config.source or "config.toml")
    chosen, problems = sandbox_settings(user_config.values.get("sandbox"), where, None)
    write = chosen.write if options.profile == "command" else ()
    network: Literal["none", "loopback"] | tuple[str, ...] = chosen.allow_hosts or "none"
    if options.network == "none" or options.network == "loopback":  # noqa: PLR1714 - narrows
        network = options.network
    elif options.network is not None:
        network = tuple(h.strip() for h in options.network.split(",") if h.strip())
    project = project_root(Path.cwd(), os.environ)
    settings = SandboxSettings("required", (), write)
    user = user_home(os.environ)
    try:
        sandbox = CommandSandbox(settings, project, home=user, network=network or "none")
    except ServerConfigError as exc:
        problems.append(f"--network: {exc}")
        sandbox = CommandSandbox(settings, project, home=user)
    return sandbox, problems


def _check(sandbox: CommandSandbox) -> int:
    support = check_sandbox()
    for name in ("bubblewrap", "landlock", "seccomp", "seatbelt"):
        why = getattr(support, name)
        out(f"{name}: {'works' if why is None else one_line(why)}")
    mechanism = sandbox.mechanism()
    if mechanism is None:
        out(f"commands: not contained here: {one_line(sandbox.missing())}")
        return 1
    out(f"commands: contained by {mechanism}")
    for line in sandbox.describe():
        out(f"  {one_line(line)}")
    return 0


async def _run(argv: list[str], profile: Sandbox) -> int:
    env = command_environment(os.environ)
    try:
        command = await sandbox_command(
            argv, profile, cwd=Path.cwd(), env=env, terminal=sys.stdin.isatty()
        )
    except SandboxUnavailable as exc:
        err(f"paicli sandbox: {one_line(str(exc))}")
        return CANNOT_RUN
    try:
        process = await asyncio.create_subprocess_exec(
            *command.argv,
            env=command.env,
            preexec_fn=command.preexec,
            pass_fds=command.pass_fds,
        )
        code = await process.wait()
    except OSError as exc:
        err(f"paicli sandbox: cannot run {one_line(argv[0])}: {exc.strerror or exc}")
        return CANNOT_RUN
    finally:
        await command.aclose()
    for line in command.refused:
        err(f"paicli sandbox: {one_line(line)}")
    status = command.exit_status(code)
    return status if status >= 0 else 128 - status
