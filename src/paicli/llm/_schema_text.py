"""Schema keywords as text for the model, and descriptions within their cap.

A profile that cannot take a keyword still tells the model about it in the description;
the server's original schema remains what arguments are checked against.
"""

from __future__ import annotations

import json

DESCRIPTION_CAP = 1000
# When notes compete with a long server description for the cap, the description keeps at
# least this much, so its opening (usually the gist) survives.
_KEEP_AT_LEAST = 200
# A value quoted in a note (a default, an enum member, a sub-schema) is cut at this length.
_VALUE_CAP = 200

_PHRASES = {
    "minLength": "At least {} characters.",
    "maxLength": "At most {} characters.",
    "minimum": "Minimum {}.",
    "maximum": "Maximum {}.",
    "exclusiveMinimum": "Greater than {}.",
    "exclusiveMaximum": "Less than {}.",
    "multipleOf": "A multiple of {}.",
    "minItems": "At least {} items.",
    "maxItems": "At most {} items.",
    "minProperties": "At least {} properties.",
    "maxProperties": "At most {} properties.",
    "default": "Default: {}.",
    "examples": "Examples: {}.",
    "const": "Must be {}.",
    "not": "Must not match {}.",
}
# Keywords whose string value reads best unquoted.
_RAW = {
    "pattern": "Must match the regular expression `{}`.",
    "format": "Format: {}.",
    "contentMediaType": "Content type: {}.",
    "contentEncoding": "Encoding: {}.",
}


def one_line(value: object) -> str:
    """`value` as compact JSON, cut to a readable length."""
    text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=str)
    return text if len(text) <= _VALUE_CAP else text[: _VALUE_CAP - 1] + "…"


def keyword_text(key: str, value: object) -> str:
    """A sentence saying what keyword `key` with `value` requires ("" when nothing)."""
    if key == "enum" and isinstance(value, list):
        return cap(f"One of: {', '.join(one_line(v) for v in value)}.", _VALUE_CAP * 2)
    if key in {"uniqueItems", "deprecated"}:
        return ("Items must be unique." if key == "uniqueItems" else "Deprecated.") * (
            value is True
        )
    if key in _RAW and isinstance(value, str):
        return _RAW[key].format(cap(value, _VALUE_CAP))
    if key in _PHRASES and not (key.startswith("exclusive") and isinstance(value, bool)):
        return _PHRASES[key].format(one_line(value))  # (draft-04 exclusive bounds are booleans)
    return f"{key}: {one_line(value)}."


def cap(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, an ellipsis marking the cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def describe(description: object, notes: list[str]) -> str:
    """The server's description followed by `notes`, within `DESCRIPTION_CAP` characters."""
    own = description.strip() if isinstance(description, str) else ""
    extra = " ".join(note for note in notes if note)
    if own and extra and own[-1] not in ".!?:;":
        own += "."
    full = f"{own} {extra}".strip()
    if len(full) <= DESCRIPTION_CAP:
        return full
    if own and extra and len(extra) <= DESCRIPTION_CAP - _KEEP_AT_LEAST:
        # Cut the server's text rather than the notes: they carry the constraints the
        # provider could not take as keywords.
        room = DESCRIPTION_CAP - len(extra) - 2
        return f"{own[:room].rstrip()}… {extra}"
    return cap(full, DESCRIPTION_CAP)
