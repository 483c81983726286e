"""Tool schemas from outside: bounded, self-contained and in JSON Schema's own words.

A tool's parameters schema may come from a client of ``react-agent serve``, an MCP server, a
benchmark file or a developer. Before anything walks it (rendering, validation, grammar
conversion), :func:`check` bounds the work it can cause and keeps it to itself:

- at most :data:`MAX_DEPTH` levels of nesting and :data:`MAX_NODES` values in all;
- ``$ref`` (and ``$dynamicRef``) only to a place inside the schema (``#/...``, ``#anchor``): a
  reference to a URL or a file is refused, never fetched or read.

:func:`validator` gives the JSON Schema (Draft 2020-12) validator the invoker checks
arguments with; its registry retrieves nothing, so a reference that slipped past :func:`check`
fails as unresolvable instead of opening a connection or a file. :func:`normalize` turns the
loose type names of public function-calling benchmarks into JSON Schema ones.
"""

from __future__ import annotations

import threading
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from referencing import Registry, Resource
from referencing.exceptions import NoSuchResource, Unresolvable
from referencing.jsonschema import DRAFT202012

from ..errors import ToolDefinitionError
from ..types import JSON_TYPES

MAX_DEPTH = 32
"""The deepest nesting of objects and arrays a parameters schema may have (the top object is
level 1): deep enough for any real tool, shallow enough that no walk of it is costly."""

MAX_NODES = 10_000
"""The most values (objects, arrays, strings, numbers, ...) a parameters schema may hold."""

_REFERENCES = ("$ref", "$dynamicRef", "$recursiveRef")


def check(schema: Any, where: str = "parameters") -> None:
    """Check that ``schema`` is a bounded, self-contained JSON Schema.

    One iterative walk, linear in the size of ``schema`` and stopped at the first fault.

    Raises:
        ToolDefinitionError: ``schema`` is nested deeper than :data:`MAX_DEPTH`, holds more
            than :data:`MAX_NODES` values, has a reference to anything but a place inside
            itself, or a local reference that leads nowhere; the message names ``where`` and
            the path inside it.
    """
    nodes = 0
    local: list[tuple[str, str]] = []
    stack: list[tuple[Any, int, str]] = [(schema, 1, "")]
    while stack:
        node, depth, path = stack.pop()
        nodes += 1
        if nodes > MAX_NODES:
            raise ToolDefinitionError(
                f"{where}: the schema holds more than {MAX_NODES} values; simplify it.")
        if isinstance(node, dict):
            items: Any = node.items()
        elif isinstance(node, list):
            items = enumerate(node)
        else:
            continue
        if depth > MAX_DEPTH:
            raise ToolDefinitionError(
                f"{where}{path or ''}: the schema is nested deeper than {MAX_DEPTH} levels; "
                "flatten it.")
        for key, value in items:
            at = f"{path}.{key}" if isinstance(node, dict) else f"{path}[{key}]"
            if isinstance(node, dict) and key in _REFERENCES and isinstance(value, str):
                if not value.startswith("#"):
                    raise ToolDefinitionError(
                        f"{where}{at}: {value[:100]!r} refers outside the schema; only "
                        "references to a place inside it ('#/$defs/...') are followed, never "
                        "URLs or files: put the definition under $defs.")
                local.append((at, value))
            stack.append((value, depth + 1, at))
    if local and isinstance(schema, dict):
        _check_local(schema, local, where)


def _check_local(schema: dict[str, Any], references: list[tuple[str, str]], where: str) -> None:
    """Each local reference of ``schema`` resolves (relative to its root; a schema that gives
    parts of itself an ``$id`` of their own is left to validation)."""
    if _has_nested_id(schema):
        return
    resolver = _registry().with_resource("", Resource.from_contents(
        schema, default_specification=DRAFT202012)).resolver()
    for at, reference in references:
        try:
            resolver.lookup(reference)
        except (Unresolvable, LookupError, TypeError, ValueError) as exc:
            raise ToolDefinitionError(
                f"{where}{at}: the reference {reference[:100]!r} leads nowhere in the schema "
                f"({type(exc).__name__}).") from exc


def _has_nested_id(schema: dict[str, Any]) -> bool:
    stack: list[Any] = [v for k, v in schema.items() if k != "$id"]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if "$id" in node:
                return True
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False


def _refuse(uri: str) -> Any:
    raise NoSuchResource(ref=uri)  # type: ignore[call-arg]  # an attrs class


def _registry() -> Registry[Any]:
    return Registry(retrieve=_refuse)  # type: ignore[call-arg]


_NO_RETRIEVAL: Registry[Any] = _registry()


def validator(schema: dict[str, Any]) -> Draft202012Validator:
    """A Draft 2020-12 validator of ``schema`` that resolves references only inside it.

    Its ``iter_errors``/``is_valid`` raise :class:`UnresolvedReference` (a subclass of
    ``referencing``'s ``Unresolvable``) for any other reference, instead of retrieving it.
    The validator of a schema object is made once and reused (a tool's schema is checked at
    every call; making a validator costs about as much as using it): a schema must not be
    changed after it was first validated against."""
    key = id(schema)
    with _VALIDATORS_LOCK:
        hit = _VALIDATORS.get(key)
    if hit is not None and hit[0] is schema:
        return hit[1]
    made = Draft202012Validator(schema, registry=_NO_RETRIEVAL)
    with _VALIDATORS_LOCK:
        if len(_VALIDATORS) >= _MAX_VALIDATORS:
            _VALIDATORS.clear()
        _VALIDATORS[key] = (schema, made)  # the schema is kept, so its id is not reused
    return made


_MAX_VALIDATORS = 1024
_VALIDATORS: dict[int, tuple[dict[str, Any], Draft202012Validator]] = {}
_VALIDATORS_LOCK = threading.Lock()


def surely_valid(schema: Any, value: Any) -> bool:
    """Whether ``value`` is valid against ``schema``, decided without a validator when
    ``schema`` holds only the keywords most tool schemas are made of (``type``, ``properties``,
    ``required``, ``additionalProperties``, ``items``, ``enum`` of strings, and annotations such
    as ``description``): ``True`` only when the :func:`validator` would accept ``value`` too.
    ``False`` means "not decided here" (another keyword, a value these checks do not settle,
    or an invalid value): ask the validator, which also says what is wrong.

    A validator descends into each argument through new validator objects (tens of µs a
    call); this walk costs a few. Linear in the parts of ``schema`` that ``value`` fills; the
    recursion follows the schema, which :func:`check` keeps shallow.
    """
    if not isinstance(schema, dict):
        return False
    for key, spec in schema.items():
        if key in _ANNOTATIONS:
            continue
        if key == "type":
            names = [spec] if isinstance(spec, str) else spec if isinstance(spec, list) else []
            if not any(_is(value, name) for name in names):
                return False
        elif key == "enum":
            if not (isinstance(value, str) and isinstance(spec, list) and value in spec):
                return False
        elif key == "properties":
            if not isinstance(spec, dict):
                return False
            if isinstance(value, dict) and not all(
                    surely_valid(sub, value[name]) for name, sub in spec.items() if name in value):
                return False
        elif key == "required":
            if not (isinstance(spec, list) and all(isinstance(n, str) for n in spec)):
                return False
            if isinstance(value, dict) and not all(name in value for name in spec):
                return False
        elif key == "additionalProperties":
            named = schema.get("properties", {})
            if not isinstance(named, dict):
                return False
            if isinstance(value, dict) and spec is not True:
                extra = [v for k, v in value.items() if k not in named]
                if spec is False:
                    if extra:
                        return False
                elif not all(surely_valid(spec, v) for v in extra):
                    return False
        elif key == "items":
            if isinstance(value, list) and spec is not True and \
                    not all(surely_valid(spec, item) for item in value):
                return False
        else:
            return False
    return True


_ANNOTATIONS = frozenset({
    "description", "title", "default", "examples", "$comment", "deprecated", "readOnly",
    "writeOnly",
})


def _is(value: Any, name: str) -> bool:
    """``value`` is of the JSON Schema type ``name`` (by the checks the validator makes; a
    float with no fraction, which the validator also counts as an integer, is left to it)."""
    if name == "string":
        return isinstance(value, str)
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if name == "boolean":
        return isinstance(value, bool)
    if name == "object":
        return isinstance(value, dict)
    if name == "array":
        return isinstance(value, list)
    return name == "null" and value is None


UnresolvedReference = Unresolvable
"""What a :func:`validator` raises for a reference it does not follow."""


def check_valid(schema: dict[str, Any], where: str = "parameters") -> None:
    """:func:`check`, then that ``schema`` is a valid Draft 2020-12 schema.

    Raises:
        ToolDefinitionError: as :func:`check`, or the schema breaks the meta-schema.
    """
    check(schema, where)
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        raise ToolDefinitionError(f"{where} is not a valid JSON Schema: {exc.message}") from exc


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
