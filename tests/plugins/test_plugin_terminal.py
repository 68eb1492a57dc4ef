"""Installing a plugin in a real terminal (a pty): what it adds is shown escaped, the y/N is
answered like a user would, and the REPL then completes and runs its command."""

from __future__ import annotations

import json
import sys

import pytest

from tests.llm_server import ScriptedLlm
from tests.plugins.builders import write_plugin
from tests.ui.terminal import Terminal
from tests.ui.test_repl import MARK, Places, accepted, goodbye, paicli, places, terminal_env

pytestmark = pytest.mark.real

__all__ = ["places"]  # the fixture, used by name


async def test_a_plugin_installed_in_a_terminal_is_then_a_command_of_the_repl(
    places: Places,
) -> None:
    source = write_plugin(places.home.parent / "demo")
    manifest = {"name": "demo", "description": "tidy \x1b]0;owned\x07 things"}
    (source / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest))
    term = await Terminal.spawn(
        [sys.executable, "-m", "paicli.cli", "plugin", "add", str(source)],
        cwd=places.project,
        env=terminal_env(places),
    )
    try:
        await term.expect("Install demo?")
        assert "/demo:hello" in term.text and "plugin_demo_files:" in term.text
        assert "\x1b]0;owned" not in term.raw and "\x07" not in term.raw
        term.line("y")
        await term.expect("Installed plugin demo")
        assert await term.exit_code() == 0
    finally:
        await term.aclose()
    async with ScriptedLlm([{"text": "Hello, Ada."}]) as llm, paicli(places, llm) as repl:
        await repl.expect("/help for commands")
        await repl.expect(MARK)
        repl.send("/demo:he")
        await repl.expect("/demo:he")
        repl.send_keys("tab")
        await repl.expect("llo")
        repl.line(" Ada")
        await repl.expect(accepted("/demo:hello Ada"))
        await repl.expect("Hello, Ada.")
        await repl.expect(MARK)
        assert await goodbye(repl) == 0
    sent = llm.requests[0]["messages"][-1]["content"]
    assert sent.startswith("Say hello to Ada from ") and "/.paicli/plugins/demo" in sent
