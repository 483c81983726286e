"""A tool's parameters schema from outside (an MCP server's ``inputSchema``) made into one the
prompt and the invoker can take, with bounded work and a bounded result.

:func:`flatten` resolves ``$ref``/``$defs`` in place (a schema that refers to itself is cut
after :data:`REF_CUT_DEPTH` levels, and says so), writes ``anyOf`` with ``null`` as a type
list, rewrites older drafts' keywords, drops what the validator cannot take and describes the
fields of nested objects in words; the result passes
:func:`~react_agent.tools.schema.check_valid`.

Expanding references copies what they point to, so a small schema can stand for a huge one
(definitions referred to many times, each with a large ``enum``, ``default`` or
``examples``). The work is bounded whatever the shape of the input:

- the input is first measured (at most :data:`MAX_INPUT_NODES` values, :data:`MAX_INPUT_DEPTH`
  levels; larger is not walked at all);
- the walk visits at most :data:`MAX_WORK` schemas (each ``$ref`` expansion counts);
- the result holds at most :data:`MAX_VALUES` values, :data:`MAX_SCHEMAS` of them schemas, and
  :data:`MAX_CHARS` characters of strings (a data value such as an ``enum`` is measured once,
  however often it is copied).

What does not fit is cut, never copied again and again: a cut part of a schema accepts any
value (the server still checks it) and its argument's description ends with :data:`CUT_TEXT`.
A cut never makes the schema stricter than the server's: where a cut would (inside ``not``,
``if``, ``oneOf``, ``contains``; beside ``additionalProperties: false``), the keyword goes too.
Every argument at the top level keeps at least its name.

(A little over 600 lines: the walk and its budget's bookkeeping are one class, read together;
the words for nested objects and the plainer fallback are in :mod:`._shapes`, the rewrites
every source shares in :mod:`._normalize`.)
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry

from ..._json import walk
from ...errors import ToolDefinitionError
from ._bounds import MAX_DEPTH, check_valid
from ._normalize import (
    MAX_DESCRIPTION_CHARS,
    add_null,
    merge_all_of,
    merge_nullable,
    normalize,
    resolve_local,
)
from ._shapes import CUT_TEXT, describe_shape, simplified

REF_CUT_DEPTH = 3
"""How many times a ``$ref`` may be expanded inside its own expansion (a schema that refers to
itself, such as a tree); deeper, the schema is cut and says so."""

MAX_INPUT_NODES = 100_000
MAX_INPUT_DEPTH = 100
"""An input schema larger or deeper than this is not walked at all (it is replaced by an open
one, or refused if it has required arguments)."""

MAX_WORK = 40_000
"""The most schemas the walk visits, each expansion of a ``$ref`` counted."""

MAX_VALUES = 4_000
"""The most values (objects, arrays, strings, numbers, ...) the flattened schema holds (well
under :data:`~react_agent.tools.schema.MAX_NODES`)."""

MAX_CHARS = 32_000
"""The most characters of strings (names, descriptions, ``enum`` values, ...) it holds."""

MAX_SCHEMAS = 256
"""The most schemas (objects that are schemas, not data) it holds: checking a schema against
the meta-schema costs about a hundred times more per schema than per data value."""

MAX_ARGUMENTS = 128
"""The most top-level arguments kept; the required ones first."""

MAX_TEXT_CHARS = MAX_DESCRIPTION_CHARS
"""A longer description of an argument is cut."""

MAX_NOTES = 20
"""The most notes kept for one schema (then one line counts the rest)."""

_DROP = frozenset({"$schema", "$id", "$anchor", "$dynamicAnchor", "$comment", "$defs",
                   "definitions", "title", "$vocabulary", "$dynamicRef", "$recursiveRef"})
_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "dependentSchemas"})
_SCHEMA_LISTS = frozenset({"anyOf", "oneOf", "allOf", "prefixItems"})
_SCHEMA_ONE = frozenset({"items", "additionalProperties", "not", "contains", "if", "then", "else",
                         "propertyNames", "unevaluatedItems", "unevaluatedProperties",
                         "additionalItems", "contentSchema"})
_TOP_LEFT_OUT = ("anyOf", "oneOf", "allOf", "not", "if", "then", "else")
"""Combinations left at the top (an ``allOf`` is merged in where it can be)."""
_DATA_KEYWORDS = frozenset({
    "type", "enum", "const", "required", "minimum", "maximum", "exclusiveMinimum",
    "exclusiveMaximum", "multipleOf", "minLength", "maxLength", "pattern", "format",
    "minItems", "maxItems", "uniqueItems", "minContains", "maxContains", "minProperties",
    "maxProperties", "dependentRequired", "description", "default", "examples", "deprecated",
    "readOnly", "writeOnly", "contentEncoding", "contentMediaType", "nullable",
})
"""The JSON Schema keywords (validation and annotation, and OpenAPI's ``nullable``) whose
values are data; any other keyword a server writes (a vendor extension, a typo) is dropped:
nothing checks or renders it, and it could hold what looks like a reference."""

_NEEDS_WHOLE = {
    # keyword: what goes with it when a cut inside it would make the schema stricter
    "not": ("not",),
    "if": ("if", "then", "else"),
    "oneOf": ("oneOf",),
    "anyOf": ("anyOf",),
    "contains": ("contains", "minContains", "maxContains"),
    "properties": ("additionalProperties", "unevaluatedProperties"),
    "patternProperties": ("additionalProperties", "unevaluatedProperties"),
    "prefixItems": ("items", "unevaluatedItems"),
}
"""A cut inside the keyword (``not``: its schema accepts more, so ``not`` accepts less) or a
truncated list or map (``anyOf`` with fewer options, ``properties`` fewer names beside
``additionalProperties: false``) would refuse values the server takes: these go instead."""

_SIBLING_DEPENDENT = ("additionalProperties", "unevaluatedProperties", "items",
                      "unevaluatedItems", "if", "then", "else")
"""Keywords whose meaning depends on their siblings: dropped from an object cut part-way."""

_GROWS = {"nullable": 3, "const": 1}
"""Values a keyword adds when it is rewritten (``nullable``: ``"null"`` in the type and the
enum, the type a list; ``const``: the enum's list)."""

_EMPTY_PARAMETERS: dict[str, Any] = {"type": "object", "properties": {}}
_NUMBER_CHARS = 8  # what a number counts as, in characters


def flatten(schema: Any) -> tuple[dict[str, Any], list[str]]:
    """``schema`` as a parameters schema the agent can render and check.

    Args:
        schema: a JSON Schema as parsed JSON (``None`` means no arguments).

    Returns:
        ``(parameters, notes)``: an ``object`` schema that passes
        :func:`~react_agent.tools.schema.check_valid`, with no ``$ref`` left, of at most
        :data:`MAX_VALUES` values and :data:`MAX_CHARS` characters (plus a cut marker per
        level); and what was lost on the way, in words (empty when nothing was; at most
        :data:`MAX_NOTES` + 1). See the module's docstring for what is done.

    Raises:
        ToolDefinitionError: the tool's required arguments cannot be shown (the schema is
            too large or deep to read, or has more than :data:`MAX_ARGUMENTS` required ones).
    """
    notes = _Notes()
    if schema is None:
        return copy.deepcopy(_EMPTY_PARAMETERS), notes.lines()
    if not isinstance(schema, dict):
        notes.add("the input schema is not an object; the tool takes no arguments here")
        return copy.deepcopy(_EMPTY_PARAMETERS), notes.lines()
    if not _within(schema, MAX_INPUT_NODES, MAX_INPUT_DEPTH):
        if _has_required(schema):
            raise ToolDefinitionError(
                f"its input schema is larger than {MAX_INPUT_NODES} values or deeper than "
                f"{MAX_INPUT_DEPTH} levels, and its required arguments cannot be shown")
        notes.add("the input schema is too large or too deep to read; its arguments are "
                  "passed unchecked")
        return _open_parameters(), notes.lines()
    flat = _Flattener(normalize(schema), notes).top()
    for attempt in (flat, simplified(flat)):
        try:
            check_valid(attempt, "parameters")
        except ToolDefinitionError as exc:
            notes.add(f"simplified: {exc}")
            continue
        return attempt, notes.lines()
    notes.add("the input schema cannot be used; its arguments are passed unchecked")
    return _open_parameters(), notes.lines()


class _Notes:
    """What was lost, each once, at most :data:`MAX_NOTES` (then a count of the rest)."""

    def __init__(self) -> None:
        self.kept: dict[str, None] = {}
        self.more = 0

    def add(self, note: str) -> None:
        if note in self.kept:
            return
        if len(self.kept) < MAX_NOTES:
            self.kept[note] = None
        else:
            self.more += 1

    def lines(self) -> list[str]:
        more = [f"... and {self.more} more notes"] if self.more else []
        return [*self.kept, *more]


def _open_parameters() -> dict[str, Any]:
    return {"type": "object", "properties": {}, "additionalProperties": True}


def _within(schema: Any, max_nodes: int, max_depth: int) -> bool:
    for nodes, (_, depth, _) in enumerate(walk(schema, max_depth), 1):
        if nodes > max_nodes or depth > max_depth:
            return False
    return True


def _has_required(schema: dict[str, Any]) -> bool:
    required = schema.get("required")
    return isinstance(required, list) and bool(required)


class _Flattener:
    """Resolves references in place and rewrites what the agent cannot take (one schema),
    within the budget of :data:`MAX_WORK`, :data:`MAX_VALUES` and :data:`MAX_CHARS`."""

    def __init__(self, root: dict[str, Any], notes: _Notes) -> None:
        self.root = root
        self.notes = notes
        self.work = 0
        self.values = 0
        self.chars = 0
        self.schemas = 0
        self.reserved = (0, 0)
        """Values and characters kept back for the top-level arguments not walked yet."""
        self.reserved_schemas = 0
        self.cuts = 0
        """How many times something was cut (compared before and after a part is walked)."""
        self.sizes: dict[int, tuple[Any, int, int]] = {}
        """Values and characters of each data value of the input (by ``id``: the input is not
        changed while it is walked), measured once."""
        self.targets: dict[str, Any] = {}
        """What each reference resolves to (``None``: nowhere)."""
        self.left_out = False
        """Whether top-level arguments were left out (beyond :data:`MAX_ARGUMENTS`)."""

    # -- the budget ----------------------------------------------------------------------------
    @property
    def spent(self) -> bool:
        return (self.work >= MAX_WORK or self.values >= MAX_VALUES - self.reserved[0]
                or self.chars >= MAX_CHARS - self.reserved[1]
                or self.schemas >= MAX_SCHEMAS - self.reserved_schemas)

    def take(self, values: int, chars: int) -> bool:
        """Count ``values`` and ``chars`` into the result, if they fit."""
        if self.values + values > MAX_VALUES - self.reserved[0] or \
                self.chars + chars > MAX_CHARS - self.reserved[1]:
            return False
        self.values += values
        self.chars += chars
        return True

    def cut(self) -> dict[str, Any]:
        """What stands where the budget ran out: any value."""
        self.count_cut()
        self.values += 2
        self.chars += len(CUT_TEXT)
        return {"description": CUT_TEXT}

    def count_cut(self) -> None:
        self.cuts += 1
        self.notes.add(f"the input schema is too large: parts were cut to keep it within "
                       f"{MAX_VALUES} values, {MAX_SCHEMAS} schemas and {MAX_CHARS} characters; "
                       "any value is accepted there")

    def measure(self, value: Any) -> tuple[int, int]:
        """Values and characters of a data value of the input (each container measured once)."""
        if isinstance(value, str):
            return 1, len(value)
        if not isinstance(value, (dict, list)):
            return 1, _NUMBER_CHARS
        known = self.sizes.get(id(value))
        if known is not None:
            return known[1], known[2]
        values, chars = 1, 0
        if isinstance(value, dict):
            for key, item in value.items():
                size = self.measure(item)
                values, chars = values + size[0], chars + size[1] + len(str(key))
        else:
            for item in value:
                size = self.measure(item)
                values, chars = values + size[0], chars + size[1]
        self.sizes[id(value)] = (value, values, chars)  # kept: its id is not reused
        return values, chars

    # -- the walk ------------------------------------------------------------------------------
    def top(self) -> dict[str, Any]:
        root = self.root
        for _ in range(REF_CUT_DEPTH):  # a whole arguments model given by reference
            ref = root.get("$ref")
            target = self.resolve(ref) if isinstance(ref, str) else None
            if not isinstance(target, dict):
                break
            root = {**target, **{k: v for k, v in root.items() if k != "$ref"}}
        props = root.get("properties")
        if isinstance(props, dict):
            root = {**root, "properties": self.arguments(root, props)}
        top_required = root.get("required")  # kept whatever is cut (the names are few)
        out = self.walk({k: v for k, v in root.items() if k != "required"}, (), 1)
        if not isinstance(out, dict):
            out = {}
        if isinstance(top_required, list):
            out["required"] = [r for r in top_required if isinstance(r, str)]
        types = out.get("type")
        if types != "object":
            if types is not None and not (isinstance(types, list) and "object" in types):
                self.notes.add(f"the input schema has type {json.dumps(types)[:100]}, not "
                               "object; read as an object")
            out["type"] = "object"
        if self.left_out:  # the arguments left out are not refused
            out.pop("additionalProperties", None)
            out.pop("unevaluatedProperties", None)
        for key in _TOP_LEFT_OUT:
            if key in out:  # a combination at the top cannot be rendered as arguments
                out.pop(key)
                self.notes.add(f"the top-level {key} was left out (arguments are checked by "
                               "their own schemas only)")
        props = out.get("properties")
        if not isinstance(props, dict):
            props = {}
        out["properties"] = props
        required = out.get("required")
        if isinstance(required, list):
            kept = [r for r in dict.fromkeys(required) if isinstance(r, str) and r in props]
            if len(kept) != len(required):
                self.notes.add("required arguments that are not declared were dropped")
            if kept:
                out["required"] = kept
            else:
                out.pop("required")
        elif required is not None:
            out.pop("required")
        for spec in props.values():
            if isinstance(spec, dict):
                described = describe_shape(spec)
                if described is not None and self.take(0, len(described)):
                    spec["description"] = described
        return out

    def arguments(self, root: dict[str, Any], props: dict[str, Any]) -> dict[str, Any]:
        """The top-level arguments that are kept (at most :data:`MAX_ARGUMENTS`, the required
        first), in their order; raises ToolDefinitionError when a required one cannot be."""
        required = root.get("required")
        names = {r for r in required if isinstance(r, str)} if isinstance(required, list) \
            else set()
        if len(props) <= MAX_ARGUMENTS:
            return props
        kept = [n for n in props if n in names][:MAX_ARGUMENTS + 1]
        if len(kept) > MAX_ARGUMENTS:
            raise ToolDefinitionError(
                f"it has more than {MAX_ARGUMENTS} required arguments; they cannot all be shown")
        room = MAX_ARGUMENTS - len(kept)
        optional = [n for n in props if n not in names][:room]
        chosen = set(kept) | set(optional)
        self.notes.add(f"{len(props) - len(chosen)} of its {len(props)} arguments (optional "
                       f"ones) were left out: at most {MAX_ARGUMENTS} are shown")
        self.left_out = True
        return {n: s for n, s in props.items() if n in chosen}

    def walk(self, node: Any, refs: tuple[str, ...], depth: int) -> Any:
        self.work += 1
        if self.spent or not self.take(1, 0):
            return self.cut()
        if node is True:
            return {}
        if node is False:
            return {"not": {}}
        if not isinstance(node, dict):  # not a schema: check_valid says so later
            kept = self.data(node)
            return self.cut() if kept is _CUT else kept
        ref = node.get("$ref")
        if isinstance(ref, str):
            self.values -= 1  # the expansion counts itself
            return self.expand(ref, node, refs, depth)
        self.schemas += 1
        out: dict[str, Any] = {}
        cut_in: set[str] = set()
        stopped = False
        for key, value in node.items():
            if self.spent:
                stopped = True
                self.cut()
                break
            before = self.cuts
            if key in _DROP:
                pass
            elif key == "properties" and depth == 1 and isinstance(value, dict):
                out[key] = self.walk_arguments(value, refs)
            elif key in _SCHEMA_MAPS:
                if isinstance(value, dict):
                    out[key] = self.walk_map(key, value, refs, depth)
            elif key in _SCHEMA_LISTS:
                if isinstance(value, list):
                    out[key] = self.walk_list(value, refs, depth)
            elif key in _SCHEMA_ONE:
                if isinstance(value, (dict, bool)):
                    out[key] = self.walk(value, refs, depth + 1)
                elif key == "items" and isinstance(value, list):  # draft 4-7 tuple form
                    out["prefixItems"] = self.walk_list(value, refs, depth)
                    key = "prefixItems"
            elif key == "dependencies" and isinstance(value, dict):  # draft 4-7
                for dep, spec in value.items():
                    if self.spent:
                        self.cut()
                        break
                    if isinstance(spec, list):
                        kept = self.data(spec)
                        if isinstance(kept, list):
                            out.setdefault("dependentRequired", {})[dep] = kept
                    elif self.take(1, len(str(dep))):
                        out.setdefault("dependentSchemas", {})[dep] = self.walk(
                            spec, refs, depth + 1)
            elif key in _DATA_KEYWORDS:
                extra = _GROWS.get(key, 0)  # what tidy() adds for it
                kept = self.data(_trimmed(key, value)) if self.take(extra, 0) else _CUT
                if kept is not _CUT:
                    out[key] = kept
            if self.cuts != before:
                cut_in.add(key)
        for key in cut_in:
            for gone in _NEEDS_WHOLE.get(key, ()):
                out.pop(gone, None)
        if stopped:
            for gone in _SIBLING_DEPENDENT:
                out.pop(gone, None)
        if "prefixItems" in out and "additionalItems" in out:
            out["items"] = out.pop("additionalItems")
        out.pop("additionalItems", None)
        for dynamic in ("$dynamicRef", "$recursiveRef"):
            if dynamic in node:
                self.notes.add(f"{dynamic} is not followed; any value is accepted there")
        return self.tidy(out)

    def walk_arguments(self, props: dict[str, Any], refs: tuple[str, ...]) -> dict[str, Any]:
        """The top-level arguments: each keeps its name (and room for a cut marker) however
        large the others are."""
        costs = [(3, len(str(name)) + len(CUT_TEXT)) for name in props]
        self.reserved = (sum(c[0] for c in costs), sum(c[1] for c in costs))
        self.reserved_schemas = len(costs)
        if self.values + self.reserved[0] > MAX_VALUES or \
                self.chars + self.reserved[1] > MAX_CHARS:
            self.reserved, self.reserved_schemas = (0, 0), 0
            raise ToolDefinitionError(
                f"the names of its {len(props)} arguments alone exceed the schema's budget of "
                f"{MAX_VALUES} values and {MAX_CHARS} characters")
        out: dict[str, Any] = {}
        for (name, spec), cost in zip(props.items(), costs, strict=True):
            self.reserved = (self.reserved[0] - cost[0], self.reserved[1] - cost[1])
            self.reserved_schemas -= 1
            self.take(1, len(str(name)))
            before = self.cuts
            if spec is False:
                continue
            walked = self.walk(spec, refs, 2)
            if self.cuts != before and isinstance(walked, dict):
                text = str(walked.get("description") or "").strip()
                if not text.endswith(CUT_TEXT):
                    walked["description"] = f"{text} {CUT_TEXT}".strip()
            out[str(name)] = walked
        self.reserved, self.reserved_schemas = (0, 0), 0
        return out

    def walk_map(self, key: str, value: dict[str, Any], refs: tuple[str, ...],
                 depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, spec in value.items():
            if self.spent or not self.take(0, len(str(name))):
                self.cut()  # a truncated map: _NEEDS_WHOLE drops what depended on it
                break
            if spec is False and key == "properties":
                continue
            out[name] = self.walk(spec, refs, depth + 1)
        return out

    def walk_list(self, value: list[Any], refs: tuple[str, ...], depth: int) -> list[Any]:
        out: list[Any] = []
        for spec in value:
            if self.spent:
                self.cut()
                break
            out.append(self.walk(spec, refs, depth + 1))
        return out

    def data(self, value: Any) -> Any:
        """A copy of a data value, or :data:`_CUT` when it does not fit."""
        values, chars = self.measure(value)
        if not self.take(values, chars):
            self.count_cut()
            return _CUT
        return value if isinstance(value, (str, int, float, bool)) or value is None \
            else copy.deepcopy(value)

    def expand(self, ref: str, node: dict[str, Any], refs: tuple[str, ...], depth: int) -> Any:
        rest = {k: v for k, v in node.items() if k != "$ref"}
        target = self.resolve(ref)
        if target is None:
            self.notes.add(f"the reference {ref[:100]!r} leads outside the schema or nowhere; "
                           "any value is accepted there")
            return self.walk(rest, refs, depth) if rest else {}
        if refs.count(ref) >= REF_CUT_DEPTH or depth > MAX_DEPTH - 8:
            return self.cut_ref(ref, target, rest)
        merged = {**target, **rest} if isinstance(target, dict) else (rest or target)
        return self.walk(merged, (*refs, ref), depth)

    def cut_ref(self, ref: str, target: Any, rest: dict[str, Any]) -> dict[str, Any]:
        name = ref.rsplit("/", 1)[-1][:100]
        self.notes.add(f"{name} refers to itself (or nests too deep): cut after "
                       f"{REF_CUT_DEPTH} levels")
        self.cuts += 1
        spec = {**(target if isinstance(target, dict) else {}), **rest}
        kind = spec.get("type")
        out: dict[str, Any] = {}
        if isinstance(kind, str) or (isinstance(kind, list) and len(kind) <= 8):
            out["type"] = copy.deepcopy(kind)
        description = str(spec.get("description") or "").strip()[:MAX_TEXT_CHARS]
        out["description"] = (f"{description} " if description else "") + \
            f"(more {name} nested inside; its schema is not shown further)"
        self.values += 3
        self.chars += len(out["description"])
        return out

    def resolve(self, ref: str) -> Any:
        """The part of the schema a local reference (``#``, ``#/a/b``) names; ``None`` for
        anything else (a URL, a file, an anchor, a path that leads nowhere)."""
        if ref in self.targets:
            return self.targets[ref]
        target = self._resolve(ref)
        self.targets[ref] = target
        return target

    def _resolve(self, ref: str) -> Any:
        return resolve_local(self.root, ref)

    def tidy(self, out: dict[str, Any]) -> dict[str, Any]:
        """Rewrite keywords the validator or the rendering cannot take."""
        for bound, plain in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
            if isinstance(out.get(bound), bool) and out.pop(bound) and plain in out:  # draft 4
                out[bound] = out.pop(plain)
        if "const" in out and "enum" not in out:
            out["enum"] = [out.pop("const")]
        if "enum" in out and not (isinstance(out["enum"], list) and out["enum"]):
            out.pop("enum")
        if out.pop("nullable", False) is True:  # OpenAPI
            out = add_null(out)
        kinds = out.get("type")
        if isinstance(kinds, list):
            kinds = list(dict.fromkeys(k for k in kinds if isinstance(k, str)))
            out["type"] = kinds[0] if len(kinds) == 1 else kinds
            if not kinds:
                out.pop("type")
        if isinstance(out.get("pattern"), str) and not _compiles(out["pattern"]):
            self.notes.add(f"the pattern {out['pattern'][:60]!r} is not one Python can check; "
                           "dropped")
            out.pop("pattern")
        if isinstance(out.get("patternProperties"), dict):
            bad = [p for p in out["patternProperties"] if not _compiles(p)]
            for p in bad:
                out["patternProperties"].pop(p)
                self.notes.add(f"the property pattern {p[:60]!r} cannot be checked; dropped")
        required = out.get("required")
        if required is not None and not (isinstance(required, list) and
                                         all(isinstance(r, str) for r in required)):
            out.pop("required")
        out = merge_all_of(out)
        out = merge_nullable(out)
        if isinstance(out.get("properties"), dict):
            for name, spec in out["properties"].items():
                if isinstance(spec, dict) and "default" in spec and not self.fits(spec):
                    spec.pop("default")
                    self.notes.add(f"the default of {str(name)[:100]} does not fit its own "
                                   "schema; dropped")
        return out

    def fits(self, spec: dict[str, Any]) -> bool:
        """Whether ``spec``'s default fits ``spec`` (filled in, it would pass validation),
        its patterns aside: a pattern's cost is the input's choice (the invoker's validator
        bounds it when the arguments are checked). The check's work is counted; when the
        budget is spent, the default is not kept."""
        rest = _without_patterns({k: v for k, v in spec.items() if k != "default"})
        self.work += _count(rest) + _count(spec["default"])
        if self.work > MAX_WORK:
            self.cut()
            return False
        try:
            checker = Draft202012Validator(rest, registry=Registry())
            return bool(checker.is_valid(spec["default"]))
        except Exception:  # a schema the validator cannot take: keep no default
            return False


_CUT = object()
"""What :meth:`_Flattener.data` gives for a value that does not fit."""


def _trimmed(key: str, value: Any) -> Any:
    """A data value as it is kept: one example (the prompt shows one), a description cut."""
    if key == "examples" and isinstance(value, list):
        return value[:1]
    if key == "description" and isinstance(value, str) and len(value) > MAX_TEXT_CHARS:
        return value[:MAX_TEXT_CHARS].rstrip() + " [...]"
    return value


def _count(value: Any) -> int:
    """The number of values in ``value`` (a part of the flattened schema: bounded)."""
    count = 0
    stack = [value]
    while stack:
        node = stack.pop()
        count += 1
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return count


def _without_patterns(spec: Any) -> Any:
    if isinstance(spec, list):
        return [_without_patterns(v) for v in spec]
    if not isinstance(spec, dict):
        return spec
    return {k: (v if k in ("enum", "const", "default", "examples", "required") else
                {n: _without_patterns(s) for n, s in v.items()} if k in _SCHEMA_MAPS and
                isinstance(v, dict) else _without_patterns(v))
            for k, v in spec.items() if k not in ("pattern", "patternProperties")}


def _compiles(pattern: str) -> bool:
    try:
        re.compile(pattern)
    except (re.error, RecursionError, OverflowError):
        return False
    return True
