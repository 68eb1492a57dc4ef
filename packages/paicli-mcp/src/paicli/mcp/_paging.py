"""Reading a paginated list (`tools/list`, `resources/list`, ...) to its end, within bounds.

Pagination guards against a server that hands out a fresh cursor with every page (the list
would never end and memory would grow), or repeats one: at most MAX_PAGES pages and
MAX_ITEMS items, with a warning naming the server and the method when a bound cuts the list
short. A malformed item is left out (one broken tool must not cost the server all of its
tools), with a warning for the first few of a list and one line counting the rest.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar

from ._transport import JsonObject
from .errors import ProtocolError

__all__ = ["PageRequest", "paginate"]

log = logging.getLogger("paicli.mcp.session")

T = TypeVar("T")
#: Sends one page's request: (method, params, timeout) -> its result.
PageRequest = Callable[[str, JsonObject | None, float | None], Awaitable[JsonObject]]

# Page sizes are the server's choice, commonly 50 to 100, so 100 pages hold any list a real
# server pages through; 10,000 items is far more tools, resources or prompts than anyone can
# use (a model is offered a few hundred tools at most) while keeping a list at a few tens of
# MB of parsed JSON.
MAX_PAGES = 100
MAX_ITEMS = 10_000
# A list with malformed items by the thousand gets this many warning lines naming them and
# one counting the rest.
MAX_ITEM_WARNINGS = 5


async def paginate(
    request: PageRequest,
    label: str,
    method: str,
    key: str,
    build: Callable[[Any], T],
    *,
    timeout: float | None,
) -> list[T]:
    """Every well-formed item of the list `method` returns under `key`, built by `build`."""
    pages = _Pages(label, method, build)
    try:
        return await pages.read(request, key, timeout)
    finally:
        if (more := pages.malformed - MAX_ITEM_WARNINGS) > 0:
            log.warning("%s: %s: left out %d more malformed items", label, method, more)


class _Pages(Generic[T]):
    """One list being read, and how many of its items were malformed."""

    def __init__(self, label: str, method: str, build: Callable[[Any], T]) -> None:
        self.label = label
        self.method = method
        self.build = build
        self.malformed = 0

    async def read(self, request: PageRequest, key: str, timeout: float | None) -> list[T]:
        label, method = self.label, self.method
        items: list[T] = []
        seen: set[str] = set()
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            params: JsonObject = {} if cursor is None else {"cursor": cursor}
            result = await request(method, params or None, timeout)
            page = result.get(key, [])
            if not isinstance(page, list):
                raise ProtocolError(f"{label}: {method}: {key!r} is not a list")
            room = MAX_ITEMS - len(items)
            items.extend(self.readable(page[:room]))
            next_cursor = result.get("nextCursor")
            if len(page) > room or (isinstance(next_cursor, str) and len(items) >= MAX_ITEMS):
                log.warning(
                    "%s: %s: stopped at %d items; the server offers more, which are left out",
                    label,
                    method,
                    MAX_ITEMS,
                )
                return items
            if not isinstance(next_cursor, str):
                return items
            if next_cursor in seen:
                log.warning(
                    "%s: %s: the server repeated cursor %.100r; stopping with %d items",
                    label,
                    method,
                    next_cursor,
                    len(items),
                )
                return items
            seen.add(next_cursor)
            cursor = next_cursor
        log.warning(
            "%s: %s: stopped after %d pages (%d items); the server keeps sending a next "
            "cursor, so the rest is left out",
            label,
            method,
            MAX_PAGES,
            len(items),
        )
        return items

    def readable(self, page: list[Any]) -> list[T]:
        """The items of a page that are well formed; each other one is counted, with a
        warning for the first few of the list."""
        items: list[T] = []
        for item in page:
            try:
                items.append(self.build(item))
            except ProtocolError as exc:
                self.malformed += 1
                if self.malformed <= MAX_ITEM_WARNINGS:
                    log.warning("%s: %s: leaving out an item: %s", self.label, self.method, exc)
        return items
