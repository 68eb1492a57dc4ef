"""The question a project's `.paicli/settings.json` allow rules need before they apply: the
repository wrote them, so the user reads them (escaped) and answers y/N once; the answer is
remembered for exactly these rules. Asked on the terminal before the REPL starts."""

from __future__ import annotations

import sys

from paicli.permissions.approval import ProjectSettings
from paicli.ui.output import err
from paicli.ui.typeahead import answering


def ask_rules(settings: ProjectSettings) -> bool:
    """Whether the user lets the project's allow rules run calls without asking."""
    rules = settings.policy.allow
    err(f"This project's {settings.path} would let these calls run without asking:")
    for rule in rules:
        err(f"  {rule}")
    with answering():  # a line typed ahead is not the answer
        err("Apply these rules? (remembered until they change) [y/N] ")
        return sys.stdin.readline().strip().lower() in ("y", "yes")
