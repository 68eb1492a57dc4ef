"""Which environment variables look like secrets: the one rule, by name alone.

A project's server config may read the user's environment through `${VAR}`. A variable
whose name contains one of `SECRET_WORDS` (case-insensitive, anywhere in the name:
`AWS_SECRET_ACCESS_KEY`, `GITHUB_TOKEN`, `PGPASSWORD`) is flagged in the trust prompt and is
never handed to a project's server by `--trust-project` unless the user's own config allows
it. Names are a heuristic: a secret in `MY_VALUE` is not caught, so every variable read is
still named in the prompt.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable

__all__ = ["SECRET_WORDS", "is_allowed", "looks_secret"]

SECRET_WORDS = (
    "KEY",
    "SECRET",
    "TOKEN",
    "PASS",  # PASSWORD, PASSWD, PASSPHRASE, PGPASS
    "CREDENTIAL",
    "AUTH",
    "PRIVATE",
    "SESSION",
    "COOKIE",
    "CERT",
    "SIGNATURE",
    "DSN",  # Sentry and database DSNs carry keys
    "DATABASE_URL",  # usually carries a password
)


def looks_secret(name: str) -> bool:
    """Whether the variable `name` looks like it holds a secret."""
    upper = name.upper()
    return any(word in upper for word in SECRET_WORDS)


def is_allowed(name: str, patterns: Iterable[str]) -> bool:
    """Whether `name` matches one of the user's glob `patterns` (`AWS_*`), case-sensitively
    as environment variables are."""
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)
