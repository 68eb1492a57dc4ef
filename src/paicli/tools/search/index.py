"""Finding tools by what they do: a local BM25 ranking over names, descriptions and parameters.

When many servers offer more tool definitions than a request should carry, the model gets a
`search_tools` tool instead of most of them (`paicli.tools.search.offer`). This module is the
ranking: no network and no embedding model, so it works with every provider and costs microseconds.

Each tool is one document made of three fields, weighted: its name (split at `_`, `-`, `.` and
camelCase; the `mcp__server__` prefix counts as the server's name), its description and its
parameter names (with their descriptions). Words are folded to a crude stem (plural and
common verb endings), and a few abbreviations people and models use for tool vocabulary are
spelled out (`pr` is a pull request). Scores are BM25 (k1 1.2, b 0.75) summed over fields.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from paicli.tools.base import ToolSpec

__all__ = ["ToolIndex", "tokens"]

# Field weights: a word in the name says most about what the tool does.
_NAME_WEIGHT = 3.0
_DESCRIPTION_WEIGHT = 1.0
_PARAMETER_WEIGHT = 0.6
_K1 = 1.2
_B = 0.75
# A description can be long (or hostile): only its head counts.
_DESCRIPTION_CHARS = 2_000
_PARAMETER_CHARS = 1_000

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_WORD = re.compile(r"[a-z0-9]+")
_ALNUM = re.compile(r"[A-Za-z0-9]+")
_STOP = frozenset(
    _WORD.findall(
        "a an and are as at be by can do for from how i in into is it its me my of on or some "
        "that the their them these this to use using what which with you your"
    )
)
# Shorthand that tool users write and tool authors spell out (or the other way round).
_SYNONYMS: Mapping[str, tuple[str, ...]] = {
    "pr": ("pull", "request"),
    "prs": ("pull", "request"),
    "mr": ("merge", "request"),
    "repo": ("repository",),
    "repos": ("repository",),
    "dir": ("directory",),
    "folder": ("directory",),
    "folders": ("directory",),
    "msg": ("message",),
    "db": ("database",),
    "sql": ("query", "sql"),
    "url": ("url", "web"),
    "website": ("web", "page", "url"),
    "webpage": ("web", "page", "url"),
    "picture": ("image",),
    "photo": ("image",),
    "screenshot": ("screenshot", "image"),
    "remove": ("delete",),
    "erase": ("delete",),
    "rename": ("move", "rename"),
    "make": ("create",),
    "new": ("create", "new"),
    "send": ("post", "send"),
    "find": ("search", "find"),
    "look": ("search",),
    "lookup": ("search",),
    "open": ("open", "create"),
    "bug": ("issue", "bug"),
    "ticket": ("issue",),
    "run": ("run", "execute"),
    "execute": ("run", "execute"),
    "stage": ("stage", "add"),
    "remember": ("memory", "add", "store"),
    "fact": ("observation", "fact"),
    "far": ("distance",),
    "trip": ("travel", "route"),
}


def _stem(word: str) -> str:
    """A crude English stem: enough to meet `files`/`file`, `creates`/`created`/`create`."""
    for suffix, keep in (("ies", "y"), ("sses", "ss"), ("ing", ""), ("ed", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: len(word) - len(suffix)] + keep
            break
    # `stage`/`staging`, `create`/`creating` meet at `stag`, `creat`.
    return word[:-1] if word.endswith("e") and len(word) > 4 else word


def tokens(text: str) -> list[str]:
    """The searchable words of `text`: split, lower-cased, stop words out, stemmed, with
    shorthand spelled out."""
    words: list[str] = []
    # camelCase counts split and whole (`JavaScript` is `java script` and `javascript`).
    split = _WORD.findall(_CAMEL.sub(" ", text).lower())
    joined = [w.lower() for w in _ALNUM.findall(text) if _CAMEL.search(w)]
    for raw in [*split, *joined]:
        if raw in _STOP:
            continue
        for word in _SYNONYMS.get(raw, (raw,)):
            words.append(_stem(word))
    return words


def _name_text(spec: ToolSpec) -> str:
    if spec.server is not None and spec.tool is not None:
        return f"{spec.server} {spec.tool}".replace("_", " ").replace("-", " ")
    return spec.name.replace("_", " ").replace("-", " ")


def _parameter_text(schema: Mapping[str, object]) -> str:
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return ""
    parts: list[str] = []
    for name, prop in properties.items():
        parts.append(str(name).replace("_", " "))
        if isinstance(prop, Mapping) and isinstance(prop.get("description"), str):
            parts.append(str(prop["description"])[:200])
    return " ".join(parts)[:_PARAMETER_CHARS]


@dataclass(frozen=True)
class _Field:
    weight: float
    counts: list[Counter[str]]  # per document
    lengths: list[int]
    average: float


def _field(weight: float, texts: Iterable[str]) -> _Field:
    counts = [Counter(tokens(text)) for text in texts]
    lengths = [sum(c.values()) for c in counts]
    average = (sum(lengths) / len(lengths)) if lengths else 0.0
    return _Field(weight, counts, lengths, average or 1.0)


class ToolIndex:
    """The tools in `specs`, ranked against a query by `search`. Build one per tool list."""

    def __init__(self, specs: Sequence[ToolSpec]) -> None:
        self.specs = list(specs)
        self._fields = [
            _field(_NAME_WEIGHT, (_name_text(s) for s in self.specs)),
            _field(_DESCRIPTION_WEIGHT, (s.description[:_DESCRIPTION_CHARS] for s in self.specs)),
            _field(_PARAMETER_WEIGHT, (_parameter_text(s.parameters) for s in self.specs)),
        ]
        documents: Counter[str] = Counter()
        for index in range(len(self.specs)):
            seen: set[str] = set()
            for field in self._fields:
                seen.update(field.counts[index])
            documents.update(seen)
        total = len(self.specs)
        self._idf = {
            word: math.log(1 + (total - n + 0.5) / (n + 0.5)) for word, n in documents.items()
        }

    def scores(self, query: str) -> list[float]:
        """One score per spec, in order; 0 for a tool that shares no word with the query."""
        words = [w for w in dict.fromkeys(tokens(query)) if w in self._idf]
        result = [0.0] * len(self.specs)
        for index in range(len(self.specs)):
            score = 0.0
            for field in self._fields:
                counts, length = field.counts[index], field.lengths[index]
                norm = _K1 * (1 - _B + _B * length / field.average)
                for word in words:
                    tf = counts.get(word, 0)
                    if tf:
                        score += field.weight * self._idf[word] * tf * (_K1 + 1) / (tf + norm)
            result[index] = score
        return result

    def search(self, query: str, *, server: str | None = None, limit: int = 5) -> list[ToolSpec]:
        """The best `limit` tools for `query` (only `server`'s when given), best first;
        tools that share no word with the query are never returned."""
        ranked = sorted(
            (
                (score, index)
                for index, score in enumerate(self.scores(query))
                if score > 0 and (server is None or self.specs[index].server == server)
            ),
            key=lambda pair: (-pair[0], pair[1]),
        )
        return [self.specs[index] for _, index in ranked[:limit]]
