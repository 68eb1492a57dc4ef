"""An elicitation's form: fields read from `requestedSchema`, answers parsed and checked."""

from __future__ import annotations

from typing import Any

import pytest

from paicli.asks.elicitation import FormError, form_fields, form_problem
from tests.server_programs.fault_server import FORM_SCHEMA


def test_fields_follow_the_schema_with_kinds_defaults_and_required() -> None:
    fields = {f.name: f for f in form_fields(FORM_SCHEMA)}
    assert [f.kind for f in fields.values()] == ["string", "integer", "enum", "boolean", "string"]
    assert fields["name"].required and not fields["city"].required
    assert fields["city"].default == "Paris" and fields["subscribe"].default is False
    assert fields["colour"].choices == ("r", "g") and fields["colour"].labels == ("Red", "Green")


@pytest.mark.parametrize(
    ("name", "text", "value"),
    [
        ("age", "36", 36),
        ("colour", "2", "g"),
        ("colour", "r", "r"),
        ("subscribe", "yes", True),
        ("subscribe", "n", False),
        ("city", "", None),
        ("name", " Ada ", "Ada"),
    ],
)
def test_answers_are_parsed_for_their_field(name: str, text: str, value: Any) -> None:
    fields = {f.name: f for f in form_fields(FORM_SCHEMA)}
    assert fields[name].parse(text) == value


@pytest.mark.parametrize(
    ("name", "text", "problem"),
    [
        ("age", "3.5", "age: not a whole number"),
        ("age", "151", "age: at most 150"),
        ("age", "-1", "age: at least 0"),
        ("name", "A", "name: at least 2 characters"),
        ("name", "", "name is required"),
        ("colour", "3", "colour: choose a number from 1 to 2"),
        ("subscribe", "maybe", "subscribe: answer y or n"),
    ],
)
def test_an_answer_that_does_not_fit_is_one_line(name: str, text: str, problem: str) -> None:
    fields = {f.name: f for f in form_fields(FORM_SCHEMA)}
    with pytest.raises(FormError) as raised:
        fields[name].parse(text)
    assert str(raised.value) == problem


def test_formats_multi_select_and_legacy_enum_names() -> None:
    schema = {
        "type": "object",
        "properties": {
            "mail": {"type": "string", "format": "email"},
            "tags": {"type": "array", "items": {"enum": ["a", "b", "c"]}},
            "size": {"type": "string", "enum": ["s", "l"], "enumNames": ["Small", "Large"]},
            "note": {"type": "string", "pattern": "^x"},  # unknown keyword: tolerated
        },
    }
    fields = {f.name: f for f in form_fields(schema)}
    with pytest.raises(FormError, match="not a valid email"):
        fields["mail"].parse("nobody")
    assert fields["tags"].parse("1, c") == ["a", "c"]
    assert fields["size"].labels == ("Small", "Large")
    assert fields["note"].parse("y") == "y"


@pytest.mark.parametrize(
    ("schema", "problem"),
    [
        ({"type": "array"}, "requestedSchema is not an object schema"),
        ({"properties": {"o": {"type": "object"}}}, "field o: type 'object' is not a form field"),
        ({"properties": {f"f{i}": {"type": "string"} for i in range(40)}}, "the form has 40"),
    ],
)
def test_a_schema_that_is_no_flat_form_is_refused(schema: Any, problem: str) -> None:
    with pytest.raises(FormError, match=problem):
        form_fields(schema)


def test_accepted_content_is_checked_against_the_form() -> None:
    fields = form_fields(FORM_SCHEMA)
    assert form_problem(fields, {"name": "Ada", "age": 3}) is None
    assert form_problem(fields, {"name": "Ada"}) == "age is required"
    assert form_problem(fields, {"name": "Ada", "age": "3"}) == "age: not a number"
    assert form_problem(fields, {"name": "Ada", "age": 3, "x": 1}) == "unknown field x"


@pytest.mark.parametrize(
    "prop",
    [
        {"name": "password"},
        {"name": "token"},
        {"name": "api_key"},
        {"name": "APIKey"},
        {"name": "client_secret_value"},
        {"name": "accessToken"},
        {"name": "user-password"},
        {"name": "pin"},
        {"name": "f1", "title": "Your GitHub token"},
        {"name": "f2", "title": "API key"},
        {"name": "f3", "format": "password"},
        {"name": "f4", "writeOnly": True},
        {"name": "code", "type": "integer", "title": "One-time passcode"},
    ],
)
def test_fields_that_ask_for_a_secret_are_marked(prop: dict[str, Any]) -> None:
    name = prop.pop("name")
    schema = {"type": "object", "properties": {name: {"type": "string", **prop}}}
    [field] = form_fields(schema)
    assert field.secret, name


@pytest.mark.parametrize("name", ["name", "author", "keyboard", "monkey", "keynote", "city"])
def test_ordinary_fields_are_not_secret(name: str) -> None:
    [field] = form_fields({"type": "object", "properties": {name: {"type": "string"}}})
    assert not field.secret


def test_a_choice_or_a_yes_no_is_never_hidden() -> None:
    schema = {
        "type": "object",
        "properties": {
            "token_kind": {"type": "string", "enum": ["classic", "fine-grained"]},
            "save_password": {"type": "boolean"},
        },
    }
    assert [f.secret for f in form_fields(schema)] == [False, False]
