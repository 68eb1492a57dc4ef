"""A shell command line read the way the shell will run it: its simple commands, and for each
the program that really runs once wrappers are seen through.

`split` cuts a line into simple commands at `;`, `&&`, `||`, `|`, `&`, newlines and
parentheses outside quotes (comments dropped, heredoc bodies left out: they are data).
`invocations` follows a simple command through the programs that run another program
(`env`, `nice`, `timeout`, `sudo`, `xargs`, `sh -c STRING`, `eval` ...) to what they run. Each
`Invocation` says whether the reading is sure enough for an allow rule to vouch for it
(`opaque` is None) or only good enough for a deny rule, which must catch every spelling.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "SHELLS",
    "Invocation",
    "invocations",
    "line_invocations",
    "peel",
    "shell_script",
    "split",
    "unredirected",
]

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash", "fish", "csh", "tcsh", "mksh"})
# A run of shell punctuation (shlex returns `;\n` or `)|` as one token) split into operators;
# the redirections among them stay words of the command.
_OPERATOR = re.compile(r"&&|\|\||;;|\|&|&>>?|>>|>&|<&|>\||<<-?|<<<|<>|[;&|()<>\n]")
_REDIRECTIONS = frozenset({">", ">>", ">&", "<&", ">|", "<", "<<", "<<-", "<<<", "<>", "&>", "&>>"})
_HEREDOC_WORD = re.compile(r"(?P<dash>-?)[ \t]*(?P<word>'[^'\n]*'|\"[^\"\n]*\"|[^\s;&|()<>]+)")
# Shell keywords that may start a simple command inside a compound one.
_KEYWORDS = frozenset(
    {"{", "}", "!", "if", "then", "else", "elif", "do", "while", "until", "coproc"}
)
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
# find's actions that run a command of their own.
_FIND_RUNS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
# Shells nest (`sh -c "bash -c 'git push'"`); past this depth the reading gives up and the
# invocation is opaque, which an allow rule never covers (a deny rule still sees its words).
MAX_DEPTH = 4


@dataclass(frozen=True)
class _Wrapper:
    """A program that runs the command after its options: the options that take a separate
    value, how many operands come before the command (`timeout DURATION`), and, when an
    allow rule must not see through it, why."""

    valued: frozenset[str] = frozenset()
    operands: int = 0
    opaque: str | None = None


def _wrapper(valued: str = "", operands: int = 0, opaque: str | None = None) -> _Wrapper:
    return _Wrapper(frozenset(valued.split()), operands, opaque)


_WRAPPERS: dict[str, _Wrapper] = {
    "env": _wrapper("-u --unset -C --chdir -S --split-string"),
    "command": _wrapper(),
    "builtin": _wrapper(),
    "exec": _wrapper("-a"),
    "nice": _wrapper("-n --adjustment"),
    "ionice": _wrapper("-c --class -n --classdata -p -P -u"),
    "nohup": _wrapper(),
    "setsid": _wrapper(),
    "timeout": _wrapper("-s --signal -k --kill-after", operands=1),
    "stdbuf": _wrapper("-i -o -e --input --output --error"),
    "time": _wrapper("-f --format -o --output"),
    "xargs": _wrapper(
        "-a -d -E -I -L -n -P -s --arg-file --delimiter --eof --max-lines --max-args "
        "--max-procs --max-chars --process-slot-var",
        opaque="xargs adds arguments it reads from its input",
    ),
    "sudo": _wrapper(
        "-u -g -C -D -h -p -r -t -T -U --user --group --close-from --chdir --host --prompt "
        "--role --type --command-timeout --other-user",
        opaque="sudo runs it with another user's privileges",
    ),
    "doas": _wrapper("-u -C", opaque="doas runs it with another user's privileges"),
    "chroot": _wrapper("--userspec --groups", operands=1, opaque="chroot changes its root"),
    # Seen through for deny rules; an allow rule does not vouch for what they add.
    "strace": _wrapper(
        "-o -e -p -s -u -a -b -I -O -S -X -P -E --output --expr --attach --string-limit "
        "--user --env",
        opaque="strace traces it and may write what it sees",
    ),
    "ltrace": _wrapper(
        "-o -e -p -s -u -a -n -A -D -F -L -x --output --library", opaque="ltrace traces it"
    ),
    "taskset": _wrapper("", operands=1, opaque="taskset changes where it runs"),
    "chrt": _wrapper(
        "-T -P -D --sched-runtime --sched-period --sched-deadline",
        operands=1,
        opaque="chrt changes how it is scheduled",
    ),
    "unshare": _wrapper(
        "-S -G -R -w --setuid --setgid --root --wd --propagation",
        opaque="unshare runs it in namespaces of its own",
    ),
    "busybox": _wrapper(opaque="busybox runs its own build of the program"),
}
# Options of a wrapper that change what runs or what it touches: an allow rule does not see
# through them.
_OPAQUE_OPTIONS = {
    "env": ("-C", "--chdir", "-S", "--split-string"),
    "time": ("-o", "--output"),
}


@dataclass(frozen=True)
class Invocation:
    """One program run: `argv` (the program as written, then its arguments), the wrappers
    it was found through (outermost first), and why an allow rule cannot vouch for it."""

    argv: tuple[str, ...]
    through: tuple[str, ...] = ()
    opaque: str | None = None

    @property
    def program(self) -> str:
        """The program's name without its folder."""
        return self.argv[0].rsplit("/", 1)[-1] if self.argv else ""


def split(command: str) -> list[tuple[list[str], str]]:
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


def unredirected(words: Sequence[str]) -> list[str]:
    """The words of a simple command from `split` without its redirections (the operator,
    its target and a descriptor number before it): `>x git push` and `git 2>&1 push` run
    `git push`, wherever the redirection stands."""
    out: list[str] = []
    rest = iter(words)
    for word in rest:
        if word in _REDIRECTIONS:
            if out and out[-1].isdigit():
                out.pop()  # `2>x`: shlex gives the descriptor as a word of its own
            next(rest, None)
        else:
            out.append(word)
    return out


def _without_comments_and_heredocs(command: str) -> str:
    """`command` without its comments and line continuations, and with each heredoc body
    left out: a body is data for the command, not commands (a README written with
    `cat <<EOF` may mention sudo)."""
    out: list[str] = []
    pending: list[tuple[str, bool]] = []  # Delimiters still to come, and whether `<<-`.
    quote = ""
    i = 0
    while i < len(command):
        c = command[i]
        if c == "\\" and quote != "'":
            if command[i + 1 : i + 2] != "\n":  # a backslash-newline joins the lines
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
            i = _skip_heredoc_bodies(command, i + 1, pending)
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


def _skip_heredoc_bodies(command: str, i: int, pending: list[tuple[str, bool]]) -> int:
    """The index after the bodies of the `pending` heredocs that start at `i`."""
    while pending and i < len(command):
        end = command.find("\n", i)
        end = len(command) if end == -1 else end
        delimiter, strip_tabs = pending[0]
        line = command[i:end]
        if (line.lstrip("\t") if strip_tabs else line) == delimiter:
            pending.pop(0)
        i = end + 1
    return i


def line_invocations(command: str, *, depth: int = 0) -> list[Invocation]:
    """Every program the line runs, as far as it can be read: each simple command followed
    through its wrappers, command substitutions (`$(...)`, backquotes) included."""
    # A backquote opens or closes a substitution: read its inside as a command of its own.
    found: list[Invocation] = []
    for words, _ in split(command.replace("`", " ( ")):
        found += invocations(unredirected(words), depth=depth)
    return found


def invocations(words: Sequence[str], *, depth: int = 0) -> list[Invocation]:
    """What the simple command `words` runs: one invocation, or several when a shell is given
    a line of its own (`bash -c "a; b"`)."""
    rest, through, opaque = peel(words)
    if not rest:
        return []
    name = rest[0].rsplit("/", 1)[-1]
    if depth >= MAX_DEPTH:
        return [Invocation(tuple(rest), tuple(through), "it is nested too deeply to read")]
    if name in SHELLS and (script := shell_script(rest[1:])) is not None:
        line, extra = script
        inner = line_invocations(line, depth=depth + 1)
        why = "the shell is given arguments of its own" if extra else None
        if len(inner) != 1:
            why = why or "the shell runs more than one command"
        return [_wrapped(i, [*through, name], opaque or why) for i in inner]
    if name == "eval":
        inner = line_invocations(" ".join(rest[1:]), depth=depth + 1)
        return [_wrapped(i, [*through, name], "eval builds the command") for i in inner]
    if rest[0] in _FIND_RUNS:  # a second `-exec` of a find: split cut the line at its `\;`
        inner = invocations(rest[1:], depth=depth + 1)
        return [_wrapped(i, [*through, "find"], "find runs it on what it finds") for i in inner]
    found = [Invocation(tuple(rest), tuple(through), opaque)]
    if name == "find":  # `find . -exec git push \;` runs git push too
        for command in _find_commands(rest[1:]):
            inner = invocations(command, depth=depth + 1)
            found += [_wrapped(i, [*through, name], "find runs it on what it finds") for i in inner]
    return found


def _find_commands(args: Sequence[str]) -> list[list[str]]:
    """The commands find's `-exec`, `-execdir`, `-ok` and `-okdir` run (to `;` or `+`)."""
    commands: list[list[str]] = []
    words = iter(args)
    for word in words:
        if word in _FIND_RUNS:
            command: list[str] = []
            for inner in words:
                if inner in (";", "+"):
                    break
                command.append(inner)
            commands.append(command)
    return commands


def peel(
    words: Sequence[str], *, keep: frozenset[str] = frozenset()
) -> tuple[list[str], list[str], str | None]:
    """`words` without leading keywords, assignments and wrappers (but those in `keep`): the
    rest, the wrappers peeled (outermost first), and why an allow rule cannot vouch for what
    runs (an assignment or a wrapper's option can change what the program does)."""
    rest = list(words)
    through: list[str] = []
    opaque: str | None = None
    while rest and (rest[0] in _KEYWORDS or ASSIGNMENT.match(rest[0])):
        if ASSIGNMENT.match(rest.pop(0)):
            opaque = opaque or "a variable set before it changes what it does"
    while rest:
        name = rest[0].rsplit("/", 1)[-1]
        wrapper = None if name in keep else _WRAPPERS.get(name)
        if wrapper is None or (name == "command" and rest[1:2] in (["-v"], ["-V"])):
            break  # `command -v git` only looks the name up
        through.append(name)
        rest, why = _peel(name, wrapper, rest[1:])
        opaque = opaque or why
    return rest, through, opaque


def _wrapped(inner: Invocation, outer: list[str], opaque: str | None) -> Invocation:
    return Invocation(inner.argv, (*outer, *inner.through), opaque or inner.opaque)


def _peel(name: str, wrapper: _Wrapper, args: list[str]) -> tuple[list[str], str | None]:
    """The words after the wrapper's options and operands, and why they are opaque."""
    opaque = wrapper.opaque
    rest = list(args)
    while rest and rest[0].startswith("-") and rest[0] != "-":
        option = rest.pop(0)
        if option == "--":
            break
        key = option.split("=", 1)[0]
        value = option.split("=", 1)[1] if "=" in option else None
        if key not in wrapper.valued and option[:2] in wrapper.valued and len(option) > 2:
            key, value = option[:2], option[2:]  # `-S'git push'`: the value attached
        if key in _OPAQUE_OPTIONS.get(name, ()):
            opaque = opaque or f"{name} {key} changes what runs or what it writes"
        if key in wrapper.valued and value is None and rest:
            value = rest.pop(0)
        if name == "env" and key in {"-S", "--split-string"} and value is not None:
            rest = _words_of(value) + rest  # `env -S "git push"` runs those words
    if name == "env":
        while rest and ASSIGNMENT.match(rest[0]):
            rest.pop(0)
            opaque = opaque or "env sets variables that change what it does"
    del rest[: wrapper.operands]
    return rest, opaque


def _words_of(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


def shell_script(args: Sequence[str]) -> tuple[str, bool] | None:
    """The command string of `sh -c STRING` (also `-lc`, `-ec`, `-xc`, `-c -e`) and whether
    arguments follow it, or None when the shell is not given a string."""
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
    operands = [a for a in operands if a != "--"]
    return (operands[0], len(operands) > 1) if has_c and operands else None
