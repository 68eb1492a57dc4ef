"""`${VAR}` and `${VAR:-default}` expansion in the fields of a server entry that take it.

Only `command`, `args`, `env` values, `cwd`, `url` and `headers` values are expanded, once
(an expanded value is never expanded again). The default applies when VAR is unset or
empty, as in the shell, and is taken literally. Every unset variable is named in one error.
A `withheld` variable (a secret the user has not agreed to pass) is not passed: an `env` or
`headers` value that reads it is left out, and elsewhere it reads as unset, without an error
(its default, or nothing). `references` lists what an entry reads without expanding anything,
for the trust prompt.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass

from ._config_file import InvalidConfig

__all__ = ["VariableUse", "expanded", "references"]

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
                missing.append(f"{field}: ${{{name}}} is not set")
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
