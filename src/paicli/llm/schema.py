"""Tool input schemas as LLM providers accept them, and the model's arguments checked against
the server's own schema.

`clean_schema` is pure: the server's schema is never mutated, and what a provider profile
cannot express as a keyword is moved into the description as text, so the model still reads
it. The server's original schema stays the authority: `validate_arguments` checks the model's
arguments against it before any call, which is why dropping a keyword into text is safe.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, NoReturn, cast

from paicli.llm._schema_render import Cleaner

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError

__all__ = [
    "CleanedSchema",
    "Profile",
    "clean_schema",
    "schema_problems",
    "validate_arguments",
    "validate_output",
]

Profile = Literal["default", "openai_strict", "gemini"]
"""Who reads the schema.

- `default`: OpenAI-compatible function calling without strict mode; standard JSON Schema
  keywords pass through.
- `openai_strict`: OpenAI structured outputs. Every object is closed and lists every property
  as required (optional ones become nullable); only type, properties, required,
  additionalProperties, items, enum, const, anyOf, description and title stay as keywords.
  Newer OpenAI models also accept pattern, format and numeric/length bounds, but not every
  strict-mode implementation does (older Azure API versions, compatible servers), so they
  become text.
- `gemini`: the OpenAPI 3.0 subset of Gemini's `FunctionDeclaration.parameters`: one type per
  schema, `nullable: true` instead of null types, enum only of strings, format only
  enum/date-time (string), float/double (number), int32/int64 (integer); no
  additionalProperties, $ref, const, default or exclusive bounds. anyOf is kept (the Schema
  message has it); minItems/maxItems are kept; other bounds become text (older Vertex
  releases reject `minimum`/`maximum`).
"""


@dataclass(frozen=True)
class CleanedSchema:
    """A schema ready for one provider, and what the adapter must know about it.

    `wrapped`: the server's root schema was not an object, so the model sends
    `{"value": <argument>}`; `arguments_for_server` unwraps it.
    `nulled_optionals`: argument paths (property names; `None` for "any array item or map
    value") of optional properties that `openai_strict` turned into required nullable ones; a
    `null` the model sends there means "left out".
    `unsupported`: places whose meaning the profile has no keyword for, not even after
    rewriting (free-form values and objects, maps, under openai_strict and gemini); they are
    described in text and left open. Empty means the provider should take the schema as is;
    otherwise, under openai_strict, send this tool with `strict: false`.
    """

    schema: dict[str, object]
    wrapped: bool = False
    nulled_optionals: frozenset[tuple[str | None, ...]] = frozenset()
    unsupported: tuple[str, ...] = ()

    def arguments_for_server(self, arguments: Mapping[str, object]) -> object:
        """The model's arguments in the server's shape: nulls of optional properties under
        openai_strict left out, and the `value` wrapper removed."""
        restored: object = dict(arguments)
        if self.nulled_optionals:
            restored = _OptionalPaths(self.nulled_optionals).drop_nulls(restored)
        if self.wrapped and isinstance(restored, dict):
            return restored.get("value")
        return restored


def clean_schema(schema: Mapping[str, object], profile: Profile = "default") -> CleanedSchema:
    """`schema` (a tool's inputSchema, untouched) rewritten for `profile`."""
    cleaner = Cleaner(schema, profile)
    cleaned, wrapped = cleaner.clean_root()
    return CleanedSchema(
        schema=cleaned,
        wrapped=wrapped,
        nulled_optionals=frozenset(cleaner.nulled),
        unsupported=tuple(cleaner.unsupported),
    )


# Every violation is listed up to this many, each message cut to this length: the model
# needs to see what to fix, not a 10 KB repr of the value it sent.
_MAX_ERRORS = 5
_MAX_MESSAGE = 300


def validate_arguments(original_schema: Mapping[str, object], arguments: object) -> str | None:
    """A readable paragraph telling the model what is wrong with `arguments` according to
    the server's `original_schema`, or None when they are valid.

    The dialect follows `$schema` (Draft 2020-12 when absent). Remote `$ref`s are never
    fetched. A schema that is itself invalid, or refers to what cannot be resolved, lets
    the call through: the server validates too, and a broken schema must not block a tool.
    """
    problems = schema_problems(original_schema, arguments)
    if not problems:
        return None
    return (
        f"The arguments do not match the tool's input schema: {problems}. "
        "Correct the arguments and call the tool again."
    )


def validate_output(output_schema: Mapping[str, object], structured: object) -> str | None:
    """What is wrong with a tool's `structuredContent` according to its declared
    `outputSchema` (None: it conforms, or the schema is unusable), in one line."""
    problems = schema_problems(output_schema, structured)
    if not problems:
        return None
    return f"its structured result does not match its declared output schema: {problems}"


def schema_problems(schema: Mapping[str, object], value: object) -> str | None:
    """The first violations of `schema` by `value` (most relevant first, each cut short),
    as one `; `-joined text; None when `value` conforms or the schema cannot be used
    (itself invalid, or referring to what cannot be resolved: remote `$ref`s are never
    fetched). The dialect follows `$schema` (Draft 2020-12 when absent)."""
    from jsonschema import exceptions  # noqa: PLC0415 - loaded by `_validator` already
    from referencing.exceptions import Unresolvable  # noqa: PLC0415

    validator = _validator(schema)
    if validator is None:
        return None
    try:
        # The stubs want a JSON type; any object is fine at run time (it fails `type`).
        errors = sorted(
            validator.iter_errors(cast("Any", value)), key=exceptions.relevance, reverse=True
        )
    except (Unresolvable, RecursionError):
        return None
    if not errors:
        return None
    shown = "; ".join(_describe_error(error) for error in errors[:_MAX_ERRORS])
    more = f" (and {len(errors) - _MAX_ERRORS} more)" if len(errors) > _MAX_ERRORS else ""
    return shown + more


# Each schema's validator, made once (checking a schema against its dialect's metaschema
# and building its validator cost ~0.8 ms, every tool call), by the schema's sorted JSON;
# None for a schema that cannot be used. The oldest goes first past the bound; a schema
# over the size bound is checked afresh each time (a server's huge schemas kept no memory).
_VALIDATORS: dict[bytes, Any] = {}
_MAX_VALIDATORS = 128
_MAX_CACHED_SCHEMA = 64 * 1024
_VALIDATORS_LOCK = threading.Lock()


def _validator(schema: Mapping[str, object]) -> Any:
    """The validator of `schema`, or None when it is itself invalid."""
    import orjson  # noqa: PLC0415

    try:
        key: bytes | None = orjson.dumps(schema, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # not JSON (a caller's own object, or nesting orjson refuses)
        key = None
    if key is not None and key in _VALIDATORS:
        return _VALIDATORS[key]
    validator = _new_validator(dict(schema))
    if key is not None and len(key) <= _MAX_CACHED_SCHEMA:
        with _VALIDATORS_LOCK:  # outputs are checked in worker threads
            if len(_VALIDATORS) >= _MAX_VALIDATORS:
                del _VALIDATORS[next(iter(_VALIDATORS))]
            _VALIDATORS[key] = validator
    return validator


def _new_validator(schema: dict[str, object]) -> Any:
    # jsonschema pulls in referencing, rpds and attrs; import it on the first tool call,
    # not at startup.
    from jsonschema import exceptions, validators  # noqa: PLC0415
    from referencing import Registry  # noqa: PLC0415
    from referencing.exceptions import NoSuchResource  # noqa: PLC0415

    def refuse_remote(uri: str) -> NoReturn:
        raise NoSuchResource(uri)

    validator_class = validators.validator_for(schema, default=validators.Draft202012Validator)
    try:
        validator_class.check_schema(schema)
    except (exceptions.SchemaError, RecursionError):
        return None
    # referencing's classes get their __init__ from attrs, which mypy does not see.
    registry: Registry[Any] = Registry(retrieve=refuse_remote)  # type: ignore[call-arg]
    return validator_class(schema, registry=registry)


def _describe_error(error: ValidationError) -> str:
    where = "".join(
        f"[{part}]" if isinstance(part, int) else f".{part}" for part in error.absolute_path
    ).lstrip(".")
    message = error.message
    if len(message) > _MAX_MESSAGE:
        # jsonschema puts the offending value first and the rule last: keep both ends.
        half = _MAX_MESSAGE // 2
        message = f"{message[:half]}…{message[-half:]}"
    return f"at `{where}`: {message}" if where else message


class _OptionalPaths:
    """Argument paths of nulled optional properties, as a tree for one walk over arguments."""

    def __init__(self, paths: Iterable[tuple[str | None, ...]] = ()) -> None:
        self._names: set[str] = set()
        self._children: dict[str | None, _OptionalPaths] = {}
        for path in paths:
            node = self
            for step in path[:-1]:
                node = node._children.setdefault(step, _OptionalPaths())
            if isinstance(path[-1], str):
                node._names.add(path[-1])

    def drop_nulls(self, value: object) -> object:
        """`value` without the nulls the model sent for optional properties."""
        if isinstance(value, list):
            child = self._children.get(None)
            return [child.drop_nulls(item) for item in value] if child else value
        if not isinstance(value, dict):
            return value
        out: dict[object, object] = {}
        for key, item in value.items():
            if item is None and key in self._names:
                continue
            child = self._children.get(key) or self._children.get(None)
            out[key] = child.drop_nulls(item) if child else item
        return out
