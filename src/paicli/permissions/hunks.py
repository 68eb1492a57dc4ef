"""An edit's hunks, for approving them one by one: the hunks are those of the unified diff
the approval shows (changes with up to 3 lines of context between them are one hunk), and
`merge` gives the file's text with only the chosen hunks applied."""

from __future__ import annotations

import difflib
from collections.abc import Collection
from dataclasses import dataclass

CONTEXT = 3  # lines of context around a change, as the approval's diff shows it


@dataclass(frozen=True)
class Hunk:
    """One hunk: its changes as (tag, before start, before end, after start, after end) over
    lines, and its unified diff lines (`@@`, `-`, `+`, ` `), not yet escaped."""

    changes: tuple[tuple[str, int, int, int, int], ...]
    lines: tuple[str, ...]


def hunks(before: str, after: str) -> list[Hunk]:
    """The hunks that turn `before` into `after`, in order."""
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    found = []
    for group in matcher.get_grouped_opcodes(CONTEXT):
        changes = tuple(op for op in group if op[0] != "equal")
        first, last = group[0], group[-1]
        head = f"@@ -{first[1] + 1},{last[2] - first[1]} +{first[3] + 1},{last[4] - first[3]} @@"
        lines = [head]
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                lines += [" " + line.rstrip("\r\n") for line in old[i1:i2]]
                continue
            lines += ["-" + line.rstrip("\r\n") for line in old[i1:i2]]
            lines += ["+" + line.rstrip("\r\n") for line in new[j1:j2]]
        found.append(Hunk(changes, tuple(lines)))
    return found


def merge(before: str, after: str, chosen: Collection[int]) -> str:
    """`before` with the hunks numbered in `chosen` (0-based) applied, the others not."""
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    taken = {
        change
        for number, hunk in enumerate(hunks(before, after))
        if number in chosen
        for change in hunk.changes
    }
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    merged: list[str] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        applied = tag != "equal" and (tag, i1, i2, j1, j2) in taken
        merged += new[j1:j2] if applied else old[i1:i2]
    return "".join(merged)
