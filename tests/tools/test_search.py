"""The tool-search ranking (paicli.tools.search.index) on real tool definitions."""

from __future__ import annotations

from paicli.tools.base import ToolSpec
from paicli.tools.search.index import ToolIndex, tokens
from tests.tools.search_data import HELD_OUT, TUNED, evaluate, reference_specs


def test_the_right_tool_is_in_the_top_five_for_nine_queries_in_ten() -> None:
    specs = reference_specs()
    assert len(specs) >= 100
    index = ToolIndex(specs)
    tuned = evaluate(index, TUNED)
    assert tuned.queries >= 50
    assert tuned.top5 >= 0.9 * tuned.queries, tuned.misses
    # Queries the ranking was never tuned on: the same bar, a little lower (25 queries).
    held_out = evaluate(index, HELD_OUT)
    assert held_out.top5 >= 0.85 * held_out.queries, held_out.misses


def test_words_are_split_folded_and_spelled_out() -> None:
    assert tokens("getFileInfo") == ["get", "file", "info", "getfileinfo"]
    assert tokens("Creates new_branches") == ["creat", "creat", "new", "branch"]
    assert tokens("open a PR") == ["open", "creat", "pull", "request"]
    assert tokens("the of and") == []


def spec(name: str, description: str, server: str = "s") -> ToolSpec:
    return ToolSpec(f"mcp__{server}__{name}", description, {}, "mcp", server=server, tool=name)


def test_a_server_can_be_named_and_unrelated_tools_never_come_back() -> None:
    index = ToolIndex(
        [spec("send", "Send a message", "chat"), spec("post", "Post a message", "mail")]
    )
    assert {s.server for s in index.search("message")} == {"chat", "mail"}
    assert [s.server for s in index.search("message", server="mail")] == ["mail"]
    assert index.search("elephant") == []


def test_only_the_head_of_a_huge_description_counts() -> None:
    hostile = spec("pad", "padding " * 100_000 + "secretword")
    index = ToolIndex([hostile, spec("other", "something else")])
    assert index.search("secretword") == []
    assert index.search("padding") == [hostile]
