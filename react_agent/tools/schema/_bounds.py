"""Bounds on a tool's parameters schema from outside: its size and depth, and references only
to places inside it.

A tool's parameters schema may come from a client of ``react-agent serve``, an MCP server, a
benchmark file or a developer. Before anything walks it (rendering, validation, grammar
conversion), :func:`check` bounds the work it can cause and keeps it to itself:

- at most :data:`MAX_DEPTH` levels of nesting and :data:`MAX_NODES` values in all;
- regular expressions (``pattern``, ``patternProperties``) of at most
  :data:`MAX_PATTERN_CHARS` characters;
- ``$ref`` (and ``$dynamicRef``) only to a place inside the schema (``#/...``, ``#anchor``): a
  reference to a URL or a file is refused, never fetched or read.

:func:`check_valid` adds the check against Draft 2020-12's meta-schema (every tool a toolbox
registers passes it). The registry of :func:`no_retrieval` retrieves nothing, so a reference
that slipped past :func:`check` fails as unresolvable instead of opening a connection or a file.
"""

from __future__ import annotations

from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from referencing import Registry, Resource
from referencing.exceptions import NoSuchResource, Unresolvable
from referencing.jsonschema import DRAFT202012

from ..._json import Trail, is_container, path_of, walk
from ...errors import ToolDefinitionError

MAX_DEPTH = 32
"""The deepest nesting of objects and arrays a parameters schema may have (the top object is
level 1): deep enough for any real tool, shallow enough that no walk of it is costly."""

MAX_NODES = 10_000
"""The most values (objects, arrays, strings, numbers, ...) a parameters schema may hold."""

MAX_PATTERN_CHARS = 4_096
"""The longest regular expression a schema may hold (``pattern``, a key of
``patternProperties``): compiling one costs time linear in its length, before any timeout."""

_REFERENCES = ("$ref", "$dynamicRef", "$recursiveRef")


def check(schema: Any, where: str = "parameters") -> None:
    """Check that ``schema`` is a bounded, self-contained JSON Schema.

    One iterative walk, linear in the size of ``schema`` and stopped at the first fault.

    Raises:
        ToolDefinitionError: ``schema`` is nested deeper than :data:`MAX_DEPTH`, holds more
            than :data:`MAX_NODES` values, a pattern longer than :data:`MAX_PATTERN_CHARS`
            characters, has a reference to anything but a place inside
            itself, or a local reference that leads nowhere; the message names ``where`` and
            the path inside it.
    """
    local: list[tuple[str, str]] = []
    for nodes, (node, depth, trail) in enumerate(walk(schema, MAX_DEPTH, trails=True), 1):
        if nodes > MAX_NODES:
            raise ToolDefinitionError(
                f"{where}: the schema holds more than {MAX_NODES} values; simplify it.")
        if depth > MAX_DEPTH and is_container(node):
            raise ToolDefinitionError(
                f"{where}{_path(trail) or ''}: the schema is nested deeper than {MAX_DEPTH} "
                "levels; flatten it.")
        if isinstance(node, dict):
            for key, value in node.items():
                patterns = [value] if key == "pattern" and isinstance(value, str) else \
                    list(value) if key == "patternProperties" and isinstance(value, dict) else []
                if any(isinstance(p, str) and len(p) > MAX_PATTERN_CHARS for p in patterns):
                    raise ToolDefinitionError(
                        f"{where}{_path(trail)}.{key}: a pattern longer than "
                        f"{MAX_PATTERN_CHARS} characters; shorten it.")
                if key in _REFERENCES and isinstance(value, str):
                    at = f"{_path(trail)}.{key}"
                    if not value.startswith("#"):
                        raise ToolDefinitionError(
                            f"{where}{at}: {value[:100]!r} refers outside the schema; only "
                            "references to a place inside it ('#/$defs/...') are followed, "
                            "never URLs or files: put the definition under $defs.")
                    local.append((at, value))
    if local and isinstance(schema, dict):
        _check_local(schema, local, where)


def _path(trail: Trail) -> str:
    """Where a value sits in a schema, as messages name it: ``.properties.a.items[0]``."""
    return "".join(f"[{key}]" if in_array else f".{key}" for key, in_array in path_of(trail))


def _check_local(schema: dict[str, Any], references: list[tuple[str, str]], where: str) -> None:
    """Each local reference of ``schema`` resolves (relative to its root; a schema that gives
    parts of itself an ``$id`` of their own is left to validation)."""
    if _has_nested_id(schema):
        return
    resolver = no_retrieval().with_resource("", Resource.from_contents(
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


def no_retrieval() -> Registry[Any]:
    """A ``referencing`` registry that retrieves nothing: a reference to anything it was not
    given is unresolvable (:data:`UnresolvedReference`), never fetched or read."""
    return Registry(retrieve=_refuse)  # type: ignore[call-arg]


UnresolvedReference = Unresolvable
"""What a validator raises for a reference it does not follow."""


def check_valid(schema: dict[str, Any], where: str = "parameters") -> None:
    """:func:`check`, then that ``schema`` is a valid Draft 2020-12 schema.

    Raises:
        ToolDefinitionError: as :func:`check`, or the schema breaks the meta-schema, or
            cannot be checked against it (a pattern nested too deeply to compile).
    """
    check(schema, where)
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        at = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in exc.path)
        raise ToolDefinitionError(f"{where} is not a valid JSON Schema"
                                  f"{f' at {where}{at}' if at else ''}: {exc.message}") from exc
    except Exception as exc:  # e.g. a pattern of groups nested too deeply for `re` to compile
        raise ToolDefinitionError(f"{where} could not be checked as a JSON Schema "
                                  f"({type(exc).__name__}); simplify its patterns.") from exc

