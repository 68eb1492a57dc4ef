"""Permission rules: a tool name pattern, optionally limited by the call's arguments.

    read_file                 the tool, whatever the arguments
    mcp__github               every tool of the server `github` (same as `mcp__github__*`)
    mcp__fs__read_*           fnmatch patterns on the model-facing name
    execute_command(npm test)      exactly that command
    execute_command(git diff:*)    `git diff` and anything after it
    execute_command(make *)        a glob over the command's words
    write_file(src/**)        a path glob relative to an anchor folder (`**` crosses folders,
                              `*` and `?` do not); also edit_file, read_file, list_dir, glob, grep

A command rule allows only a single plain command: one with `;`, `&&`, `|`, a redirection,
`$(...)`, backquotes, a leading `VAR=value` or a line break never matches an allow rule (it is
asked about), because the rule could not say what such a line runs. A deny rule is matched
against each command of such a line instead, so `execute_command(rm:*)` catches
`ls; rm -rf x`; deny rules on commands are a guard against mistakes, not a sandbox. A path
rule matches the path as written, folded but with no symlink followed: the toolbox refuses
paths out of the project and asks about protected files whatever the rules say. The path a
call names is resolved against `root` (the folder the file tools work in); a relative glob is
matched against it relative to `anchor` (whoever holds the rule chooses: the project root for
the config's, the project's and saved rules, the working folder for `--allow`/`--deny`), so
`src/**` anchored at `repo/` covers `x.py` written from `repo/src/`. An absolute (`/...`) or
`~/...` glob names the same files from anywhere.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import cache
from pathlib import Path

from paicli.errors import PaicliError

from ._catalog import BUILTIN_TOOLS

__all__ = ["Rule", "RuleError", "command_prefix", "parse_rule", "parse_rules"]

COMMAND_TOOL = "execute_command"
# The argument each built-in tool's path rule looks at, and its default.
_PATH_TOOLS: dict[str, tuple[str, str | None]] = {
    tool.spec.name: (tool.path.name, tool.path.default)
    for tool in BUILTIN_TOOLS
    if tool.path is not None
}
_RULE = re.compile(r"^([^()\s]+)(?:\((.*)\))?$", re.DOTALL)
# Shell syntax that makes a line more than one plain command.
_OPERATORS = frozenset(";&|<>()")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
# Programs whose first argument is more code, not a subcommand: a prefix rule for them would
# allow anything, so a session answer for one covers that exact command only.
_RUNNERS = frozenset(
    {
        "sh", "bash", "zsh", "dash", "fish", "ksh", "env", "sudo", "doas", "su", "xargs",
        "eval", "exec", "nohup", "time", "timeout", "nice", "watch", "python", "python3",
        "node", "deno", "bun", "perl", "ruby", "php", "lua", "npx", "bunx", "pnpx", "uvx",
        "ssh", "docker", "kubectl", "find", "awk", "sed",
    }
)  # fmt: skip
_SUBCOMMAND = re.compile(r"^[a-z][a-z0-9._:-]*$")


class RuleError(PaicliError, ValueError):
    """A rule that cannot be understood; the message says why in one line."""


@dataclass(frozen=True)
class Rule:
    """One rule as written (`text`): the tool pattern and the argument pattern, if any."""

    text: str
    tool: str
    argument: str | None = None

    def matches(
        self,
        names: Sequence[str],
        arguments: Mapping[str, object],
        root: Path,
        *,
        deny: bool = False,
        anchor: Path | None = None,
    ) -> bool:
        """Whether the call of the tool known by `names` (the model-facing one first) with
        `arguments` is covered: its path resolved against `root`, a relative glob matched from
        `anchor` (default `root`). Deny rules compare names without regard to case."""
        fold = str.lower if deny else str
        pattern = fold(self.tool)
        if not any(fnmatchcase(fold(name), pattern) for name in names):
            return False
        if self.argument is None:
            return True
        if names[0] == COMMAND_TOOL:
            return _command_matches(self.argument, arguments, deny=deny)
        return _path_matches(self.argument, names[0], arguments, root, anchor or root, deny=deny)


def parse_rule(text: str) -> Rule:
    """`text` as a rule, or RuleError naming what is wrong."""
    text = text.strip()
    found = _RULE.match(text)
    if not text or found is None:
        raise RuleError("expected TOOL or TOOL(ARGUMENTS), e.g. execute_command(git diff:*)")
    tool, argument = found.group(1), found.group(2)
    if tool.startswith("mcp__") and "__" not in tool[5:] and not tool.endswith("*"):
        tool += "__*"  # a whole server
    if argument is None:
        return Rule(text, tool)
    argument = argument.strip()
    if not argument:
        raise RuleError("empty arguments; write the tool name alone to cover every call")
    if tool != COMMAND_TOOL and tool not in _PATH_TOOLS:
        raise RuleError(
            "arguments can limit execute_command and the file tools "
            f"({', '.join(sorted(_PATH_TOOLS))}) only; write {tool!r} to cover the whole tool"
        )
    if tool == COMMAND_TOOL and not _words(argument.removesuffix(":*")):
        raise RuleError("the command pattern is not a shell command line")
    return Rule(text, tool, argument)


def parse_rules(values: object, where: str, problems: list[str]) -> tuple[Rule, ...]:
    """The rules in the list `values`; each bad one becomes a line in `problems`."""
    if not isinstance(values, list):
        problems.append(f"{where} must be a list of rules; ignored")
        return ()
    rules: list[Rule] = []
    for index, value in enumerate(values):
        if not isinstance(value, str):
            problems.append(f"{where}[{index}] must be a string; ignored")
            continue
        try:
            rules.append(parse_rule(value))
        except RuleError as exc:
            problems.append(f"{where}[{index}] {value!r}: {exc}; ignored")
    return tuple(rules)


def command_prefix(arguments: Mapping[str, object]) -> str | None:
    """The rule a "for the session" answer about this command covers: the program and its
    subcommand (`git diff:*`), the exact command when the program runs code given to it
    (`python x.py`), or None when the line is more than one plain command."""
    words = _call_words(arguments)
    if words is None:
        return None
    program = os.path.basename(words[0])
    if program in _RUNNERS or re.match(r"^python\d", program) or "/" in words[0]:
        return shlex.join(words)
    if len(words) > 1 and _SUBCOMMAND.match(words[1]):
        return f"{shlex.join(words[:2])}:*"
    return f"{shlex.quote(words[0])}:*"


def _call_words(arguments: Mapping[str, object]) -> list[str] | None:
    """The words of the command the call runs, or None when it is not one plain command."""
    argv = arguments.get("argv")
    if isinstance(argv, list) and argv:
        return [str(word) for word in argv]  # no shell: nothing in a word is syntax
    command = arguments.get("command")
    if not isinstance(command, str):
        return None
    return _words(command)


def _words(line: str, *, assignments: bool = False) -> list[str] | None:
    """The words of `line` when it is one plain command (leading `VAR=value` words dropped
    with `assignments`, else refused), or None."""
    if any(mark in line for mark in ("`", "$(", "\r", "\n")):
        return None  # a substitution, or a line break that starts another command
    lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|<>()")
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        words = list(lexer)
    except ValueError:  # unbalanced quotes
        return None
    if not words or any(w and set(w) <= _OPERATORS for w in words):
        return None
    while assignments and words and _ASSIGNMENT.match(words[0]):
        words = words[1:]
    if not words or _ASSIGNMENT.match(words[0]):
        return None
    return words


def _command_matches(pattern: str, arguments: Mapping[str, object], *, deny: bool) -> bool:
    words = _call_words(arguments)
    if words is not None:
        return _words_match(pattern, words)
    if not deny:
        return False
    # Deny rules look at every command of the line (and at the line whole).
    command = arguments.get("command")
    if not isinstance(command, str):
        return False
    pieces = re.split(r"[;&|\n()`]|\$\(", command)
    for piece in (command, *pieces):
        words = _words(piece.strip(), assignments=True) if piece.strip() else None
        if words and _words_match(pattern, words):
            return True
    return False


def _words_match(pattern: str, words: list[str]) -> bool:
    if pattern.endswith(":*"):
        prefix = _words(pattern[:-2])
        return bool(prefix) and words[: len(prefix or ())] == prefix
    exact = _words(pattern)
    if exact is not None and "*" not in pattern:
        return words == exact
    return fnmatchcase(shlex.join(words), pattern) or fnmatchcase(" ".join(words), pattern)


def _path_matches(
    pattern: str,
    tool: str,
    arguments: Mapping[str, object],
    root: Path,
    anchor: Path,
    *,
    deny: bool,
) -> bool:
    """Whether the call's path (relative to `root`) matches: as written (folded, `..`
    resolved by name) and, for an allow rule, also the file it really reaches, so
    `src/link -> ../setup.py` is not covered by `src/**`. A deny rule matches either. A
    relative `pattern` is matched from `anchor`."""
    name, default = _PATH_TOOLS[tool]
    raw = arguments.get(name, default)
    if not isinstance(raw, str):
        return False
    written = Path(raw).expanduser() if raw.startswith("~") else Path(raw)
    lexical = Path(os.path.normpath(root / written))
    real = Path(os.path.realpath(lexical))
    base = Path(pattern).expanduser() if pattern.startswith("~") else Path(pattern)
    if base.is_absolute():
        glob = _glob(os.path.normpath(base).replace(os.sep, "/"))
        found = [glob.match(p.as_posix()) is not None for p in (lexical, real)]
    else:
        glob = _glob(pattern.removeprefix("./"))
        bases = (Path(os.path.abspath(anchor)), Path(os.path.realpath(anchor)))
        found = [_relative_match(glob, p, b) for p, b in zip((lexical, real), bases, strict=True)]
    return any(found) if deny else all(found)


def _relative_match(glob: re.Pattern[str], path: Path, root: Path) -> bool:
    try:
        relative = path.relative_to(root).as_posix()
    except ValueError:
        return False  # out of the project: a relative rule never covers it
    return glob.match(relative or ".") is not None


@cache
def _glob(pattern: str) -> re.Pattern[str]:
    """A path glob as a regular expression: `**` any folders, `*` and `?` within one."""
    out: list[str] = []
    index = 0
    while index < len(pattern):
        if pattern.startswith("**/", index):
            out.append("(?:.*/)?")
            index += 3
        elif pattern.startswith("**", index):
            out.append(".*")
            index += 2
        elif pattern[index] == "*":
            out.append("[^/]*")
            index += 1
        elif pattern[index] == "?":
            out.append("[^/]")
            index += 1
        else:
            out.append(re.escape(pattern[index]))
            index += 1
    return re.compile("".join(out) + r"\Z", re.DOTALL)
