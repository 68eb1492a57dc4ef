"""A fetched body as text the model reads: HTML as Markdown (markdownify over Beautiful
Soup's stdlib parser, both imported at the first page), text and JSON as they are.

What a reader would not see goes first: scripts, styles, templates, forms, frames, SVG and
the page's navigation; the page's `<main>` (or its one `<article>`) is kept when it has one.
Hostile pages are expected: markup nested thousands deep falls back to the page's plain text,
and the whole conversion runs in a thread (the caller's), never on the event loop. Parsing
and converting cost time by the element (a 1.5 MB page of 150,000 table cells takes half a
minute), and a thread cannot be stopped at the fetch's deadline: a page of more than
`MAX_ELEMENTS` tags is read as plain text by a linear scan instead, in well under a second.
"""

from __future__ import annotations

import html
import re
import warnings

__all__ = ["MAX_ELEMENTS", "as_text"]

# More tags than a long article has (a long Wikipedia page has about 30,000): past this, the
# page's text without its markup.
MAX_ELEMENTS = 40_000

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
_OPENING = re.compile("<(" + "|".join(_DROPPED) + r")\b")
_BREAKING_TAG = re.compile(
    r"</?(?:p|div|br|li|tr|h[1-6]|section|article|table|ul|ol|pre|blockquote|dd|dt)\b[^>]*>"
)
_TAG = re.compile(r"<[^>]*>")
_SPACES = re.compile(r"[ \t\r\f\v]+")


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
    if body.count(b"<") > MAX_ELEMENTS:
        return _plain(_decoded(body, charset))
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


def _plain(page: str) -> tuple[str, str | None]:
    """A page's text and title without parsing it: linear in its length, whatever its
    markup (no pattern here can backtrack over the page)."""
    lower = page.lower()
    title = None
    if (start := lower.find("<title")) >= 0 and (end := lower.find("</title", start)) >= 0:
        title = " ".join(html.unescape(_TAG.sub("", page[page.find(">", start) + 1 : end])).split())
    kept: list[str] = []
    at = 0
    while (opening := _OPENING.search(lower, at)) is not None:
        kept.append(page[at : opening.start()])
        close = lower.find(f"</{opening.group(1)}", opening.end())
        if close < 0:
            at = len(page)  # never closed: the rest is inside it
            break
        at = lower.find(">", close)
        at = len(page) if at < 0 else at + 1
    kept.append(page[at:])
    text = _TAG.sub("", _BREAKING_TAG.sub("\n", "".join(kept)))
    lines = (_SPACES.sub(" ", line).strip() for line in html.unescape(text).split("\n"))
    return _BLANK_LINES.sub("\n\n", "\n".join(lines)).strip(), title or None
