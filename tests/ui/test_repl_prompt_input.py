"""`@path` Tab completion and `!` lines in a real terminal (pty): keys typed, the screen read
back, the scripted model on 127.0.0.1 recording what it was sent."""

from __future__ import annotations

import pytest

from tests.llm_server import ScriptedLlm
from tests.ui.test_repl import MARK, Places, accepted, goodbye, paicli, places

pytestmark = pytest.mark.real
__all__ = ["places"]  # the fixture


async def test_tab_completes_an_at_path_fuzzily_and_the_file_is_attached(places: Places) -> None:
    folder = places.project / "src" / "deep"
    folder.mkdir(parents=True)
    (folder / "widget_factory.py").write_text("print('made')\n")
    (places.project / "README.md").write_text("")
    (places.project / "evil\x1b[2Jname.py").write_text("")  # never offered
    async with ScriptedLlm([{"text": "It prints."}]) as llm, paicli(places, llm) as term:
        await term.expect("/help for commands")  # the completer is in place
        await term.expect(MARK)
        term.send("what does @wfac")
        term.send_keys("tab")
        await term.expect("src/deep/widget_factory.py")
        term.send_keys("enter")  # the completion menu's choice
        term.send_keys("enter")  # the prompt
        await term.expect(accepted("what does @src/deep/widget_factory.py"))
        await term.expect("attached @src/deep/widget_factory.py")
        await term.expect("It prints.")
        await term.expect(MARK)
        assert await goodbye(term) == 0
    assert "\x1b[2Jname" not in term.text
    sent = llm.requests[0]["messages"][-1]["content"]
    assert sent.startswith("<file path=\"src/deep/widget_factory.py\">\n     1\tprint('made')\n")
    assert sent.endswith("\n\nwhat does @src/deep/widget_factory.py")


async def test_a_bang_line_runs_shows_its_output_escaped_and_the_model_sees_it(
    places: Places,
) -> None:
    async with (
        ScriptedLlm([{"text": "It said hi."}]) as llm,
        paicli(places, llm, "--sandbox", "off") as term,
    ):
        await term.expect(MARK)
        term.line("!printf 'hi\\033[2J there\\n'")
        await term.expect("hi\\x1b[2J there")  # escaped on screen
        await term.expect(MARK)
        assert llm.requests == []  # a `!` line alone does not ask the model
        term.line("what did it say?")
        await term.expect("It said hi.")
        await term.expect(MARK)
        assert await goodbye(term) == 0
    messages = llm.requests[0]["messages"]
    shell, question = messages[-2], messages[-1]
    assert "<shell-command>printf 'hi\\033[2J there\\n'</shell-command>" in shell["content"]
    assert "hi\x1b[2J there" in shell["content"]  # verbatim to the model
    assert question == {"role": "user", "content": "what did it say?"}
