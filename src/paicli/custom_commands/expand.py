"""A custom command's body with its arguments put in, as Claude Code does it today.

`$ARGUMENTS` is the whole argument string as typed; `$ARGUMENTS[N]` and its shorthand `$N`
are the N-th argument counted from 0 (Claude Code's numbering since 2.1.19: `$0` is the
first), the arguments split with shell-style quoting; a placeholder whose argument is missing
stays as written; `\\$1` is a literal `$1`. A body with no placeholder at all gets the
arguments appended (`ARGUMENTS: ...`), so they are never lost. `${CLAUDE_PROJECT_DIR}` is the
project root. Nothing in the body is run (`!` shell lines are sent as text).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

__all__ = ["expand", "split_arguments"]

_PLACEHOLDER = re.compile(r"\\\$(ARGUMENTS|\d+)|\$ARGUMENTS\[(\d+)\]|\$ARGUMENTS|\$(\d+)")


def split_arguments(text: str) -> list[str]:
    """The arguments in `text`, split as a shell would (an unbalanced quote: at spaces)."""
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


def expand(body: str, arguments: str, *, project: Path | None = None) -> str:
    """`body` with `arguments` (the text after the command name) in its placeholders."""
    words = split_arguments(arguments)
    used = False

    def put(found: re.Match[str]) -> str:
        nonlocal used
        escaped, indexed, shorthand = found.group(1), found.group(2), found.group(3)
        if escaped is not None:
            return "$" + escaped
        used = True
        if indexed is None and shorthand is None:
            return arguments
        index = int(indexed if indexed is not None else shorthand)
        return words[index] if index < len(words) else found.group(0)

    text = _PLACEHOLDER.sub(put, body)
    if project is not None:
        text = text.replace("${CLAUDE_PROJECT_DIR}", str(project))
    if not used and arguments.strip():
        text = f"{text.rstrip()}\n\nARGUMENTS: {arguments}"
    return text
