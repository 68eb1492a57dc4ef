"""`${VAR}` and `${VAR:-default}` expansion in the fields of a server entry that take it.

Only `command`, `args`, `env` values, `cwd`, `url` and `headers` values are expanded, once
(an expanded value is never expanded again). The default applies when VAR is unset or
empty, as in the shell, and is taken literally. Every unset variable is named in one error.
A `withheld` variable (a secret the user has not agreed to pass) is not passed: an `env` or
`headers` value that reads it is left out, and elsewhere it reads as unset, without an error
(its default, or nothing). `references` lists what an entry reads without expanding anything,
for the trust prompt; `in_query` names the variables whose value would land in the query
string of the entry's `url`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass

from paicli.servers._config_file import InvalidConfig

__all__ = ["VariableUse", "expanded", "in_query", "references"]

_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


@dataclass(frozen=True, slots=True)
class VariableUse:
    """`${name}` read by `field` (`command`, `args[0]`, `env.KEY`, `cwd`, `url`,
    `headers.Name`)."""

    field: str
    name: str

    @property
    def on_command_line(self) -> bool:
        """Expanded into a stdio server's command line, which every local user can read
        (`ps`, /proc/PID/cmdline)."""
        return self.field == "command" or self.field.startswith("args[")


def references(value: Mapping[str, object]) -> tuple[VariableUse, ...]:
    """Every variable the expanding fields of `value` read, in order, as written."""
    found: list[VariableUse] = []

    def note(text: object, field: str) -> object:
        if isinstance(text, str):
            found.extend(VariableUse(field, m.group(1)) for m in _VARIABLE.finditer(text))
        return text

    _each_field(value, note)
    return tuple(found)


def expanded(
    value: dict[str, object],
    variables: Mapping[str, str],
    where: str,
    withheld: Collection[str] = (),
) -> dict[str, object]:
    """A copy of `value` with variables expanded in the fields that take them, the
    `withheld` ones not passed."""
    missing: list[str] = []
    left_out: set[str] = set()

    def expand(text: object, field: str) -> object:
        if not isinstance(text, str):
            return text  # server_from_dict names the wrong type

        def substitute(match: re.Match[str]) -> str:
            name, default = match.group(1), match.group(2)
            if name in withheld:
                left_out.add(field)
                return default or ""
            found = variables.get(name)
            if default is not None and not found:
                return default
            if found is None:
                # The variable first, the field after it in words: "headers.Authorization:
                # ${X}" would read to the redactor as a header and its value, and hide the name.
                missing.append(f"${{{name}}} is not set (in {field})")
                return match.group(0)
            return found

        return _VARIABLE.sub(substitute, text)

    resolved = _each_field(value, expand)
    if missing:
        raise InvalidConfig(f"{where}: " + "; ".join(missing))
    for key in ("env", "headers"):
        mapping = resolved.get(key)
        if isinstance(mapping, dict):
            resolved[key] = {k: v for k, v in mapping.items() if f"{key}.{k}" not in left_out}
    return resolved


def in_query(url: object, variables: Mapping[str, str]) -> tuple[str, ...]:
    """The variables read by `url` whose value would be part of its query string once
    expanded (a reference written after the `?`, or a value that brings the `?` with it).
    An unset variable counts where it is written."""
    if not isinstance(url, str):
        return ()
    spans: list[tuple[str, int, int]] = []
    pieces: list[str] = []
    length = 0
    last = 0
    for match in _VARIABLE.finditer(url):
        pieces.append(url[last : match.start()])
        length += match.start() - last
        name, default = match.group(1), match.group(2)
        found = variables.get(name)
        text = default if default is not None and not found else found
        text = match.group(0) if text is None else text
        spans.append((name, length, length + len(text)))
        pieces.append(text)
        length += len(text)
        last = match.end()
    whole = "".join(pieces) + url[last:]
    query = whole.find("?")
    if query < 0:
        return ()
    fragment = whole.find("#", query)
    end = len(whole) if fragment < 0 else fragment
    # A value that ends at the `?` puts nothing in the query; one that reaches past it does.
    names = (n for n, start, stop in spans if start < end and (start > query or stop > query + 1))
    return tuple(dict.fromkeys(names))


def _each_field(
    value: Mapping[str, object], change: Callable[[object, str], object]
) -> dict[str, object]:
    """A copy of `value` with `change(text, field)` applied to each field that expands."""
    resolved = dict(value)
    for key in ("command", "cwd", "url"):
        if key in resolved:
            resolved[key] = change(resolved[key], key)
    args = resolved.get("args")
    if isinstance(args, list):
        resolved["args"] = [change(arg, f"args[{i}]") for i, arg in enumerate(args)]
    for key in ("env", "headers"):
        mapping = resolved.get(key)
        if isinstance(mapping, dict):
            resolved[key] = {k: change(v, f"{key}.{k}") for k, v in mapping.items()}
    oauth = resolved.get("oauth")
    if isinstance(oauth, dict):
        resolved["oauth"] = {
            k: change(v, f"oauth.{k}") if k in ("clientId", "clientSecret") else v
            for k, v in oauth.items()
        }
    return resolved
