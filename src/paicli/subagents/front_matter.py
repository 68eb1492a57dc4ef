"""A Markdown definition's YAML front matter: the mapping between a first `---` line and the
next `---` (or `...`) line, and the body after it. Claude Code's agent, command and skill files
share the shape.

The text is a repository's as often as the user's, so the YAML is read with the safe loader
(plain data only, never an object of Python's), a key given twice is refused (the second would
silently hide the first from whoever reads the file), and a document nested past the parser's
recursion is one error like any other.
"""

from __future__ import annotations

from collections import Counter
from functools import cache
from typing import TYPE_CHECKING

from paicli.errors import PaicliError

if TYPE_CHECKING:
    import yaml

__all__ = ["FrontMatterError", "split_front_matter"]

_OPEN = "---"
_CLOSE = ("---", "...")


class FrontMatterError(PaicliError, ValueError):
    """Front matter that cannot be read; the message says why, on one line."""


@cache
def _loader() -> type[yaml.SafeLoader]:
    """The safe loader (libyaml's when PyYAML has it), refusing a mapping that repeats a
    key. PyYAML is imported here, when a file first has front matter (it costs a start
    tens of milliseconds)."""
    import yaml  # noqa: PLC0415

    base: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class Loader(base):  # type: ignore[misc, valid-type]  # libyaml's class has no stub
        pass

    def mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict[object, object]:
        keys = Counter(key.value for key, _ in node.value if isinstance(key, yaml.ScalarNode))
        repeated = next((key for key, count in keys.items() if count > 1), None)
        if repeated is not None:
            raise yaml.constructor.ConstructorError(
                None, None, f"the key {repeated!r} is given twice", node.start_mark
            )
        return loader.construct_mapping(node, deep=True)

    Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, mapping)
    return Loader


def split_front_matter(text: str) -> tuple[dict[str, object], str] | None:
    """The front matter of `text` as a mapping, and the body after it; None when `text` has
    none (it does not open with a `---` line). `FrontMatterError` when it cannot be read."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].rstrip() != _OPEN:
        return None
    end = next((n for n, line in enumerate(lines[1:], 1) if line.rstrip() in _CLOSE), None)
    if end is None:
        raise FrontMatterError("the front matter opened by --- on line 1 is never closed")
    block = "".join(lines[1:end])
    loader = _loader()
    import yaml  # noqa: PLC0415 - loaded by _loader already

    try:
        data = yaml.load(block, Loader=loader)  # a safe loader (see _loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f" at line {mark.line + 2}" if mark is not None else ""  # after the --- line
        raise FrontMatterError(f"invalid YAML front matter{where}: {exc.problem}") from exc
    except yaml.YAMLError as exc:  # the reader's own, on several lines: made one
        raise FrontMatterError(f"invalid YAML front matter: {' '.join(str(exc).split())}") from exc
    except RecursionError as exc:
        raise FrontMatterError("invalid YAML front matter: nested too deeply") from exc
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise FrontMatterError("the front matter is not a mapping of keys to values")
    if not all(isinstance(key, str) for key in data):
        raise FrontMatterError("the front matter has a key that is not text")
    return {str(key): value for key, value in data.items()}, "".join(lines[end + 1 :])
