"""The tool-search evaluation set: 114 real tool definitions of the MCP reference servers and
natural-language queries written for them (tests/tools/data/), as `ToolSpec`s and scores."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from paicli.tools.base import ToolSpec
from paicli.tools.mcp.naming import model_tool_name
from paicli.tools.search.index import ToolIndex

DATA = Path(__file__).resolve().parent / "data"
TUNED = DATA / "tool_queries.json"  # the ranking's synonyms were chosen looking at these
HELD_OUT = DATA / "tool_queries_heldout.json"  # written afterwards, never tuned on


def reference_specs() -> list[ToolSpec]:
    tools = json.loads((DATA / "reference_tools.json").read_text())["tools"]
    return [
        ToolSpec(
            name=model_tool_name(t["server"], t["name"]),
            description=t["description"],
            parameters=t["inputSchema"],
            kind="mcp",
            server=t["server"],
            tool=t["name"],
        )
        for t in tools
    ]


@dataclass(frozen=True)
class Score:
    queries: int
    top1: int
    top5: int
    misses: tuple[str, ...]  # queries whose answer was not in the top 5


def evaluate(index: ToolIndex, queries: Path) -> Score:
    top1 = top5 = 0
    misses: list[str] = []
    cases = json.loads(queries.read_text())["queries"]
    for case in cases:
        found = [f"{s.server}/{s.tool}" for s in index.search(case["query"], limit=5)]
        if found and found[0] in case["expect"]:
            top1 += 1
        if any(name in case["expect"] for name in found):
            top5 += 1
        else:
            misses.append(case["query"])
    return Score(len(cases), top1, top5, tuple(misses))
