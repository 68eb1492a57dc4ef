"""An entry's command line or URL, as written, for the trust question and the listings.

`${VAR}` is never expanded; the values of env and headers are masked when asked (the
user's own may be secrets; a repository's are shown, since they came with it).
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping

__all__ = ["target_line"]

# A shell word that needs no quotes, `${VAR}` included (paicli expands it, not a shell).
_PLAIN_WORD = re.compile(r"[\w@%+=:,./~${}-]+")


def target_line(raw: Mapping[str, object], *, mask: bool) -> str:
    """An entry's command line or URL as written, env and header values masked (`mask`)."""
    if "command" in raw:
        words = [raw.get("command"), *_list(raw.get("args"))]
        env = _mapping(raw.get("env"))
        line = " ".join(
            [*(f"{k}={_value(v, mask)}" for k, v in env.items()), *(_word(w) for w in words)]
        )
        if "cwd" in raw:
            line += f"   (in {_word(raw['cwd'])})"
        return line
    headers = _mapping(raw.get("headers"))
    shown = "".join(f"  [{k}: {_value(v, mask)}]" for k, v in headers.items())
    return f"{_text(raw.get('url'))}{shown}"


def _word(value: object) -> str:
    text = _text(value)
    return text if _PLAIN_WORD.fullmatch(text) else shlex.quote(text)


def _value(value: object, mask: bool) -> str:
    return "***" if mask else _word(value)


def _text(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _list(value: object) -> list[object]:
    return value if isinstance(value, list) else []


def _mapping(value: object) -> dict[str, object]:
    return value if isinstance(value, dict) else {}
