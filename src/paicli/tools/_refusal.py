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
import shlex
from collections.abc import Sequence

__all__ = ["refusal_reason"]

_PRIVILEGE = frozenset({"sudo", "su", "doas", "pkexec"})
_POWER = frozenset({"shutdown", "reboot", "halt", "poweroff"})
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash", "fish", "csh", "tcsh", "mksh"})
_DOWNLOADERS = frozenset({"curl", "wget", "fetch"})
# Words that run the rest of the line as a command of its own.
# Words that run the rest of the line as a command of their own, with the options of each that
# take a separate value (`env -u NAME`, `timeout -s KILL`), so the value is not taken for the
# program.
_WRAPPERS: dict[str, frozenset[str]] = {
    "env": frozenset({"-u", "--unset", "-C", "--chdir"}),
    "nohup": frozenset(),
    "time": frozenset({"-f", "--format", "-o", "--output"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "ionice": frozenset({"-c", "--class", "-n", "--classdata", "-p", "-P", "-u"}),
    "exec": frozenset({"-a"}),
    "command": frozenset(),
    "builtin": frozenset(),
    "xargs": frozenset({"-a", "-d", "-E", "-I", "-L", "-n", "-P", "-s", "--max-args"}),
    "stdbuf": frozenset({"-i", "-o", "-e"}),
    "timeout": frozenset({"-s", "--signal", "-k", "--kill-after"}),
    "setsid": frozenset(),
    "chroot": frozenset({"--userspec", "--groups"}),
}
# Wrappers whose first argument after the options is not the command (`timeout 5 cmd`,
# `chroot /new cmd`).
_WRAPPER_POSITIONALS = {"timeout": 1, "chroot": 1}
# Shell keywords that may start a simple command inside a compound one.
_KEYWORDS = frozenset({"{", "}", "!", "if", "then", "else", "elif", "do", "while", "until"})
_SEPARATORS = frozenset({";", "&&", "||", "&", "(", ")", ";;", "\n"})
# After these, the next command runs whether or not the ones before succeeded.
_CHAIN_BREAKS = frozenset({";", "||", "&", ";;", "\n"})
_PIPES = frozenset({"|", "|&"})
# A run of shell punctuation (shlex returns `;\n` or `)|` as one token) split into operators;
# the redirections among them stay words of the command.
_OPERATOR = re.compile(r"&&|\|\||;;|\|&|&>>?|>>|>&|<&|>\||<<-?|<<<|<>|[;&|()<>\n]")
_REDIRECTIONS = frozenset({">", ">>", ">&", "<&", ">|", "<", "<<", "<<-", "<<<", "<>", "&>", "&>>"})
# `cd` into one of these does not make `rm -rf *` safe: it is not a subdirectory of the project.
_NOT_A_SUBDIRECTORY = frozenset({"", "-", ".", "./", "..", "../"})
_HEREDOC_WORD = re.compile(r"(?P<dash>-?)[ \t]*(?P<word>'[^'\n]*'|\"[^\"\n]*\"|[^\s;&|()<>]+)")
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
    # Whether the commands now run in a subdirectory; `( ... )` restores it on the way out.
    cd_seen = False
    saved: list[bool] = []
    for index, (words, joiner) in enumerate(segments):
        reason = _check_simple(words, cd_seen=cd_seen, depth=depth)
        if reason:
            return reason
        name, args = _program(words)
        if name in {"cd", "pushd"} and joiner not in _PIPES:
            # Only `cd dir && ...` is sure to run what follows in dir: after `;`, `||` or
            # `&` the next command runs even when the cd failed, in the project root.
            cd_seen = _into_subdirectory(args) and joiner == "&&"
        elif joiner in _CHAIN_BREAKS:
            cd_seen = False
        if joiner in _PIPES and name in _DOWNLOADERS:
            for later, later_joiner in segments[index + 1 :]:
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


def _into_subdirectory(args: list[str]) -> bool:
    targets = [a for a in args if not a.startswith("-") or a == "-"]
    target = targets[0] if targets else ""
    if target in _NOT_A_SUBDIRECTORY or target.startswith(("../", "$")) or "/../" in target:
        return False
    return target.rstrip("/") != ".." and _dangerous_target(target, cd_seen=True) is None


def _split(command: str) -> list[tuple[list[str], str]]:
    """Simple commands of `command`, each with the operator after it ("" at the end): `|` or
    `|&` for a pipe, `(` and `)` around a subshell, `;`, `&&`, newline and so on."""
    text = _without_comments_and_heredocs(command)
    lexer = shlex.shlex(text, posix=True, punctuation_chars="();<>|&\n")
    lexer.whitespace = " \t\r"  # A newline outside quotes separates commands, like `;`.
    lexer.whitespace_split = True
    lexer.commenters = ""  # shlex would swallow the newline ending a comment.
    try:
        tokens = list(lexer)
    except ValueError:
        # An unbalanced quote: the shell rejects it too; read it line by line, word by word.
        tokens = [w for line in text.split("\n") for w in [*line.split(), "\n"]]
    segments: list[tuple[list[str], str]] = []
    words: list[str] = []
    for token in tokens:
        operators = _OPERATOR.findall(token) if not token.strip("();<>|&\n") else []
        if not operators:
            words.append(token)
        for operator in operators:
            if operator in _REDIRECTIONS:
                words.append(operator)
            else:
                segments.append((words, operator))
                words = []
    segments.append((words, ""))
    return [(words, joiner) for words, joiner in segments if words or joiner in {"(", ")"}]


def _without_comments_and_heredocs(command: str) -> str:
    """`command` without its comments, and with each heredoc body left out: a body is data
    for the command, not commands (a README written with `cat <<EOF` may mention sudo)."""
    out: list[str] = []
    pending: list[tuple[str, bool]] = []  # Delimiters still to come, and whether `<<-`.
    quote = ""
    i = 0
    while i < len(command):
        c = command[i]
        if c == "\\" and quote != "'":
            out.append(command[i : i + 2])
            i += 2
            continue
        if quote:
            quote = "" if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or command[i - 1] in " \t\n;&|()"):
            end = command.find("\n", i)
            i = len(command) if end == -1 else end  # The newline still ends the command.
            continue
        elif c == "\n" and pending:
            i += 1
            while pending and i < len(command):
                end = command.find("\n", i)
                end = len(command) if end == -1 else end
                delimiter, strip_tabs = pending[0]
                line = command[i:end]
                if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                    pending.pop(0)
                i = end + 1
            out.append("\n")
            continue
        elif command.startswith("<<", i) and not command.startswith("<<<", i):
            match = _HEREDOC_WORD.match(command, i + 2)
            if match:
                word = re.sub(r"[\\'\"]", "", match["word"])
                pending.append((word, match["dash"] == "-"))
                out.append(command[i : match.end()])
                i = match.end()
                continue
        out.append(c)
        i += 1
    return "".join(out)


def _program(words: list[str]) -> tuple[str, list[str]]:
    """The program's name (without directory) and its arguments, wrappers stripped."""
    rest = list(words)
    while rest:
        head = rest[0]
        wrapper = head.rsplit("/", 1)[-1]
        if head in _KEYWORDS or re.fullmatch(r"[A-Za-z_]\w*=.*", head):
            rest.pop(0)
        elif wrapper == "command" and any(a in {"-v", "-V"} for a in rest[1:2]):
            break  # `command -v sudo` only looks the name up.
        elif wrapper in _WRAPPERS:
            rest.pop(0)
            takes_value = _WRAPPERS[wrapper]
            while rest and rest[0].startswith("-") and rest[0] != "-":
                option = rest.pop(0)
                if option == "--":
                    break
                if option in takes_value and rest:
                    rest.pop(0)  # `env -u NAME`, `nice -n 10`: the option's value.
            del rest[: _WRAPPER_POSITIONALS.get(wrapper, 0)]
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
    if name in _SHELLS and depth < 3 and (script := _shell_command_string(args)) is not None:
        return _check_string(script, depth=depth + 1)
    if name == "eval" and depth < 3:
        return _check_string(" ".join(args), depth=depth + 1)
    for before, target in itertools.pairwise(words):
        redirect = before in {">", ">>", ">|", "&>"} or name == "tee"
        if redirect and _BLOCK_DEVICE.match(target):
            return f"refused: writing to the raw block device {target} destroys its data"
    return None


def _shell_command_string(args: list[str]) -> str | None:
    """The command string of `sh -c STRING` (also `-lc`, `-ec`, `-xc`, `-c -e`), or None."""
    has_c = False
    operands: list[str] = []
    skip_value = False
    for arg in args:
        if skip_value:
            skip_value = False
        elif operands or arg == "--":
            operands.append(arg)
        elif arg[:1] in "-+" and len(arg) > 1 and not arg.startswith("--"):
            has_c |= arg[0] == "-" and "c" in arg[1:]
            skip_value = arg[1:] == "o"  # `-o pipefail` / `+o errexit`
        elif not arg.startswith("--"):
            operands.append(arg)
    operands = [a for a in operands if a != "--"][:1]
    return operands[0] if has_c and operands else None


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
