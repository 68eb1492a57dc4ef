"""Commands execute_command refuses outright, before anyone is asked to approve them.

A short list of things no coding task needs and that wreck a machine: privilege escalation,
recursive deletion of `/`, the home directory or the whole project, formatting or overwriting
disks, the fork bomb, running a downloaded script, opening `/` to the world, powering off.
The check reads the command the way a shell would split it (`;`, `&&`, `||`, `|`, `&`,
newlines outside quotes; heredoc bodies are text, not commands; `sh -c` and `eval` strings are
read too) and looks only at each simple command's program and arguments, so look-alikes such
as `rm -rf build` or `ls /` pass. It is a guard against accidents, not a sandbox: an
obfuscated command gets through.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence

from paicli.tools.shell.line import SHELLS, peel, shell_script, split, unredirected

__all__ = ["refusal_reason"]

_PRIVILEGE = frozenset({"sudo", "su", "doas", "pkexec"})
_POWER = frozenset({"shutdown", "reboot", "halt", "poweroff"})
_SHELLS = SHELLS
_DOWNLOADERS = frozenset({"curl", "wget", "fetch"})
# After these, the next command runs whether or not the ones before succeeded.
_CHAIN_BREAKS = frozenset({";", "||", "&", ";;", "\n"})
_PIPES = frozenset({"|", "|&"})
# `cd` into one of these does not make `rm -rf *` safe: it is not a subdirectory of the project.
_NOT_A_SUBDIRECTORY = frozenset({"", "-", ".", "./", "..", "../"})
_HOME = frozenset({"~", "~/", "$HOME", "${HOME}", "$HOME/", "${HOME}/", "~/*", "$HOME/*"})
_SYSTEM_DIRS = frozenset(
    {"bin", "boot", "dev", "etc", "home", "lib", "lib32", "lib64", "opt", "proc", "root"}
    | {"sbin", "srv", "sys", "usr", "var"}
)
# Whole-project targets: the command runs in the project root unless it changed directory.
_PROJECT = frozenset({"*", ".", "./", "./*", ".*"})
_BLOCK_DEVICE = re.compile(r"/dev/(sd|hd|vd|xvd|nvme|mmcblk|disk|mapper/|md|loop|dm-)")
# `:(){ :|:& };:` and the same with another name (of at most this many characters),
# whitespace ignored. Found by looking back from each `(){`: a regular expression with a
# back reference took minutes over a long line of words.
_NAME = re.compile(r"[\w:.]+\Z")
_LONGEST_NAME = 256


def refusal_reason(command: str | None = None, argv: Sequence[str] | None = None) -> str | None:
    """Why the command must not run (one line), or None when it may go on to approval."""
    if command is not None:
        return _check_string(command, depth=0)
    if argv:
        return _check_simple(list(argv), cd_seen=False, depth=0)
    return None


def _check_string(command: str, *, depth: int) -> str | None:
    if _fork_bomb(re.sub(r"\s+", "", command)):
        return "refused: a fork bomb (it exhausts the process table)"
    segments = split(command)
    # Whether the commands now run in a subdirectory; `( ... )` restores it on the way out.
    cd_seen = False
    saved: list[bool] = []
    for index, (words, joiner) in enumerate(segments):
        reason = _check_simple(words, cd_seen=cd_seen, depth=depth, shell=True)
        if reason:
            return reason
        name, args = _program(unredirected(words))
        if name in {"cd", "pushd"} and joiner not in _PIPES:
            # Only `cd dir && ...` is sure to run what follows in dir: after `;`, `||` or
            # `&` the next command runs even when the cd failed, in the project root.
            cd_seen = _into_subdirectory(args) and joiner == "&&"
        elif joiner in _CHAIN_BREAKS:
            cd_seen = False
        if joiner in _PIPES and name in _DOWNLOADERS:
            for words_after, later_joiner in segments[index + 1 :]:
                later = unredirected(words_after)
                unprivileged = later[1:] if later[:1] and later[0] in _PRIVILEGE else later
                if _program(unprivileged)[0] in _SHELLS:
                    return "refused: piping a download into a shell runs unreviewed code"
                if later_joiner not in _PIPES:
                    break
        if joiner == "(":
            saved.append(cd_seen)
        elif joiner == ")" and saved:
            cd_seen = saved.pop()
    return None


def _fork_bomb(squeezed: str) -> bool:
    """Whether `squeezed` (a line without whitespace) defines NAME(){NAME|NAME&};NAME."""
    start = squeezed.find("(){")
    while start != -1:
        before = _NAME.search(squeezed, max(0, start - _LONGEST_NAME), start)
        run = before.group() if before else ""
        for length in range(1, len(run) + 1):
            name = run[-length:]
            if squeezed.startswith(f"{name}|{name}&}};{name}", start + 3):
                return True
        start = squeezed.find("(){", start + 1)
    return False


def _into_subdirectory(args: list[str]) -> bool:
    targets = [a for a in args if not a.startswith("-") or a == "-"]
    target = targets[0] if targets else ""
    if target in _NOT_A_SUBDIRECTORY or target.startswith(("../", "$")) or "/../" in target:
        return False
    return target.rstrip("/") != ".." and _dangerous_target(target, cd_seen=True) is None


def _program(words: list[str]) -> tuple[str, list[str]]:
    """The program's name (without directory) and its arguments, wrappers stripped."""
    rest = peel(words, keep=_PRIVILEGE)[0]  # sudo is refused, not seen through
    if not rest:
        return "", []
    return rest[0].rsplit("/", 1)[-1], rest[1:]


def _check_simple(
    words: list[str], *, cd_seen: bool, depth: int, shell: bool = False
) -> str | None:
    """Why the simple command `words` must not run; `shell`: they come from a shell line
    (`split`), whose redirections are no part of the program's words (argv words are)."""
    name, args = _program(unredirected(words) if shell else words)
    if name in _PRIVILEGE:
        return f"refused: {name} runs commands with elevated privileges"
    if name.startswith("mkfs"):
        return f"refused: {name} formats a file system"
    if name in _POWER:
        return f"refused: {name} shuts the machine down or restarts it"
    if name == "systemctl" and (verbs := [a for a in args if a in _POWER | {"kexec"}]):
        return f"refused: systemctl {verbs[0]} shuts the machine down or restarts it"
    if name in {"init", "telinit"} and args[:1] in (["0"], ["6"]):
        return f"refused: {name} {args[0]} shuts the machine down or restarts it"
    if name == "dd":
        for arg in args:
            if arg.startswith("of=/dev/") and not _harmless_device(arg[3:]):
                return f"refused: dd writes to the device {arg[3:]}"
    if name == "rm":
        return _check_rm(args, cd_seen=cd_seen)
    if name == "find":
        return _check_find(args)
    if name in {"chmod", "chown", "chgrp"}:
        return _check_recursive_mode(name, args)
    if name in _SHELLS and depth < 3 and (script := shell_script(args)) is not None:
        return _check_string(script[0], depth=depth + 1)
    if name == "eval" and depth < 3:
        return _check_string(" ".join(args), depth=depth + 1)
    for before, target in itertools.pairwise(words):
        redirect = before in {">", ">>", ">|", "&>"} or name == "tee"
        if redirect and _BLOCK_DEVICE.match(target):
            return f"refused: writing to the raw block device {target} destroys its data"
    return None


def _check_find(args: list[str]) -> str | None:
    if "-delete" not in args:
        return None
    for start in itertools.takewhile(lambda a: not a.startswith(("-", "(", "!")), args):
        what = _dangerous_target(start, cd_seen=True)
        if what:
            return f"refused: find {start} -delete would delete {what}"
    return None


def _check_rm(args: list[str], *, cd_seen: bool) -> str | None:
    recursive = False
    targets: list[str] = []
    options_done = False
    for arg in args:
        if options_done or not arg.startswith("-") or arg == "-":
            targets.append(arg)
        elif arg == "--":
            options_done = True
        elif arg.startswith("--"):
            recursive |= arg == "--recursive"
            if arg == "--no-preserve-root":
                return "refused: rm --no-preserve-root exists only to delete /"
        else:
            recursive |= "r" in arg or "R" in arg
    if not recursive:
        return None
    for target in targets:
        what = _dangerous_target(target, cd_seen=cd_seen)
        if what:
            return f"refused: rm -r {target} would delete {what}"
    return None


def _check_recursive_mode(name: str, args: list[str]) -> str | None:
    recursive = any(
        a == "--recursive" or (a.startswith("-") and not a.startswith("--") and "R" in a)
        for a in args
    )
    if not recursive:
        return None
    for target in args:
        if not target.startswith("-"):
            what = _dangerous_target(target, cd_seen=True)
            if what:
                return f"refused: {name} -R on {target} would change {what}"
    return None


def _dangerous_target(target: str, *, cd_seen: bool) -> str | None:
    if target not in _PROJECT and target not in _HOME:
        # `/usr/*` deletes what `/usr` does (all but the directory itself).
        while re.search(r"[^/]/+\.?\*$", target):
            target = re.sub(r"/+\.?\*$", "", target)
    stripped = target.rstrip("/") or "/"
    if stripped in {"/", "/*"} or re.fullmatch(r"/+\*?", target):
        return "the whole file system"
    if target in _HOME or stripped in _HOME:
        return "the home directory"
    parts = [p for p in stripped.split("/") if p]
    if target.startswith("/") and len(parts) == 1 and parts[0] in _SYSTEM_DIRS:
        return f"the system directory {stripped}"
    if not cd_seen and target in _PROJECT:
        return "the whole project"
    return None


def _harmless_device(device: str) -> bool:
    return device in {"/dev/null", "/dev/zero", "/dev/stdout", "/dev/stderr"} or (
        device.startswith("/dev/fd/")
    )
