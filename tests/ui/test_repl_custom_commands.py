"""A custom slash command in a real terminal (a pty): Tab completes its name and running it
sends its body to the model."""

from __future__ import annotations

import pytest

from tests.llm_server import ScriptedLlm
from tests.ui.test_repl import MARK, Places, accepted, goodbye, paicli, places

pytestmark = pytest.mark.real

__all__ = ["places"]  # the fixture, used by name


async def test_tab_completes_a_custom_command_in_a_terminal_and_it_runs(places: Places) -> None:
    commands = places.paicli_home / "commands"
    commands.mkdir(parents=True)
    (commands / "greet.md").write_text("---\nargument-hint: [name]\n---\nSay hello to $0.\n")
    async with ScriptedLlm([{"text": "Hello there, Ada."}]) as llm, paicli(places, llm) as term:
        await term.expect("/help for commands")  # the REPL has taken over the quick prompt
        await term.expect(MARK)
        term.send("/gre")
        await term.expect("/gre")
        term.send_keys("tab")
        await term.expect("et")  # the one completion, drawn after what was typed
        term.line(" Ada")
        await term.expect(accepted("/greet Ada"))
        await term.expect("Hello there, Ada.")
        await term.expect(MARK)
        assert await goodbye(term) == 0
    assert llm.requests[0]["messages"][-1] == {"role": "user", "content": "Say hello to Ada.\n"}
