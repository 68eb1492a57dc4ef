"""Which tool definitions a model request carries: all of them, or, when they would not fit,
the built-ins, the tools used lately and a `search_tools` tool that finds the rest.

Sixty MCP tools are about 8k tokens of definitions on every request: a small model's window
fills before the conversation starts. When the definitions offered would pass the budget
(10% of the model's context window, or `max_tools` in config.toml), the MCP tools are
*deferred*: the model sees the built-in tools, the MCP tools it called in recent turns, and
`search_tools`. A search returns the best matches with their full definitions (ranked locally
by `paicli.tools.search.index`), and those are offered for the rest of the turn. A deferred tool
called by its name still works (it goes through approval and audit like any other call).

Deferred, the MCP tools still offered stay within the same budget: the ones found last come
first, then the ones called last, and what does not fit waits for a search (a turn of many
searches, or one tool of 200 KiB of schema, never fills the request). A search's answer keeps
to the budget too, and names the matches it leaves out. With `max_tools`, everything is still
deferred when the definitions would take half the context window.

`ToolOffer` is the state the agent consults before each request; `SearchToolbox` is the
`search_tools` tool itself, composed with the other toolboxes so that its calls are audited.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from paicli.llm.settings import DEFAULT_CONTEXT_WINDOW
from paicli.tools.base import ToolOutcome, ToolSpec
from paicli.tools.search.index import ToolIndex

__all__ = ["SEARCH_TOOL", "Deferral", "Found", "SearchToolbox", "ToolOffer"]

SEARCH_TOOL = "search_tools"
# The share of the context window that tool definitions may take before they are deferred;
# deferred, the MCP tools still offered (found, called lately) keep to it as well.
BUDGET_SHARE = 0.10
# `max_tools` moves the point where tools are deferred, but never past this share: tool
# definitions that fill half the window leave too little for the conversation.
MAX_SHARE = 0.5
CHARS_PER_TOKEN = 4
# Tools called lately stay offered across turns.
KEEP_RECENT = 8
MAX_RESULTS = 10
DEFAULT_RESULTS = 5
_QUERY_LIMIT = 500

_SEARCH_SPEC = ToolSpec(
    name=SEARCH_TOOL,
    description=(
        "Find tools of the connected MCP servers by what they do. Many tools are not listed "
        "to save context; search with a few words describing the task (e.g. 'create pull "
        "request', 'send slack message'), optionally for one server. The matching tools "
        "become callable for the rest of this turn, with the definitions returned here."
    ),
    parameters={
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "What the tool should do, in words."},
            "server": {"type": "string", "description": "Only this MCP server's tools."},
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_RESULTS,
                "description": f"How many tools to return (default {DEFAULT_RESULTS}).",
            },
        },
        "required": ["query"],
        "additionalProperties": False,
    },
    kind="read",
)


def budget_tokens(context_window: int) -> int:
    """The tokens of tool definitions a request may carry before MCP tools are deferred."""
    return int(context_window * BUDGET_SHARE)


def definition_tokens(specs: Sequence[ToolSpec]) -> int:
    """About how many tokens the `tools=[...]` entries of `specs` cost on every request."""
    chars = sum(len(json.dumps(s.openai_tool(), ensure_ascii=False)) for s in specs)
    return chars // CHARS_PER_TOKEN


@dataclass(frozen=True)
class Found:
    """A search's answer: the matches offered from now on, best first, and those whose
    definitions would pass the budget, with about how many tokens each would take."""

    offered: list[ToolSpec]
    too_large: list[tuple[ToolSpec, int]]
    budget: int  # tokens


@dataclass(frozen=True)
class Deferral:
    """What the last request left out: how many of the MCP tools, and about how many tokens
    that saved."""

    deferred: int
    total: int  # MCP tools available
    saved_tokens: int


class ToolOffer:
    """The agent's choice of tool definitions per request (see the module docstring).

    `max_tools`: defer when more tools than this would be offered (instead of the token
    budget), or when their definitions would take `MAX_SHARE` of the window;
    `enabled=False` always offers everything.
    """

    def __init__(self, *, max_tools: int | None = None, enabled: bool = True) -> None:
        self.max_tools = max_tools
        self.enabled = enabled
        self._recent: OrderedDict[str, None] = OrderedDict()
        self._found: OrderedDict[str, None] = OrderedDict()  # this turn's, in the order found
        self._catalogue: list[ToolSpec] = []
        self._index: ToolIndex | None = None
        self._budget = budget_tokens(DEFAULT_CONTEXT_WINDOW)  # set by each `select`
        self.deferral: Deferral | None = None  # None: everything was offered

    def begin_turn(self) -> None:
        """A new user turn: tools found by the last turn's searches are no longer offered
        (unless they were called: then they are recent)."""
        self._found.clear()

    def select(self, specs: Sequence[ToolSpec], context_window: int) -> list[ToolSpec]:
        """The tools to offer in the next request, out of everything available (`specs`)."""
        tools = [s for s in specs if s.name != SEARCH_TOOL]
        search = [s for s in specs if s.name == SEARCH_TOOL]
        self._budget = budget_tokens(context_window)
        if not self.enabled or not search or self._fits(tools, context_window):
            self.deferral = None
            self._catalogue = []
            return tools
        mcp = [s for s in tools if s.kind == "mcp"]
        if mcp != self._catalogue:  # servers came, went or changed their tools
            self._catalogue, self._index = mcp, None
        keep = self._kept(mcp)
        offered = [s for s in tools if s.kind != "mcp" or s.name in keep]
        left_out = [s for s in mcp if s.name not in keep]
        self.deferral = Deferral(
            deferred=len(left_out),
            total=len(mcp),
            saved_tokens=max(0, definition_tokens(left_out) - definition_tokens(search)),
        )
        return [*offered, *search]

    def used(self, name: str) -> None:
        """The model called `name`: keep offering it in the next turns."""
        self._recent[name] = None
        self._recent.move_to_end(name)
        while len(self._recent) > KEEP_RECENT:
            self._recent.popitem(last=False)

    def search(self, query: str, server: str | None, limit: int) -> Found:
        """The best deferred tools for `query`, as many as the budget takes; those are
        offered for the rest of the turn (the newest search's first, see `_kept`)."""
        if self._index is None:
            self._index = ToolIndex(self._catalogue)
        offered: list[ToolSpec] = []
        too_large: list[tuple[ToolSpec, int]] = []
        used = 0
        for spec in self._index.search(query, server=server, limit=limit):
            cost = definition_tokens([spec])
            if used + cost > self._budget:
                too_large.append((spec, cost))
                continue
            used += cost
            offered.append(spec)
            self._found[spec.name] = None
            self._found.move_to_end(spec.name)
        return Found(offered, too_large, self._budget)

    def _kept(self, mcp: Sequence[ToolSpec]) -> set[str]:
        """The deferred MCP tools still offered: found this turn (the last found first),
        then called lately (the last called first), as many as fit in the budget."""
        by_name = {s.name: s for s in mcp}
        order = [*reversed(self._found), *reversed(self._recent)]
        kept: set[str] = set()
        used = 0
        for name in order:
            spec = by_name.get(name)
            if spec is None or name in kept:
                continue
            cost = definition_tokens([spec])
            if used + cost <= self._budget:
                kept.add(name)
                used += cost
        return kept

    def _fits(self, tools: Sequence[ToolSpec], context_window: int) -> bool:
        if self.max_tools is None:
            return definition_tokens(tools) <= self._budget
        if len(tools) > self.max_tools:
            return False
        return definition_tokens(tools) <= int(context_window * MAX_SHARE)


class SearchToolbox:
    """The `search_tools` tool. It reads only paicli's own list of tools: never asks."""

    def __init__(self, offer: ToolOffer) -> None:
        self.offer = offer

    def specs(self) -> list[ToolSpec]:
        return [_SEARCH_SPEC] if self.offer.enabled else []

    def precheck(self, spec: ToolSpec, arguments: Mapping[str, object]) -> ToolOutcome | None:
        query = arguments.get("query")
        if not isinstance(query, str) or not query.strip():
            return ToolOutcome.refused(
                "Error: search_tools needs a 'query': words saying what the tool should do."
            )
        server = arguments.get("server")
        if server is not None and not isinstance(server, str):
            return ToolOutcome.refused("Error: 'server' must be a server's name.")
        limit = arguments.get("limit", DEFAULT_RESULTS)
        if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_RESULTS:
            return ToolOutcome.refused(
                f"Error: 'limit' must be a whole number from 1 to {MAX_RESULTS}."
            )
        return None

    def must_ask(self, spec: ToolSpec, arguments: Mapping[str, object]) -> str | None:
        return None

    async def call(self, spec: ToolSpec, arguments: Mapping[str, object]) -> ToolOutcome:
        refused = self.precheck(spec, arguments)
        if refused is not None:
            return refused
        query = str(arguments["query"])[:_QUERY_LIMIT]
        server = arguments.get("server")
        limit = arguments.get("limit", DEFAULT_RESULTS)
        assert isinstance(limit, int)
        found = self.offer.search(query, server if isinstance(server, str) else None, limit)
        if not found.offered and not found.too_large:
            where = f" of server {server!r}" if isinstance(server, str) else ""
            return ToolOutcome(f"No tool{where} matches {query!r}. Try other words.")
        parts: list[str] = []
        if found.offered:
            tools = [
                {"name": s.name, "description": s.description, "parameters": dict(s.parameters)}
                for s in found.offered
            ]
            count = len(found.offered)
            header = f"{count} tool(s) found; you can call them now, for the rest of this turn:"
            parts.append(header + "\n" + json.dumps(tools, ensure_ascii=False, indent=1))
        if found.too_large:
            parts.append(_too_large(found))
        return ToolOutcome("\n".join(parts))


def _too_large(found: Found) -> str:
    """The matches a search left out for the budget, one line each."""
    lines = [
        f"{len(found.too_large)} more match(es) left out: their definitions would pass the "
        f"budget for tool definitions (about {found.budget:,} tokens, "
        f"{BUDGET_SHARE:.0%} of the context window):"
    ]
    for spec, cost in found.too_large:
        alone = ", more than the whole budget: it cannot be offered" if cost > found.budget else ""
        lines.append(f"- {spec.name} (about {cost:,} tokens{alone})")
    if any(cost <= found.budget for _, cost in found.too_large):
        lines.append("To get one of those, search again for it alone (limit 1).")
    return "\n".join(lines)
