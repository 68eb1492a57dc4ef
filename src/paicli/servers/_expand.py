"""`${VAR}` and `${VAR:-default}` expansion in the fields of a server entry that take it.

Only `command`, `args`, `env` values, `cwd`, `url` and `headers` values are expanded, once
(an expanded value is never expanded again). The default applies when VAR is unset or
empty, as in the shell, and is taken literally. Every unset variable is named in one error.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ._config_file import InvalidConfig

__all__ = ["expanded"]

_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def expanded(
    value: dict[str, object], variables: Mapping[str, str], where: str
) -> dict[str, object]:
    """A copy of `value` with variables expanded in the fields that take them."""
    missing: list[str] = []

    def expand(text: object, field: str) -> object:
        if not isinstance(text, str):
            return text  # server_from_dict names the wrong type

        def substitute(match: re.Match[str]) -> str:
            name, default = match.group(1), match.group(2)
            found = variables.get(name)
            if default is not None and not found:
                return default
            if found is None:
                missing.append(f"{field}: ${{{name}}} is not set")
                return match.group(0)
            return found

        return _VARIABLE.sub(substitute, text)

    resolved = dict(value)
    for key in ("command", "cwd", "url"):
        if key in resolved:
            resolved[key] = expand(resolved[key], key)
    args = resolved.get("args")
    if isinstance(args, list):
        resolved["args"] = [expand(arg, f"args[{i}]") for i, arg in enumerate(args)]
    for key in ("env", "headers"):
        mapping = resolved.get(key)
        if isinstance(mapping, dict):
            resolved[key] = {k: expand(v, f"{key}.{k}") for k, v in mapping.items()}
    if missing:
        raise InvalidConfig(f"{where}: " + "; ".join(missing))
    return resolved
