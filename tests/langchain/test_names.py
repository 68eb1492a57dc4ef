"""A server's tool names and schemas are its own; what LangChain hands a provider must fit
the provider's rules (names of at most 64 of [a-zA-Z0-9_-], an object schema)."""

from __future__ import annotations

import re

from paicli.langchain.tool import args_schema, langchain_name
from paicli.mcp import Tool

PROVIDER_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def test_a_name_that_fits_is_kept() -> None:
    assert langchain_name("read_file-2") == "read_file-2"


def test_hostile_names_become_valid_distinct_names() -> None:
    hostile = [
        "\x1b]0;pwned\x07rm -rf",
        "a.b",
        "a_b",
        "",
        "ü" * 100,
        "x" * 64 + "1",
        "x" * 64 + "2",
    ]
    names = [langchain_name(n) for n in hostile]
    assert all(PROVIDER_NAME.match(n) for n in names), names
    long_ones = names[-2:]
    assert long_ones[0] != long_ones[1]  # cut names keep a hash of the whole name


def test_a_schema_that_is_not_an_object_schema_becomes_one() -> None:
    odd = Tool(name="t", input_schema={"type": "string", "properties": ["not", "a", "map"]})
    assert args_schema(odd) == {"type": "object", "properties": {}}
    kept = Tool(name="t", input_schema={"type": "object", "properties": {"a": {"type": "integer"}}})
    assert args_schema(kept) == kept.input_schema
