"""Model-facing tool names: provider-safe, unique, stable, and mapped back exactly."""

from __future__ import annotations

import re

import pytest

from paicli.tools.mcp.naming import (
    MAX_NAME_LENGTH,
    ToolNameCollision,
    ToolNameRegistry,
    UnknownToolName,
    model_tool_name,
)

PROVIDER_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


@pytest.mark.parametrize(
    ("server", "tool", "expected"),
    [
        ("fs", "read_file", "mcp__fs__read_file"),
        ("everything", "get-sum", "mcp__everything__get-sum"),
        ("my.server", "tool.v2", "mcp__my_server__tool_v2"),
        ("my server", "say hello", "mcp__my_server__say_hello"),
        ("café", "naïve", "mcp__caf___na_ve"),
        ("日本", "検索", "mcp________"),
        ("a/b", "c:d@e", "mcp__a_b__c_d_e"),
    ],
)
def test_names_are_sanitised_character_by_character(server: str, tool: str, expected: str) -> None:
    name = model_tool_name(server, tool)
    assert name == expected
    assert PROVIDER_NAME.match(name)


def test_a_name_of_exactly_64_characters_is_kept_whole() -> None:
    tool = "t" * (MAX_NAME_LENGTH - len("mcp__s__"))
    assert model_tool_name("s", tool) == f"mcp__s__{tool}"


def test_long_names_are_cut_to_64_and_end_in_a_hash_of_the_original_pair() -> None:
    name = model_tool_name("server", "x" * 200)
    assert len(name) == MAX_NAME_LENGTH
    assert PROVIDER_NAME.match(name)
    assert name.startswith("mcp__server__xxx")
    assert re.search(r"_[0-9a-f]{8}$", name)


def test_the_hash_is_stable_across_calls_and_known_in_advance() -> None:
    # sha256("server\0" + "x" * 200)[:8], computed once: a change here renames tools in
    # every saved conversation.
    assert model_tool_name("server", "x" * 200) == model_tool_name("server", "x" * 200)
    assert model_tool_name("server", "x" * 200).endswith("_39d2eb2b")


def test_long_names_differing_only_after_the_cut_stay_distinct() -> None:
    first = model_tool_name("s", "a" * 100 + "one")
    second = model_tool_name("s", "a" * 100 + "two")
    assert first != second
    assert first[:55] == second[:55]


def test_long_names_differing_only_in_replaced_characters_stay_distinct() -> None:
    assert model_tool_name("s", "a.b" + "c" * 100) != model_tool_name("s", "a_b" + "c" * 100)


def test_the_hash_separates_server_from_tool() -> None:
    long = "z" * 100
    assert model_tool_name("a", f"b_{long}") != model_tool_name("a_b", long)


def test_a_registered_name_resolves_back_to_its_exact_pair() -> None:
    registry = ToolNameRegistry()
    pairs = [("fs", "read_file"), ("my.server", "tool v2"), ("s", "y" * 200), ("é", "ü")]
    names = [registry.add(server, tool) for server, tool in pairs]
    assert [registry.resolve(name) for name in names] == pairs
    assert len(registry) == 4
    assert all(name in registry for name in names)


def test_adding_the_same_pair_again_returns_the_same_name() -> None:
    registry = ToolNameRegistry()
    assert registry.add("fs", "read_file") == registry.add("fs", "read_file")
    assert len(registry) == 1


def test_two_pairs_sanitised_to_one_name_are_refused_loudly() -> None:
    registry = ToolNameRegistry()
    registry.add("fs", "read.file")
    with pytest.raises(ToolNameCollision) as caught:
        registry.add("fs", "read_file")
    error = caught.value
    assert error.name == "mcp__fs__read_file"
    assert error.taken == ("fs", "read.file")
    assert error.refused == ("fs", "read_file")
    assert "'read.file'" in str(error)
    assert "'read_file'" in str(error)
    assert registry.resolve("mcp__fs__read_file") == ("fs", "read.file")
    assert len(registry) == 1


def test_a_double_underscore_cannot_make_one_pair_pass_for_another() -> None:
    registry = ToolNameRegistry()
    registry.add("a__b", "c")
    with pytest.raises(ToolNameCollision):
        registry.add("a", "b__c")


def test_resolving_a_name_never_offered_raises_key_error() -> None:
    with pytest.raises(UnknownToolName, match="mcp__nope__x"):
        ToolNameRegistry().resolve("mcp__nope__x")


def test_removing_a_server_withdraws_only_its_names() -> None:
    registry = ToolNameRegistry()
    registry.add("fs", "read_file")
    registry.add("fs", "write_file")
    kept = registry.add("git", "status")
    assert registry.remove_server("fs") == ["mcp__fs__read_file", "mcp__fs__write_file"]
    assert registry.names() == [kept]
    assert registry.names("fs") == []
    with pytest.raises(UnknownToolName):
        registry.resolve("mcp__fs__read_file")
    # The freed name can be taken by another pair now.
    registry.add("fs", "read.file")
    assert registry.resolve("mcp__fs__read_file") == ("fs", "read.file")


def test_names_lists_one_server_in_the_order_added() -> None:
    registry = ToolNameRegistry()
    for tool in ("b", "a", "c"):
        registry.add("s", tool)
    registry.add("t", "a")
    assert registry.names("s") == ["mcp__s__b", "mcp__s__a", "mcp__s__c"]
    assert registry.remove_server("missing") == []
