"""`/rewind` (also Esc Esc at an empty prompt): bring the files and/or the conversation back
to before one of this conversation's turns, as Claude Code's rewind menu does.

On a terminal a list of the turns (each prompt and the files it changed) picks the turn,
a second list what to restore: code and conversation, the conversation, the code, or
nothing. `/rewind N [both|conversation|code] [--force]` says it at once (and is how a
REPL without a terminal rewinds). Files changed since paicli last changed them are named
and asked about (overwrite them, keep them, or cancel); without a terminal nothing is
restored unless `--force`. After the conversation is rewound, the turn's prompt waits at
the next prompt to be sent again or edited.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from rich.text import Text

from paicli.escape import terminal_safe
from paicli.runtime.rewind import ACTIONS, Action, Rewinder, cut_conversation

if TYPE_CHECKING:
    from rich.console import Console

    from paicli.checkpoints.store import Turn
    from paicli.llm.messages import Message
    from paicli.runtime import Runtime

__all__ = ["rewind"]

_BY_WORD = {"both": ACTIONS[0], "conversation": ACTIONS[1], "code": ACTIONS[2]}
USAGE = "/rewind N [both|conversation|code] [--force]"
LISTED = 15  # turns in the list to pick from


async def rewind(
    runtime: Runtime, console: Console, words: list[str], prefill: Callable[[str], None]
) -> None:
    """`/rewind [N] [both|conversation|code] [--force]` (see the module)."""
    force = "--force" in words
    words = [word for word in words if word != "--force"]
    rewinder = await asyncio.to_thread(_rewinder, runtime)
    if rewinder is None or not rewinder.turns:
        console.print("No checkpoints yet: each prompt you send makes one.", style="dim")
        return
    interactive = sys.stdin.isatty()
    turn = await _turn(rewinder, console, words, interactive)
    if turn is None:
        return
    action = await _action(turn, console, words[1:], interactive)
    if action is None:
        return
    kept: list[Message] | str | None = None
    if action.conversation:
        kept = cut_conversation(turn, runtime.conversation())
        if isinstance(kept, str):
            console.print(Text(terminal_safe(kept[0].upper() + kept[1:]), "yellow"))
            return
    if action.code and not await _restore_code(rewinder, turn, console, force, interactive):
        return
    if isinstance(kept, list) and runtime.agent is not None:
        runtime.agent.restore(kept)
        await asyncio.to_thread(rewinder.forget_from, turn.number)
        await asyncio.to_thread(runtime.save_session)
        console.print(f"Conversation rewound to before turn {turn.number}.")
        prefill(turn.prompt)


def _rewinder(runtime: Runtime) -> Rewinder | None:
    if runtime.checkpoints is None or not runtime.session_id:
        return None
    store = runtime.checkpoints.open(runtime.session_id)
    return Rewinder.over(store, [runtime.root, *runtime.run.options.add_dirs])


async def _turn(
    rewinder: Rewinder, console: Console, words: list[str], interactive: bool
) -> Turn | None:
    """The turn named (`words[0]`) or picked; None, said, when there is none."""
    from paicli.ui.picker import pick  # noqa: PLC0415 - prompt_toolkit, at first use

    turns = rewinder.turns
    if words:
        turn = rewinder.store.turn(int(words[0])) if words[0].isdigit() else None
        if turn is None:
            known = f"{turns[0].number}-{turns[-1].number}"
            console.print(Text(f"No turn {terminal_safe(words[0])} (turns {known}).", "yellow"))
        return turn
    if not interactive:
        for turn in turns:
            console.print(Text(terminal_safe(rewinder.label(turn))))
        console.print(Text(f"Rewind with {USAGE}", "dim"))
        return None
    # A list taller than the terminal would not draw: the latest turns, older ones by number.
    # (The list numbers its items itself: the turns, unless older ones are left out.)
    older = len(turns) > LISTED
    turns = turns[-LISTED:]
    labels = [rewinder.label(turn, numbered=older) for turn in turns]
    title = "Rewind to before which prompt?" + (" (older ones: /rewind N)" if older else "")
    chosen = await pick(title, labels, marked=len(turns) - 1)
    if chosen is None:
        console.print("Nothing rewound.", style="dim")
        return None
    return turns[chosen]


async def _action(
    turn: Turn, console: Console, words: list[str], interactive: bool
) -> Action | None:
    from paicli.ui.picker import pick  # noqa: PLC0415

    if words:
        action = _BY_WORD.get(words[0])
        if action is None:
            console.print(Text(f"Rewind what? {USAGE}", "yellow"))
        return action
    if not interactive:
        return ACTIONS[0]
    labels = [action.label for action in ACTIONS] + ["Never mind"]
    chosen = await pick(f"Turn {turn.number}: {turn.prompt}", labels)
    if chosen is None or chosen >= len(ACTIONS):
        console.print("Nothing rewound.", style="dim")
        return None
    return ACTIONS[chosen]


async def _restore_code(
    rewinder: Rewinder, turn: Turn, console: Console, force: bool, interactive: bool
) -> bool:
    """Bring the files back; False when the user (or the lack of `--force`) stopped it."""
    from paicli.ui.picker import pick  # noqa: PLC0415

    plan = await asyncio.to_thread(rewinder.plan, turn.number)
    if plan is None:
        return False
    overwrite = force
    if plan.conflicts and not force:
        console.print(
            Text(f"{len(plan.conflicts)} file(s) changed since paicli last changed them:", "yellow")
        )
        for line in rewinder.conflict_lines(plan):
            console.print(Text(terminal_safe(line)))
        if not interactive:
            again = f"/rewind {turn.number} code --force"
            console.print(Text(f"Nothing was restored; {again} overwrites them.", "yellow"))
            return False
        options = ["Overwrite them too", "Keep them as they are, restore the rest", "Cancel"]
        chosen = await pick("Those files were changed by someone else:", options)
        if chosen is None or chosen == 2:
            console.print("Nothing rewound.", style="dim")
            return False
        overwrite = chosen == 0
    lines, _ = await asyncio.to_thread(rewinder.restore, plan, overwrite=overwrite)
    for line in lines:
        console.print(Text(terminal_safe(line), "yellow" if line.startswith("Not undone") else ""))
    return True
