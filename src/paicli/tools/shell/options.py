"""The shape of what paicli knows of a command's options (`Options`, `Command`) and the
generic reading for commands it does not know; the tables themselves are `known.py` and
`known_git.py`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = [
    "CONFIG",
    "FOLLOWS",
    "GENERIC",
    "OUTSIDE",
    "RUNS",
    "WRITES",
    "Command",
    "Options",
    "never",
    "opts",
]

WRITES = "it names a file to write"
RUNS = "it runs another program"
CONFIG = "it sets configuration, which can name programs to run"
OUTSIDE = "it reaches files outside the project"
# Following every link met while walking the project reaches wherever the links point.
FOLLOWS = "it follows the links it finds, which can point out of the project"


@dataclass(frozen=True)
class Options:
    """The options of one command (or subcommand).

    `flags` take no value (a long one may still be given `--flag=VALUE`); `valued` take one,
    as the next word, `--opt=VALUE` or `-xVALUE`; of those, `text` values are free text (a
    message, a pattern), the others are checked as paths. `never` maps an option to why an
    allow rule never covers it. `operands`: "paths" (every operand may be a path), "pattern"
    (the first is a pattern unless one of `patterns` gave it), "program" (the first operand
    starts another program's arguments: options stop there). `read_only`: used with these
    options it writes nothing, so a session answer may cover it whole. `any_option`: options
    not listed are allowed (the generic reading)."""

    flags: frozenset[str] = frozenset()
    valued: frozenset[str] = frozenset()
    text: frozenset[str] = frozenset()
    never: Mapping[str, str] = field(default_factory=dict)
    operands: str = "paths"
    patterns: frozenset[str] = frozenset()
    read_only: bool = False
    any_option: bool = False
    digits: bool = False  # `-20` is a number (head, grep's context)
    ends: frozenset[str] = frozenset()  # valued options whose value starts another program
    chdir: frozenset[str] = frozenset()  # valued options that change the working folder
    clusters: bool = True  # `-la` is `-l -a` (not for find's and go's `-name`)
    max_operands: int | None = None  # more operands than this and it writes
    refuse: str | None = None  # why an allow rule never covers this subcommand at all
    assignments: str | None = None  # why a NAME=value operand is never covered (make's)

    def __or__(self, other: Options) -> Options:
        return Options(
            self.flags | other.flags,
            self.valued | other.valued,
            self.text | other.text,
            {**self.never, **other.never},
            other.operands,
            self.patterns | other.patterns,
            other.read_only,
            other.any_option,
            self.digits or other.digits,
            self.ends | other.ends,
            self.chdir | other.chdir,
            self.clusters and other.clusters,
            other.max_operands,
            other.refuse,
            other.assignments,
        )


def opts(
    flags: str = "",
    valued: str = "",
    text: str = "",
    never: Mapping[str, str] | None = None,
    *,
    operands: str = "paths",
    patterns: str = "",
    read_only: bool = False,
    digits: bool = False,
    ends: str = "",
    chdir: str = "",
    clusters: bool = True,
    max_operands: int | None = None,
    refuse: str | None = None,
    assignments: str | None = None,
) -> Options:
    """Options from space-separated names; `text` names are valued too."""
    return Options(
        frozenset(flags.split()),
        frozenset(valued.split()) | frozenset(text.split()),
        frozenset(text.split()),
        dict(never or {}),
        operands,
        frozenset(patterns.split()),
        read_only,
        digits=digits,
        ends=frozenset(ends.split()),
        chdir=frozenset(chdir.split()),
        clusters=clusters,
        max_operands=max_operands,
        refuse=refuse,
        assignments=assignments,
    )


def never(names: str, why: str) -> dict[str, str]:
    return dict.fromkeys(names.split(), why)


@dataclass(frozen=True)
class Command:
    """A known command: its options before any subcommand (`leading`), and either its
    subcommands (a name not listed is read generically) or its own `options`."""

    leading: Options = field(default_factory=Options)
    subcommands: Mapping[str, Options] | None = None
    options: Options | None = None
    aliases: Mapping[str, str] = field(default_factory=dict)


GENERIC = Options(
    never=never(
        "-o --output --output-file --out --outfile --out-file --log-file --logfile", WRITES
    ),
    any_option=True,
)
