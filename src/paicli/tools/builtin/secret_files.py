"""The secret values a read of a secret file shows (a `.env`, a key, a credentials file), so
that once the user let a tool read one, its values are redacted from everything sent to the
model: the model learns which variables there are, never what they hold.

Only what the tool showed is taken apart (a page of read_file, grep's matching lines), which is
exactly what the model would otherwise see. Values come from assignments (`NAME=value`,
`export NAME="value"`, `name: value`, `"name": "value",`, `.npmrc`'s `//host/:_authToken=`),
passwords in URLs and `.netrc` lines, and the base64 lines of keys. A value under a secret name
(`redact.is_secret_variable`) is taken from 6 characters (the redactor's own floor); any other
from 8, unless it is a plain word, dotted name or number (`production`, `db.internal`, `3000`),
which would blank out ordinary text everywhere.
"""

from __future__ import annotations

import re

from paicli.redact import is_secret_variable

__all__ = ["MAX_VALUES", "secrets_shown"]

# Values taken from one read: a hostile file of 10,000 assignments must not make every later
# redaction (which looks for each value) slow.
MAX_VALUES = 200
_MIN_SECRET_NAMED = 6
_MIN_OTHER = 8
# A key's body line (PEM, or a JSON key's pieces between `\n` escapes) is at least this long.
_MIN_KEY_LINE = 16

# How the tools show a file's lines: read_file "     3\tTEXT", grep "path:3: TEXT".
_PREFIXES = {"read_file": re.compile(r" *\d+\t"), "grep": re.compile(r"[^\n]*?:\d+: ")}
_LINE_CUT = " [line cut]"

_ASSIGNMENT = re.compile(
    r"""(?x)
    ^(?:export\s+)?
    (?:[^=\s]*:)?                                  # .npmrc: //registry.example/:_authToken=
    (?P<quote>["']?)(?P<name>[A-Za-z_][\w.-]*)(?P=quote)
    \s*[=:]\s*
    (?P<value>.+)$
    """
)
_URL_PASSWORD = re.compile(r"(?i)\b[a-z][a-z0-9+.-]*://[^/\s:@]+:(?P<value>[^/\s@]+)@")
_NETRC_PASSWORD = re.compile(r"(?i)(?:^|\s)(?:password|passwd)\s+(?P<value>\S+)")
_KEY_LINE = re.compile(rf"[A-Za-z0-9+/]{{{_MIN_KEY_LINE},}}={{0,2}}")
_ORDINARY = re.compile(r"(?i)[a-z]+(?:[._-][a-z]+)*|[\d.:_-]+")


def secrets_shown(tool: str, text: str) -> list[str]:
    """The secret values in `text`, what `tool` (read_file or grep) showed of a secret file;
    at most MAX_VALUES, in the order they appear."""
    prefix = _PREFIXES.get(tool)
    found: dict[str, None] = {}  # ordered, without repeats
    for shown in text.split("\n"):
        match = prefix.match(shown) if prefix is not None else None
        line = shown[match.end() :] if match is not None else shown
        for value in _values(line.removesuffix(_LINE_CUT).strip()):
            found[value] = None
            if len(found) >= MAX_VALUES:
                return list(found)
    return list(found)


def _values(line: str) -> list[str]:
    if not line or line.startswith(("#", ";")):
        return []
    values: list[str] = []
    if (assignment := _ASSIGNMENT.match(line)) is not None:
        value = _unquoted(assignment["value"])
        secret_name = is_secret_variable(assignment["name"])
        if _worth(value, secret_name=secret_name):
            values.append(value)
        # A key kept in one JSON string: its lines, as a program that decodes it prints them.
        values += [piece for piece in value.split("\\n") if _KEY_LINE.fullmatch(piece)]
    for pattern in (_URL_PASSWORD, _NETRC_PASSWORD):
        values += [m["value"] for m in pattern.finditer(line) if _worth(m["value"], True)]
    if _KEY_LINE.fullmatch(line) and _worth(line, secret_name=False):
        values.append(line)
    return values


def _unquoted(raw: str) -> str:
    raw = raw.strip()
    if raw[:1] in ("'", '"'):
        end = raw.find(raw[0], 1)
        return raw[1:end] if end != -1 else raw[1:]  # (unclosed: a value that goes on)
    return raw.split(" #", 1)[0].strip().rstrip(",;")


def _worth(value: str, secret_name: bool) -> bool:
    """Whether `value` is taken: long enough, not a reference (`${VAR}`), and under a secret
    name or unlike ordinary text."""
    if value.startswith("$") or len(value) < _MIN_SECRET_NAMED:
        return False
    if secret_name:
        return True
    return len(value) >= _MIN_OTHER and _ORDINARY.fullmatch(value) is None
