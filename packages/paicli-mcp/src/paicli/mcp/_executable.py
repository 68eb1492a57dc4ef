"""Why a stdio server's command cannot be started, in words a user can act on.

exec(2)'s own errors mislead for scripts: a shebang line ending in a carriage return (a file
saved with Windows line ends) fails with "No such file or directory" although the file is
there, and a script without a shebang fails with "Exec format error". `check_command` finds
the file the way `subprocess` will (a name with a slash relative to the working folder, a
bare name on the child's PATH) and reads its first line, without running anything.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, replace
from typing import Literal

__all__ = ["CommandCheck", "CommandProblem", "check_command"]

CommandProblem = Literal[
    "not-found",
    "not-executable",
    "directory",
    "no-shebang",
    "crlf-shebang",
    "interpreter-not-found",
]

# exec(2) reads at most this much of a script's first line for the interpreter (Linux 5.1+:
# 256 bytes; anything longer is cut there).
SHEBANG_READ = 256
# Binary formats exec runs directly: ELF, and a shebang script.
ELF_MAGIC = b"\x7fELF"


@dataclass(frozen=True, slots=True)
class CommandCheck:
    """Where `command` leads and whether exec can run it.

    `resolved_by` is "absolute", "relative" (a name with a slash, resolved against
    `folder`: the server's cwd, or this process's working folder) or "PATH" (a bare name;
    `folder` is the PATH entry it was found in). `path` is the file that would run, or None
    if none was found. `problem` is None when nothing stops exec; `message` then is None too,
    otherwise one line saying what is wrong and how to fix it.
    """

    command: str
    resolved_by: Literal["absolute", "relative", "PATH"]
    folder: str | None
    path: str | None
    problem: CommandProblem | None = None
    message: str | None = None


def check_command(
    command: str, *, cwd: str | os.PathLike[str] | None = None, search_path: str | None = None
) -> CommandCheck:
    """Find `command` as `subprocess` would for a child started in `cwd` (default: here)
    with PATH `search_path` (default: this process's PATH), and check that exec can run it."""
    base = os.path.abspath(cwd if cwd is not None else os.getcwd())
    search_path = os.environ.get("PATH", os.defpath) if search_path is None else search_path
    if "/" in command:
        if os.path.isabs(command):
            check = CommandCheck(command, "absolute", None, os.path.normpath(command))
        else:
            check = CommandCheck(
                command, "relative", base, os.path.normpath(os.path.join(base, command))
            )
        return _checked_file(check, base, search_path)
    return _search(command, base, search_path)


def _search(command: str, base: str, search_path: str) -> CommandCheck:
    """A bare name: the first PATH entry holding an executable file of that name wins, as
    with execvp; a match that is not executable is reported only if nothing else runs."""
    refused: CommandCheck | None = None
    for entry in search_path.split(os.pathsep):
        folder = os.path.join(base, entry) if entry else base
        candidate = os.path.join(folder, command)
        if not os.path.exists(candidate):
            continue
        check = _checked_file(CommandCheck(command, "PATH", folder, candidate), base, search_path)
        if check.problem not in ("not-executable", "directory"):
            return check
        refused = refused or check
    if refused is not None:
        return refused
    shown = search_path if len(search_path) <= 200 else search_path[:200] + "…"
    return CommandCheck(
        command,
        "PATH",
        None,
        None,
        "not-found",
        f"{command!r}: not on PATH ({shown}); install it, or give its full path",
    )


def _checked_file(check: CommandCheck, folder: str, search_path: str) -> CommandCheck:
    """Check the file `check` leads to; `folder` and `search_path` are where the child
    starts and its PATH (for `#!/usr/bin/env NAME`)."""
    path = check.path
    assert path is not None
    where = _where(check)
    try:
        info = os.stat(path)
    except OSError:
        return replace(
            check, path=None, problem="not-found", message=f"{where}: no such file; check the path"
        )
    if stat.S_ISDIR(info.st_mode):
        return _problem(check, "directory", f"{where}: is a folder, not a program")
    if not os.access(path, os.X_OK):
        return _problem(check, "not-executable", f"{where}: not executable; run: chmod +x {path}")
    try:
        with open(path, "rb") as file:
            head = file.read(SHEBANG_READ)
    except OSError:
        return check  # executable but unreadable (--x): exec may still run a binary
    return _checked_head(check, where, head, folder, search_path)


def _checked_head(
    check: CommandCheck, where: str, head: bytes, folder: str, search_path: str
) -> CommandCheck:
    if head.startswith(ELF_MAGIC):
        return check
    if not head.startswith(b"#!"):
        if _looks_like_text(head):
            return _problem(
                check,
                "no-shebang",
                f"{where}: a script without a '#!' first line; add one "
                "(e.g. '#!/usr/bin/env python3') or run it through its interpreter "
                "(command: the interpreter, args: the script)",
            )
        return check  # another binary format (binfmt_misc): exec decides
    line = head[2:].split(b"\n", 1)[0]
    if line.endswith(b"\r"):
        return _problem(
            check,
            "crlf-shebang",
            f"{where}: its '#!' line ends with a carriage return (Windows line ends); "
            f"convert the file to LF line ends (dos2unix, or: sed -i 's/\\r$//' {check.path})",
        )
    words = [word.decode("utf-8", "replace") for word in line.split()]
    if words and words[0].startswith("/") and not os.path.exists(words[0]):
        return _problem(
            check,
            "interpreter-not-found",
            f"{where}: its '#!' line names {words[0]!r}, which does not exist; fix the "
            "line (e.g. '#!/usr/bin/env python3')",
        )
    # `#!/usr/bin/env NAME`: env looks NAME up on the child's PATH (`python` is often
    # missing where only `python3` is installed).
    program = next((word for word in words[1:] if not word.startswith("-")), None)
    through_env = bool(words) and os.path.basename(words[0]) == "env"
    if (
        through_env
        and program
        and "/" not in program
        and not _on_path(program, folder, search_path)
    ):
        return _problem(
            check,
            "interpreter-not-found",
            f"{where}: its '#!' line runs {program!r} through env, and {program!r} is "
            "not on PATH; install it, or name one that is (e.g. python3)",
        )
    return check


def _on_path(name: str, base: str, search_path: str) -> bool:
    for entry in search_path.split(os.pathsep):
        candidate = os.path.join(base, entry, name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return True
    return False


def _where(check: CommandCheck) -> str:
    if check.resolved_by == "relative":
        return f"{check.command!r} (resolved against {check.folder})"
    if check.resolved_by == "PATH":
        return f"{check.command!r} (found on PATH at {check.path})"
    return repr(check.command)


def _problem(check: CommandCheck, problem: CommandProblem, message: str) -> CommandCheck:
    return replace(check, problem=problem, message=message)


def _looks_like_text(head: bytes) -> bool:
    """Whether `head` reads as text (a script), not as some binary format."""
    if not head or b"\0" in head:
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A multi-byte character cut at the end of the read is still text.
        return exc.start >= len(head) - 3
    return True
