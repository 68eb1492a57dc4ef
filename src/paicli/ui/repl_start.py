"""Starting the REPL: the runtime opened with the REPL's questions and callbacks, the
conversation `--continue`/`--resume` name, and a note, once every question a start asked was
answered, that the next start in this project may draw its prompt first.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from rich.console import Console
from rich.text import Text

from paicli.answered_projects import remember
from paicli.escape import one_line, terminal_safe
from paicli.permissions.approval import ProjectSettings
from paicli.run_settings import RulesAsk, RunIO, load_run_settings, start_options
from paicli.runtime import Runtime, open_runtime
from paicli.servers.trust import TrustAnswer, TrustAsk, TrustRequest
from paicli.ui.console import SafeConsole
from paicli.ui.hooks_prompt import ask_hooks
from paicli.ui.prompt_line import LiveLine, holding_keys
from paicli.ui.repl import Repl
from paicli.ui.rules_prompt import ask_rules
from paicli.ui.screen_secrets import redacting
from paicli.ui.typeahead import answering


async def repl_main(
    options: argparse.Namespace,
    flags: Mapping[str, str | None],
    *,
    ask_trust: TrustAsk | None,
    line: LiveLine | None = None,
) -> int:
    """The REPL; `line` is the prompt `prompt_line.quick_repl` already drew (its first line
    may be typed while the runtime opens)."""
    # Keys typed from now on wait intact for the prompt (the questions of the start read
    # their lines in line mode).
    with holding_keys(sys.stdin.isatty()):
        return await _repl_main(options, flags, ask_trust=ask_trust, line=line)


async def _repl_main(
    options: argparse.Namespace,
    flags: Mapping[str, str | None],
    *,
    ask_trust: TrustAsk | None,
    line: LiveLine | None,
) -> int:
    # Names and text from servers and models are printed literally and escaped (a server
    # called "x[/]" or ":smile:" must neither crash nor restyle the screen).
    console = SafeConsole(force_terminal=sys.stdout.isatty() or None)
    repl = Repl(console, interactive=sys.stdin.isatty(), line=line)
    answers = _Answers()
    settings = load_run_settings(
        Path.cwd(),
        # The servers start once the prompt is drawn (Repl.run).
        start_options(options, flags, hold_servers=True),
    )
    io = RunIO(
        approver=repl.approve,
        ask_rules=answers.rules(ask_rules) if ask_trust is not None else None,
        ask_trust=None if ask_trust is None else answers.trust(ask_trust),
        # (a yes or a no is kept either way: the start counts as answered)
        ask_hooks=ask_hooks if ask_trust is not None else None,
        on_server_change=repl.server_changed,
        elicit=repl.elicit,
        approve_sampling=repl.approve_sampling,
        review_sample=repl.review_sample,
    )
    async with open_runtime(
        settings,
        io,
    ) as runtime:
        flagged = options.trust_project or options.mcp_config  # (they change what is asked)
        if ask_trust is not None and answers.kept and not flagged:
            # Every question of this start is answered and saved: the next one with the
            # same files asks nothing, and draws its prompt first.
            await asyncio.to_thread(remember, runtime.project, runtime.home)
        with redacting(runtime.redactor):
            resumed = await pick_session(runtime, options, console, interactive=repl.interactive)
            if resumed is None:
                return 2
            return await repl.run(runtime)


class _Answers:
    """Whether every question a start asked got an answer paicli keeps (servers allowed or
    declined, rules accepted): a start whose question was left unanswered, or whose rules
    were refused (asked again each time), is not one to remember as answered."""

    def __init__(self) -> None:
        self.kept = True

    def trust(self, ask: TrustAsk) -> TrustAsk:
        def asking(requests: Sequence[TrustRequest]) -> TrustAnswer | None:
            answer = ask(requests)
            self.kept = self.kept and answer is not None
            return answer

        return asking

    def rules(self, ask: RulesAsk) -> RulesAsk:
        def asking(settings: ProjectSettings) -> bool:
            accepted = ask(settings)
            self.kept = self.kept and accepted
            return accepted

        return asking


async def pick_session(
    runtime: Runtime, options: argparse.Namespace, console: Console, *, interactive: bool
) -> bool | None:
    """Carry on the conversation `--continue` or `--resume [ID]` names; True when one was
    resumed, False when none was asked for, None (after saying why) when it cannot be."""
    wanted: str | None = options.resume
    if not options.continue_session and wanted is None:
        return False
    store = runtime.sessions
    assert store is not None
    if options.continue_session:
        session = await asyncio.to_thread(store.latest)
        if session is None:
            console.print("No saved conversation in this folder yet; starting a new one.")
            return False
    elif wanted:
        session = await asyncio.to_thread(store.load, wanted)
        if session is None:
            console.print(Text(f"No saved conversation {terminal_safe(wanted)!r}.", "red"))
            return None
        if (elsewhere := store.elsewhere(session)) is not None:
            console.print(Text(terminal_safe(elsewhere), "red"))
            return None
    else:
        sessions = await asyncio.to_thread(store.recent, 20)
        if not sessions:
            console.print("No saved conversation in this folder yet; starting a new one.")
            return False
        for number, found in enumerate(sessions, 1):
            line = f"{number:>2}. {found.id}  {found.updated.replace('T', ' ')}  {found.title}"
            console.print(Text(one_line(line, 110)))
        if not interactive:
            console.print(Text("Choose one with: paicli --resume ID", "yellow"))
            return None
        with answering():  # a line typed ahead is not the answer
            answer = await asyncio.to_thread(input, f"Resume which (1-{len(sessions)})? ")
        if not answer.strip().isdigit() or not 1 <= int(answer) <= len(sessions):
            console.print(Text("No conversation chosen.", "yellow"))
            return None
        session = sessions[int(answer) - 1]
    runtime.resume(session)
    turns = sum(1 for m in session.messages if m["role"] == "user")
    console.print(
        Text(
            f"Resumed {session.id} ({turns} turns): {one_line(session.title, 80)}",
            "dim",
        )
    )
    return True
