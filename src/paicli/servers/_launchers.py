"""Recognising a server command that runs code it was handed as text, for the trust question.

A project's server entry may launch `sh -c "..."`, `python -c "..."` or `curl ... | sh`: what
runs is then a script in an argument (or fetched from the network at every start), not a
program the user can look up. Such commands are allowed, but the question says so. This is a
warning, not a rule: an interpreter paicli does not know, or code hidden in a file the
command runs, is not caught.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

__all__ = ["launcher_warnings"]

_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "busybox"})
# Interpreters and the options that hand them code on the command line.
_INLINE_CODE: Mapping[str, frozenset[str]] = {
    "python": frozenset({"-c"}),
    "node": frozenset({"-e", "--eval", "-p", "--print"}),
    "deno": frozenset({"eval"}),
    "bun": frozenset({"-e", "--eval"}),
    "perl": frozenset({"-e", "-E"}),
    "ruby": frozenset({"-e"}),
    "php": frozenset({"-r"}),
    "pwsh": frozenset({"-c", "-command", "-encodedcommand", "-e", "-ec"}),
    "powershell": frozenset({"-c", "-command", "-encodedcommand", "-e", "-ec"}),
    "cmd": frozenset({"/c", "/k"}),
}
_FETCH = r"(?:curl|wget|fetch|iwr|irm|invoke-webrequest|invoke-restmethod)\b"
# `curl ... | sh`, `sh <(curl ...)`, `"$(curl ...)"`, `` `curl ...` ``, `... | iex`.
_DOWNLOAD_AND_RUN = re.compile(
    rf"\b{_FETCH}[^|;&]*\|\s*(?:sudo\s+(?:-\S+\s+)*)?(?:env\s+)?"
    r"(?:\S*/)?(?:sh|bash|dash|zsh|ksh|fish|python\d*(?:\.\d+)?|node|perl|ruby|php|iex)\b"
    rf"|<\(\s*{_FETCH}|\$\(\s*{_FETCH}|`\s*{_FETCH}",
    re.IGNORECASE,
)


def launcher_warnings(raw: Mapping[str, object]) -> tuple[str, ...]:
    """What the question should warn about `raw`'s command line (an entry as written)."""
    command = raw.get("command")
    args = raw.get("args")
    words = [command, *(args if isinstance(args, list) else [])]
    line = [word for word in words if isinstance(word, str)]
    warnings: list[str] = []
    for at, word in enumerate(line):
        name = _program(word)
        option = _inline_option(name, line[at + 1 :])
        if option is None:
            continue
        what = "a shell command line" if name in _SHELLS else "code given on its command line"
        warnings.append(f"runs {what} ({os.path.basename(word)} {option})")
    if any(_DOWNLOAD_AND_RUN.search(word) for word in line):
        warnings.append("downloads code and runs it (curl ... | sh)")
    return tuple(dict.fromkeys(warnings))


def _program(word: str) -> str:
    """`/usr/bin/python3.12` -> `python`, `bash.exe` -> `bash`."""
    name = os.path.basename(word).lower().removesuffix(".exe")
    return re.sub(r"\d+(?:\.\d+)*$", "", name)


def _inline_option(program: str, after: list[str]) -> str | None:
    """The option among the leading options of `after` that hands `program` code to run."""
    inline = _INLINE_CODE.get(program, frozenset())
    for word in after:
        if program in _SHELLS and re.fullmatch(r"-[a-z]*c[a-z]*", word):
            return word  # -c, and clusters such as -lc or -ec
        if word.lower() in inline:
            return word
        if not word.startswith("-") or word == "--":
            return None  # the program (or script) itself: its options are its own
    return None
