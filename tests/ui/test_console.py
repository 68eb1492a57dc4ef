"""SafeConsole: whatever rich renderable carries a server's or model's text, the terminal gets
the text escaped and only rich's own styling as escape sequences."""

from __future__ import annotations

import io

from rich.markdown import Markdown
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from paicli.redact import Redactor
from paicli.ui.console import SafeConsole
from paicli.ui.screen_secrets import redacting

ATTACK = "a\x1b]0;pwned\x07b\x1b[2Jc\x9b2Jd\u202ee\u200bf\rApprove? [y/N]"
OBEYED = ("\x1b]", "\x1b[2J", "\x9b", "\u202e", "\u200b", "\r", "\x07")


def printed(*renderables: object) -> str:
    screen = io.StringIO()
    console = SafeConsole(file=screen, force_terminal=True, width=200)
    for renderable in renderables:
        console.print(renderable)
    return screen.getvalue()


def test_every_kind_of_renderable_shows_the_text_escaped() -> None:
    table = Table()
    table.add_column("NAME")
    table.add_row(ATTACK)
    shown = printed(
        ATTACK, Text(ATTACK, "red"), table, Panel(Text(ATTACK)), Markdown(f"**{ATTACK}**")
    )
    assert [seq for seq in OBEYED if seq in shown] == []
    # (A Text made from raw text loses its bell and carriage return to rich: never obeyed, but
    # not shown either, which is why callers escape what they put in a Text.)
    assert shown.count(r"\x1b]0;pwned") == 5
    assert "\x1b[" in shown  # rich's own colours are still there


def test_a_plain_string_keeps_its_carriage_return_visible_and_markup_literal() -> None:
    shown = printed("x[/]y:smile:\rz")
    assert shown.endswith("x[/]y:smile:\\x0dz\n")


def test_the_repl_console_shows_no_known_secret_and_no_token_shape() -> None:
    known = "the-header-value-of-a-server-0123"
    token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
    table = Table()
    table.add_column("ERROR")
    table.add_row(f"server said {known}")
    with redacting(Redactor([known])):
        shown = printed(f"plain {known}", Text(f"styled {token}", "red"), table)
    assert known not in shown and token not in shown
    assert shown.count("[REDACTED]") == 3
