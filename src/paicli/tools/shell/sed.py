"""Whether a sed script only edits the stream: no command that reads or writes a file or runs
one (`r`, `R`, `w`, `W`, `e`, and the `w` and `e` flags of `s`). Anything this reading does
not understand counts as not covered."""

from __future__ import annotations

__all__ = ["sed_reason"]

# Commands that act on the stream alone; `q`/`Q`/`l`/`L` may take a number.
_STREAM = frozenset("pdnNPDqQ=lLzhHgGxF{}")
_LABELLED = frozenset("btT:")
_TEXT = frozenset("aic")
_SUBSTITUTE_FLAGS = frozenset("gpiImM0123456789")
_ADDRESS = frozenset("0123456789$,~+! \t")


def sed_reason(script: str) -> str | None:
    """Why the sed `script` is not covered, or None."""
    index = 0
    while index < len(script):
        index = _skip_address(script, index)
        if index >= len(script):
            return None
        command = script[index]
        index += 1
        if command in ";\n \t":
            continue
        if command in _STREAM:
            while index < len(script) and script[index].isdigit():
                index += 1
        elif command in _LABELLED or command in _TEXT or command == "#":
            index = _line_end(script, index, labels=command in _LABELLED)
        elif command in "sy":
            index = _parts(script, index)
            if index < 0:
                return "the sed script could not be read"
            if command == "s":
                while index < len(script) and script[index] in _SUBSTITUTE_FLAGS:
                    index += 1
                if index < len(script) and script[index] not in ";\n} \t":
                    return f"the sed flag `{script[index]}` writes a file or runs a command"
        else:
            return f"the sed command `{command}` reads or writes a file or runs a command"
    return None


def _skip_address(script: str, index: int) -> int:
    while index < len(script):
        char = script[index]
        if char in _ADDRESS:
            index += 1
        elif char in "/\\":
            delimiter = "/" if char == "/" else script[index + 1 : index + 2]
            start = index + (1 if char == "/" else 2)
            index = _delimited(script, start, delimiter)
            if index < 0:
                return len(script)
            while index < len(script) and script[index] in "IM":
                index += 1
        else:
            break
    return index


def _line_end(script: str, index: int, *, labels: bool) -> int:
    """After a label (which `;` ends) or a text argument (which only a newline ends)."""
    ends = ";\n" if labels else "\n"
    while index < len(script) and script[index] not in ends:
        index += 1
    return index


def _parts(script: str, index: int) -> int:
    """After the two delimited parts of `s/a/b/` or `y/a/b/`: the index after the last
    delimiter, or -1."""
    if index >= len(script) or script[index] in "\\\n":
        return -1
    delimiter = script[index]
    index = _delimited(script, index + 1, delimiter)
    return -1 if index < 0 else _delimited(script, index, delimiter)


def _delimited(script: str, index: int, delimiter: str) -> int:
    """The index after the next unescaped `delimiter` from `index`, or -1."""
    while index < len(script):
        if script[index] == "\\":
            index += 2
        elif script[index] == delimiter:
            return index + 1
        else:
            index += 1
    return -1
