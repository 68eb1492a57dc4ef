"""What a command reaches, read from its options with `known.py`: whether an allow rule may
vouch for it. A rule names a command; it never covers arguments that make that command write
a file, run another program, or reach outside the project, and never an option paicli does
not know for a command it knows.

`uncovered(argv, cwd, project)` answers with the reason (one phrase, naming the word), or None.
Paths are checked as written and as they really resolve (links followed), against the project
folder and the folders `--add-dir` added (`also`); for a shell line (`shell=True`) a word
that the shell would still expand (`$VAR`, `{a,b}`, a glob that could match `..`) counts as
reaching anywhere.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path

from paicli.tools.protected import ProtectedPaths
from paicli.tools.shell.known import COMMANDS
from paicli.tools.shell.line import line_invocations
from paicli.tools.shell.options import GENERIC, Command, Options
from paicli.tools.shell.sed import sed_reason

__all__ = ["canonical", "git_aliased", "rule_prefix", "uncovered"]

# Device files that read or write nothing of the user's.
_DEVICES = frozenset({"/dev/null", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/zero"})
_VERSIONED = re.compile(r"^(python|pip)\d+(\.\d+)?$")
_ASSIGNMENT = re.compile(r"^[A-Za-z_.][A-Za-z0-9_.]*=")
_BRACES = re.compile(r"\{[^{}]*(,|\.\.)[^{}]*\}")
_PROTECTED = ProtectedPaths(None)


def _known(program: str) -> tuple[str, Command | None]:
    name = program.rsplit("/", 1)[-1]
    found = _VERSIONED.match(name)
    if found:
        name = found.group(1) + ("3" if found.group(1) == "pip" else "")
    return name, COMMANDS.get(name)


@dataclass
class _Reading:
    """The state of reading one command's words."""

    name: str
    cwd: Path
    project: Path
    shell: bool
    also: Sequence[Path] = ()  # folders --add-dir added: inside them is inside the project
    operands: int = 0
    pattern_given: bool = False
    options_done: bool = False

    def path(self, word: str) -> str | None:
        """Why the path `word` (relative to the working folder) is not covered, or None."""
        if not word or word == "-" or "://" in word or word in _DEVICES:
            return None
        if self.shell and "$" in word:
            return f"`{word}` expands a variable, which can name any file"
        if self.shell and _BRACES.search(word):
            return f"`{word}` expands to several words, which can name any file"
        if self.shell and any(
            fnmatchcase("..", part) for part in word.split("/") if set(part) & set("*?[")
        ):
            return f"`{word}` can match `..`, outside the project"
        written = os.path.expanduser(word) if word.startswith("~") else word
        if self.shell and written.startswith("~"):
            # `~+`, `~-`, `~1`: the shell's folders ($PWD, $OLDPWD, the folder stack), or a
            # user this machine does not know; either way no path paicli can read.
            return f"`{word}` starts with a `~` the shell expands to a folder paicli cannot see"
        lexical = Path(os.path.normpath(self.cwd / written))
        real = Path(os.path.realpath(lexical))
        for candidate, where in ((lexical, os.path.abspath), (real, os.path.realpath)):
            folders = (self.project, *self.also)
            if not any(candidate.is_relative_to(Path(where(f))) for f in folders):
                return f"`{word}` is outside the project"
        protected = _PROTECTED.reason(real, writing=False)
        return f"`{word}` is {protected}" if protected else None


def uncovered(
    argv: Sequence[str],
    cwd: Path,
    project: Path,
    *,
    shell: bool = True,
    also: Sequence[Path] = (),
) -> str | None:
    """Why an allow rule cannot cover running `argv` in `cwd` (inside `project`), or None.
    `shell`: the words come from a shell line, which expands some of them further; `also`:
    folders that count as the project's (`--add-dir`)."""
    if not argv:
        return "there is no command"
    name, command = _known(argv[0])
    reading = _Reading(name, cwd, project, shell, also)
    if command is None:
        return _read(GENERIC, list(argv[1:]), reading)
    if command.options is not None:
        return _read(command.options, list(argv[1:]), reading)
    rest = list(argv[1:])
    reading.operands = -1  # the subcommand ends the leading options
    why = _read(command.leading, rest, reading, stop_at_operand=True)
    if why is not None or not rest:
        return why
    sub = command.aliases.get(rest[0], rest[0])
    options = (command.subcommands or {}).get(sub, GENERIC)
    if options.refuse:
        return f"`{name} {sub}`: {options.refuse}"
    reading.name = f"{name} {sub}"
    reading.operands = 0
    return _read(options, rest[1:], reading)


def _read(
    options: Options, words: list[str], reading: _Reading, *, stop_at_operand: bool = False
) -> str | None:
    """Why `words` are not covered by `options`. With `stop_at_operand`, reading ends at the
    first operand, which is left at the head of `words` (the subcommand)."""
    while words:
        word = words[0]
        if reading.options_done or word == "-" or not word.startswith("-"):
            if stop_at_operand and not reading.options_done:
                return None
            words.pop(0)
            why = _operand(options, word, reading)
        else:
            words.pop(0)
            why = _option(options, word, words, reading)
        if why is not None:
            return why
        if reading.options_done and (options.operands == "program" or options.ends):
            # `python -m pytest --basetemp=/tmp/x`: the program's own arguments, read as
            # any command's are (an option's value is a path, output options not covered).
            reading.options_done = False
            return _read(GENERIC, words, reading)
    if stop_at_operand:
        words.clear()
    return None


def _operand(options: Options, word: str, reading: _Reading) -> str | None:
    if not reading.options_done and word in options.flags:
        return None  # find's `!` and `(`, git stash's `list`
    if word in options.never:
        return f"`{word}`: {options.never[word]}"
    if options.operands == "pattern" and not reading.pattern_given and not reading.options_done:
        reading.pattern_given = True
        return _pattern(reading.name, word)
    # After `--`, an option passed on to another program: `npm test -- --coverageDirectory=X`.
    passed_on = word.startswith("-") and "=" in word
    if passed_on and (why := reading.path(word.partition("=")[2])) is not None:
        return why
    if _ASSIGNMENT.match(word):  # `NAME=value`: many programs read the value as a setting
        if options.assignments is not None:
            return f"`{word}`: {options.assignments}"
        if (why := reading.path(word.partition("=")[2])) is not None:
            return why  # `dd of=/home/me/.bashrc`
    reading.operands += 1
    if options.max_operands is not None and reading.operands > options.max_operands:
        return f"`{reading.name}` with more than {options.max_operands} operand writes"
    if options.operands == "program":
        reading.options_done = True  # the rest are the program's own arguments
    return reading.path(word)


def _option(options: Options, word: str, words: list[str], reading: _Reading) -> str | None:
    if word == "--":
        reading.options_done = True
        return None
    long = word.startswith("--") or not options.clusters
    key, eq, value = word.partition("=") if long else (word, "", "")
    if key in options.never:
        return f"`{key}`: {options.never[key]}"
    if key in options.valued:
        if not eq:
            value = words.pop(0) if words else ""
        return _value(options, key, value, reading)
    if key in options.flags:
        return reading.path(value) if eq else None
    if options.digits and word[1:].isdigit():
        return None
    if long or len(word) == 2:
        if options.any_option:
            return reading.path(value) if eq else None
        return f"`{key}` is not an option paicli knows for `{reading.name}`"
    return _cluster(options, word, words, reading)


def _cluster(options: Options, word: str, words: list[str], reading: _Reading) -> str | None:
    """`-abc` (three flags) or `-xVALUE` (a valued option with its value attached)."""
    for index, letter in enumerate(word[1:], start=2):
        option = "-" + letter
        if option in options.never:
            return f"`{option}` (in `{word}`): {options.never[option]}"
        if option in options.valued:
            value = word[index:] or (words.pop(0) if words else "")
            return _value(options, option, value, reading)
        if option not in options.flags and not options.any_option:
            return f"`{option}` (in `{word}`) is not an option paicli knows for `{reading.name}`"
    return None


def _value(options: Options, key: str, value: str, reading: _Reading) -> str | None:
    if key in options.ends:
        reading.options_done = True
    if key in options.text:
        if key in options.patterns:
            reading.pattern_given = True
            return _pattern(reading.name, value)
        return None
    why = reading.path(value)
    if why is None and key in options.chdir:
        reading.cwd = Path(os.path.normpath(reading.cwd / os.path.expanduser(value)))
    return why


def _pattern(name: str, pattern: str) -> str | None:
    return sed_reason(pattern) if name == "sed" else None


def canonical(argv: Sequence[str]) -> list[str]:
    """`argv` as a rule reads it: the program by its name, and for a command with
    subcommands the options before the subcommand left out (`git -C . push` is `git push`)."""
    if not argv:
        return []
    _, command = _known(argv[0])
    words = list(argv)
    if command is None or command.subcommands is None:
        return words
    index = 1
    while index < len(words) and words[index].startswith("-") and words[index] != "-":
        word = words[index]
        index += 1
        if word == "--":
            break
        if "=" not in word and word in command.leading.valued:
            index += 1  # `-C DIR`, `-c key=value`: the value follows
    return [words[0], *words[index:]]


def git_aliased(argv: Sequence[str]) -> list[list[str]]:
    """What `git -c alias.NAME=VALUE NAME ARGS` runs: git with VALUE's words in NAME's place,
    or for a `!VALUE` alias the commands of that shell line. Nothing for another call."""
    if not argv or argv[0].rsplit("/", 1)[-1] != "git":
        return []
    aliases: dict[str, str] = {}
    index = 1
    while index < len(argv) and argv[index].startswith("-") and argv[index] != "--":
        word = argv[index]
        index += 1
        setting = word[2:] if word.startswith("-c") and len(word) > 2 else None
        if word in COMMANDS["git"].leading.valued and index < len(argv):
            setting = argv[index] if word == "-c" else None
            index += 1
        name, eq, value = (setting or "").partition("=")
        if eq and name.lower().startswith("alias."):
            aliases[name[6:].lower()] = value
    body = aliases.get(argv[index].lower()) if index < len(argv) else None
    if body is None:
        return []
    rest = list(argv[index + 1 :])
    if body.startswith("!"):
        return [[*found.argv, *rest] for found in line_invocations(body[1:])]
    return [[argv[0], *body.split(), *rest]]


def rule_prefix(
    argv: Sequence[str], cwd: Path, project: Path, also: Sequence[Path] = ()
) -> list[str] | None:
    """The words a prefix rule for this call may name: a known subcommand (`git diff`,
    `npm test`) or a known reading command alone (`ls`), when the call's own arguments are
    covered; None when only the exact command may be (an unknown program, `make`, `python`).
    The prefix rule still never covers a later call whose arguments are not covered."""
    if not argv or "/" in argv[0] or uncovered(argv, cwd, project, shell=False, also=also):
        return None
    _, command = _known(argv[0])
    if command is None:
        return None
    if command.options is not None:
        return [argv[0]] if command.options.read_only else None
    words = canonical(argv)
    if len(words) < 2:
        return None
    options = (command.subcommands or {}).get(command.aliases.get(words[1], words[1]))
    known = options is not None and not options.any_option  # not read generically
    return words[:2] if known else None
