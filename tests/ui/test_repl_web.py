"""web_fetch in the REPL (in process, the model scripted in memory) against a real page on
127.0.0.1: the fetch is asked about, and a hostile page's escape sequences never reach the
screen. In the real tier: the page is served on a socket."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.ui.repl_in_process import repl_in_process
from tests.web_server import html, web_site

pytestmark = pytest.mark.real

HOSTILE = (
    "<html><head><title>Docs \x1b]0;PWNED-TITLE\x07</title></head><body>"
    "<p>\x1b[2J\x1b[31mRED-TEXT\x1b]8;;http://evil.example/\x07link\x1b]8;;\x07</p></body></html>"
)


async def test_a_fetch_is_asked_about_and_a_hostile_page_stays_escaped(tmp_path: Path) -> None:
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    (home / ".paicli").mkdir(parents=True)
    (home / ".paicli" / "config.toml").write_text('[web]\nallow_private = ["127.0.0.1/32"]\n')
    async with web_site({"/docs": html(HOSTILE)}) as site:
        call = {"id": "c1", "name": "web_fetch", "arguments": json.dumps({"url": f"{site}/docs"})}
        script: list[dict[str, Any]] = [{"tool_calls": [call]}, {"text": "Read the docs."}]
        async with repl_in_process(project, home, script=script) as repl:
            repl.line("read the docs page")
            await repl.expect("Tool: web_fetch")
            await repl.expect(f'"url": "{site}/docs"')
            await repl.expect("Allow?")
            repl.send("y")
            await repl.expect("Read the docs.")
            repl.send_keys("ctrl-d")
            assert await repl.exit_code() == 0
            raw = repl.screen.getvalue()
            assert repl.llm is not None
            sent = repl.llm.requests[1]["messages"][-1]["content"]
    # The result's first lines are shown, escaped.
    assert "Title: Docs \\x1b]0;PWNED-TITLE\\x07" in repl.screen.text
    for hostile in ("\x1b]0;PWNED", "\x1b[2J", "\x1b[31mRED", "\x1b]8;;http://evil"):
        assert hostile not in raw
    # The model reads the page fenced as the web's, its text as it came.
    assert sent.startswith(f'<web-content source="{site}/docs" block="')
    assert "\x1b[31mRED-TEXT" in sent
