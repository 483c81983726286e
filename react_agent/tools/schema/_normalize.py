"""Parameters schemas in JSON Schema's own words, whatever their source: loose type names,
nullable options, ``allOf`` parts and local references written the one way the prompt and the
invoker read.

- :func:`from_signature`: pydantic's schema of a Python parameter's type hint;
- :func:`from_openai`: the ``parameters`` of an OpenAI tool spec (a client of ``serve``, an
  eval suite), bounded first (:func:`~react_agent.tools.schema.check`);
- the MCP flattener (:func:`~react_agent.tools.schema.flatten`) uses :func:`normalize`,
  :func:`merge_nullable`, :func:`merge_all_of` and :func:`resolve_local` on its own bounded walk.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from ...errors import ToolDefinitionError
from ...types import JSON_TYPES
from ._bounds import check

MAX_DESCRIPTION_CHARS = 1_000
"""The longest description :func:`merge_nullable` writes from the options it merges."""


def normalize(schema: Any) -> Any:
    """A copy of a parameters schema with loose type names turned into JSON Schema ones
    (``dict`` -> ``object``, ``float`` -> ``number``, ``tuple`` -> ``array``; ``any``
    dropped), at any depth; linear in the size of ``schema``."""
    if isinstance(schema, list):
        return [normalize(v) for v in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: ({name: normalize(v) for name, v in value.items()}
               if k in _NAMED_SCHEMAS and isinstance(value, dict) else normalize(value))
           for k, value in schema.items() if k != "type"}
    kind = schema.get("type")
    if isinstance(kind, str):
        if kind.lower() != "any":
            out["type"] = JSON_TYPES.get(kind.lower(), kind)
    elif isinstance(kind, list):
        out["type"] = [JSON_TYPES.get(k.lower(), k) if isinstance(k, str) else k for k in kind
                       if not (isinstance(k, str) and k.lower() == "any")]
    elif "type" in schema:
        out["type"] = kind
    return out


_NAMED_SCHEMAS = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})
"""Keywords whose value maps names to schemas: the names are data, never keywords."""


def add_null(spec: dict[str, Any]) -> dict[str, Any]:
    """``spec`` (changed in place) that also accepts ``null``: in its type and its enum."""
    kinds = spec.get("type")
    if isinstance(kinds, str):
        spec["type"] = [kinds, "null"]
    elif isinstance(kinds, list) and "null" not in kinds:
        spec["type"] = [*kinds, "null"]
    if isinstance(spec.get("enum"), list) and None not in spec["enum"]:
        spec["enum"] = [*spec["enum"], None]
    return spec


def merge_nullable(spec: dict[str, Any], *, loose: bool = True) -> dict[str, Any]:
    """``anyOf``/``oneOf`` of plain types with ``null`` as one schema with a type list: ``{"anyOf":
    [{"type": "string", ...}, {"type": "null"}]}`` -> ``{"type": ["string", "null"], ...}``
    (``None`` added to its enum too); ``[{"type": "string"}, {"type": "integer"}, {"type":
    "null"}]`` -> a list of three types. ``spec`` itself when there is nothing to merge.

    ``loose=False`` (a signature's schema, as pydantic writes ``Optional[T]``) merges only the
    first form: an ``anyOf`` of one schema of one type and ``{"type": "null"}``."""
    for key in ("anyOf", "oneOf") if loose else ("anyOf",):
        options = spec.get(key)
        if not isinstance(options, list) or not options:
            continue
        nulls = [o for o in options if isinstance(o, dict) and o.get("type") == "null"
                 and len(o) == 1]
        others = [o for o in options if not any(o is n for n in nulls)]
        if not nulls and key == "oneOf":
            continue
        if not loose and (len(options) != 2 or not nulls):
            return spec
        if len(others) == 1 and isinstance(others[0], dict) and \
                isinstance(others[0].get("type"), str) and others[0]["type"] != "null":
            merged = {**others[0], **{k: v for k, v in spec.items() if k != key}}
            if nulls:
                merged = add_null(merged)
            return merged
        if not loose:
            return spec
        plain = all(isinstance(o, dict) and set(o) <= {"type", "description"} and
                    isinstance(o.get("type"), str) for o in others)
        if plain and others:
            kinds = [o["type"] for o in others] + (["null"] if nulls else [])
            merged = {k: v for k, v in spec.items() if k != key}
            merged["type"] = list(dict.fromkeys(kinds))
            notes = [o["description"] for o in others if o.get("description")]
            if notes and "description" not in merged:
                merged["description"] = "; ".join(notes)[:MAX_DESCRIPTION_CHARS]
            return merged
    return spec


def merge_all_of(spec: dict[str, Any]) -> dict[str, Any]:
    """An ``allOf`` whose parts do not overlap with each other or the rest, merged in."""
    parts = spec.get("allOf")
    if not isinstance(parts, list) or not all(isinstance(p, dict) for p in parts):
        return spec
    merged = {k: v for k, v in spec.items() if k != "allOf"}
    for part in parts:
        if set(part) & set(merged) - {"description"}:
            return spec
        for key, value in part.items():
            merged.setdefault(key, value)
    return merged


def resolve_local(root: Any, ref: str) -> Any:
    """The part of ``root`` a local reference (``#``, ``#/a/b``, JSON Pointer escapes and
    percent-encoding undone) names; ``None`` for anything else (a URL, a file, an anchor, a path
    that leads nowhere): nothing is fetched or read."""
    if ref == "#":
        return root
    if not ref.startswith("#/"):
        return None
    node: Any = root
    for part in ref[2:].split("/"):
        key = unquote(part).replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and key in node:
            node = node[key]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            return None
    return node


def from_signature(schema: dict[str, Any], where: str) -> dict[str, Any]:
    r"""pydantic's schema of a parameter's type hint, kept flat for small models and grammar
    converters: without titles, with ``$ref``\ s replaced by their definitions (``$defs``) and a
    nullable type written as a type list (:func:`merge_nullable`, ``loose=False``).
    ``schema`` is changed (its ``$defs`` are taken out); the recursion follows pydantic's
    schema of a Python type, which the developer wrote.

    Raises:
        ToolDefinitionError: the type refers to itself (a recursive model), or a reference
            leads nowhere; the message names ``where``.
    """
    root = {"$defs": schema.pop("$defs", {})}

    def flat(node: Any, seen: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [flat(v, seen) for v in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str):
            name = ref.rsplit("/", 1)[-1]
            if name in seen:
                raise ToolDefinitionError(
                    f"{where}: {name} refers to itself; pass parameters=... yourself."
                )
            target = resolve_local(root, ref)
            if not isinstance(target, dict):
                raise ToolDefinitionError(
                    f"{where}: the reference {ref[:100]!r} leads nowhere; pass parameters=... "
                    "yourself.")
            rest = {k: v for k, v in node.items() if k != "$ref"}
            return flat({**target, **rest}, (*seen, name))
        out = {
            key: ({k: flat(v, seen) for k, v in value.items()} if key == "properties"
                  else flat(value, seen))
            for key, value in node.items() if key != "title"
        }
        return merge_nullable(out, loose=False)

    flattened: dict[str, Any] = flat(schema, ())
    return flattened


def from_openai(parameters: Any, where: str) -> dict[str, Any]:
    """The ``parameters`` of an OpenAI tool spec (``None`` or empty: no arguments) as a
    parameters schema: bounded (:func:`~react_agent.tools.schema.check`), loose type names
    normalised (:func:`normalize`), ``"type": "object"`` when it names no type.

    Raises:
        ToolDefinitionError: ``parameters`` breaks a bound of :func:`check` (the message names
            ``where`` and the place), or is not an object.
    """
    raw = parameters or {"type": "object"}
    check(raw, where)
    normalized = normalize(raw)
    if not isinstance(normalized, dict):
        raise ToolDefinitionError(
            f'{where} must be a JSON Schema object like {{"type": "object", "properties": '
            f'{{...}}}}, got {type(parameters).__name__}.')
    normalized.setdefault("type", "object")
    return normalized
