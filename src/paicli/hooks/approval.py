"""A repository's hooks run only once the user approved exactly them.

The question shows each project file's `hooks` as written (the UI escapes it); the answer is
kept per project as the digest of what was shown (`HookSet.digest`) in
`$PAICLI_HOME/approved-hooks.json` (0600 in a 0700 folder), so a change to any of them asks
again. A "no" is kept too (not asked again until they change). `--trust-project` approves
servers and rules, never hooks. With no one to ask (`paicli -p`, a start that asks nothing),
unapproved hooks are left out and one line says so.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from paicli.config_files import ConfigFileError, parse_json, read_config_text
from paicli.hooks.settings import HookSet
from paicli.private_files import write_atomically

__all__ = ["HookApprovals", "HookReview", "HooksAsk", "approved_hooks"]

log = logging.getLogger("paicli.hooks")


@dataclass(frozen=True)
class HookReview:
    """What the user is asked about: the project, and its files' hooks as written."""

    project: Path
    written: dict[Path, object]
    count: int  # handlers in them


# The UI's question: True runs them (and is remembered), False leaves them out (remembered).
HooksAsk = Callable[[HookReview], bool]


class HookApprovals:
    """The answers about projects' hooks, by project, as digests."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _read(self) -> dict[str, dict[str, str]]:
        try:
            text = read_config_text(self.path, str(self.path))
            document = parse_json(text, str(self.path)) if text is not None else {}
        except ConfigFileError as exc:
            log.warning("%s; every project's hooks are asked about again", exc)
            return {}
        if not isinstance(document, dict):
            return {}
        return {
            k: v
            for k, v in document.items()
            if isinstance(v, dict) and all(isinstance(x, str) for x in v.values())
        }

    def answer(self, project: Path, digest: str) -> bool | None:
        """True (approved), False (declined) for exactly `digest`; None: not answered."""
        kept = self._read().get(str(project.resolve()), {})
        if kept.get("approved") == digest:
            return True
        if kept.get("declined") == digest:
            return False
        return None

    def keep(self, project: Path, digest: str, *, approved: bool) -> None:
        document = self._read()
        document[str(project.resolve())] = {"approved" if approved else "declined": digest}
        try:
            write_atomically(self.path, json.dumps(document, indent=1).encode())
        except OSError as exc:
            log.warning("the answer about the hooks could not be kept: %s", exc)


def approved_hooks(
    hooks: HookSet, project: Path, store: HookApprovals, ask: HooksAsk | None
) -> tuple[HookSet, str | None]:
    """`hooks` with the project's left out unless approved (asked through `ask` when not
    answered yet), and one line saying what was left out and why."""
    count = len(hooks.project_handlers)
    if not count:
        return hooks, None
    digest = hooks.digest
    answer = store.answer(project, digest)
    if answer is None and ask is not None:
        answer = ask(HookReview(project, dict(hooks.written), count))
        store.keep(project, digest, approved=answer)
    if answer:
        return hooks, None
    files = ", ".join(sorted(str(p.relative_to(project)) for p in hooks.written))
    why = (
        "declined"
        if answer is False
        else "not approved (start paicli in this project to review them; "
        "--trust-project does not approve hooks)"
    )
    return hooks.without_project(), f"the project's {count} hooks ({files}) do not run: {why}"
