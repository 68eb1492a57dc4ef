"""The look-around tools: list_dir, glob, grep.

They walk the tree below a confined path (`walk`: through folder descriptors, never through a
symlink, within a time and an entry budget), skip the directories nobody wants searched
(`.git`, `node_modules`, `.venv`, `__pycache__`) and anything that is neither a directory nor a
regular file (reading a FIFO blocks forever), read a symlinked file only through its real path
inside the root, and cap what they return, saying so.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import replace
from pathlib import Path

from paicli.tools.base import ToolOutcome
from paicli.tools.builtin.files import NotRegularFile, is_binary, open_regular, open_regular_at
from paicli.tools.builtin.paths import Confinement, PathRefused
from paicli.tools.builtin.walk import Found, SearchLimits, Walk
from paicli.tools.protected import ProtectedPaths

__all__ = ["SearchLimits", "glob_files", "glob_regex", "grep", "list_dir"]

MAX_ENTRIES = 1000
MAX_MATCHES = 500
# A match line is context, not content: a minified line is cut.
MAX_MATCH_LINE_CHARS = 300
# Larger files are data or build output, not something to grep line by line.
MAX_GREP_FILE_BYTES = 10 * 1024 * 1024


def _error(text: str) -> ToolOutcome:
    return ToolOutcome(text=text, is_error=True)


def list_dir(paths: Confinement, path: Path, max_chars: int) -> ToolOutcome:
    """The entries of a directory, sorted, directories marked with a trailing `/`."""
    shown = paths.display(path)
    if not path.is_dir():
        return _error(f"{shown} is not a directory")
    names: list[str] = []
    with paths.open_dir(path) as folder, os.scandir(folder) as entries:
        for entry in entries:
            names.append(entry.name + "/" if entry.is_dir() else entry.name)
    names.sort()
    if not names:
        return ToolOutcome(text=f"{shown} is empty")
    return _capped(names, max_chars, noun="entries", hint="list a subdirectory")


def glob_regex(pattern: str) -> re.Pattern[str]:
    """A regex for a glob over `/`-separated relative paths: `**` spans directories,
    `*` and `?` stay within one name, `[...]` is a character class."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:[^/]*/)*")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[" and (end := pattern.find("]", i + 2)) != -1:
            body = pattern[i + 1 : end]
            negate = body.startswith("!")
            out.append("[" + ("^" if negate else "") + _class_body(body[negate:]) + "]")
            i = end + 1
            continue
        else:
            out.append(re.escape(c))
        i += 1
    try:
        return re.compile("".join(out) + r"\Z", re.DOTALL)
    except re.error as exc:
        raise ValueError(f"invalid glob pattern {pattern!r}: {exc}") from exc


def _class_body(body: str) -> str:
    # In a glob class only `-` (a range) means something; backslashes and what re reserves
    # for future set operations (`[`, `&&`, `~~`, `||`, `--`) are taken literally.
    out = re.sub(r"[\\\[&~|^]", lambda m: "\\" + m[0], body)
    return out.replace("--", "-\\-")


def glob_files(
    paths: Confinement,
    base: Path,
    pattern: str,
    max_chars: int,
    *,
    limits: SearchLimits,
    protected: ProtectedPaths,
) -> ToolOutcome:
    """Paths below `base` matching `pattern`, relative to the root, sorted."""
    if pattern.startswith("/") or ".." in pattern.split("/"):
        return _error(f"glob pattern {pattern!r} must be relative and stay below the path")
    if not base.is_dir():
        return _error(f"{paths.display(base)} is not a directory")
    try:
        regex = glob_regex(pattern.removeprefix("./"))
    except ValueError as exc:
        return _error(str(exc))
    found: list[str] = []
    walk = Walk(paths, base, limits, protected)
    for entry in walk:
        if regex.match(entry.relative):
            found.append(paths.display(base / entry.relative) + ("/" if entry.is_dir else ""))
    found.sort()
    if not found:
        return _with_notes(ToolOutcome(text=f"no paths match {pattern!r}"), walk)
    return _with_notes(_capped(found, max_chars, noun="paths", hint="narrow the pattern"), walk)


def grep(
    paths: Confinement,
    base: Path,
    arguments: Mapping[str, object],
    max_chars: int,
    *,
    limits: SearchLimits,
    protected: ProtectedPaths,
) -> ToolOutcome:
    """Lines matching a regular expression, as `file:line: text`."""
    pattern = str(arguments["pattern"])
    flags = re.IGNORECASE if arguments.get("case_insensitive") else 0
    try:
        regex = re.compile(pattern, flags)
    except re.error as exc:
        return _error(f"invalid regular expression {pattern!r}: {exc}")
    file_filter = arguments.get("glob")
    try:
        name_regex = glob_regex(file_filter) if isinstance(file_filter, str) else None
    except ValueError as exc:
        return _error(str(exc))
    walk = Walk(paths, base, limits, protected)
    if base.is_file():
        candidates: Iterator[Found | Path] = iter([base])
    elif base.is_dir():
        candidates = (entry for entry in walk if not entry.is_dir)
    elif base.exists():
        return _error(f"{paths.display(base)} is neither a regular file nor a directory")
    else:
        return _error(f"{paths.display(base)} does not exist")
    lines: list[str] = []
    matches = 0
    for candidate in candidates:
        file = candidate if isinstance(candidate, Path) else base / candidate.relative
        shown = paths.display(file)
        if name_regex and not (
            name_regex.match(shown) if "/" in str(file_filter) else name_regex.match(file.name)
        ):
            continue
        text = _searchable_text(walk, file, candidate)
        if text is None:
            continue
        # Lines end at "\n" only, as read_file numbers them (not at form feeds or U+2028).
        for number, raw in enumerate(text.removesuffix("\n").split("\n") if text else [], 1):
            line = raw.removesuffix("\r")
            if regex.search(line):
                matches += 1
                cut = " [line cut]" if len(line) > MAX_MATCH_LINE_CHARS else ""
                lines.append(f"{shown}:{number}: {line[:MAX_MATCH_LINE_CHARS]}{cut}")
                if matches >= MAX_MATCHES:
                    break
        if matches >= MAX_MATCHES:
            lines.append(f"[stopped at {MAX_MATCHES} matches; narrow the pattern or the path]")
            break
    if not lines:
        return _with_notes(ToolOutcome(text=f"no matches for {pattern!r}"), walk)
    capped = _capped(lines, max_chars, noun="matching lines", hint="narrow the search")
    return _with_notes(capped, walk)


def _with_notes(outcome: ToolOutcome, walk: Walk) -> ToolOutcome:
    """`outcome` with the walk's notes: what it left out, and where it stopped early."""
    notes = walk.notes()
    if not notes:
        return outcome
    stopped = walk.budget.stopped is not None
    text = "\n".join([outcome.text, *notes])
    return replace(outcome, text=text, truncated=outcome.truncated or stopped)


def _searchable_text(walk: Walk, file: Path, found: Found | Path) -> str | None:
    """The file's text, or None for what grep skips: links leaving the root or leading to a
    credential store, big or binary files, anything that is not a regular file, and anything
    unreadable."""
    paths = walk.paths
    try:
        if isinstance(found, Found) and not found.is_link:
            opened = open_regular_at(paths, found.folder, file)
        else:  # the path argument itself, or a link: opened by its real path from the root
            real = paths.resolve(str(file))
            if isinstance(found, Found) and walk.hides(real):
                return None
            opened = open_regular(paths, real)
        with opened as f:
            if os.fstat(f.fileno()).st_size > MAX_GREP_FILE_BYTES:
                return None
            data = f.read(MAX_GREP_FILE_BYTES + 1)
    except (OSError, NotRegularFile, PathRefused):
        return None
    if is_binary(data):
        return None
    return data.decode("utf-8", errors="replace")


def _capped(items: list[str], max_chars: int, *, noun: str, hint: str) -> ToolOutcome:
    shown: list[str] = []
    used = 0
    for item in items[:MAX_ENTRIES]:
        if shown and used + len(item) + 1 > max_chars:
            break
        shown.append(item)
        used += len(item) + 1
    truncated = len(shown) < len(items)
    if truncated:
        shown.append(f"[{len(items) - len(shown)} more {noun} not shown; {hint}]")
    return ToolOutcome(text="\n".join(shown), truncated=truncated)
