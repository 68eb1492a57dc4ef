"""The rule for server names, checked wherever a name enters paicli (loading, `paicli mcp add`).

A server's name becomes part of file names (its log, `logs/mcp/NAME.log`) and of the model's
tool names (`mcp__NAME__tool`), so only a plain, bounded word is accepted: letters, digits,
`_` and `-`, 1 to 64 of them, and never `__`, which separates server and tool. A
repository's server never takes the name of one of the user's: it becomes `NAME-project`.
"""

from __future__ import annotations

import re
from collections.abc import Collection

__all__ = ["MAX_NAME_LENGTH", "RENAMED_SUFFIX", "name_problem", "project_name", "shown_name"]

MAX_NAME_LENGTH = 64
RENAMED_SUFFIX = "-project"
_NAME = re.compile(rf"[A-Za-z0-9_-]{{1,{MAX_NAME_LENGTH}}}")


def name_problem(name: str) -> str | None:
    """Why `name` cannot name a server, or None when it can."""
    if not _NAME.fullmatch(name):
        return f"a server name is 1 to {MAX_NAME_LENGTH} letters, digits, '_' or '-'"
    if "__" in name:
        return "a server name cannot contain '__' (it separates server and tool in tool names)"
    return None


def project_name(name: str, taken: Collection[str]) -> str | None:
    """The name a repository's server `name` gets when one of the user's servers has it:
    `NAME-project`, or None when that is not a valid name or is `taken` too."""
    renamed = name + RENAMED_SUFFIX
    return None if name_problem(renamed) or renamed in taken else renamed


def shown_name(name: str) -> str:
    """A name that may be refused, as messages show it: quoted with escapes (`repr`, so a
    control character never reaches the screen raw) and cut, so a megabyte of name stays
    off the screen."""
    return repr(name[:MAX_NAME_LENGTH]) + ("..." if len(name) > MAX_NAME_LENGTH else "")
