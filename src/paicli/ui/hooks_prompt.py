"""The question a project's hooks need before they may run: the repository wrote commands
that paicli would run on its own at every tool call, prompt or start, so the user reads
them as written (escaped JSON, file by file) and answers y/N once; the answer is kept for
exactly these hooks. Asked on the terminal before the REPL starts."""

from __future__ import annotations

import sys

from paicli.escape import json_for_terminal
from paicli.hooks.approval import HookReview
from paicli.ui.output import err
from paicli.ui.typeahead import answering


def ask_hooks(review: HookReview) -> bool:
    """Whether the user lets the project's hooks run."""
    err(f"This project configures {review.count} hooks: commands paicli would run by itself")
    err("(around tool calls, prompts and the session; a hook can block, allow or change a")
    err("tool call). As written:")
    for path, value in sorted(review.written.items()):
        err(f"  {path.relative_to(review.project)}:")
        for line in json_for_terminal({"hooks": value}).splitlines():
            err(f"    {line}")
    with answering():  # a line typed ahead is not the answer
        err("Run these hooks? (remembered until they change; --trust-project never does) [y/N] ")
        return sys.stdin.readline().strip().lower() in ("y", "yes")
