"""Normalising a raw JSON Schema node before it is rendered for a provider.

Local `$ref`s are expanded against the server's original root, so a raw sub-schema stays
meaningful wherever it ends up; `allOf` is merged; unions are simplified (`T | null` becomes
T plus a nullable flag, unions of constants one enum). Only the node itself is normalised:
its sub-schemas are normalised when the renderer reaches them. Nothing mutates the input.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import unquote

from paicli.llm._schema_text import one_line

Json = dict[str, object]

_REF_KEYS = ("$ref", "$dynamicRef", "$recursiveRef")
# A recursive $ref is expanded this many times along one path, then stubbed: the model sees
# the shape twice, which shows the nesting without an unbounded schema.
_REF_REPEATS = 2
# Caps total $ref expansions per schema: defs that each use the next one several times
# would otherwise grow exponentially when inlined.
_MAX_EXPANSIONS = 500
# Annotations that do not constrain a value: on a merge conflict the first one simply wins.
_ANNOTATIONS = frozenset({"title", "default", "examples", "deprecated"})


@dataclass
class Normal:
    """A normalised schema node and what normalising learnt about it."""

    schema: Json
    nullable: bool = False
    refs: tuple[str, ...] = ()
    notes: list[str] = field(default_factory=list)


class Normalizer:
    """Normalises nodes of one schema; counts $ref expansions across the whole walk."""

    def __init__(self, root: Mapping[str, object], *, one_type: bool) -> None:
        self._root = root
        self._one_type = one_type  # the profile takes a single type per schema (Gemini)
        self._expansions = 0

    def normalize(self, schema: object, refs: tuple[str, ...] = ()) -> Normal:
        """`schema` with refs expanded, allOf merged and unions simplified (shallow)."""
        if not isinstance(schema, Mapping):
            # `true` (and anything malformed) accepts any value; `false` accepts none.
            return Normal(
                {}, refs=refs, notes=["No value is accepted here."] if schema is False else []
            )
        node: Json = dict(schema)
        normal = Normal(node, refs=refs)
        while True:
            normal.nullable |= node.pop("nullable", False) is True  # OpenAPI-style input
            if any(key in node for key in _REF_KEYS):
                node, normal.refs = self._expand(node, normal)
                continue
            if "allOf" in node:
                node = self._merge_all_of(node, normal)
                continue
            if self._simplify_unions(node, normal):
                continue
            break
        types = node.get("type")
        if isinstance(types, list):
            kept = [kind for kind in types if kind != "null"]
            if kept:
                normal.nullable |= len(kept) < len(types)
                node["type"] = kept[0] if len(kept) == 1 else kept
        if "type" not in node and {"properties", "additionalProperties"} & node.keys():
            node["type"] = "object"
        normal.schema = node
        return normal

    def _expand(self, node: Json, normal: Normal) -> tuple[Json, tuple[str, ...]]:
        """`node` with its $ref replaced by the referenced schema (its own keywords win)."""
        ref: object = None
        for key in _REF_KEYS:
            ref = node.pop(key, ref)
        if not isinstance(ref, str) or not ref.startswith("#"):
            # Never fetched: a schema must not make paicli reach out to the network.
            normal.notes.append(f"Refers to the external schema {ref}, not included here.")
            return node, normal.refs
        name = ref.rsplit("/", 1)[-1] if "/" in ref else "schema"
        target = _lookup(self._root, ref)
        if target is None:
            normal.notes.append(f"Refers to {ref}, which this schema does not define.")
            return node, normal.refs
        recursive = normal.refs.count(ref) >= _REF_REPEATS
        if recursive or self._expansions >= _MAX_EXPANSIONS:
            kind = target.get("type") if isinstance(target, Mapping) else None
            normal.notes.append(
                f"Has the same structure as the enclosing {name} (nesting continues; "
                "not described further)."
                if recursive
                else f"A {name} (not described here: the schema is too large to inline)."
            )
            return {**node, "type": kind if isinstance(kind, str) else "object"}, normal.refs
        self._expansions += 1
        base = dict(target) if isinstance(target, Mapping) else {}
        return {**base, **node}, (*normal.refs, ref)

    def _merge_all_of(self, node: Json, normal: Normal) -> Json:
        branches = node.pop("allOf")
        if not isinstance(branches, list) or not branches:
            return node
        parts = [self.normalize(branch, normal.refs) for branch in branches]
        for part in parts:
            normal.notes.extend(part.notes)
            merge_into(node, part.schema, normal.notes)
        if all(part.nullable for part in parts):
            node["nullable"] = True
        return node

    def _simplify_unions(self, node: Json, normal: Normal) -> bool:
        """Simplify `anyOf`/`oneOf` in place; True when something changed."""
        for key in ("anyOf", "oneOf"):
            if key in node and self._simplify_union(node, key, normal):
                return True
        return False

    def _simplify_union(self, node: Json, key: str, normal: Normal) -> bool:
        branches = node[key]
        if not isinstance(branches, list) or not branches:
            del node[key]
            return True
        raws: list[object] = []
        parts: list[Normal] = []
        for branch in branches:
            part = self.normalize(branch, normal.refs)
            normal.nullable |= part.nullable
            if _is_null(part.schema):
                normal.nullable = True
            elif set(part.schema) == {key} and isinstance(part.schema[key], list):
                inner = part.schema[key]
                assert isinstance(inner, list)
                raws.extend(inner)  # a nested union of the same kind is the same union
                parts.extend(self.normalize(item, normal.refs) for item in inner)
            else:
                raws.append(branch)
                parts.append(part)
        if not parts:
            del node[key]
            node.setdefault("type", "null")
            return True
        if len(parts) == 1:
            del node[key]
            normal.notes.extend(parts[0].notes)
            merge_into(node, parts[0].schema, normal.notes)
            return True
        schemas = [part.schema for part in parts]
        if _all_literals(schemas):
            del node[key]
            _merge_literals(node, schemas, normal.notes)
            return True
        plain_types = [s.get("type") for s in schemas if set(s) == {"type"}]
        if (
            len(plain_types) == len(schemas)
            and all(isinstance(kind, str) for kind in plain_types)
            and "type" not in node
            and not self._one_type  # Gemini takes one type per schema
        ):
            del node[key]
            node["type"] = list(dict.fromkeys(plain_types))
            return True
        if len(raws) != len(branches) or any(
            a is not b for a, b in zip(raws, branches, strict=True)
        ):
            node[key] = raws
            return True
        return False


def merge_into(target: dict[str, object], source: Mapping[str, object], notes: list[str]) -> None:
    """Add `source`'s keywords to `target`, as when both must hold (`allOf`); a constraint
    that cannot be merged is added to `notes` as text. `target`'s own values come first."""
    for key, value in source.items():
        mine = target.get(key)
        if key not in target:
            target[key] = value
        elif mine == value or key in _ANNOTATIONS:
            continue
        elif key == "properties" and isinstance(mine, Mapping) and isinstance(value, Mapping):
            merged = dict(mine)
            for name, sub in value.items():
                both = name in merged and merged[name] != sub
                merged[name] = {"allOf": [merged[name], sub]} if both else sub
            target[key] = merged
        elif key == "required" and isinstance(mine, list) and isinstance(value, list):
            target[key] = list(dict.fromkeys([*mine, *value]))
        elif key == "description" and isinstance(mine, str) and isinstance(value, str):
            target[key] = f"{mine} {value}"
        elif key == "type" and (common := _common_type(mine, value)) is not None:
            target[key] = common
        else:
            notes.append(f"Must also satisfy {key}: {one_line(value)}.")


def _common_type(left: object, right: object) -> object:
    """The types allowed by both `type` values (an integer is a number), or None."""
    a = [left] if isinstance(left, str) else left if isinstance(left, list) else []
    b = [right] if isinstance(right, str) else right if isinstance(right, list) else []
    both = [kind for kind in a if kind in b]
    if "integer" not in both and (
        ("integer" in a and "number" in b) or ("number" in a and "integer" in b)
    ):
        both.append("integer")
    if not both:
        return None
    return both[0] if len(both) == 1 else both


def _lookup(root: Mapping[str, object], ref: str) -> object:
    """The target of a local JSON-pointer `ref` in `root`, or None.

    Always resolved against the document root: a nested `$id` that would move the base is
    not honoured (MCP servers generate self-contained schemas with root-level $defs).
    """
    pointer = unquote(ref[1:])
    if pointer and not pointer.startswith("/"):
        return None  # a plain-name fragment ($anchor): not supported, reported as undefined
    node: object = root
    for part in pointer.split("/")[1:] if pointer else []:
        step = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping):
            node = node.get(step)
        elif isinstance(node, list) and step.isdigit() and int(step) < len(node):
            node = node[int(step)]
        else:
            return None
    return node if isinstance(node, Mapping | bool) else None


def _is_null(schema: Json) -> bool:
    if schema.get("type") == "null" and not set(schema) - {"type", "description", "title"}:
        return True
    return schema.get("const", ...) is None or schema.get("enum") == [None]


def _all_literals(schemas: list[Json]) -> bool:
    allowed = {"const", "enum", "type", "description", "title"}
    return all(
        ("const" in s or isinstance(s.get("enum"), list))
        and not set(s) - allowed
        and all(not isinstance(v, dict | list) for v in _literal_values(s))
        for s in schemas
    )


def _literal_values(schema: Json) -> list[object]:
    enum = schema.get("enum")
    return [schema["const"]] if "const" in schema else list(enum) if isinstance(enum, list) else []


def _merge_literals(node: Json, schemas: list[Json], notes: list[str]) -> None:
    """A union of constants (zod/pydantic literal unions) as one enum; their descriptions
    become text."""
    values: list[object] = []
    for schema in schemas:
        for value in _literal_values(schema):
            if value not in values:
                values.append(value)
        about = schema.get("description") or schema.get("title")
        if isinstance(about, str):
            notes.append(f"{one_line(_literal_values(schema))[1:-1]}: {about.rstrip('.')}.")
    kinds = {s.get("type") for s in schemas}
    if len(kinds) == 1 and isinstance(next(iter(kinds)), str) and "type" not in node:
        node["type"] = next(iter(kinds))
    node["enum"] = values
