"""What a repository's server entry (scope "project" or "claude") cannot do on its own.

A cloned repository's config is not the user's: it cannot mark its server trusted (`trust`),
choose a file paicli appends to (`stderrFile`) or have its traffic recorded (`trace`), and its
server runs inside the project (a `cwd` leading out of it is dropped). Each ignored key
becomes one warning naming file and server. The secret-looking variables it reads are those
`--trust-project` will not pass unless the user's own config allows them (`_project_rules`,
`paicli.secret_names`). A secret-looking variable expanded into the query string of its `url` is
refused: servers and the proxies between log URLs whole.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from paicli.secret_names import is_allowed, looks_secret
from paicli.servers._config_file import InvalidConfig
from paicli.servers._expand import VariableUse, in_query

__all__ = [
    "USER_ONLY_KEYS",
    "cwd_inside_project",
    "refuse_secrets_in_query",
    "unallowed_secrets",
    "without_user_only_keys",
]

USER_ONLY_KEYS = {
    "trust": "only your own config can trust a project's server",
    "stderrFile": "a project cannot choose a file for paicli to write",
    "trace": "only your own config can record a server's messages to your disk",
}


def without_user_only_keys(
    value: Mapping[str, object], where: str
) -> tuple[dict[str, object], tuple[str, ...]]:
    """`value` without the keys only the user may set, and a warning for each one dropped."""
    kept = {k: v for k, v in value.items() if k not in USER_ONLY_KEYS}
    notices = [
        f"{where}: ignoring {k!r} ({why})" for k, why in USER_ONLY_KEYS.items() if k in value
    ]
    return kept, tuple(notices)


def cwd_inside_project(
    resolved: dict[str, object], where: str, project_dir: Path | None
) -> tuple[dict[str, object], str | None]:
    """`resolved` (expanded) without a `cwd` that leads out of the project, and the warning
    saying so. A relative `cwd` is taken from the project folder and kept as the absolute
    folder checked: paicli may run in a subfolder, where the same relative path (`../..`)
    would lead elsewhere, out of the project."""
    cwd = resolved.get("cwd")
    if project_dir is None or not isinstance(cwd, str):
        return resolved, None
    root = project_dir.resolve()
    try:
        folder = (root / cwd).resolve()
        if folder.is_relative_to(root):
            return {**resolved, "cwd": str(folder)}, None
    except (OSError, RuntimeError):  # a symlink loop: certainly not a plain project folder
        pass
    inside = {k: v for k, v in resolved.items() if k != "cwd"}
    return inside, f"{where}: ignoring 'cwd' (a project's server runs inside the project)"


def unallowed_secrets(uses: Iterable[VariableUse], allowed: Iterable[str]) -> tuple[str, ...]:
    """The secret-looking variables among `uses` that no pattern in `allowed` lets through."""
    patterns = tuple(allowed)
    names = (u.name for u in uses if looks_secret(u.name) and not is_allowed(u.name, patterns))
    return tuple(dict.fromkeys(names))


def refuse_secrets_in_query(
    value: Mapping[str, object], variables: Mapping[str, str], where: str
) -> None:
    """Raise `InvalidConfig` when a secret-looking variable would be expanded into the query
    string of `value`'s `url` (whatever the user's config allows: it is about logs)."""
    secrets = [name for name in in_query(value.get("url"), variables) if looks_secret(name)]
    if secrets:
        names = ", ".join(f"${{{name}}}" for name in secrets)
        raise InvalidConfig(
            f"{where}: 'url' puts {names} in the URL's query string, which servers and "
            "proxies log; a repository's server must take it in a header"
        )
