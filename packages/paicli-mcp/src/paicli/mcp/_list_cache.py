"""List results a server marked cacheable (SEP-2549: `ttlMs`, `cacheScope`), per session.

A page of `tools/list`, `prompts/list`, `resources/list` or `resources/templates/list` whose
result says `ttlMs` > 0 is kept under its method and cursor, and served again, without a
request, while `now < received + ttlMs` (a missing, zero or negative `ttlMs` keeps
nothing). The matching `notifications/.../list_changed` drops the method's pages at once,
and a page found stale drops the pages after it (their cursors may no longer hold). One
session is one authorization context, so `private` and `public` entries alike live only in
it; the last hints of each method are kept for the session's owner (`ClientSession.
cache_hints`), who decides what may outlive it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from ._transport import JsonObject

__all__ = ["CacheHints", "ListCache"]

CACHED = frozenset({"tools/list", "prompts/list", "resources/list", "resources/templates/list"})
# What each list-changed notification makes stale.
CHANGED = {
    "notifications/tools/list_changed": ("tools/list",),
    "notifications/prompts/list_changed": ("prompts/list",),
    "notifications/resources/list_changed": ("resources/list", "resources/templates/list"),
}


class CacheHints(NamedTuple):
    """What a list result said about caching it: `ttl_ms` (None: nothing said) and
    `scope` ("public" or "private"; None: nothing said)."""

    ttl_ms: int | None
    scope: str | None


def hints_of(result: JsonObject) -> CacheHints:
    ttl = result.get("ttlMs")
    scope = result.get("cacheScope")
    return CacheHints(
        max(ttl, 0) if isinstance(ttl, int) and not isinstance(ttl, bool) else None,
        scope if scope in ("public", "private") else None,
    )


class ListCache:
    """Fresh list pages by (method, cursor); `clock` is the session's (the loop's time)."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._pages: dict[tuple[str, str | None], tuple[float, JsonObject]] = {}
        self.hints: dict[str, CacheHints] = {}

    def get(self, method: str, params: JsonObject | None) -> JsonObject | None:
        """The fresh page for this request, or None (a stale one is dropped with the
        pages after it)."""
        key = (method, _cursor(params))
        entry = self._pages.get(key)
        if entry is None:
            return None
        if self._clock() < entry[0]:
            return entry[1]
        if key[1] is None:
            self.forget(method)
        else:
            del self._pages[key]
        return None

    def put(self, method: str, params: JsonObject | None, result: JsonObject) -> None:
        if method not in CACHED:
            return
        hints = hints_of(result)
        cursor = _cursor(params)
        if cursor is None:
            self.hints[method] = hints
        if hints.ttl_ms:
            self._pages[(method, cursor)] = (self._clock() + hints.ttl_ms / 1000, result)

    def forget(self, method: str) -> None:
        for key in [k for k in self._pages if k[0] == method]:
            del self._pages[key]

    def heard(self, method: str) -> None:
        """A notification: a list-changed one makes its lists stale at once."""
        for stale in CHANGED.get(method, ()):
            self.forget(stale)


def _cursor(params: JsonObject | None) -> str | None:
    cursor = params.get("cursor") if params else None
    return cursor if isinstance(cursor, str) else None
