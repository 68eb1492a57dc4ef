"""The tool budget (paicli.tools.search.offer): deferred, the MCP tools still offered and a search's
answer keep to 10% of the context window, whatever the servers define and however often the
model searches; `max_tools` never lets definitions fill half the window."""

from __future__ import annotations

import json

from paicli.tools.base import ToolSpec
from paicli.tools.search.offer import (
    BUDGET_SHARE,
    SearchToolbox,
    ToolOffer,
    budget_tokens,
    definition_tokens,
)

WINDOW = 32_768
BUDGET = budget_tokens(WINDOW)


def mcp(name: str, description: str, *, padding: int = 0) -> ToolSpec:
    """An MCP tool whose schema carries `padding` characters more than a small one."""
    properties: dict[str, object] = {"path": {"type": "string"}}
    if padding:
        properties["notes"] = {"type": "string", "description": "n" * padding}
    schema = {"type": "object", "properties": properties}
    return ToolSpec(f"mcp__s__{name}", description, schema, "mcp", server="s", tool=name)


def builtin(name: str) -> ToolSpec:
    return ToolSpec(name, f"The {name} tool.", {"type": "object"}, "read")


def catalogue(count: int, *, padding: int = 0) -> list[ToolSpec]:
    return [mcp(f"record_{i}", f"Fetch archive record {i}.", padding=padding) for i in range(count)]


def offered_mcp(offered: list[ToolSpec]) -> list[ToolSpec]:
    return [s for s in offered if s.kind == "mcp"]


def everything(offer: ToolOffer, mcp_specs: list[ToolSpec]) -> list[ToolSpec]:
    search = SearchToolbox(offer).specs()
    return [builtin("read_file"), *mcp_specs, *search]


def test_a_crowd_of_tools_is_deferred_down_to_the_built_ins_and_search() -> None:
    offer = ToolOffer()
    specs = everything(offer, catalogue(20_000))
    offered = offer.select(specs, WINDOW)
    assert [s.name for s in offered] == ["read_file", "search_tools"]
    assert offer.deferral is not None and offer.deferral.deferred == 20_000
    assert len(json.dumps([s.openai_tool() for s in offered])) < 2_000


def test_many_searches_in_one_turn_keep_the_found_tools_within_the_budget() -> None:
    """Every search finds ten tools of about 700 tokens: what the next request carries stays
    within the budget, the last search's finds first."""
    offer = ToolOffer()
    specs = everything(offer, catalogue(400, padding=2_700))
    offer.select(specs, WINDOW)
    last: list[str] = []
    for i in range(40):
        found = offer.search(f"record {i * 10}", None, 10)
        last = [s.name for s in found.offered]
        assert definition_tokens(found.offered) <= BUDGET
    offered = offered_mcp(offer.select(specs, WINDOW))
    assert definition_tokens(offered) <= BUDGET
    assert last and set(last) <= {s.name for s in offered}


def test_a_search_answer_keeps_to_the_budget_and_names_the_matches_it_leaves_out() -> None:
    offer = ToolOffer()
    specs = everything(offer, catalogue(50, padding=4_000))  # about 1,000 tokens each
    offer.select(specs, WINDOW)
    found = offer.search("fetch archive record", None, 10)
    assert 0 < len(found.offered) < 10
    assert len(found.offered) + len(found.too_large) == 10
    assert definition_tokens(found.offered) <= BUDGET


async def test_a_tool_larger_than_the_whole_budget_is_named_and_never_offered() -> None:
    """One tool of 150 KiB of schema (under the per-tool cap, over 10% of a 32k window):
    the search says so instead of returning it, and no request carries it."""
    offer = ToolOffer()
    big = mcp("render_report", "Render the quarterly report.", padding=150 * 1024)
    specs = everything(offer, [*catalogue(300), big])
    offer.select(specs, WINDOW)
    toolbox = SearchToolbox(offer)
    (search,) = toolbox.specs()
    outcome = await toolbox.call(search, {"query": "render quarterly report", "limit": 1})
    assert not outcome.is_error
    assert "mcp__s__render_report (about 38,4" in outcome.text
    assert "more than the whole budget: it cannot be offered" in outcome.text
    assert f"{BUDGET_SHARE:.0%} of the context window" in outcome.text
    assert len(outcome.text) < 1_000
    offer.used(big.name)  # even called by its name, it is not offered afterwards
    assert big.name not in {s.name for s in offer.select(specs, WINDOW)}


async def test_an_answer_with_room_for_some_matches_says_how_to_get_the_rest() -> None:
    offer = ToolOffer()
    specs = everything(offer, catalogue(50, padding=4_000))
    offer.select(specs, WINDOW)
    toolbox = SearchToolbox(offer)
    (search,) = toolbox.specs()
    outcome = await toolbox.call(search, {"query": "fetch archive record", "limit": 10})
    head, rest = outcome.text.split("\n", 1)
    assert head.endswith("tool(s) found; you can call them now, for the rest of this turn:")
    assert "more match(es) left out: their definitions would pass the budget" in rest
    assert "search again for it alone (limit 1)" in rest
    assert "cannot be offered" not in rest


def test_tools_called_lately_keep_to_the_budget_too() -> None:
    offer = ToolOffer()
    tools = catalogue(100, padding=6_000)  # about 1,500 tokens each: two fit
    specs = everything(offer, tools)
    for spec in tools[:8]:
        offer.used(spec.name)
    offered = offered_mcp(offer.select(specs, WINDOW))
    assert [s.name for s in offered] == [tools[6].name, tools[7].name]  # the last called


def test_max_tools_never_lets_definitions_fill_half_the_window() -> None:
    tools = catalogue(5, padding=20_000)  # five tools, about 25,000 tokens together
    under = ToolOffer(max_tools=10)
    assert under.select(everything(under, tools), 200_000) == [builtin("read_file"), *tools]
    assert under.deferral is None
    over = ToolOffer(max_tools=10)
    assert offered_mcp(over.select(everything(over, tools), WINDOW)) == []
    assert over.deferral is not None and over.deferral.deferred == 5


def test_search_turned_off_offers_every_tool_whatever_their_size() -> None:
    offer = ToolOffer(enabled=False)
    tools = catalogue(5, padding=20_000)
    assert offered_mcp(offer.select(everything(offer, tools), WINDOW)) == tools
