"""The form of an elicitation (`elicitation/create`, form mode): its fields read from the
server's `requestedSchema`, each answer parsed and checked against its field.

The schema is a flat object of primitive fields (string, number, integer, boolean, single-
and multi-select enums), as the specification allows. Anything else (a nested object, a
field of no known type, more fields than a person fills in at a terminal) makes the whole
form unusable: `FormError` names the field, and the server is told, rather than a form
being shown that cannot be answered right. Unknown keywords (`pattern`) are tolerated.
A text or number field whose name or title names a secret (`password`, `token`, `*_secret*`,
`*_key`, `apiKey`), or that the schema marks (`format: password`, `writeOnly`), is `secret`:
the UI warns that a server asks for one and hides what is typed.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from paicli.errors import PaicliError

__all__ = ["FormError", "FormField", "form_fields", "form_problem"]

Json = dict[str, Any]
Kind = Literal["string", "number", "integer", "boolean", "enum", "multi"]
Value = str | int | float | bool | list[str]

# A form is read one prompt per field: more than this is no form a person fills in.
MAX_FIELDS = 32
# A single-select offers at most this many choices (as many as fit a terminal's screen).
MAX_CHOICES = 100
# Formats the specification names; checked loosely (enough to catch a typo, not RFC-exact).
FORMATS = {
    "email": re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$"),
    "uri": re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:\S+$"),
    "date": re.compile(r"^\d{4}-\d{2}-\d{2}$"),
    "date-time": re.compile(
        r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:\d{2})?$"
    ),
}
# Words of a field's name or title that ask for a secret (besides a last word `key`).
_SECRET_WORDS = frozenset(
    {"password", "passwd", "passphrase", "passcode", "pin", "otp", "totp", "token", "secret"}
    | {"apikey", "credential", "credentials"}
)
YES = ("y", "yes", "true")
NO = ("n", "no", "false")


class FormError(PaicliError):
    """The schema cannot be shown as a form, or an answer does not fit its field (one line)."""


@dataclass(frozen=True)
class FormField:
    name: str
    kind: Kind
    title: str
    description: str
    required: bool
    default: Value | None = None
    choices: tuple[str, ...] = ()  # enum values (what is sent)
    labels: tuple[str, ...] = ()  # what each choice is called (titles; else the values)
    minimum: float | None = None
    maximum: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    format: str | None = None
    secret: bool = False  # asks for a password, token or key: warned about, typed hidden

    def hint(self) -> str:
        """What the field takes, in a few words (shown after its name)."""
        if self.kind == "boolean":
            return "y/n"
        if self.kind in ("enum", "multi"):
            return "one of the numbers" if self.kind == "enum" else "numbers, comma-separated"
        parts = [self.format or self.kind]
        if self.minimum is not None or self.maximum is not None:
            low = "" if self.minimum is None else _number_text(self.minimum)
            high = "" if self.maximum is None else _number_text(self.maximum)
            parts.append(f"{low}..{high}")
        if self.min_length is not None or self.max_length is not None:
            parts.append(f"{self.min_length or 0}..{self.max_length or ''} characters")
        return ", ".join(parts)

    def parse(self, text: str) -> Value | None:
        """The value typed as `text`; None for an empty answer (the default or nothing).
        Raises FormError (one line) when the text does not fit."""
        text = text.strip()
        if not text:
            if self.required and self.default is None:
                raise FormError(f"{self.name} is required")
            return None
        if self.kind == "boolean":
            if text.lower() in YES:
                return True
            if text.lower() in NO:
                return False
            raise FormError(f"{self.name}: answer y or n")
        if self.kind == "enum":
            return self._choice(text)
        if self.kind == "multi":
            return [self._choice(piece) for piece in text.split(",") if piece.strip()]
        if self.kind in ("number", "integer"):
            return self.check(_number(self.name, self.kind, text))
        return self.check(text)

    def _choice(self, text: str) -> str:
        text = text.strip()
        if text.isdigit() and 1 <= int(text) <= len(self.choices):
            return self.choices[int(text) - 1]
        if text in self.choices:
            return text
        raise FormError(f"{self.name}: choose a number from 1 to {len(self.choices)}")

    def check(self, value: object) -> Value:
        """`value` if it fits this field; FormError otherwise."""
        name = self.name
        if self.kind == "boolean":
            if not isinstance(value, bool):
                raise FormError(f"{name}: not true or false")
            return value
        if self.kind == "enum":
            if not isinstance(value, str) or value not in self.choices:
                raise FormError(f"{name}: not one of the choices")
            return value
        if self.kind == "multi":
            if not isinstance(value, list) or any(v not in self.choices for v in value):
                raise FormError(f"{name}: not a list of the choices")
            return [str(v) for v in value]
        if self.kind in ("number", "integer"):
            return self._check_number(value)
        if not isinstance(value, str):
            raise FormError(f"{name}: not text")
        if self.min_length is not None and len(value) < self.min_length:
            raise FormError(f"{name}: at least {self.min_length} characters")
        if self.max_length is not None and len(value) > self.max_length:
            raise FormError(f"{name}: at most {self.max_length} characters")
        pattern = FORMATS.get(self.format or "")
        if pattern is not None and not pattern.match(value):
            raise FormError(f"{name}: not a valid {self.format}")
        return value

    def _check_number(self, value: object) -> int | float:
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
        ):
            raise FormError(f"{self.name}: not a number")
        if self.kind == "integer" and value != int(value):
            raise FormError(f"{self.name}: not a whole number")
        if self.minimum is not None and value < self.minimum:
            raise FormError(f"{self.name}: at least {_number_text(self.minimum)}")
        if self.maximum is not None and value > self.maximum:
            raise FormError(f"{self.name}: at most {_number_text(self.maximum)}")
        return int(value) if self.kind == "integer" else value


def form_fields(schema: object) -> list[FormField]:
    """The fields of `requestedSchema`, in its order; FormError when it is no flat form."""
    if not isinstance(schema, Mapping) or schema.get("type", "object") != "object":
        raise FormError("requestedSchema is not an object schema")
    properties = schema.get("properties", {})
    if not isinstance(properties, Mapping):
        raise FormError("requestedSchema.properties is not an object")
    if len(properties) > MAX_FIELDS:
        raise FormError(
            f"the form has {len(properties)} fields (paicli shows at most {MAX_FIELDS})"
        )
    required = schema.get("required", [])
    required = set(required) if isinstance(required, list) else set()
    return [_field(str(name), prop, name in required) for name, prop in properties.items()]


def form_problem(fields: Sequence[FormField], content: object) -> str | None:
    """Why `content` (an accepted form's answers) does not fit `fields`, or None."""
    if not isinstance(content, Mapping):
        return "the answers are not an object"
    known = {f.name for f in fields}
    unknown = [str(name) for name in content if name not in known]
    if unknown:
        return f"unknown field {unknown[0]}"
    for field in fields:
        if field.name not in content:
            if field.required and field.default is None:
                return f"{field.name} is required"
            continue
        try:
            field.check(content[field.name])
        except FormError as exc:
            return str(exc)
    return None


def _field(name: str, prop: object, required: bool) -> FormField:
    if not isinstance(prop, Mapping):
        raise FormError(f"field {name}: not a schema object")
    title = _text(prop.get("title")) or name
    description = _text(prop.get("description"))
    kind, choices, labels = _kind(name, prop)
    field = FormField(
        name=name,
        kind=kind,
        title=title,
        description=description,
        required=required,
        choices=choices,
        labels=labels,
        minimum=_finite(prop.get("minimum")),
        maximum=_finite(prop.get("maximum")),
        min_length=_count(prop.get("minLength")),
        max_length=_count(prop.get("maxLength")),
        format=_text(prop.get("format")) or None,
        secret=kind in ("string", "number", "integer") and _asks_secret(name, title, prop),
    )
    default = prop.get("default")
    if default is None:
        return field
    try:
        checked = field.check(default)
    except FormError:
        return field  # a default that does not fit its own field is not offered
    return FormField(**{**field.__dict__, "default": checked})


def _asks_secret(name: str, title: str, prop: Mapping[str, Any]) -> bool:
    if prop.get("format") == "password" or prop.get("writeOnly") is True:
        return True
    for words in (_words(name), _words(title)):
        if _SECRET_WORDS.intersection(words) or (len(words) > 1 and words[-1] == "key"):
            return True
    return False


def _words(text: str) -> list[str]:
    """`accessToken`, `user-password`, `API key` -> their lower-case words."""
    return re.findall(r"[a-z0-9]+", re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text).lower())


def _kind(name: str, prop: Mapping[str, Any]) -> tuple[Kind, tuple[str, ...], tuple[str, ...]]:
    kind = prop.get("type")
    if kind == "array":
        items = prop.get("items")
        items = items if isinstance(items, Mapping) else {}
        choices, labels = _choices(name, items)
        if not choices:
            raise FormError(f"field {name}: an array without a list of choices")
        return "multi", choices, labels
    choices, labels = _choices(name, prop)
    if choices:
        return "enum", choices, labels
    if kind in ("string", "number", "integer", "boolean"):
        return kind, (), ()
    raise FormError(f"field {name}: type {str(kind)[:40]!r} is not a form field")


def _choices(name: str, prop: Mapping[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    options = prop.get("oneOf") or prop.get("anyOf")
    if isinstance(options, list):
        pairs = [
            (o["const"], _text(o.get("title")) or o["const"])
            for o in options
            if isinstance(o, Mapping) and isinstance(o.get("const"), str)
        ]
    elif isinstance(prop.get("enum"), list):
        values = [v for v in prop["enum"] if isinstance(v, str)]
        names = prop.get("enumNames")
        names = names if isinstance(names, list) and len(names) == len(values) else values
        pairs = [(v, _text(n) or v) for v, n in zip(values, names, strict=True)]
    else:
        return (), ()
    if len(pairs) > MAX_CHOICES:
        raise FormError(f"field {name}: {len(pairs)} choices (paicli shows at most {MAX_CHOICES})")
    return tuple(v for v, _ in pairs), tuple(label for _, label in pairs)


def _number(name: str, kind: str, text: str) -> int | float:
    try:
        return int(text) if kind == "integer" else float(text)
    except ValueError:
        raise FormError(
            f"{name}: not {'a whole number' if kind == 'integer' else 'a number'}"
        ) from None


def _number_text(value: float) -> str:
    return str(int(value)) if value == int(value) else str(value)


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _finite(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None
