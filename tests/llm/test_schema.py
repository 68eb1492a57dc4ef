"""Schema cleaning per provider profile, and arguments checked against the original schema.

`data/everything.json` and `data/filesystem.json` are the `inputSchema`s the npm reference
servers (server-everything 2.0.0 with every client capability, server-filesystem on a temporary
directory) listed through `paicli.mcp.connect`, keyed by tool name. Re-dump them when
tests/npm/package-lock.json moves to new server versions.
"""

from __future__ import annotations

import copy
import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from paicli.llm.schema import CleanedSchema, Profile, clean_schema, validate_arguments

DATA = Path(__file__).parent / "data"
PROFILES: list[Profile] = ["default", "openai_strict", "gemini"]
REAL = {
    f"{server}/{tool}": schema
    for server in ("everything", "filesystem")
    for tool, schema in json.loads((DATA / f"{server}.json").read_text()).items()
}
STRICT_KEYS = {"type", "properties", "required", "additionalProperties", "items", "enum"}
STRICT_KEYS |= {"const", "anyOf", "description", "title"}
GEMINI_KEYS = {"type", "format", "title", "description", "nullable", "enum", "properties"}
GEMINI_KEYS |= {"required", "items", "anyOf", "minItems", "maxItems"}
GEMINI_FORMATS = {"string": {"enum", "date-time"}, "number": {"float", "double"}}
GEMINI_FORMATS |= {"integer": {"int32", "int64"}}


def subschemas(schema: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """`schema` and every schema inside it."""
    yield schema
    for key, value in schema.items():
        if key in {"properties", "patternProperties"}:
            for sub in value.values():
                yield from subschemas(sub)
        elif key in {"anyOf", "oneOf", "allOf", "prefixItems"} or (
            key == "items" and isinstance(value, list)
        ):
            for sub in value:
                yield from subschemas(sub)
        elif key in {"items", "additionalProperties", "not"} and isinstance(value, dict):
            yield from subschemas(value)


def assert_portable(cleaned: CleanedSchema) -> None:
    """What every profile guarantees: an object root, no refs, short valid schemas."""
    schema = cleaned.schema
    assert schema["type"] == "object"
    assert isinstance(schema["properties"], dict)
    Draft202012Validator.check_schema(schema)
    for sub in subschemas(schema):
        assert not {"$schema", "$id", "$ref", "$defs", "definitions"} & sub.keys(), sub
        assert len(sub.get("description", "")) <= 1000


def assert_strict_shape(schema: dict[str, Any]) -> None:
    for sub in subschemas(schema):
        assert sub.keys() <= STRICT_KEYS, sub
        if sub.get("type") in ("object", ["object", "null"]):
            assert sub["additionalProperties"] is False, sub
            assert sub["required"] == list(sub["properties"]), sub


def assert_gemini_shape(schema: dict[str, Any]) -> None:
    for sub in subschemas(schema):
        assert sub.keys() <= GEMINI_KEYS, sub
        kind = sub.get("type")
        assert kind is None or isinstance(kind, str), sub
        if "enum" in sub:
            assert kind == "string", sub
            assert all(isinstance(value, str) for value in sub["enum"]), sub
        if "format" in sub:
            assert kind is not None and sub["format"] in GEMINI_FORMATS[kind], sub
        if "required" in sub:
            assert set(sub["required"]) <= set(sub["properties"]), sub


def json_schema(cleaned: CleanedSchema) -> dict[str, Any]:
    """The cleaned schema as JSON a test indexes into (its nested values are not typed)."""
    return cleaned.schema


def schema_for(schema: dict[str, Any], profile: Profile) -> dict[str, Any]:
    """`schema` cleaned for `profile` and checked like `cleaned_for`, as indexable JSON."""
    return json_schema(cleaned_for(schema, profile))


def cleaned_for(schema: dict[str, Any], profile: Profile) -> CleanedSchema:
    cleaned = clean_schema(schema, profile)
    assert_portable(cleaned)
    if profile == "openai_strict" and not cleaned.unsupported:
        assert_strict_shape(cleaned.schema)
    if profile == "gemini":
        assert_gemini_shape(cleaned.schema)
    return cleaned


# -- the reference servers' schemas --------------------------------------------------------


def test_the_fixtures_hold_every_reference_tool() -> None:
    assert len(REAL) == 30
    assert {"everything/echo", "everything/get-sum", "filesystem/edit_file"} <= REAL.keys()


@pytest.mark.parametrize("name", sorted(REAL))
def test_default_profile_only_drops_the_dialect_marker_of_real_schemas(name: str) -> None:
    original = REAL[name]
    cleaned = cleaned_for(original, "default")
    assert cleaned.schema == {k: v for k, v in original.items() if k != "$schema"}
    assert not cleaned.wrapped
    assert cleaned.unsupported == ()


@pytest.mark.parametrize("name", sorted(REAL))
def test_real_schemas_fit_openai_strict_with_optional_properties_nullable(name: str) -> None:
    original = REAL[name]
    cleaned = cleaned_for(original, "openai_strict")
    assert cleaned.unsupported == ()
    optional = set(original["properties"]) - set(original.get("required", []))
    assert cleaned.nulled_optionals == {(prop,) for prop in optional}
    for prop in optional:
        assert "null" in json_schema(cleaned)["properties"][prop]["type"]


@pytest.mark.parametrize("name", sorted(REAL))
def test_real_schemas_fit_gemini(name: str) -> None:
    cleaned = cleaned_for(REAL[name], "gemini")
    assert cleaned.unsupported == ()
    assert cleaned.nulled_optionals == frozenset()
    assert cleaned.schema.get("required", []) == REAL[name].get("required", [])


@pytest.mark.parametrize("profile", ["openai_strict", "gemini"])
def test_bounds_defaults_and_formats_move_into_the_description(profile: Profile) -> None:
    links = schema_for(REAL["everything/get-resource-links"], profile)
    count = links["properties"]["count"]["description"]
    assert count == "Number of resource links to return (1-10). Default: 3. Minimum 1. Maximum 10."
    gzip = schema_for(REAL["everything/gzip-file-as-resource"], profile)
    assert gzip["properties"]["data"]["description"].endswith(" Format: uri.")
    assert "format" not in gzip["properties"]["data"]


@pytest.mark.parametrize("profile", PROFILES)
def test_a_property_named_like_a_keyword_stays_a_property(profile: Profile) -> None:
    search = schema_for(REAL["filesystem/search_files"], profile)
    assert search["properties"]["pattern"]["type"] == "string"
    assert "regular expression" not in search.get("description", "")


def test_gemini_keeps_item_counts_as_keywords() -> None:
    files = schema_for(REAL["filesystem/read_multiple_files"], "gemini")
    assert files["properties"]["paths"]["minItems"] == 1


def test_strict_nulls_for_optional_properties_are_left_out_for_the_server() -> None:
    original = REAL["filesystem/edit_file"]
    cleaned = cleaned_for(original, "openai_strict")
    from_model = {"path": "a.txt", "edits": [{"oldText": "a", "newText": "b"}], "dryRun": None}
    to_server = cleaned.arguments_for_server(from_model)
    assert to_server == {"path": "a.txt", "edits": [{"oldText": "a", "newText": "b"}]}
    assert validate_arguments(original, to_server) is None
    assert "dryRun" in (validate_arguments(original, from_model) or "")


@pytest.mark.parametrize("profile", PROFILES)
def test_cleaning_never_mutates_the_servers_schema(profile: Profile) -> None:
    for schema in [*REAL.values(), TREE, UNIONS]:
        before = copy.deepcopy(schema)
        cleaned = clean_schema(schema, profile)
        assert schema == before
        cleaned.schema.clear()
        assert schema == before


# -- crafted hard cases --------------------------------------------------------------------

TREE: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://example.com/tree",
    "type": "object",
    "$defs": {
        "Node": {
            "type": "object",
            "description": "A tree node",
            "properties": {
                "name": {"type": "string"},
                "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
            },
            "required": ["name"],
        },
    },
    "properties": {"root": {"$ref": "#/$defs/Node"}},
    "required": ["root"],
}

UNIONS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "color": {
            "anyOf": [{"type": "string", "enum": ["red", "green"]}, {"type": "null"}],
            "default": None,
            "title": "Color",
            "description": "Paint",
        },
        "when": {"type": ["string", "null"], "format": "date-time"},
        "target": {
            "oneOf": [
                {
                    "type": "object",
                    "properties": {"url": {"type": "string"}},
                    "required": ["url"],
                },
                {
                    "type": "object",
                    "properties": {"path": {"type": "string"}},
                    "required": ["path"],
                },
            ]
        },
        "mode": {"oneOf": [{"const": "fast", "description": "Quick"}, {"const": "slow"}]},
        "size": {"type": ["integer", "string"]},
    },
    "required": ["target"],
}


@pytest.mark.parametrize("profile", PROFILES)
def test_local_refs_are_inlined_from_nested_defs_and_draft_07_definitions(
    profile: Profile,
) -> None:
    schema = {
        "type": "object",
        "definitions": {"Name": {"type": "string", "description": "A name"}},
        "$defs": {
            "Outer": {
                "type": "object",
                "properties": {"inner": {"$ref": "#/$defs/Outer/$defs/Inner"}},
                "required": ["inner"],
                "$defs": {"Inner": {"type": "integer"}},
            },
            "a/b": {"type": "boolean"},
        },
        "properties": {
            "name": {"$ref": "#/definitions/Name", "description": "Who"},
            "outer": {"$ref": "#/$defs/Outer"},
            "flag": {"$ref": "#/$defs/a~1b"},
        },
        "required": ["name", "outer", "flag"],
    }
    props = schema_for(schema, profile)["properties"]
    assert props["name"] == {"type": "string", "description": "Who"}
    assert props["outer"]["properties"]["inner"] == {"type": "integer"}
    assert props["flag"] == {"type": "boolean"}


@pytest.mark.parametrize("profile", PROFILES)
def test_a_recursive_ref_is_expanded_twice_then_described(profile: Profile) -> None:
    cleaned = cleaned_for(TREE, profile)
    root = json_schema(cleaned)["properties"]["root"]
    assert root["description"] == "A tree node"
    child = root["properties"]["children"]["items"]
    assert child["properties"]["name"]["type"] == "string"
    stub = child["properties"]["children"]["items"]
    assert stub["type"] == "object"
    assert "same structure as the enclosing Node" in stub["description"]
    assert "properties" not in stub
    if profile == "default":
        assert cleaned.unsupported == ()
    else:  # an undeclared object cannot be closed: strict mode must be off for this tool
        assert cleaned.unsupported == (
            "/properties/root/properties/children/items/properties/children/items: "
            "a free-form object (no declared properties)",
        )


def test_strict_remembers_optional_properties_under_arrays() -> None:
    cleaned = cleaned_for(TREE, "openai_strict")
    assert cleaned.nulled_optionals == {
        ("root", "children"),
        ("root", "children", None, "children"),
    }
    from_model = {"root": {"name": "a", "children": [{"name": "b", "children": None}]}}
    assert cleaned.arguments_for_server(from_model) == {
        "root": {"name": "a", "children": [{"name": "b"}]}
    }


@pytest.mark.parametrize("profile", PROFILES)
def test_a_whole_document_self_reference_terminates(profile: Profile) -> None:
    schema = {
        "type": "object",
        "properties": {"label": {"type": "string"}, "next": {"$ref": "#"}},
    }
    stub = schema_for(schema, profile)["properties"]["next"]["properties"]["next"]
    stub = stub["properties"]["next"]
    assert stub["type"] in ("object", ["object", "null"])  # optional: nullable under strict
    assert "same structure as the enclosing schema" in stub["description"]


def test_refs_that_multiply_are_capped() -> None:
    # Each definition uses the next one four times: 4**12 copies if inlined naively.
    defs = {
        f"D{n}": {
            "type": "object",
            "properties": {k: {"$ref": f"#/$defs/D{n + 1}"} for k in "abcd"},
        }
        for n in range(12)
    }
    defs["D12"] = {"type": "string"}
    schema = {"type": "object", "$defs": defs, "properties": {"x": {"$ref": "#/$defs/D0"}}}
    cleaned = clean_schema(schema, "default")  # uncapped, this would not finish
    assert len(json.dumps(cleaned.schema)) < 500_000
    assert "A D11 (not described here: the schema is too large to inline)." in json.dumps(
        cleaned.schema
    )
    assert_portable(cleaned)


@pytest.mark.parametrize("profile", PROFILES)
def test_remote_and_missing_refs_become_text_and_are_never_fetched(
    profile: Profile, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError("a remote $ref was fetched")

    monkeypatch.setattr(urllib.request, "urlopen", no_network)
    schema = {
        "type": "object",
        "properties": {
            "spec": {"$ref": "https://example.com/spec.json#/Spec", "description": "The spec"},
            "gone": {"$ref": "#/$defs/Missing"},
        },
        "required": ["spec"],
    }
    cleaned = cleaned_for(schema, profile)
    spec = json_schema(cleaned)["properties"]["spec"]
    assert spec == {
        "description": "The spec. Refers to the external schema "
        "https://example.com/spec.json#/Spec, not included here."
    }
    assert "#/$defs/Missing, which this schema does not define" in json.dumps(cleaned.schema)
    assert validate_arguments(schema, {"spec": 1}) is None  # unresolvable: the server decides
    if profile != "default":
        assert "/properties/spec: a free-form value (no type)" in cleaned.unsupported


def test_t_or_null_becomes_t_with_a_nullable_note_per_profile() -> None:
    default = schema_for(UNIONS, "default")["properties"]
    assert default["color"] == {
        "type": "string",
        "enum": ["red", "green"],
        "default": None,
        "title": "Color",
        "description": "Paint. May be null.",
    }
    assert default["when"] == {
        "type": "string",
        "format": "date-time",
        "description": "May be null.",
    }
    strict = schema_for(UNIONS, "openai_strict")["properties"]
    assert strict["color"]["type"] == ["string", "null"]
    assert strict["color"]["enum"] == ["red", "green", None]
    assert strict["color"]["description"] == "Paint. Default: null."
    gemini = schema_for(UNIONS, "gemini")["properties"]
    assert gemini["color"]["nullable"] is True
    assert gemini["color"]["type"] == "string"
    assert gemini["when"] == {"type": "string", "format": "date-time", "nullable": True}


def test_originally_nullable_optionals_keep_their_null_under_strict() -> None:
    cleaned = cleaned_for(UNIONS, "openai_strict")
    # color and when accepted null already: a null there is the model's answer, not "left out".
    assert cleaned.nulled_optionals == {("mode",), ("size",)}
    assert cleaned.arguments_for_server({"color": None, "mode": None}) == {"color": None}


def test_object_unions_stay_unions_and_oneof_becomes_anyof_where_required() -> None:
    default = schema_for(UNIONS, "default")["properties"]["target"]
    assert [branch["required"] for branch in default["oneOf"]] == [["url"], ["path"]]
    for profile in ("openai_strict", "gemini"):
        target = schema_for(UNIONS, profile)["properties"]["target"]
        assert "oneOf" not in target
        assert len(target["anyOf"]) == 2
        assert target["description"] == "Exactly one of the alternatives applies."


@pytest.mark.parametrize("profile", PROFILES)
def test_a_union_of_constants_becomes_one_enum(profile: Profile) -> None:
    mode = schema_for(UNIONS, profile)["properties"]["mode"]
    assert mode["enum"][:2] == ["fast", "slow"]
    assert mode["description"] == '"fast": Quick.'


def test_a_type_list_is_kept_except_for_gemini() -> None:
    assert schema_for(UNIONS, "default")["properties"]["size"]["type"] == [
        "integer",
        "string",
    ]
    gemini = schema_for(UNIONS, "gemini")["properties"]["size"]
    assert gemini == {"anyOf": [{"type": "integer"}, {"type": "string"}]}


@pytest.mark.parametrize("profile", PROFILES)
def test_all_of_branches_are_merged(profile: Profile) -> None:
    schema = {
        "type": "object",
        "properties": {
            "both": {
                "allOf": [
                    {"$ref": "#/$defs/Named"},
                    {
                        "type": "object",
                        "properties": {"size": {"type": "integer"}},
                        "required": ["size"],
                    },
                    {"maxProperties": 3},
                ]
            }
        },
        "$defs": {
            "Named": {
                "type": "object",
                "properties": {"name": {"type": "string"}},
                "required": ["name"],
            }
        },
    }
    both = schema_for(schema, profile)["properties"]["both"]
    assert list(both["properties"]) == ["name", "size"]
    assert both["required"] == ["name", "size"]
    if profile != "default":
        assert both["description"] == "At most 3 properties."


def test_conflicting_all_of_constraints_are_kept_as_text() -> None:
    schema = {
        "type": "object",
        "properties": {"n": {"allOf": [{"type": "number", "minimum": 0}, {"minimum": 5}]}},
    }
    n = schema_for(schema, "default")["properties"]["n"]
    assert n == {"type": "number", "minimum": 0, "description": "Must also satisfy minimum: 5."}


@pytest.mark.parametrize(
    ("root", "argument"),
    [
        ({"type": "string", "description": "A city"}, "Paris"),
        ({"type": "array", "items": {"type": "integer"}}, [1, 2]),
        ({"anyOf": [{"type": "object"}, {"type": "string"}]}, "x"),
    ],
)
@pytest.mark.parametrize("profile", PROFILES)
def test_a_non_object_root_is_wrapped_and_unwrapped(
    root: dict[str, Any], argument: object, profile: Profile
) -> None:
    cleaned = cleaned_for({"$schema": "http://json-schema.org/draft-07/schema#", **root}, profile)
    assert cleaned.wrapped
    assert list(json_schema(cleaned)["properties"]) == ["value"]
    assert json_schema(cleaned)["required"] == ["value"]
    assert cleaned.arguments_for_server({"value": argument}) == argument


@pytest.mark.parametrize(
    "root",
    [
        {},
        {"properties": {"a": {"type": "string"}}},
        {"$ref": "#/$defs/Args", "$defs": {"Args": {"type": "object"}}},
        {"type": ["object", "null"]},
    ],
)
@pytest.mark.parametrize("profile", PROFILES)
def test_an_object_root_is_completed_not_wrapped(root: dict[str, Any], profile: Profile) -> None:
    cleaned = cleaned_for(root, profile)
    assert not cleaned.wrapped
    assert cleaned.unsupported == ()
    assert cleaned.arguments_for_server({"a": "x"}) == {"a": "x"}


@pytest.mark.parametrize("profile", PROFILES)
def test_long_descriptions_are_capped_and_keep_their_notes(profile: Profile) -> None:
    long = "word " * 1000
    schema = {
        "type": "object",
        "description": long,
        "properties": {"code": {"type": "string", "pattern": "^[A-Z]{3}$", "description": long}},
    }
    cleaned = schema_for(schema, profile)
    assert len(cleaned["description"]) == 1000
    assert cleaned["description"].endswith("…")
    code = cleaned["properties"]["code"]["description"]
    assert len(code) <= 1000
    assert code.startswith("word word")
    if profile != "default":
        assert code.endswith("… Must match the regular expression `^[A-Z]{3}$`.")


def test_pattern_format_and_bounds_per_profile() -> None:
    schema = {
        "type": "object",
        "properties": {
            "mail": {"type": "string", "format": "email", "pattern": "@", "maxLength": 50},
            "at": {"type": "string", "format": "date-time"},
            "ratio": {"type": "number", "exclusiveMinimum": 0, "multipleOf": 0.5},
            "level": {"type": "integer", "enum": [1, 2, 3]},
            "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
        },
    }
    default = schema_for(schema, "default")["properties"]
    assert default == schema["properties"]
    strict = schema_for(schema, "openai_strict")["properties"]
    assert strict["mail"] == {
        "type": ["string", "null"],
        "description": "Format: email. Must match the regular expression `@`. "
        "At most 50 characters.",
    }
    assert strict["ratio"]["description"] == "Greater than 0. A multiple of 0.5."
    assert strict["level"]["enum"] == [1, 2, 3, None]
    assert strict["tags"]["description"] == "Items must be unique."
    gemini = schema_for(schema, "gemini")["properties"]
    assert gemini["mail"]["description"].startswith("Format: email.")
    assert gemini["at"] == {"type": "string", "format": "date-time"}
    assert gemini["level"] == {"type": "integer", "description": "One of: 1, 2, 3."}


@pytest.mark.parametrize("profile", PROFILES)
def test_maps_and_free_form_values_are_reported_where_a_profile_cannot_say_them(
    profile: Profile,
) -> None:
    schema = {
        "type": "object",
        "properties": {
            "env": {"type": "object", "additionalProperties": {"type": "string"}},
            "anything": True,
            "nothing": False,
            "blob": {"type": "object"},
        },
        "required": ["env"],
    }
    cleaned = cleaned_for(schema, profile)
    props = json_schema(cleaned)["properties"]
    assert props["nothing"] == {"description": "No value is accepted here."}
    if profile == "default":
        assert props["env"]["additionalProperties"] == {"type": "string"}
        assert cleaned.unsupported == ()
        return
    assert cleaned.unsupported == (
        "/properties/env: an object with arbitrary keys",
        "/properties/anything: a free-form value (no type)",
        "/properties/nothing: a free-form value (no type)",
        "/properties/blob: a free-form object (no declared properties)",
    )
    if profile == "gemini":
        assert props["env"] == {
            "type": "object",
            "description": 'Other keys are allowed; each value: {"type": "string"}.',
        }


@pytest.mark.parametrize("profile", ["openai_strict", "gemini"])
def test_draft_07_tuples_become_items_with_positions_in_text(profile: Profile) -> None:
    schema = {
        "type": "object",
        "properties": {
            "pair": {"type": "array", "items": [{"type": "string"}, {"type": "number"}]},
        },
        "required": ["pair"],
    }
    pair = schema_for(schema, profile)["properties"]["pair"]
    assert pair["items"] == {"anyOf": [{"type": "string"}, {"type": "number"}]}
    assert pair["description"] == (
        'Items by position: 1: {"type": "string"}; 2: {"type": "number"}.'
    )


# -- validation against the original schema ------------------------------------------------


def test_valid_arguments_pass() -> None:
    assert validate_arguments(REAL["everything/get-sum"], {"a": 1, "b": 2.5}) is None


def test_violations_name_the_argument_and_the_problem() -> None:
    error = validate_arguments(
        REAL["filesystem/edit_file"], {"path": 3, "edits": [{"oldText": "a"}]}
    )
    assert error == (
        "The arguments do not match the tool's input schema: "
        "at `path`: 3 is not of type 'string'; "
        "at `edits[0]`: 'newText' is a required property. "
        "Correct the arguments and call the tool again."
    )


def test_bounds_enums_and_unknown_properties_are_reported() -> None:
    links = validate_arguments(REAL["everything/get-resource-links"], {"count": 11})
    assert links is not None
    assert "at `count`: 11 is greater than the maximum of 10" in links
    kind = validate_arguments(REAL["everything/get-annotated-message"], {"messageType": "x"})
    assert kind is not None
    assert "at `messageType`: 'x' is not one of ['error', 'success', 'debug']" in kind
    closed = {"type": "object", "properties": {}, "additionalProperties": False}
    extra = validate_arguments(closed, {"surprise": 1})
    assert extra is not None
    assert "Additional properties are not allowed ('surprise' was unexpected)" in extra


def test_arguments_that_are_not_an_object_are_reported() -> None:
    error = validate_arguments(REAL["everything/echo"], ["hi"])
    assert error is not None
    assert "['hi'] is not of type 'object'" in error


def test_many_violations_are_summarised_and_huge_values_cut() -> None:
    schema = {"type": "object", "properties": {k: {"type": "integer"} for k in "abcdefg"}}
    error = validate_arguments(schema, {k: "x" * 5000 for k in "abcdefg"})
    assert error is not None
    assert error.count("is not of type 'integer'") == 5
    assert "(and 2 more)" in error
    assert len(error) < 2000


def test_the_schemas_own_dialect_is_honoured() -> None:
    # Draft-07 tuple `items`: the second item must be a number. Under 2020-12 the same
    # schema is invalid (items must be one schema), so nothing is checked.
    tuple_schema = {
        "type": "object",
        "properties": {"t": {"type": "array", "items": [{"type": "string"}, {"type": "number"}]}},
    }
    draft_07 = {"$schema": "http://json-schema.org/draft-07/schema#", **tuple_schema}
    error = validate_arguments(draft_07, {"t": ["a", "b"]})
    assert error is not None
    assert "at `t[1]`: 'b' is not of type 'number'" in error
    assert validate_arguments(tuple_schema, {"t": ["a", "b"]}) is None


def test_an_invalid_schema_lets_the_call_through() -> None:
    assert validate_arguments({"type": "object", "minProperties": "two"}, {}) is None


def test_local_refs_are_followed_when_validating() -> None:
    error = validate_arguments(TREE, {"root": {"name": "a", "children": [{"name": 1}]}})
    assert error is not None
    assert "at `root.children[0].name`: 1 is not of type 'string'" in error


def test_a_schema_is_checked_as_it_is_now_each_time() -> None:
    """Validators are kept between calls (made once per schema), by what the schema says:
    a schema changed in place (a server's list refreshed into the same dict) is checked
    by its new rules, and an invalid one stays let through."""
    schema: dict[str, Any] = {"type": "object", "properties": {"n": {"type": "integer"}}}
    assert validate_arguments(schema, {"n": 1}) is None
    schema["required"] = ["m"]
    error = validate_arguments(schema, {"n": 1})
    assert error is not None and "'m' is a required property" in error
    schema["minProperties"] = "two"
    assert validate_arguments(schema, {"n": 1}) is None
    assert validate_arguments({"type": "object", "minProperties": "two"}, {}) is None


def test_a_huge_schema_is_still_checked() -> None:
    """A schema over the kept size is checked afresh each call, as strictly."""
    fields = {f"f{n}": {"type": "string", "description": "x" * 200} for n in range(400)}
    schema = {"type": "object", "properties": fields, "required": ["f0"]}
    for _ in range(2):
        error = validate_arguments(schema, {"f1": 3})
        assert error is not None
        assert "'f0' is a required property" in error and "3 is not of type 'string'" in error
