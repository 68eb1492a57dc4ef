"""Before the server starts: which file its command is, and the relative paths it names.

Relative paths are the common trap: a config written in one folder and run from another.
The command is found the way the library will start it (`paicli.mcp.check_command`); a
script argument (`python3 server.py`) is looked up against the same folder.
"""

from __future__ import annotations

import os

from paicli.doctor.findings import ServerReport
from paicli.mcp import CommandCheck, StdioServer, check_command

__all__ = ["check_paths", "start_failure"]

# Arguments that name a script for an interpreter; others (flags, module names, npm package
# names, URLs) are not paths to check.
SCRIPT_SUFFIXES = (".py", ".js", ".mjs", ".cjs", ".ts", ".sh", ".rb", ".pl", ".php", ".jar")
MAX_ARGS_CHECKED = 3


def check_paths(report: ServerReport, spec: StdioServer) -> CommandCheck:
    """Say where the command and any relative script argument lead (info), or that a
    script argument leads nowhere (warning); return the command's check for later."""
    check = check_command(spec.command, cwd=spec.cwd, search_path=_search_path(spec))
    base, whose = _base(spec)
    if check.problem is None and check.resolved_by == "relative":
        report.add(
            "relative-command",
            "info",
            f"command {spec.command!r} is relative: resolved against {base} ({whose}) to "
            f"{check.path}",
        )
    elif check.problem is None and check.resolved_by == "PATH":
        report.add("command-path", "info", f"command {spec.command!r} found on PATH: {check.path}")
    scripts = [arg for arg in spec.args if _names_a_script(arg)][:MAX_ARGS_CHECKED]
    for arg in scripts:
        path = os.path.normpath(os.path.join(base, arg))
        if os.path.exists(path):
            report.add("relative-argument", "info", f"argument {arg!r} resolved against {base}")
        else:
            report.add(
                "relative-argument",
                "warning",
                f"argument {arg!r} is relative and there is no {path} ({whose})",
                "give its absolute path, or set the server's cwd to its folder",
            )
    return check


def start_failure(report: ServerReport, check: CommandCheck, reason: str) -> None:
    """The server could not be started at all: say why, the way the check found it."""
    if check.problem is not None and check.message is not None:
        what, _, fix = check.message.rpartition("; ")
        report.add(check.problem, "error", what or check.message, fix or None)
    else:
        report.add("cannot-start", "error", reason)


def _search_path(spec: StdioServer) -> str:
    # The child's PATH: the server's own `env` may set it; otherwise it is inherited.
    return spec.env.get("PATH") or os.environ.get("PATH", os.defpath)


def _base(spec: StdioServer) -> tuple[str, str]:
    if spec.cwd is not None:
        return os.path.abspath(spec.cwd), "the server's cwd"
    return os.getcwd(), "the folder paicli runs in"


def _names_a_script(arg: str) -> bool:
    if os.path.isabs(arg) or arg.startswith(("-", "@")) or "://" in arg:
        return False
    return arg.startswith(("./", "../")) or arg.endswith(SCRIPT_SUFFIXES)
