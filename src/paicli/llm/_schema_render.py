"""The walk behind `clean_schema`: each node is normalised, then rendered for one profile.

Rendering keeps the keywords a profile accepts, turns the rest into description text, closes
objects for OpenAI strict mode, and records what the adapter must know (nulled optional
properties, places the profile cannot express). Nothing here mutates the input.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Literal

from paicli.llm._schema_normalize import Normal, Normalizer
from paicli.llm._schema_text import describe, keyword_text, one_line

Json = dict[str, object]
ProfileName = Literal["default", "openai_strict", "gemini"]

# Identity and vocabulary keywords mean nothing to a model; $defs/definitions are inlined.
_DROPPED = frozenset(
    {"$schema", "$id", "$defs", "definitions", "$comment", "$anchor", "$dynamicAnchor"}
    | {"$vocabulary", "readOnly", "writeOnly"}
)
# JSON Schema keywords whose values are plain data: the default profile copies them as they are.
_PLAIN = frozenset(
    {"type", "required", "enum", "const", "title", "default", "examples", "format", "pattern"}
    | {"minLength", "maxLength", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}
    | {"multipleOf", "minItems", "maxItems", "uniqueItems", "minProperties", "maxProperties"}
    | {"dependentRequired", "minContains", "maxContains", "contentMediaType", "deprecated"}
    | {"contentEncoding"}
)
_ONE_SCHEMA = frozenset(
    {"additionalProperties", "additionalItems", "contains", "propertyNames", "not", "if"}
    | {"then", "else", "unevaluatedProperties", "unevaluatedItems"}
)
_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "dependentSchemas"})
_GEMINI_FORMATS = {
    "string": {"enum", "date-time"},
    "number": {"float", "double"},
    "integer": {"int32", "int64"},
}
# Deeper nesting than this is left undescribed (it also keeps Python's recursion limit far).
_MAX_DEPTH = 40


@dataclass(frozen=True)
class _At:
    """Where the walk is: in the output (for messages), in the arguments, and via which refs."""

    pointer: str = ""
    args: tuple[str | None, ...] = ()
    refs: tuple[str, ...] = ()
    depth: int = 0
    root: bool = False

    def down(self, *keys: str, arg: str | Literal[False] | None = False) -> _At:
        """Down through `keys`; `arg` is the step in the arguments (False: none, None: any
        array item or map value)."""
        path = "".join("/" + key.replace("~", "~0").replace("/", "~1") for key in keys)
        args = self.args if arg is False else (*self.args, arg)
        return _At(self.pointer + path, args, self.refs, self.depth + 1)


class Cleaner:
    """One `clean_schema` call: the walk's state and what it found along the way."""

    def __init__(self, root: Mapping[str, object], profile: ProfileName) -> None:
        self._root = root
        self._profile = profile
        self._normalizer = Normalizer(root, one_type=profile == "gemini")
        self.nulled: list[tuple[str | None, ...]] = []
        self.unsupported: list[str] = []

    def clean_root(self) -> tuple[Json, bool]:
        """The cleaned root (always an object schema) and whether it had to be wrapped."""
        normal = self._normalizer.normalize(self._root)
        schema = normal.schema
        if not (_kind(schema) or {"anyOf", "oneOf", "enum", "const", "items"} & schema.keys()):
            schema["type"] = "object"  # MCP says the root is an object; `{}` means no arguments
        if schema.get("type") == "object":
            return self._render(normal, _At(refs=normal.refs, root=True)), False
        wrapper = {"type": "object", "properties": {"value": self._root}, "required": ["value"]}
        return self._render(self._normalizer.normalize(wrapper), _At(root=True)), True

    def node(self, schema: object, at: _At) -> Json:
        """A sub-schema, cleaned."""
        if at.depth > _MAX_DEPTH:
            self._unsupported(at, "nested too deeply to describe")
            return {"description": "Nested too deeply to describe here."}
        return self._render(self._normalizer.normalize(schema, at.refs), replace(at, root=False))

    # -- rendering ---------------------------------------------------------------------------

    def _render(self, normal: Normal, at: _At) -> Json:
        at = replace(at, refs=normal.refs)
        src = normal.schema
        notes = list(normal.notes)
        if self._profile == "default":
            out = self._render_default(src, at)
            if normal.nullable and not at.root:
                notes.append("May be null.")
        else:
            out = self._render_limited(src, at, notes)
            self._close_object(out, src, at, notes)
            if not (_kind(out) or {"anyOf", "enum", "const"} & out.keys()):
                self._unsupported(at, "a free-form value (no type)")
            if normal.nullable and not at.root:
                out = _nullable(out, self._profile)
        if at.root:
            out.setdefault("properties", {})
        text = describe(src.get("description"), notes)
        if text:
            out["description"] = text
        return out

    def _render_default(self, src: Json, at: _At) -> Json:
        out: Json = {}
        for key, value in src.items():
            if key in _SCHEMA_MAPS and isinstance(value, Mapping):
                out[key] = self._map(key, value, at)
            elif key in {"anyOf", "oneOf", "prefixItems", "items"} and isinstance(value, list):
                out[key] = self._list(key, value, at)  # a list under items: draft-07 tuples
            elif key in _ONE_SCHEMA or key == "items":
                out[key] = value if isinstance(value, bool) else self.node(value, _each(at, key))
            elif key in _PLAIN:
                out[key] = copy.deepcopy(value)
        return out

    def _render_limited(self, src: Json, at: _At, notes: list[str]) -> Json:
        """openai_strict and gemini: the keywords they take; the rest as text."""
        gemini = self._profile == "gemini"
        out: Json = {}
        kind = src.get("type")
        for key, value in src.items():
            if key in _DROPPED or key in {"description", "required", "additionalProperties"}:
                continue  # required and additionalProperties: see _close_object
            if key == "properties" and isinstance(value, Mapping):
                out[key] = self._map(key, value, at)
            elif key == "type" and isinstance(value, list) and gemini:
                out["anyOf"] = [{"type": item} for item in value]
            elif key in {"type", "title"} or (gemini and key in {"minItems", "maxItems"}):
                out[key] = copy.deepcopy(value)
            elif key == "anyOf" and isinstance(value, list):
                out["anyOf"] = self._list(key, value, at)
            elif key == "oneOf" and isinstance(value, list) and "anyOf" not in src:
                # Neither profile takes oneOf; anyOf plus this sentence says the same.
                out["anyOf"] = self._list(key, value, at)
                notes.append("Exactly one of the alternatives applies.")
            elif key in {"items", "prefixItems"}:
                self._render_items(src, at, out, notes)
            elif gemini and key == "format" and value in _GEMINI_FORMATS.get(str(kind), ()):
                out[key] = value
            elif key in {"enum", "const"} and _literal_fits(key, value, kind, gemini):
                out[key] = copy.deepcopy(value)
                if gemini and key == "const":
                    out["enum"] = [out.pop("const")]
                if gemini:
                    out["type"] = "string"
            elif key in _PLAIN or key in _ONE_SCHEMA or key in _SCHEMA_MAPS or key == "oneOf":
                notes.append(keyword_text(key, value))
        return out

    def _render_items(self, src: Json, at: _At, out: Json, notes: list[str]) -> None:
        if "items" in out:
            return  # prefixItems and items are rendered together
        items, prefix = src.get("items"), src.get("prefixItems")
        positional = (
            prefix if isinstance(prefix, list) else items if isinstance(items, list) else []
        )
        rendered = [self.node(value, _each(at, "items")) for value in positional]
        if positional:
            summary = "; ".join(f"{n}: {one_line(r)}" for n, r in enumerate(rendered, 1))
            notes.append(f"Items by position: {summary}.")
        if isinstance(items, Mapping) or (isinstance(items, bool) and not positional):
            rendered.append(self.node(items, _each(at, "items")))
        if rendered:
            out["items"] = rendered[0] if len(rendered) == 1 else {"anyOf": rendered}

    def _close_object(self, out: Json, src: Json, at: _At, notes: list[str]) -> None:
        """Objects under openai_strict and gemini: `required`, and what becomes of other keys.

        openai_strict closes every object and requires every property, so an optional one
        becomes nullable (remembered, so the adapter can leave its null out again). An
        object whose keys are not declared cannot be closed without losing its meaning:
        it stays open and is reported as unsupported.
        """
        if out.get("type") != "object":
            return
        props = out.get("properties")
        props = props if isinstance(props, dict) else {}
        required = [name for name in _strings(src.get("required")) if name in props]
        extra = src.get("additionalProperties")
        if isinstance(extra, Mapping) and extra:
            values = self.node(extra, _each(at, "additionalProperties"))
            if self._profile == "gemini":
                notes.append(f"Other keys are allowed; each value: {one_line(values)}.")
            else:
                out["additionalProperties"] = values
            self._unsupported(at, "an object with arbitrary keys")
        elif not props and not at.root and extra is not False:
            self._unsupported(at, "a free-form object (no declared properties)")
        elif self._profile == "openai_strict":
            out["additionalProperties"] = False
        if self._profile == "gemini":
            if required:
                out["required"] = required
            return
        for name, prop in props.items():
            if name not in required and isinstance(prop, dict) and not _accepts_null(prop):
                props[name] = _nullable(prop, "openai_strict")
                self.nulled.append((*at.args, name))
        if props or at.root:
            out["properties"] = props
            out["required"] = list(props)

    def _map(self, key: str, value: Mapping[object, object], at: _At) -> Json:
        if key == "properties":
            return {k: self.node(v, at.down(key, k, arg=k)) for k, v in _items(value)}
        return {k: self.node(v, at.down(key, k, arg=None)) for k, v in _items(value)}

    def _list(self, key: str, value: list[object], at: _At) -> list[object]:
        step: str | Literal[False] | None = None if key in {"items", "prefixItems"} else False
        return [self.node(item, at.down(key, str(n), arg=step)) for n, item in enumerate(value)]

    def _unsupported(self, at: _At, what: str) -> None:
        self.unsupported.append(f"{at.pointer or '/'}: {what}")


def _each(at: _At, key: str) -> _At:
    """Into a keyword whose schema applies to every array item or map value."""
    return at.down(key, arg=None)


def _items(value: Mapping[object, object]) -> list[tuple[str, object]]:
    return [(k, v) for k, v in value.items() if isinstance(k, str)]


def _strings(value: object) -> list[str]:
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


def _kind(schema: Mapping[str, object]) -> bool:
    return isinstance(schema.get("type"), str | list)


def _literal_fits(key: str, value: object, kind: object, gemini: bool) -> bool:
    """Whether enum/const can stay a keyword; Gemini takes them only for strings."""
    values = [value] if key == "const" else value if isinstance(value, list) else None
    if values is None:
        return False
    return not gemini or (kind in {None, "string"} and all(isinstance(v, str) for v in values))


def _accepts_null(schema: Json) -> bool:
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    branches = schema.get("anyOf")
    if isinstance(branches, list):
        return any(isinstance(b, dict) and _accepts_null(b) for b in branches)
    enum = schema.get("enum")
    if isinstance(enum, list) or "const" in schema:
        return None in (enum if isinstance(enum, list) else [schema["const"]])
    return kind is None


def _nullable(schema: Json, profile: ProfileName) -> Json:
    """`schema` also accepting null, the way `profile` writes it."""
    out = dict(schema)
    if profile == "gemini":
        out["nullable"] = True
        return out
    kind = out.get("type")
    if isinstance(kind, str):
        out["type"] = [kind, "null"]
    elif isinstance(kind, list) and "null" not in kind:
        out["type"] = [*kind, "null"]
    branches = out.get("anyOf")
    if kind is None and isinstance(branches, list) and not _accepts_null(out):
        out["anyOf"] = [*branches, {"type": "null"}]
    if "const" in out:
        out["enum"] = [out.pop("const")]
    enum = out.get("enum")
    if isinstance(enum, list) and None not in enum:
        out["enum"] = [*enum, None]
    return out
