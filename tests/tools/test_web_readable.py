"""A fetched body as the model reads it (`tools.web.readable`): HTML as Markdown with what a
reader would not see left out, charsets as the header or the markup declares them, and
hostile markup (nested past any recursion limit) read as plain text."""

from __future__ import annotations

from paicli.tools.web.readable import as_text


def test_the_main_part_of_a_page_is_kept_and_scripts_and_navigation_dropped() -> None:
    page = (
        b"<html><head><title> A \n title </title><script>steal()</script></head><body>"
        b"<nav><a href='/'>Home</a></nav><article><h2>Sub</h2><pre>code\n  indented</pre>"
        b"<form><input name=q></form></article><footer>f</footer></body></html>"
    )
    text, title = as_text(page, "text/html", "utf-8")
    assert title == "A title"
    assert text == "## Sub\n\n```\ncode\n  indented\n```"


def test_charsets_come_from_the_header_then_the_markup_never_a_guess() -> None:
    shift_jis = '<meta charset="shift_jis"><p>日本</p>'.encode("shift_jis")
    assert as_text(shift_jis, "text/html", None)[0] == "日本"
    latin = "<p>café</p>".encode("latin-1")
    assert as_text(latin, "text/html", None)[0] == "café"
    assert as_text(latin, "text/html", "no-such-charset")[0] == "café"
    assert as_text("naïve".encode("utf-16"), "text/plain", "utf-16")[0] == "naïve"
    assert as_text(b'{"a": 1}', "application/json", None) == ('{"a": 1}', None)


def test_markup_nested_past_the_recursion_limit_is_read_as_plain_text() -> None:
    depth = 5000
    page = b"<div>" * depth + b"deep text" + b"</div>" * depth
    assert as_text(page, "text/html", None)[0] == "deep text"
