"""`paicli -p PROMPT`: answer once and exit, for scripts and pipelines.

Never prompts: tools that would ask run only when `--allow PATTERN` or `--yes` says so, and
anything else is denied with a message the model and the user can read. The answer goes to
stdout (text, one JSON object, or JSON lines of events); everything else goes to stderr.

Exit codes: 0 answered; 1 the model endpoint failed; 2 usage or setup problem (no model
configured, empty prompt); 3 the step budget ran out; 130 interrupted.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from paicli.runtime import Runtime, open_runtime
from paicli.servers.trust import skip_reason
from paicli.ui.oneshot import EventPrinter, report_server
from paicli.ui.output import err
from paicli.ui.screen_secrets import redacting

EXIT_CODES = {"done": 0, "error": 1, "step_budget": 3, "cancelled": 130}


def read_prompt(options: argparse.Namespace) -> str | None:
    """The prompt, read before the event loop starts when it comes from stdin (a blocking
    read inside the loop would keep SIGTERM from being handled until stdin ends)."""
    prompt: str = options.print
    if prompt == "-":
        prompt = sys.stdin.read()
    return prompt if prompt.strip() else None


async def run_once(options: argparse.Namespace, flags: dict[str, str | None], prompt: str) -> int:
    async with open_runtime(
        root=Path.cwd(),
        flags=flags,
        approver=None,
        flag_allow=tuple(options.allow),
        yes=options.yes,
        trust_project=options.trust_project,
        on_server_change=report_server,
        max_steps=options.max_steps or None,
    ) as runtime:
        with redacting(runtime.redactor):
            return await _answer(runtime, options, prompt)


async def _answer(runtime: Runtime, options: argparse.Namespace, prompt: str) -> int:
    for problem in runtime.problems:
        err(f"paicli: {problem}")
    for name in runtime.skipped:
        err(f"paicli: {skip_reason(runtime.config.servers[name], runtime.root)}")
    if runtime.agent is None:
        err(f"paicli: {runtime.settings.why_not_configured()}")
        return 2
    # Servers whose tools the catalogue knows are not waited for: a call waits instead.
    await runtime.manager.wait_ready(runtime.manager.starting(without_catalogue=True))
    printer = EventPrinter(options.output_format)
    ended = await runtime.agent.run(prompt, printer)
    printer.finish(ended)
    return EXIT_CODES[ended.reason]
