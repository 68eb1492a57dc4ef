"""`WebToolbox`: web_fetch (a URL as Markdown or text) and, when a provider is configured,
web_search (its hits: title, URL, snippet). Both are of kind "web": every call is asked
about unless a rule covers it (`web_fetch(domain:docs.python.org)`, `web_search`), and
they run in plan mode (they only read).

A URL is checked before anyone is asked (`address.check_url`: scheme, user info, an address
written in it); the fetch checks again at every hop and every resolution (`fetch`). The text
the model gets is marked as the web's (`ToolOutcome.origin`: fenced as untrusted data) and,
like every result, redacted by the guard around the toolbox. Conversion runs in a thread.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING

from paicli.llm.schema import validate_arguments
from paicli.tools.base import ToolOutcome, ToolSpec
from paicli.tools.web.address import AddressPolicy, UrlRefused, check_url
from paicli.tools.web.settings import WebSettings

if TYPE_CHECKING:
    from paicli.tools.web.fetch import Fetched

__all__ = ["WEB_FETCH", "WEB_SEARCH", "WebToolbox"]

WEB_FETCH = "web_fetch"
WEB_SEARCH = "web_search"
MAX_CHARS = 100_000  # what one call shows of a page (about 25k tokens); `offset` reads on
DEFAULT_HITS = 8
MAX_HITS = 20

FETCH_SPEC = ToolSpec(
    name=WEB_FETCH,
    description=(
        "Fetch a web page (http or https) and read it as Markdown (HTML) or as text (plain "
        "text, JSON). Public addresses only. Long pages come in parts: the output says the "
        "offset to read on from. A redirect to another host is not followed: the output "
        "gives the new URL to fetch. Each fetch may need the user's approval."
    ),
    parameters={
        "type": "object",
        "properties": {
            "url": {"type": "string", "minLength": 1, "description": "The http(s) URL."},
            "offset": {
                "type": "integer",
                "minimum": 0,
                "description": "Character offset in the page's text to start from (default 0).",
            },
        },
        "required": ["url"],
        "additionalProperties": False,
    },
    kind="web",
)


SEARCH_SPEC = ToolSpec(
    name=WEB_SEARCH,
    description=(
        "Search the web. Returns the top results, each with its title, URL and a snippet; "
        "read a result with web_fetch. Each search may need the user's approval."
    ),
    parameters={
        "type": "object",
        "properties": {
            "query": {"type": "string", "minLength": 1, "maxLength": 400},
            "count": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_HITS,
                "description": f"How many results (default 8, at most {MAX_HITS}).",
            },
        },
        "required": ["query"],
        "additionalProperties": False,
    },
    kind="web",
)


class WebToolbox:
    """web_fetch always; web_search when `settings.search` names a provider."""

    def __init__(self, settings: WebSettings) -> None:
        self.settings = settings
        self.policy = AddressPolicy(settings.private)
        self._specs = {FETCH_SPEC.name: FETCH_SPEC}
        if settings.search is not None:
            self._specs[SEARCH_SPEC.name] = SEARCH_SPEC

    def specs(self) -> list[ToolSpec]:
        return list(self._specs.values())

    def precheck(self, spec: ToolSpec, arguments: Mapping[str, object]) -> ToolOutcome | None:
        own = self._specs.get(spec.name)
        if own is None:
            return ToolOutcome.refused(f"unknown web tool {spec.name!r}")
        arguments = {key: value for key, value in arguments.items() if value is not None}
        problem = validate_arguments(own.parameters, arguments)
        if problem:
            return ToolOutcome.refused(problem)
        if spec.name == WEB_SEARCH:
            return None
        try:
            check_url(arguments["url"], self.policy)
        except UrlRefused as exc:
            return ToolOutcome.refused(f"web_fetch refused: {exc}", "refusal")
        return None

    def must_ask(self, spec: ToolSpec, arguments: Mapping[str, object]) -> str | None:
        return None

    async def call(self, spec: ToolSpec, arguments: Mapping[str, object]) -> ToolOutcome:
        early = self.precheck(spec, arguments)
        if early is not None:
            return early
        if spec.name == WEB_SEARCH:
            return await self._search(arguments)
        from paicli.tools.web.fetch import FetchFailed, fetch  # noqa: PLC0415 - aiohttp

        url = check_url(arguments["url"], self.policy)
        offset = arguments.get("offset")
        start = offset if isinstance(offset, int) else 0
        settings = self.settings
        try:
            page = await fetch(
                url,
                self.policy,
                max_bytes=settings.max_bytes,
                timeout=settings.timeout,
                max_redirects=settings.max_redirects,
            )
        except FetchFailed as exc:
            return ToolOutcome(f"web_fetch failed: {exc}", is_error=True)
        if page.elsewhere is not None:
            return ToolOutcome(
                f"{page.url} redirects to another host: {page.elsewhere}\nIt was not "
                "followed; call web_fetch with that URL to read it.",
                origin=page.url,
            )
        from paicli.tools.web.readable import as_text  # noqa: PLC0415 - bs4, markdownify

        text, title = await asyncio.to_thread(as_text, page.body, page.content_type, page.charset)
        return _shown(
            page, asked=url.url, text=text, title=title, start=start, max_bytes=settings.max_bytes
        )

    async def _search(self, arguments: Mapping[str, object]) -> ToolOutcome:
        from paicli.tools.web.search import SearchFailed, search  # noqa: PLC0415 - aiohttp

        settings = self.settings
        assert settings.search is not None  # offered only then
        query = str(arguments["query"])
        count = arguments.get("count")
        wanted = count if isinstance(count, int) else DEFAULT_HITS
        try:
            hits = await search(settings.search, query, wanted, settings.environ, settings.timeout)
        except SearchFailed as exc:
            return ToolOutcome(f"web_search failed: {exc}", is_error=True)
        lines = [f"Results for {query!r} ({settings.search.provider}):"]
        for number, hit in enumerate(hits, 1):
            lines += [f"{number}. {hit.title or '(no title)'}", f"   {hit.url}"]
            if hit.snippet:
                lines.append(f"   {hit.snippet}")
        if not hits:
            lines.append("No results.")
        return ToolOutcome("\n".join(lines), origin=f"web search: {query}")


def _shown(
    page: Fetched, *, asked: str, text: str, title: str | None, start: int, max_bytes: int
) -> ToolOutcome:
    """The page as the model reads it: a header, the part from `start`, and notes on what
    is left (a later part, or bytes never read)."""
    head = [f"URL: {page.url}"]
    if page.url != asked:
        head.append(f"(redirected from {asked})")
    head.append(f"Content-Type: {page.content_type}")
    if title:
        head.append(f"Title: {title}")
    part = text[start : start + MAX_CHARS]
    notes = []
    if start + MAX_CHARS < len(text):
        notes.append(
            f"[Showing characters {start}-{start + len(part)} of {len(text)}; call web_fetch "
            f"with offset={start + len(part)} to read on.]"
        )
    if page.cut:
        notes.append(f"[The page is longer than {max_bytes} bytes; only those were read.]")
    if start and not part:
        notes.append(
            f"[offset {start} is past the end: the page's text has {len(text)} characters]"
        )
    body = "\n".join(head) + "\n\n" + part + ("\n\n" + "\n".join(notes) if notes else "")
    return ToolOutcome(body, truncated=bool(notes), origin=page.url)
