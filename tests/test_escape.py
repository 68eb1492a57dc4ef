"""Text from models and servers is shown in the terminal with nothing hidden or rewritten."""

from __future__ import annotations

import json

import pytest

from paicli.escape import json_for_terminal, one_line, terminal_safe


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("\x1b[2J", "\\x1b[2J"),
        ("ok\rfake", "ok\\x0dfake"),
        ("bell\x07", "bell\\x07"),
        ("back\x08space", "back\\x08space"),
        ("del\x7f", "del\\x7f"),
        ("csi\x9b31m", "csi\\x9b31m"),
        ("nel\x85", "nel\\x85"),
        ("\u202eevil", "\\u202eevil"),
        ("\u2066isolate\u2069", "\\u2066isolate\\u2069"),
        ("zero\u200bwidth\u200d", "zero\\u200bwidth\\u200d"),
        ("bom\ufeff", "bom\\ufeff"),
        ("line\u2028para\u2029", "line\\u2028para\\u2029"),
        ("tag\U000e0041", "tag\\U000e0041"),
        ("filler\u3164", "filler\\u3164"),
    ],
)
def test_unsafe_characters_are_shown_as_escapes(raw: str, shown: str) -> None:
    assert terminal_safe(raw) == shown


def test_newline_tab_and_ordinary_unicode_pass_unchanged() -> None:
    text = "line one\n\tindented — café 日本語 🙂 \\x1b stays literal"
    assert terminal_safe(text) == text


def test_escaping_twice_changes_nothing() -> None:
    once = terminal_safe("\x1b]0;title\x07\u202e\r\u200b")
    assert terminal_safe(once) == once
    assert once.isascii() and once.isprintable()


def test_one_line_collapses_whitespace_and_escapes() -> None:
    assert one_line("  first\n\n  second\tthird\r ", 80) == "first second third\\x0d"


def test_one_line_cuts_at_the_limit_with_an_ellipsis() -> None:
    cut = one_line("abcdefghijklmnopqrstuvwxyz", 10)
    assert cut == "abcdefghi…"
    assert len(cut) == 10


def test_one_line_never_cuts_an_escape_in_half() -> None:
    cut = one_line("abcdefg\x1bhij", 10)
    assert cut == "abcdefg…"


def test_one_line_keeps_short_text_whole() -> None:
    assert one_line("short", 10) == "short"


def test_json_for_terminal_is_printable_and_decodes_to_the_same_value() -> None:
    value = {
        "cmd": "echo hi\x1b[2J\rAllow? y",
        "bidi\u202e": ["\u2066x\u2069", "\x9b", "zw\u200b", "tag\U000e0041"],
        "plain": "café",
    }
    text = json_for_terminal(value)
    assert all(char == "\n" or char.isprintable() for char in text)
    assert json.loads(text) == value
    assert "\\u202e" in text
    assert "\\udb40\\udc41" in text


def test_variation_selectors_that_can_hide_bytes_are_shown_but_emoji_stay() -> None:
    assert terminal_safe("a\ufe00b\U000e0100c") == "a\\ufe00b\\U000e0100c"
    assert terminal_safe("I \u2764\ufe0f it") == "I \u2764\ufe0f it"
