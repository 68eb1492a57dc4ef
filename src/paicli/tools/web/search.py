"""web_search's providers: one query to the search endpoint the user configured
(`[web.search]`), its JSON answer read as a list of hits. aiohttp is imported at the first
search.

Each provider is one record: how its request is made (URL parameters, headers with the key)
and where the hits are in its answer. Adding one is adding a record here and its name to
`settings.PROVIDERS`. The endpoint is the user's own choice, so the address rule of
web_fetch does not apply to it (a SearxNG instance on the user's own machine is common);
its answer is read as hostile all the same: bounded, within the deadline, every field
checked.
"""

from __future__ import annotations

import asyncio
import html
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from paicli._version import __version__
from paicli.tools.errors import ToolError
from paicli.tools.web.settings import SearchSettings

__all__ = ["Hit", "SearchFailed", "search"]

MAX_ANSWER_BYTES = 2_000_000
_TAG = re.compile(r"<[^>]{0,200}>")
Json = Mapping[str, object]


class SearchFailed(ToolError):
    """The search brought no answer; the message says why in one line."""


@dataclass(frozen=True)
class Hit:
    title: str
    url: str
    snippet: str


@dataclass(frozen=True)
class Provider:
    """How to ask one kind of search endpoint, and where its answer keeps the hits."""

    params: Callable[[str, int], dict[str, str]]
    key_header: str | None  # the header the key goes in (None: the provider takes none)
    hits: Callable[[Json], object]  # the list of results in the answer
    snippet: str  # the result's field with its text


PROVIDERS: dict[str, Provider] = {
    # https://api-dashboard.search.brave.com/app/documentation/web-search/get-started
    "brave": Provider(
        params=lambda query, count: {"q": query, "count": str(count)},
        key_header="X-Subscription-Token",
        hits=lambda answer: _field(answer.get("web"), "results"),
        snippet="description",
    ),
    # https://docs.searxng.org/dev/search_api.html (the instance must enable `json`)
    "searxng": Provider(
        params=lambda query, count: {"q": query, "format": "json"},
        key_header=None,
        hits=lambda answer: answer.get("results"),
        snippet="content",
    ),
}


async def search(
    settings: SearchSettings, query: str, count: int, environ: Mapping[str, str], timeout: float
) -> list[Hit]:
    """The first `count` hits for `query`; `SearchFailed` otherwise."""
    import aiohttp  # noqa: PLC0415 - at the first search

    from paicli.tools.web.fetch import read_capped  # noqa: PLC0415 - aiohttp

    provider = PROVIDERS[settings.provider]
    headers = {"Accept": "application/json", "User-Agent": f"paicli/{__version__} (web_search)"}
    if provider.key_header is not None and settings.api_key_env:
        headers[provider.key_header] = environ.get(settings.api_key_env, "")
    try:
        async with (
            asyncio.timeout(timeout),
            aiohttp.ClientSession(headers=headers, trust_env=False) as http,
            http.get(settings.url, params=provider.params(query, count)) as response,
        ):
            if response.status >= 400:
                reason = response.reason or ""
                status = f"HTTP {response.status} {reason}".rstrip()
                raise SearchFailed(f"the {settings.provider} endpoint answered {status}")
            body, cut = await read_capped(response.content, MAX_ANSWER_BYTES)
    except TimeoutError:
        raise SearchFailed(
            f"no answer from the {settings.provider} endpoint within {timeout:g} s"
        ) from None
    except aiohttp.ClientError as exc:
        raise SearchFailed(f"cannot reach the {settings.provider} endpoint: {exc}") from None
    if cut:
        raise SearchFailed(f"the {settings.provider} answer is over {MAX_ANSWER_BYTES} bytes")
    try:
        answer = json.loads(body)
    except (ValueError, RecursionError):
        raise SearchFailed(f"the {settings.provider} endpoint did not answer JSON") from None
    if not isinstance(answer, dict):
        raise SearchFailed(f"the {settings.provider} answer is not a JSON object")
    return _hits(provider, answer)[:count]


def _hits(provider: Provider, answer: Json) -> list[Hit]:
    found = provider.hits(answer)
    if not isinstance(found, list):
        return []
    hits = []
    for entry in found:
        if not isinstance(entry, dict):
            continue
        url, title = entry.get("url"), entry.get("title")
        if not isinstance(url, str) or not url.startswith(("https://", "http://")):
            continue
        snippet = entry.get(provider.snippet)
        hits.append(Hit(_plain(title), url, _plain(snippet)))
    return hits


def _plain(value: object) -> str:
    """A title or snippet as one line of plain text (providers mark matches with tags)."""
    if not isinstance(value, str):
        return ""
    return " ".join(html.unescape(_TAG.sub("", value)).split())[:500]


def _field(value: object, key: str) -> object:
    return value.get(key) if isinstance(value, dict) else None
