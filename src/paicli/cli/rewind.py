"""`paicli rewind [--session ID] [--to N]`: a saved conversation's turns (default: this
folder's latest one), or its files and conversation brought back to before turn N, from the
shell (what `/rewind` does in the REPL; `paicli -p` runs record checkpoints too, so a script
can undo one).

Run in the folder the conversation was recorded in (else one line says where). Nothing is
restored while a file changed since paicli last changed it, unless `--force`: a rewind never
silently overwrites someone's work. Exit codes: 0 done (or listed); 1 not done, or not all
of it (the lines say why); 2 no such conversation or turn.
"""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

from paicli.agent.sessions import SessionStore
from paicli.checkpoints.store import CheckpointStore
from paicli.home import PaicliHome
from paicli.llm.messages import Message
from paicli.runtime.rewind import Rewinder, cut_conversation
from paicli.ui.output import err, out

__all__ = ["run"]


def run(options: argparse.Namespace) -> int:
    home = PaicliHome.from_environ()
    here = Path.cwd().resolve()
    sessions = SessionStore(home.sessions_dir, here)
    if options.session is None:  # as `paicli -c`: this folder's latest conversation
        latest = sessions.latest()
        if latest is None:
            err("paicli rewind: no saved conversation in this folder (--session ID names one)")
            return 2
        options.session = latest.id
    session_id: str = options.session
    session = sessions.load(session_id)
    if not CheckpointStore.exists(home.checkpoints_dir, session_id):
        what = "no saved conversation" if session is None else "no checkpoints for conversation"
        err(f"paicli rewind: {what} {session_id!r}")
        return 2
    store = CheckpointStore(home.checkpoints_dir, session_id)
    if not store.roots:
        err(f"paicli rewind: the checkpoints of {session_id} do not say where they were made")
        return 2
    if Path(store.roots[0]) != here:
        err(
            f"paicli rewind: conversation {session_id} was recorded in {store.roots[0]}; "
            f"rewind it there: paicli -C {shlex.quote(store.roots[0])} rewind --session "
            f"{session_id}"
        )
        return 2
    try:
        rewinder = Rewinder.over(store, [Path(root) for root in store.roots])
    except OSError as exc:
        err(f"paicli rewind: cannot open {store.roots[0]}: {exc.strerror or exc}")
        return 1
    if options.to is None:
        return _list(rewinder, session_id)
    return _rewind(options, rewinder, sessions, session_id)


def _list(rewinder: Rewinder, session_id: str) -> int:
    if not rewinder.turns:
        out(f"Conversation {session_id} has no turns recorded.")
        return 0
    out(
        f"Turns of conversation {session_id} (rewind: paicli rewind --session {session_id} --to N):"
    )
    for turn in rewinder.turns:
        out(rewinder.label(turn))
    return 0


def _rewind(
    options: argparse.Namespace, rewinder: Rewinder, sessions: SessionStore, session_id: str
) -> int:
    number: int = options.to
    turn = rewinder.store.turn(number)
    if turn is None:
        numbers = [t.number for t in rewinder.turns]
        known = f"turns {numbers[0]}-{numbers[-1]}" if numbers else "no turns"
        err(f"paicli rewind: conversation {session_id} has no turn {number} ({known})")
        return 2
    session = sessions.load(session_id)
    kept: list[Message] | str | None = None
    if not options.code_only:
        if session is None:
            err(f"paicli rewind: no saved conversation {session_id}; --code-only restores files")
            return 2
        kept = cut_conversation(turn, session.messages)
        if isinstance(kept, str):
            err(f"paicli rewind: {kept} (--code-only)")
            return 1
    code = 0
    if not options.conversation_only:
        plan = rewinder.plan(number)
        assert plan is not None
        if plan.conflicts and not options.force:
            err(
                f"paicli rewind: {len(plan.conflicts)} file(s) changed since paicli last changed "
                "them; nothing was restored (--force overwrites them):"
            )
            for line in rewinder.conflict_lines(plan):
                err(line)
            return 1
        lines, complete = rewinder.restore(plan, overwrite=options.force)
        for line in lines:
            out(line)
        code = 0 if complete else 1
    if isinstance(kept, list) and session is not None:
        sessions.save(session_id, kept, session.model)
        rewinder.forget_from(number)
        prompt = " ".join(turn.prompt.split())
        out(f"Conversation {session_id} rewound to before turn {number}: {prompt[:200]}")
    return code
