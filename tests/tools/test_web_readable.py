"""A fetched body as the model reads it (`tools.web.readable`): HTML as Markdown with what a
reader would not see left out, charsets as the header or the markup declares them, and
hostile markup (nested past any recursion limit) read as plain text."""

from __future__ import annotations

import time

from paicli.tools.web.readable import MAX_ELEMENTS, as_text


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


def test_a_page_of_more_elements_than_the_cap_is_read_as_plain_text_without_parsing() -> None:
    # 150,000 tags took Beautiful Soup and markdownify about 25 s, past any fetch deadline
    # (a thread cannot be stopped); the plain-text scan is linear.
    rows = b"<tr><td>a&amp;b</td><td>c</td></tr>" * 25_000
    page = (
        b"<html><head><title>Big &lt;one&gt;</title><style>p{}</style></head><body><table>"
        + rows
        + b"</table><script>steal()</script><p>tail</p></body></html>"
    )
    assert page.count(b"<") > MAX_ELEMENTS
    started = time.monotonic()
    text, title = as_text(page, "text/html", None)
    assert time.monotonic() - started < 10  # seconds; the cap holds it near 0.2 s
    assert title == "Big <one>"
    assert "|" not in text  # not converted: no Markdown table
    assert text.startswith("a&bc\n\na&bc")
    assert text.endswith("tail")
    assert "steal" not in text and "p{}" not in text


def test_the_plain_text_scan_of_unclosed_and_crafted_markup_stays_linear() -> None:
    # Unclosed <script>s, each of which a lazy pattern would scan to the end for.
    page = b"<p>x</p>" * MAX_ELEMENTS + b"<p>shown" + b"<script>" * 200_000 + b"hidden"
    text, title = as_text(page, "text/html", None)
    assert text.endswith("shown") and "hidden" not in text
    assert title is None
    titles = b"<title>" * 100_000 + b"<p>body</p>"
    assert as_text(titles, "text/html", None) == ("body", None)
