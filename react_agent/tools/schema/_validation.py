"""The bounded JSON Schema (Draft 2020-12) validator the invoker checks arguments with.

:func:`validator` gives the validator of a schema; its registry retrieves nothing, so a
reference that slipped past :func:`~react_agent.tools.schema.check` fails as unresolvable
instead of opening a connection or a file. Its cost is bounded whatever the schema and the
arguments (a client of ``serve`` chooses the one, the model the other):

- one check (a :func:`budget`) takes at most :data:`VALIDATION_SECONDS`: every keyword looks at
  the clock before it runs, so nested ``anyOf``/``oneOf`` through references, a ``$ref`` cycle,
  ``contains`` or ``unevaluated*`` over many items are cut; a reference that recurses forever
  is cut too;
- ``pattern`` and ``patternProperties`` (and ``additionalProperties``/``unevaluatedProperties``,
  which run them) use the ``regex`` package with a timeout (what remains of the budget) instead
  of ``re``, which cannot be stopped: a backtracking pattern such as ``^(a|a)*$`` costs at most
  the budget; a pattern whose compiled form would be huge (``a{1000000000}``: ``regex``
  expands counted repeats) is not compiled (:data:`MAX_PATTERN_WEIGHT`); the match releases the
  GIL, so other threads (an event loop) run meanwhile;
- ``uniqueItems`` sorts a canonical form of the items (O(n log n), with jsonschema's equality:
  ``1 == 1.0``, ``true != 1``, key order ignored) instead of comparing every pair;
- ``unevaluatedItems``/``unevaluatedProperties`` look up what was evaluated in a set, not a list.

What cannot be checked in time, or makes the check itself fail, raises :class:`Unchecked`: the
arguments are not accepted. :func:`surely_valid` decides the common cases without a validator.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import itertools
import re
import threading
import time
from collections.abc import Iterable, Iterator
from typing import Any

import regex
from jsonschema import Draft202012Validator, validators
from jsonschema._utils import find_evaluated_item_indexes_by_schema
from jsonschema.exceptions import ValidationError

from ._bounds import MAX_PATTERN_CHARS, UnresolvedReference, no_retrieval

_NO_RETRIEVAL = no_retrieval()


VALIDATION_SECONDS = 1.0
"""The longest one check of a tool call's arguments may take (seconds): the cleaning, the
check against the tool's schema and the hint of other tools that would fit, together
(:func:`budget`). Past it the arguments are not accepted (:class:`Unchecked`): a schema and
arguments that cost more are refused, never let through unchecked. Real tool schemas check
in microseconds; only a costly schema (a backtracking ``pattern``, ``anyOf`` nested through
references) on unlucky arguments comes near it."""

MAX_PATTERN_WEIGHT = 10_000
"""The largest a ``pattern`` may be once its counted repeats are written out (``\\d{4}`` counts
5, ``(?:ab){100}`` 303): the ``regex`` package expands them when it compiles, in time and
memory that no timeout bounds (``a{1000000000}`` would take gigabytes). A larger pattern
cannot be checked, and the arguments it applies to are not accepted."""


class Unchecked(Exception):
    """Arguments could not be checked against a schema: not within :data:`VALIDATION_SECONDS`,
    or the check itself failed. They must not be accepted.

    Attributes:
        reason: what stopped the check, in words for the model (``"its pattern '^(a|a)*$'
            takes too long on this value"``).
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


_DEADLINE = threading.local()


@contextlib.contextmanager
def budget(seconds: float | None = None) -> Iterator[None]:
    """Every check in this thread inside the block shares one deadline, ``seconds`` (default
    :data:`VALIDATION_SECONDS`) from its start; inside another budget, the outer deadline holds.
    :meth:`Validator.errors` and :meth:`Validator.is_valid` open one of their own if none is
    open."""
    if getattr(_DEADLINE, "at", None) is not None:
        yield
        return
    _DEADLINE.at = time.monotonic() + (VALIDATION_SECONDS if seconds is None else seconds)
    try:
        yield
    finally:
        _DEADLINE.at = None


def budget_seconds() -> float:
    """The seconds a :func:`budget` opened with no ``seconds`` lasts: :data:`VALIDATION_SECONDS`
    as it is now (read at each call, so a changed value is seen everywhere)."""
    return VALIDATION_SECONDS


def spend(what: str = "the check") -> None:
    """Raise :class:`Unchecked` if the deadline of this thread's :func:`budget` has passed
    (outside a budget, nothing): called by every keyword of a check and by the other walks of
    arguments that a tool's schema guides (cleaning them), so that their sum is bounded.

    Raises:
        Unchecked: the budget is spent; ``what`` is named as where it stopped.
    """
    deadline = getattr(_DEADLINE, "at", None)
    if deadline is not None and time.monotonic() > deadline:
        raise Unchecked(f"it is too costly to check: the time ran out at {what}")


def _seconds_left(pattern: str) -> float:
    deadline = getattr(_DEADLINE, "at", None)
    if deadline is None:
        return VALIDATION_SECONDS
    left: float = deadline - time.monotonic()
    if left <= 0:
        raise Unchecked(f"it is too costly to check: the time ran out at its pattern "
                        f"{_shown(pattern)}")
    return left


def search(pattern: str, text: str) -> bool:
    """Whether ``pattern`` matches somewhere in ``text`` (as ``re.search``, which JSON Schema's
    ``pattern`` means), within what is left of the :func:`budget`.

    Raises:
        Unchecked: the pattern takes longer than that on ``text``, is larger than
            :data:`MAX_PATTERN_WEIGHT` or longer than :data:`~._bounds.MAX_PATTERN_CHARS`
            characters, or cannot be compiled.
    """
    compiled = _compiled(pattern)
    try:
        return compiled.search(text, timeout=_seconds_left(pattern), concurrent=True) is not None
    except TimeoutError as exc:
        raise Unchecked(f"its pattern {_shown(pattern)} takes too long on this value") from exc


@functools.lru_cache(maxsize=256)
def _compiled(pattern: str) -> Any:
    if len(pattern) > MAX_PATTERN_CHARS:
        raise Unchecked(f"its pattern {_shown(pattern)} is too long to run ({len(pattern)} "
                        f"characters; at most {MAX_PATTERN_CHARS})")
    try:
        weight = _weight(_SRE_PARSER.parse(pattern))
        if weight > MAX_PATTERN_WEIGHT:
            raise Unchecked(f"its pattern {_shown(pattern)} is too large to run (its repeats "
                            f"written out would be {weight} items; at most {MAX_PATTERN_WEIGHT})")
        return regex.compile(pattern)
    except (regex.error, _SRE_PARSER.error, RecursionError, OverflowError, ValueError) as exc:
        raise Unchecked(f"its pattern {_shown(pattern)} cannot be run "
                        f"({type(exc).__name__})") from exc


# The standard library's parser of patterns (what ``re`` compiles, and so what passed the
# meta-schema's "regex" format): it writes no repeat out, so a pattern's weight is cheap to know.
_SRE_PARSER: Any = importlib.import_module("re._parser" if hasattr(re, "_parser") else "sre_parse")
_SRE_CONSTANTS: Any = importlib.import_module(
    "re._constants" if hasattr(re, "_constants") else "sre_constants")
_REPEATS = frozenset(getattr(_SRE_CONSTANTS, name) for name in
                     ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT")
                     if hasattr(_SRE_CONSTANTS, name))


def _weight(parsed: Any) -> int:
    """The items of a parsed pattern once each repeat is written out its least number of
    times (and once more for the rest): ``a{3,}`` weighs 4."""
    total = 0
    for op, av in parsed:
        if op in _REPEATS:
            least, _, inner = av
            total += (least + 1) * _weight(inner)
        else:
            total += 1 + sum(_weight(p) for p in _parts(av))
    return total


def _parts(value: Any) -> Iterator[Any]:
    """The sub-patterns inside one parsed item's argument (groups, branches, lookarounds)."""
    if isinstance(value, _SRE_PARSER.SubPattern):
        yield value
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from _parts(item)


def _shown(text: str) -> str:
    return repr(text if len(text) <= 60 else f"{text[:60]}...")


# -- the keywords replaced (jsonschema's, with the bounded search, sets and a sort) -------------
def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[Any]:
    if validator.is_type(instance, "string") and not search(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(validator: Any, patterns: Any, instance: Any, schema: Any
                        ) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional(instance: dict[str, Any], schema: dict[str, Any]) -> Iterator[str]:
    """The keys of ``instance`` that neither ``properties`` nor ``patternProperties`` name."""
    named = schema.get("properties", {})
    patterns = schema.get("patternProperties", {})
    for key in instance:
        spend("additionalProperties")
        if key not in named and not any(search(p, key) for p in patterns):
            yield key


def _additional_properties(validator: Any, additional: Any, instance: Any, schema: Any
                           ) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    extras = set(_additional(instance, schema))
    if validator.is_type(additional, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], additional, path=extra)
    elif not additional and extras:
        if "patternProperties" in schema:
            verb = "does" if len(extras) == 1 else "do"
            joined = ", ".join(repr(each) for each in sorted(extras))
            patterns = ", ".join(repr(each) for each in sorted(schema["patternProperties"]))
            yield ValidationError(f"{joined} {verb} not match any of the regexes: {patterns}")
        else:
            yield ValidationError("Additional properties are not allowed "
                                  f"({_extras(sorted(extras, key=str))} unexpected)")


def _extras(extras: list[Any]) -> str:
    verb = "was" if len(extras) == 1 else "were"
    return f"{', '.join(repr(extra) for extra in extras)} {verb}"


def _unevaluated_properties(validator: Any, unevaluated: Any, instance: Any, schema: Any
                            ) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    evaluated = _evaluated_keys(validator, instance, schema)
    rest = [key for key in instance if key not in evaluated and next(validator.descend(
        instance[key], unevaluated, path=key, schema_path=key), None) is not None]
    if rest and unevaluated is False:
        yield ValidationError(f"Unevaluated properties are not allowed ({_extras(sorted(rest))} "
                              "unexpected)")
    elif rest:
        yield ValidationError("Unevaluated properties are not valid under the given schema "
                              f"({_extras(rest)} unevaluated and invalid)")


def _evaluated_keys(validator: Any, instance: dict[str, Any], schema: Any) -> set[str]:
    """The keys of ``instance`` that ``schema`` evaluates (jsonschema's
    ``find_evaluated_property_keys_by_schema``, with the bounded search and a set)."""
    spend("unevaluatedProperties")
    if validator.is_type(schema, "boolean"):
        return set()
    keys: set[str] = set()
    for keyword in ("$ref", "$dynamicRef"):
        reference = schema.get(keyword)
        if reference is not None:
            resolved = validator._resolver.lookup(reference)
            keys |= _evaluated_keys(validator.evolve(schema=resolved.contents,
                                                     _resolver=resolved.resolver),
                                    instance, resolved.contents)
    properties = schema.get("properties")
    if validator.is_type(properties, "object"):
        keys |= properties.keys() & instance.keys()
    for keyword in ("additionalProperties", "unevaluatedProperties"):
        subschema = schema.get(keyword)
        if subschema is not None:
            keys.update(key for key, value in instance.items()
                        if next(validator.descend(value, subschema), None) is None)
    for pattern in schema.get("patternProperties", {}):
        keys.update(key for key in instance if search(pattern, key))
    for name, subschema in schema.get("dependentSchemas", {}).items():
        if name in instance:
            keys |= _evaluated_keys(validator, instance, subschema)
    for keyword in ("allOf", "oneOf", "anyOf"):
        for subschema in schema.get(keyword, []):
            if next(validator.descend(instance, subschema), None) is None:
                keys |= _evaluated_keys(validator, instance, subschema)
    if "if" in schema:
        if validator.evolve(schema=schema["if"]).is_valid(instance):
            keys |= _evaluated_keys(validator, instance, schema["if"])
            if "then" in schema:
                keys |= _evaluated_keys(validator, instance, schema["then"])
        elif "else" in schema:
            keys |= _evaluated_keys(validator, instance, schema["else"])
    return keys


def _unevaluated_items(validator: Any, unevaluated: Any, instance: Any, schema: Any
                       ) -> Iterator[Any]:
    if not validator.is_type(instance, "array"):
        return
    evaluated = set(find_evaluated_item_indexes_by_schema(validator, instance, schema))
    rest = [item for index, item in enumerate(instance) if index not in evaluated]
    if rest:
        yield ValidationError(f"Unevaluated items are not allowed ({_extras(rest)} unexpected)")


def _unique_items(validator: Any, unique: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if unique and validator.is_type(instance, "array") and not all_different(instance):
        yield ValidationError(f"{instance!r} has non-unique elements")


def all_different(items: Iterable[Any]) -> bool:
    """Whether no two of ``items`` (JSON values) are equal as JSON Schema's ``uniqueItems``
    compares them (jsonschema's equality: ``1 == 1.0``, ``true != 1``, objects whatever their
    key order, at any depth): their canonical forms sorted, neighbours compared, so
    O(n log n) comparisons, where comparing every pair costs O(n²)."""
    keys = sorted(_canonical(item) for item in items)
    return all(a != b for a, b in itertools.pairwise(keys))


def _canonical(value: Any) -> tuple[Any, ...]:
    """A form of a JSON value that sorts and compares as ``uniqueItems`` means: a rank per
    JSON type first, so values of different types are never compared with each other."""
    spend("uniqueItems")
    if value is None:
        return (0,)
    if isinstance(value, bool):
        return (1, value)
    if isinstance(value, (int, float)):
        return (2, value)
    if isinstance(value, str):
        return (3, value)
    if isinstance(value, (list, tuple)):
        return (4, tuple(_canonical(item) for item in value))
    if isinstance(value, dict):
        return (5, tuple(sorted((str(key), _canonical(item)) for key, item in value.items())))
    return (6, repr(value))


_REPLACED = {
    "pattern": _pattern, "patternProperties": _pattern_properties,
    "additionalProperties": _additional_properties,
    "unevaluatedProperties": _unevaluated_properties,
    "unevaluatedItems": _unevaluated_items, "uniqueItems": _unique_items,
}


def _timed(name: str, keyword: Any) -> Any:
    """``keyword``, looking at the clock of the :func:`budget` each time it is applied."""

    def bounded(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
        spend(f"its {name!r}")
        return keyword(validator, value, instance, schema)

    return bounded


_BoundedDraft202012: Any = validators.extend(  # type: ignore[no-untyped-call]
    Draft202012Validator, {name: _timed(name, _REPLACED.get(name, keyword))
                           for name, keyword in Draft202012Validator.VALIDATORS.items()})


class Validator:
    """The bounded Draft 2020-12 validator of one schema (see the module docs); made by
    :func:`validator`."""

    def __init__(self, schema: dict[str, Any]) -> None:
        self.schema = schema
        self._validator = _BoundedDraft202012(schema, registry=_NO_RETRIEVAL)

    def errors(self, instance: Any, limit: int | None = None) -> list[ValidationError]:
        """The ways ``instance`` breaks the schema (``[]``: valid), the first ``limit`` of them
        (``None``: all), within a :func:`budget`.

        Raises:
            Unchecked: not decided within the budget, or the check failed.
            UnresolvedReference: the schema has a reference that leads nowhere.
        """
        with budget():
            found: list[ValidationError] = self._checked(
                lambda: list(itertools.islice(self._validator.iter_errors(instance), limit)))
        return found

    def is_valid(self, instance: Any) -> bool:
        """Whether ``instance`` is valid (stopping at its first error), within a
        :func:`budget`; raises as :meth:`errors`."""
        with budget():
            valid: bool = self._checked(
                lambda: next(self._validator.iter_errors(instance), None) is None)
        return valid

    @staticmethod
    def _checked(check: Any) -> Any:
        try:
            return check()
        except (Unchecked, UnresolvedReference):
            raise
        except RecursionError as exc:
            raise Unchecked("it refers to itself without end (a $ref cycle) or nests too "
                            "deeply to check") from exc
        except Exception as exc:  # a check that fails (e.g. multipleOf on a huge integer)
            raise Unchecked(f"the check itself failed ({type(exc).__name__})") from exc


def validator(schema: dict[str, Any]) -> Validator:
    """The bounded Draft 2020-12 :class:`Validator` of ``schema``, which resolves references
    only inside it.

    Its ``errors``/``is_valid`` raise :class:`UnresolvedReference` (a subclass of
    ``referencing``'s ``Unresolvable``) for any other reference, instead of retrieving it, and
    :class:`Unchecked` when the check cannot be done within its :func:`budget`.
    The validator of a schema object is made once and reused (a tool's schema is checked at
    every call; making a validator costs about as much as using it): a schema must not be
    changed after it was first validated against."""
    key = id(schema)
    with _VALIDATORS_LOCK:
        hit = _VALIDATORS.get(key)
    if hit is not None and hit[0] is schema:
        return hit[1]
    made = Validator(schema)
    with _VALIDATORS_LOCK:
        if len(_VALIDATORS) >= _MAX_VALIDATORS:
            _VALIDATORS.clear()
        _VALIDATORS[key] = (schema, made)  # the schema is kept, so its id is not reused
    return made


_MAX_VALIDATORS = 1024
_VALIDATORS: dict[int, tuple[dict[str, Any], Validator]] = {}
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
    recursion follows the schema, which :func:`check` keeps shallow. It counts against the
    :func:`budget` it runs in, like a validator (raising :class:`Unchecked` past it).
    """
    spend("the arguments")
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

