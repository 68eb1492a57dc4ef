"""A fetched body as text the model reads: HTML as Markdown (markdownify over Beautiful
Soup's stdlib parser, both imported at the first page), text and JSON as they are.

What a reader would not see goes first: scripts, styles, templates, forms, frames, SVG and
the page's navigation; the page's `<main>` (or its one `<article>`) is kept when it has one.
Hostile pages are expected: markup nested thousands deep falls back to the page's plain text,
and the whole conversion runs in a thread (the caller's), never on the event loop.
"""

from __future__ import annotations

import re
import warnings

__all__ = ["as_text"]

_DROPPED = (
    "script",
    "style",
    "noscript",
    "template",
    "svg",
    "iframe",
    "object",
    "embed",
    "form",
    "nav",
    "head",
)
_BLANK_LINES = re.compile(r"\n{3,}")


def as_text(body: bytes, content_type: str, charset: str | None) -> tuple[str, str | None]:
    """The body as text, and the page's title (HTML only)."""
    kind = content_type.lower()
    if kind in ("text/html", "application/xhtml+xml"):
        return _markdown(body, charset)
    return body.decode(_codec(charset), errors="replace"), None


def _codec(charset: str | None) -> str:
    import codecs  # noqa: PLC0415 - only to check a server's charset

    try:
        return codecs.lookup(charset or "utf-8").name
    except LookupError:
        return "utf-8"


def _decoded(body: bytes, charset: str | None) -> str:
    """The page's text: in the charset its header names, else the one its markup declares,
    else UTF-8, else Windows-1252 as browsers do; never a guess from the bytes' statistics
    (which reads a short page as anything at all)."""
    from bs4.dammit import EncodingDetector, UnicodeDammit  # noqa: PLC0415

    declared = EncodingDetector.find_declared_encoding(body[:4096], is_html=True)
    known = [_codec(name) for name in (charset, declared) if name]
    dammit = UnicodeDammit(
        body,
        known_definite_encodings=known,
        user_encodings=["utf-8", "windows-1252", "latin-1"],
        is_html=True,
    )
    return dammit.unicode_markup or body.decode("utf-8", errors="replace")


def _markdown(body: bytes, charset: str | None) -> tuple[str, str | None]:
    from bs4 import BeautifulSoup  # noqa: PLC0415 - a page's first conversion pays for it
    from markdownify import MarkdownConverter  # noqa: PLC0415

    with warnings.catch_warnings():
        # Beautiful Soup warns about what a page looks like (XML, a file name); a warning
        # would go to stderr, past the one escaping output path.
        warnings.simplefilter("ignore")
        soup = BeautifulSoup(_decoded(body, charset), "html.parser")
    title_tag = soup.find("title")
    title = " ".join(title_tag.get_text().split()) if title_tag is not None else None
    for tag in soup.find_all(_DROPPED):
        tag.decompose()
    main = soup.find("main")
    if main is None and len(articles := soup.find_all("article")) == 1:
        main = articles[0]
    root = main if main is not None else (soup.body or soup)
    try:
        text = MarkdownConverter(heading_style="ATX", bullets="-").convert_soup(root)
    except RecursionError:
        text = root.get_text("\n")
    return _BLANK_LINES.sub("\n\n", text).strip(), title or None
