"""Commands execute_command refuses outright, before anyone is asked to approve them.

A short list of things no coding task needs and that wreck a machine: privilege escalation,
recursive deletion of `/`, the home directory or the whole project, formatting or overwriting
disks, the fork bomb, running a downloaded script, opening `/` to the world, powering off.
The check reads the command the way a shell would split it (`;`, `&&`, `||`, `|`, `&`,
newlines; `sh -c` and `eval` strings are read too) and looks only at each simple command's
program and arguments, so look-alikes such as `rm -rf build` or `ls /` pass. It is a guard
against accidents, not a sandbox: an obfuscated command gets through.
"""

from __future__ import annotations

import itertools
import re
import shlex
from collections.abc import Sequence

__all__ = ["refusal_reason"]

_PRIVILEGE = frozenset({"sudo", "su", "doas", "pkexec"})
_POWER = frozenset({"shutdown", "reboot", "halt", "poweroff"})
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash", "fish", "csh", "tcsh", "mksh"})
_DOWNLOADERS = frozenset({"curl", "wget", "fetch"})
# Words that run the rest of the line as a command of its own.
_PREFIXES = frozenset(
    {"env", "nohup", "time", "nice", "ionice", "exec", "command", "builtin", "xargs", "stdbuf"}
)
# Shell keywords that may start a simple command inside a compound one.
_KEYWORDS = frozenset({"{", "}", "!", "if", "then", "else", "elif", "do", "while", "until"})
_SEPARATORS = frozenset({";", "&&", "||", "&", "(", ")", ";;", "\n"})
_PIPES = frozenset({"|", "|&"})
_HOME = frozenset({"~", "~/", "$HOME", "${HOME}", "$HOME/", "${HOME}/", "~/*", "$HOME/*"})
_SYSTEM_DIRS = frozenset(
    {"bin", "boot", "dev", "etc", "home", "lib", "lib32", "lib64", "opt", "proc", "root"}
    | {"sbin", "srv", "sys", "usr", "var"}
)
# Whole-project targets: the command runs in the project root unless it changed directory.
_PROJECT = frozenset({"*", ".", "./", "./*", ".*"})
_BLOCK_DEVICE = re.compile(r"/dev/(sd|hd|vd|xvd|nvme|mmcblk|disk|mapper/|md|loop|dm-)")
# `:(){ :|:& };:` and the same with another name, whitespace ignored.
_FORK_BOMB = re.compile(r"([\w:.]+)\(\)\{\1\|\1&\};\1")


def refusal_reason(command: str | None = None, argv: Sequence[str] | None = None) -> str | None:
    """Why the command must not run (one line), or None when it may go on to approval."""
    if command is not None:
        return _check_string(command, depth=0)
    if argv:
        return _check_simple(list(argv), cd_seen=False, depth=0)
    return None


def _check_string(command: str, *, depth: int) -> str | None:
    if _FORK_BOMB.search(re.sub(r"\s+", "", command)):
        return "refused: a fork bomb (it exhausts the process table)"
    segments = _split(command)
    cd_seen = False
    for index, (words, joined_by_pipe) in enumerate(segments):
        reason = _check_simple(words, cd_seen=cd_seen, depth=depth)
        if reason:
            return reason
        if _program(words)[0] in {"cd", "pushd"}:
            cd_seen = True
        if joined_by_pipe and _program(words)[0] in _DOWNLOADERS:
            for later, still_piped in segments[index + 1 :]:
                unprivileged = later[1:] if later[0] in _PRIVILEGE else later
                if _program(unprivileged)[0] in _SHELLS:
                    return "refused: piping a download into a shell runs unreviewed code"
                if not still_piped:
                    break
    return None


def _split(command: str) -> list[tuple[list[str], bool]]:
    """Simple commands of `command`, each with whether a pipe joins it to the next."""
    segments: list[tuple[list[str], bool]] = []
    for line in command.splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        try:
            tokens = list(lexer)
        except ValueError:
            # An unbalanced quote: the shell rejects it too; read it word by word.
            tokens = line.split()
        words: list[str] = []
        for token in tokens:
            if token in _SEPARATORS or token in _PIPES:
                segments.append((words, token in _PIPES))
                words = []
            else:
                words.append(token)
        segments.append((words, False))
    return [(words, piped) for words, piped in segments if words]


def _program(words: list[str]) -> tuple[str, list[str]]:
    """The program's name (without directory) and its arguments, wrappers stripped."""
    rest = list(words)
    while rest:
        head = rest[0]
        if head in _KEYWORDS or re.fullmatch(r"[A-Za-z_]\w*=.*", head):
            rest.pop(0)
        elif head.rsplit("/", 1)[-1] in _PREFIXES:
            rest.pop(0)
            while rest and rest[0].startswith("-"):
                rest.pop(0)  # The wrapper's own options (`env -i`, `nice -n`'s flag).
            if rest and re.fullmatch(r"-?\d+", rest[0]):
                rest.pop(0)  # `nice -n 10`: the option's value.
        else:
            break
    if not rest:
        return "", []
    return rest[0].rsplit("/", 1)[-1], rest[1:]


def _check_simple(words: list[str], *, cd_seen: bool, depth: int) -> str | None:
    name, args = _program(words)
    if name in _PRIVILEGE:
        return f"refused: {name} runs commands with elevated privileges"
    if name.startswith("mkfs"):
        return f"refused: {name} formats a file system"
    if name in _POWER or (name == "systemctl" and set(args) & (_POWER | {"kexec"})):
        return f"refused: {' '.join([name, *args][:2])} shuts the machine down or restarts it"
    if name in {"init", "telinit"} and args[:1] in (["0"], ["6"]):
        return f"refused: {name} {args[0]} shuts the machine down or restarts it"
    if name == "dd":
        for arg in args:
            if arg.startswith("of=/dev/") and not _harmless_device(arg[3:]):
                return f"refused: dd writes to the device {arg[3:]}"
    if name == "rm":
        return _check_rm(args, cd_seen=cd_seen)
    if name in {"chmod", "chown", "chgrp"}:
        return _check_recursive_mode(name, args)
    if name in _SHELLS and depth < 3 and "-c" in args[:-1]:
        return _check_string(args[args.index("-c") + 1], depth=depth + 1)
    if name == "eval" and depth < 3:
        return _check_string(" ".join(args), depth=depth + 1)
    for before, target in itertools.pairwise(words):
        redirect = before in {">", ">>", ">|", "&>"} or name == "tee"
        if redirect and _BLOCK_DEVICE.match(target):
            return f"refused: writing to the raw block device {target} destroys its data"
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
