"""Permission rules: a tool name pattern, optionally limited by the call's arguments.

    read_file                 the tool, whatever the arguments
    mcp__github               every tool of the server `github` (same as `mcp__github__*`)
    mcp__fs__read_*           fnmatch patterns on the model-facing name
    execute_command(npm test)      exactly that command
    execute_command(git diff:*)    `git diff` and anything after it
    execute_command(make *)        a glob over the command's words
    write_file(src/**)        a path glob relative to an anchor folder (`**` crosses folders,
                              `*` and `?` do not); also edit_file, read_file, list_dir, glob, grep
    web_fetch(domain:docs.python.org)   that host; `domain:*.python.org` its subdomains too
                              (an allow rule; a deny rule's domain covers its subdomains always)

Claude Code's tool names are read as paicli's (`WebFetch(domain:x)`, `Bash(npm test)`).

A command rule matches the command that will run, not its spelling (`tools/shell/`): wrappers
(`env`, `nice`, `timeout`, `sh -c` ...) are seen through, the program is known by its name
whatever its folder, and the options before a subcommand are left out (`git -C . push` is
`git push`). A deny rule catches every spelling, in every command of a compound line. An
allow rule covers only a single plain command it can see through (never one with `;`, `&&`,
`|`, a redirection, `$(...)`, a leading `VAR=value`, or a wrapper such as `sudo`, `xargs`
or `env VAR=value`), whose program is the one its name finds on PATH, and whose arguments
neither write a file, run another program, reach outside the project, nor use an option
paicli does not know for a command it knows (`tools/shell/known*.py`): `git diff:*` does not
cover `git diff --output=x`. Those calls are asked about. A path
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
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import cache
from pathlib import Path

from paicli.errors import PaicliError
from paicli.tools.builtin.catalog import BUILTIN_TOOLS
from paicli.tools.claude_names import CLAUDE_TOOL_NAMES
from paicli.tools.shell.line import (
    ASSIGNMENT,
    Invocation,
    invocations,
    line_invocations,
    peel,
    split,
    unredirected,
)
from paicli.tools.shell.reach import canonical, git_aliased, rule_prefix, uncovered
from paicli.tools.web.address import web_host

__all__ = [
    "Rule",
    "RuleError",
    "command_limit",
    "command_prefix",
    "domain_rule",
    "parse_rule",
    "parse_rules",
]

COMMAND_TOOL = "execute_command"
READ_TOOL = "read_file"
# The other built-in tools that read what read_file would (contents or names): a deny rule
# for read_file with a path covers them too, as Claude Code's `Read(...)` covers Grep and Glob.
READERS = frozenset({"grep", "glob", "list_dir"})
# A deny rule with a path for the tool on the left covers the tools on the right as well:
# whatever tool reads or changes the file, the rule's file is kept from it.
_KIN = {READ_TOOL: READERS, "edit_file": {"write_file"}, "write_file": {"edit_file"}}
WEB_FETCH_TOOL = "web_fetch"
_DOMAIN = re.compile(r"^domain:(\*|(?:\*\.)?[a-z0-9_-]+(?:\.[a-z0-9_-]+)*\.?)$")
# The argument each built-in tool's path rule looks at, and its default.
_PATH_TOOLS: dict[str, tuple[str, str | None]] = {
    tool.spec.name: (tool.path.name, tool.path.default)
    for tool in BUILTIN_TOOLS
    if tool.path is not None
}
_RULE = re.compile(r"^([^()\s]+)(?:\((.*)\))?$", re.DOTALL)
# Shell syntax that makes a line more than one plain command.
_OPERATORS = frozenset(";&|<>()")


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
        also: Sequence[Path] = (),
    ) -> bool:
        """Whether the call of the tool known by `names` (the model-facing one first) with
        `arguments` is covered: its path resolved against `root`, a relative glob matched from
        `anchor` (default `root`); `also`, the folders --add-dir added, count as the project's
        for a command's paths. Deny rules compare names without regard to case."""
        fold = str.lower if deny else str
        pattern = fold(self.tool)
        kin = [tool for tool, tools in _KIN.items() if names[0] in tools]
        if deny and self.argument is not None:
            names = [*names, *kin]
        if not any(fnmatchcase(fold(name), pattern) for name in names):
            return False
        if self.argument is None:
            return True
        if names[0] == WEB_FETCH_TOOL:
            return _domain_matches(self.argument, arguments, deny=deny)
        if names[0] == COMMAND_TOOL:
            return _command_matches(
                self.argument, arguments, root, anchor or root, deny=deny, also=also
            )
        return _path_matches(self.argument, names[0], arguments, root, anchor or root, deny=deny)


def parse_rule(text: str) -> Rule:
    """`text` as a rule, or RuleError naming what is wrong."""
    text = text.strip()
    found = _RULE.match(text)
    if not text or found is None:
        raise RuleError("expected TOOL or TOOL(ARGUMENTS), e.g. execute_command(git diff:*)")
    tool, argument = CLAUDE_TOOL_NAMES.get(found.group(1), found.group(1)), found.group(2)
    if tool.startswith("mcp__") and "__" not in tool[5:] and not tool.endswith("*"):
        tool += "__*"  # a whole server
    if argument is None:
        return Rule(text, tool)
    argument = argument.strip()
    if not argument:
        raise RuleError("empty arguments; write the tool name alone to cover every call")
    if tool == WEB_FETCH_TOOL:
        if _DOMAIN.match(argument.lower()) is None:
            raise RuleError("a web_fetch rule names a domain: web_fetch(domain:docs.python.org)")
        return Rule(text, tool, argument.lower())
    if tool != COMMAND_TOOL and tool not in _PATH_TOOLS:
        raise RuleError(
            "arguments can limit execute_command and the file tools "
            f"({', '.join(sorted(_PATH_TOOLS))}) only, and web_fetch by domain; write "
            f"{tool!r} to cover the whole tool"
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


def command_prefix(
    arguments: Mapping[str, object],
    root: Path | None = None,
    project: Path | None = None,
    also: Sequence[Path] = (),
) -> str | None:
    """The narrowest rule that covers this command for a "this session" (or "always")
    answer: the program and its subcommand (`git diff:*`, `npm test:*`) or a reading program
    (`ls:*`) when paicli knows its options and the call's are covered, else the command
    exactly as it runs (`pytest -x`, `python x.py`); None when no rule can cover the call (a
    line of several commands, or a wrapper paicli cannot see through). Whatever the prefix,
    a later call with options that write, run a program or reach outside the project is not
    covered by it."""
    if isinstance(seen := _seen_through(arguments), str):
        return None
    where = root or Path.cwd()
    argv = canonical(seen.argv)
    prefix = rule_prefix(argv, where, project or where, also)
    return shlex.join(argv) if prefix is None else f"{shlex.join(prefix)}:*"


def command_limit(
    arguments: Mapping[str, object], root: Path, project: Path, also: Sequence[Path] = ()
) -> str | None:
    """Why no allow rule can cover this command call, whatever it says (one phrase), or None
    (`also`: folders --add-dir made the project's)."""
    if isinstance(seen := _seen_through(arguments), str):
        return seen
    shell = not isinstance(arguments.get("argv"), list)
    return uncovered(list(seen.argv), root, project, shell=shell, also=also)


def _seen_through(arguments: Mapping[str, object]) -> Invocation | str:
    """The one program the call runs, read through its wrappers, or why an allow rule cannot
    say what runs (a line of several commands, or a wrapper it cannot see through)."""
    words = _call_words(arguments)
    if words is None:
        return "it is not one plain command (`;`, `&&`, `|`, a redirection, `$(...)`, VAR=value)"
    found = invocations(words)
    if len(found) != 1:
        return "it runs more than one command"
    return found[0].opaque if found[0].opaque is not None else found[0]


def _call_words(arguments: Mapping[str, object]) -> list[str] | None:
    """The words of the command the call runs, or None when it is not one plain command."""
    argv = arguments.get("argv")
    if isinstance(argv, list) and argv:
        return [str(word) for word in argv]  # no shell: nothing in a word is syntax
    command = arguments.get("command")
    if not isinstance(command, str):
        return None
    return _words(command)


def _words(line: str) -> list[str] | None:
    """The words of `line` when it is one plain command (no leading `VAR=value`), or None."""
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
    if ASSIGNMENT.match(words[0]):
        return None
    return words


def _command_matches(
    pattern: str,
    arguments: Mapping[str, object],
    root: Path,
    project: Path,
    *,
    deny: bool,
    also: Sequence[Path] = (),
) -> bool:
    """Whether the command rule `pattern` covers the call. A deny rule is matched against
    every program the line runs, by every spelling (through wrappers and shells, by name
    whatever its folder, with the options before a subcommand left out). An allow rule
    covers one plain command it can see through, the very program it names, and only when
    its arguments neither write, run another program nor reach outside the project."""
    if deny:
        return any(_words_match(pattern, words, root, deny=True) for words in _spellings(arguments))
    if isinstance(seen := _seen_through(arguments), str):
        return False
    argv = list(seen.argv)
    if not _words_match(pattern, canonical(argv), root, deny=False):
        return False
    shell = not isinstance(arguments.get("argv"), list)
    return uncovered(argv, root, project, shell=shell, also=also) is None


def _spellings(arguments: Mapping[str, object]) -> list[list[str]]:
    """Every way a deny rule may see what the call runs."""
    argv, command = arguments.get("argv"), arguments.get("command")
    if isinstance(argv, list) and argv:
        raw = [[str(word) for word in argv]]
        found = invocations(raw[0])
    elif isinstance(command, str):
        raw = [unredirected(words) for words, _ in split(command.replace("`", " ( "))]
        found = line_invocations(command)
    else:
        return []
    spellings = [peel(words)[0] for words in raw]
    for invocation in found:
        spellings += [list(invocation.argv), canonical(invocation.argv)]
        spellings += [canonical(words) for words in git_aliased(invocation.argv)]
    return [words for words in spellings if words]


def _words_match(pattern: str, words: list[str], root: Path, *, deny: bool) -> bool:
    if pattern.endswith(":*"):
        prefix = _words(pattern[:-2])
        if not prefix:
            return False
        prefix = canonical(prefix)
        return len(words) >= len(prefix) and _same(prefix, words[: len(prefix)], root, deny)
    exact = _words(pattern)
    if exact is not None and "*" not in pattern:
        return _same(canonical(exact), words, root, deny)
    if deny:
        named = [words[0].rsplit("/", 1)[-1], *words[1:]]
        return any(fnmatchcase(joined, pattern) for w in (words, named) for joined in _joins(w))
    return any(fnmatchcase(joined, pattern) for joined in _joins(words))


def _joins(words: list[str]) -> tuple[str, str]:
    return shlex.join(words), " ".join(words)


def _same(rule: list[str], words: list[str], root: Path, deny: bool) -> bool:
    """Whether `words` are the rule's words, its program being the same program: for a deny
    rule the same name in any folder; for an allow rule the name as written, or a path to
    the very file that name finds."""
    if len(rule) != len(words) or rule[1:] != words[1:]:
        return False
    named, program = rule[0], words[0]
    if deny:
        return named.rsplit("/", 1)[-1] == program.rsplit("/", 1)[-1]
    if named == program:
        return True
    return _resolve(named, root) == _resolve(program, root) is not None


def _resolve(program: str, root: Path) -> str | None:
    """The file `program` runs from `root`: a name is looked up on PATH."""
    found = str(root / os.path.expanduser(program)) if "/" in program else shutil.which(program)
    return os.path.realpath(found) if found and os.path.isfile(found) else None


def domain_rule(arguments: Mapping[str, object]) -> str | None:
    """The rule that covers this web_fetch call's site (`web_fetch(domain:HOST)`), for a
    "this session" or "always" answer; None when no rule can name its host."""
    host = web_host(arguments.get("url"))
    if host is None or _DOMAIN.match(f"domain:{host}") is None:
        return None
    return f"{WEB_FETCH_TOOL}(domain:{host})"


def _domain_matches(pattern: str, arguments: Mapping[str, object], *, deny: bool) -> bool:
    """Whether the host of the call's url is the rule's domain (`*.` also its subdomains,
    `*` any); a deny rule covers the domain's subdomains whatever it says."""
    host = web_host(arguments.get("url"))
    if host is None:
        return deny  # a url no host can be read from: denied by any deny rule, never allowed
    domain = pattern.removeprefix("domain:").rstrip(".")
    if domain == "*":
        return True
    below = domain.startswith("*.") or deny
    domain = domain.removeprefix("*.")
    return host == domain or (below and host.endswith("." + domain))


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
