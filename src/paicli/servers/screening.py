"""Screening: which of the tools a server lists are offered, and why the others are not.

A listing is screened (`screen`: unreadable definitions, schemas too large or too deep, a
name listed again), recorded in the catalogue as screened (so one tool the catalogue file
could not hold never costs the others their entry), then filtered by the config's
include/exclude patterns. Each tool newly left out is one warning naming the server, the tool
and why; the same reason is never warned about twice for a server.
"""

from __future__ import annotations

import fnmatch
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING

import orjson

from paicli.mcp import HttpServer
from paicli.servers.catalogue import Catalogue, catalogue_key
from paicli.servers.server_view import ServerEntryLike

if TYPE_CHECKING:
    from paicli.mcp import Tool

__all__ = ["ToolScreen", "screen", "wanted"]

log = logging.getLogger("paicli.servers")

# A tool whose input and output schemas together are over this much JSON, or nest deeper,
# is left out (`screen`): no model needs it, and one such tool can fill a request. The
# largest schemas of real servers are a few tens of KiB and about ten levels deep.
MAX_SCHEMA_BYTES = 256 * 1024
MAX_SCHEMA_DEPTH = 48
# A server whose listing leaves out many tools at once (a hostile one: thousands) gets this
# many warning lines, and one more for the rest; `paicli mcp tools NAME` lists them all.
MAX_LEFT_OUT_WARNINGS = 5
# A tool name in a warning line is cut to this many characters (a name can be megabytes).
SHOWN_NAME_CHARS = 80


class ToolScreen:
    """Screens each server's listings, and keeps the catalogue (`catalogue.py`) of what
    passed: recorded at every listing, read back for a server that has not listed yet."""

    def __init__(self, catalogue: Catalogue | None) -> None:
        self._catalogue = catalogue

    def listing(
        self,
        entry: ServerEntryLike,
        offered: list[Tool],
        before: Mapping[str, str],
        hints: tuple[int | None, str | None] = (None, None),
        instructions: str | None = None,
    ) -> tuple[list[Tool], dict[str, str]]:
        """The tools of `offered` to offer, and those left out with why (the config's
        filters aside); `before` is what was left out at the last listing (not warned
        about again). The first `MAX_LEFT_OUT_WARNINGS` new ones are a warning each, then
        one line for the rest. `hints`: what the list said about caching it (`ttlMs`,
        `cacheScope`), which decides whether the catalogue may keep it (with the server's
        `instructions`)."""
        fit, unfit = screen(offered)
        self._save(entry, fit, hints, instructions)
        kept = _filtered(fit, entry)
        left_out = {name: why for name, why in unfit.items() if wanted(name, entry)}
        news = [(name, why) for name, why in left_out.items() if before.get(name) != why]
        for name, why in news[:MAX_LEFT_OUT_WARNINGS]:
            log.warning("%s: tool %s is left out: %s", entry.name, _shown_name(name), why)
        if (more := len(news) - MAX_LEFT_OUT_WARNINGS) > 0:
            log.warning(
                "%s: %d more tools are left out (paicli mcp tools %s)",
                entry.name,
                more,
                entry.name,
            )
        return kept, left_out

    def cached(self, entry: ServerEntryLike) -> list[Tool] | None:
        """What `entry` offered at its last start, screened and filtered as now (None: the
        catalogue has no entry for its config)."""
        key = catalogue_key(entry)
        if self._catalogue is None or key is None:
            return None
        cached = self._catalogue.load(key)
        return None if cached is None else screen(_filtered(cached, entry))[0]

    def cached_instructions(self, entry: ServerEntryLike) -> str | None:
        """The `instructions` `entry` gave at its last start (None: none, or no entry)."""
        key = catalogue_key(entry)
        if self._catalogue is None or key is None:
            return None
        return self._catalogue.instructions(key)

    def _save(
        self,
        entry: ServerEntryLike,
        tools: list[Tool],
        hints: tuple[int | None, str | None],
        instructions: str | None,
    ) -> None:
        key = catalogue_key(entry)
        if self._catalogue is None or key is None:
            return
        _, scope = hints
        spec = entry.spec
        if scope == "private" and isinstance(spec, HttpServer) and spec.auth is not None:
            # Per authorization (SEP-2549), and a login may be someone else's next time.
            self._catalogue.forget(key)
        else:
            self._catalogue.save(key, entry.name, tools, instructions)


def screen(tools: list[Tool]) -> tuple[list[Tool], dict[str, str]]:
    """The tools fit to offer, and why each other one is left out: a definition that could
    not be read, schemas over `MAX_SCHEMA_BYTES` of JSON or nested over `MAX_SCHEMA_DEPTH`
    levels, a name listed again (the first definition is kept)."""
    kept: list[Tool] = []
    left_out: dict[str, str] = {}
    seen: set[str] = set()
    for tool in tools:
        if tool.name in seen:
            left_out.setdefault(tool.name, "listed more than once; the first definition is used")
            continue
        seen.add(tool.name)
        problem = tool.unreadable or _schema_problem(tool)
        if problem is None:
            kept.append(tool)
        else:
            left_out[tool.name] = problem
    return kept, left_out


def wanted(name: str, entry: ServerEntryLike) -> bool:
    """Whether `entry`'s include/exclude patterns let the tool `name` through."""
    include, exclude = entry.include_tools, entry.exclude_tools
    return (include is None or any(fnmatch.fnmatchcase(name, p) for p in include)) and not (
        exclude and any(fnmatch.fnmatchcase(name, p) for p in exclude)
    )


def _filtered(tools: list[Tool], entry: ServerEntryLike) -> list[Tool]:
    """The tools `entry`'s include/exclude patterns let through."""
    return [t for t in tools if wanted(t.name, entry)]


def _shown_name(name: str) -> str:
    """A tool's name for a log line: quoted with escapes (`repr`), cut if very long."""
    if len(name) <= SHOWN_NAME_CHARS:
        return repr(name)
    return repr(name[:SHOWN_NAME_CHARS]) + f"… ({len(name):,} characters)"


def _schema_problem(tool: Tool) -> str | None:
    schemas = [s for s in (tool.input_schema, tool.output_schema) if s is not None]
    if any(_deeper_than(s, MAX_SCHEMA_DEPTH) for s in schemas):
        return f"its schemas nest more than {MAX_SCHEMA_DEPTH} levels deep"
    try:
        size = sum(len(orjson.dumps(s)) for s in schemas)
    except orjson.JSONEncodeError as exc:  # only a tool built in Python can hold a non-JSON value
        return f"its schemas are not JSON ({exc})"
    if size > MAX_SCHEMA_BYTES:
        limit = MAX_SCHEMA_BYTES // 1024
        return f"its schemas are {size // 1024:,} KiB of JSON (the limit is {limit} KiB)"
    return None


def _deeper_than(value: object, limit: int) -> bool:
    """Whether `value` nests more than `limit` levels of objects and arrays (no recursion:
    a hostile schema may be thousands of levels deep)."""
    level: list[object] = [value]
    for _ in range(limit + 1):
        level = [
            child
            for item in level
            for child in (
                item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
            )
        ]
        if not level:
            return False
    return True
