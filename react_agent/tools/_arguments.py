"""A tool call's arguments against the tool's schema: values no argument can mean, the cleaning
(only where the meaning is certain), the check, and the words that tell the model what is wrong
and what to send instead (the tools the arguments fit, an example call, the argument of a bare
value). CPU work only, bounded by the budget of :mod:`react_agent.tools.schema`; the invoker
(:mod:`._invoker`) runs the call."""

from __future__ import annotations

import copy
import json
import math
import re
from typing import Any

from .._json import Trail, path_of, shown_json, walk
from .._lexical import did_you_mean as _did_you_mean
from ..types import JSON_NUMBER, JSON_TYPES
from . import schema as json_schema
from ._toolbox import Tool, Toolbox

MAX_ARGS_DEPTH = 64
"""Arguments nested deeper than this (lists and objects in one another) are refused, as the
parser refuses them: nothing real nests so deep, and deeper values break recursive consumers
(JSON encoders, schema validators)."""

MAX_INTEGER_DIGITS = 4300
"""Integers longer than this (decimal digits; Python's default limit for turning an integer into
text) are refused as arguments, and a numeric string this long is not turned into a number."""


MAX_NAMES_SHOWN = 30
"""The most argument names a problem lists after an unknown one."""

MAX_PROBLEMS = 50
"""At most this many ways the arguments break the schema are found and told (the first, in the
schema's order): more would not fit an observation, and each costs the showing of its value."""

def _invalid(tool: Tool, problems: list[str], last_line: str) -> str:
    lines = "\n".join(f"- {p}" for p in problems)
    return f"Error: invalid arguments for {tool.name}:\n{lines}\n{last_line}"


def _value_problems(args: dict[str, Any]) -> list[str]:
    """One problem per value (at any depth) that no argument can mean and that would break the
    work after it: a float that is not finite (``NaN``, ``Infinity``: a parser may accept them,
    JSON has no such number), an integer longer than :data:`MAX_INTEGER_DIGITS` digits (it cannot
    even be shown as text), and nesting deeper than :data:`MAX_ARGS_DEPTH` (reported once).
    Walks ``args`` without recursion, so any depth is safe."""
    problems: list[str] = []
    deep = False
    for value, depth, trail in walk(args, MAX_ARGS_DEPTH, trails=True):
        if isinstance(value, (dict, list)):
            deep = deep or depth > MAX_ARGS_DEPTH
            continue
        if isinstance(value, float) and not math.isfinite(value):
            shown = "NaN" if math.isnan(value) else ("-" if value < 0 else "") + "Infinity"
            problems.append(f"{_where(trail)}: {shown} is not a finite number; send a plain "
                            "number")
        elif isinstance(value, int) and not isinstance(value, bool) and _too_long(value):
            problems.append(f"{_where(trail)}: an integer of more than {MAX_INTEGER_DIGITS} "
                            "digits is too long to use; send a shorter number")
    problems.sort()
    if deep:
        problems.insert(0, f"(args): nested more than {MAX_ARGS_DEPTH} levels deep; send them "
                        "flatter")
    return problems


def _where(trail: Trail) -> str:
    """Where an argument's value sits, as problems name it: ``route.0.city``."""
    return ".".join(str(key) for key, _ in path_of(trail))


def _too_long(number: int) -> bool:
    """Whether ``number`` has more than :data:`MAX_INTEGER_DIGITS` decimal digits (from its bit
    length: no conversion to text)."""
    return number.bit_length() > MAX_INTEGER_DIGITS * 3.3219280948873626  # log2(10)


def _what_to_change(toolbox: Toolbox, tool: Tool, sent: dict[str, Any]) -> str:
    """The last line of an invalid-arguments observation: the tools whose arguments the sent
    ones fit as they are (the model often sends the right arguments to the wrong tool), or the
    call again with corrected arguments. The other tools are tried within what is left of the
    call's budget; those not tried by then are left out."""
    fits = []
    for other in toolbox.values():
        if other is tool or not sent:
            continue
        try:
            if not _problems(other.parameters, clean_args(other.parameters, sent)[0]):
                fits.append(other.name)
        except json_schema.Unchecked:
            break
    again = f"call {tool.name} again with corrected args"
    if fits:
        names = " or ".join(fits[:3])
        return f"These arguments fit {names} as they are: call {names} instead if that is the " \
            f"tool the task needs; otherwise {again}."
    return f"{again[0].upper()}{again[1:]}."


def argument_for_bare_value(toolbox: Toolbox, tool_name: str, value: Any) -> str | None:
    """The argument a value the model gave ``tool_name`` without a name belongs to
    (``{"calculate": "17 * 2"}``): the tool's only required argument, when the value fits that
    argument's schema as it is. ``None`` otherwise (no such tool, not exactly one required
    argument, or a value of another type). The agent passes this to the parser
    (``parse_reply(name_value=...)``)."""
    tool = toolbox.get(tool_name)
    if tool is None:
        return None
    required = tool.parameters.get("required") or []
    if len(required) != 1:
        return None
    spec = (tool.parameters.get("properties") or {}).get(required[0])
    if not isinstance(spec, dict):
        return None
    try:
        if not json_schema.validator(spec).is_valid(value):
            return None
    except json_schema.UnresolvedReference:  # a reference to the rest of the tool's schema
        return None
    except json_schema.Unchecked:  # not decided in time: the value is not taken as fitting
        return None
    return str(required[0])


def call_example(tool: Tool) -> str:
    """A complete reply calling ``tool`` with its real argument names (the required ones, or
    all when none is required), each value an example from the schema or a ``<type>``
    placeholder: ``{"thought": "...", "action": {"name": "calculate", "args": {"expression":
    "<string>"}}}``."""
    props: dict[str, Any] = tool.parameters.get("properties") or {}
    names = tool.parameters.get("required") or list(props)
    args = {name: _example_value(_spec(props.get(name))) for name in names}
    action = {"name": tool.name, "args": args}
    return json.dumps({"thought": "...", "action": action}, ensure_ascii=False)


def _example_value(spec: dict[str, Any]) -> Any:
    examples = spec.get("examples")
    if isinstance(examples, list) and examples:
        return examples[0]
    if isinstance(spec.get("enum"), list) and spec["enum"]:
        return spec["enum"][0]
    types = _types(spec)
    return f"<{types[0] if types else 'value'}>"

_TYPE_NAME = type.__dict__["__name__"]


def _type_name(value: Any) -> str:
    """The name of ``value``'s type, at most 100 characters, read so that no class can make it
    raise (a metaclass may override ``__name__``)."""
    return str.__str__(_TYPE_NAME.__get__(type(value)))[:100]


def clean_args(schema: dict[str, Any], args: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Clean arguments toward ``schema`` before validation, only where the meaning is certain.

    Strips surrounding whitespace from strings; turns ``"5"`` into 5 and ``"2.5"`` into 2.5
    where the schema expects a number, ``"true"``/``"false"`` into booleans, 5 into ``"5"`` where
    it expects a string, a JSON array or object written as a string into the value, a single
    value into a one-element array, an ``enum`` value in other letter case into the listed one;
    fills in schema defaults of missing arguments (a default that does not fit its own
    schema's type or ``enum``, such as ``null`` for a string, is not filled in: the argument
    stays left out, as written). Anything else is left for validation to
    reject (``"5 apples"`` stays a string, and so does a number that would not mean what was
    written: ``"1e999"``, an integer of thousands of digits; see :func:`_coerce`). Nested arrays
    and objects are cleaned the same way. Never raises for JSON values nested at most
    :data:`MAX_ARGS_DEPTH` deep (:func:`prepare` refuses deeper ones first), but
    :class:`~react_agent.tools.schema.Unchecked` when run inside a
    :func:`~react_agent.tools.schema.budget` that runs out (as :func:`prepare` runs it).

    Returns:
        ``(cleaned args, changes)``; each change in words, e.g. ``'days: "5" -> 5'``.
    """
    cleaned, changes = _clean_args(schema, args)
    return cleaned, [words for words, _ in changes]


def clean_value(schema: dict[str, Any], value: Any) -> tuple[Any, list[str]]:
    """:func:`clean_args` for any JSON value (a typed final answer: a number, a list, an
    object) against ``schema``, the value's own schema; the same cleaning, only where the
    meaning is certain, within the same budget rules.

    Returns:
        ``(cleaned value, changes)``; each change in words (``'(value): "4243" -> 4243'``).
    """
    changes: list[_Change] = []
    cleaned = _clean(schema, value, "", "", changes, schema)
    return cleaned, [words if not words.startswith(":") else f"(value){words}"
                     for words, _ in changes]


def value_problems(schema: dict[str, Any], value: Any) -> list[str]:
    """The ways ``value`` breaks ``schema``, one plain-words problem per field
    (``"count: expected integer, got 'many'"``; ``(value)`` for the value itself), at most
    :data:`MAX_PROBLEMS`; ``[]``: valid. Checked within
    :data:`~react_agent.tools.schema.VALIDATION_SECONDS` by the bounded validator: a value
    that cannot be checked within it gets the one problem saying so."""
    try:
        with json_schema.budget():
            if json_schema.surely_valid(schema, value):
                return []
            errors: list[Any] = sorted(
                json_schema.validator(schema).errors(value, MAX_PROBLEMS), key=_error_key)
    except json_schema.Unchecked as exc:
        return [f"(value): could not be checked against the schema within "
                f"{json_schema.budget_seconds():g} s ({exc.reason})"]
    except json_schema.UnresolvedReference as exc:
        return [f"(value): the schema has a reference that cannot be followed ({exc})"]
    problems = []
    for error in errors:
        where = ".".join(str(p) for p in error.absolute_path) or "(value)"
        if error.validator == "required":
            missing = [r for r in error.validator_value if r not in error.instance]
            problems += [f"{where}.{name}: missing" if where != "(value)" else f"{name}: missing"
                         for name in missing]
        elif error.validator == "additionalProperties":
            problems.append(f"{where}: {_expected(error)}")
        else:
            problems.append(f"{where}: {_expected(error)}, got {_brief(error.instance, 80)}")
    return list(dict.fromkeys(problems))


_Change = tuple[str, str]
"""A change of the cleaning: ``(in words, in kind)``. In kind it holds no value of the call:
``'days: "5" -> 5'`` is ``"days: string -> integer"``, a filled-in default is named without
its value, and an argument the schema does not declare is ``*`` in the path."""


def _clean_args(schema: dict[str, Any], args: dict[str, Any]) -> tuple[dict[str, Any],
                                                                       list[_Change]]:
    """:func:`clean_args`, with each change both in words and in kind (:data:`_Change`)."""
    changes: list[_Change] = []
    cleaned = _clean_object(schema, args, "", "", changes)
    return cleaned, changes


def _clean_object(
    schema: dict[str, Any], value: dict[str, Any], where: str, path: str,
    changes: list[_Change], root: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """``where``: the path of ``value`` in the arguments, for the words; ``path``: the same with
    ``*`` for the names the schema does not declare, for the kinds; ``root``: the schema local
    references are followed in (a typed answer's schema keeps its ``$defs``)."""
    props: dict[str, Any] = schema.get("properties") or {}
    cleaned = {
        key: _clean(_spec(props.get(key)), item, f"{where}{key}",
                    f"{path}{key if key in props else '*'}", changes, root)
        for key, item in value.items()
    }
    for key, spec in props.items():
        if key not in cleaned and isinstance(spec, dict) and "default" in spec \
                and _fits(spec, spec["default"]):
            cleaned[key] = copy.deepcopy(spec["default"])
            changes.append((f"{where}{key}: filled in the default {_show(spec['default'])}",
                            f"{path}{key}: filled in the default"))
    return cleaned


MAX_REF_HOPS = 32
"""At most this many references are followed for one value when cleaning (a chain of
references that leads back to itself ends there)."""


def _followed(spec: dict[str, Any], root: dict[str, Any] | None) -> dict[str, Any]:
    """``spec`` with its local ``$ref`` followed in ``root`` (the keys beside the reference kept
    over the target's), at most :data:`MAX_REF_HOPS` times; as it is without a ``root`` or for
    a reference that leads nowhere (validation reports it). Nothing is fetched."""
    for _ in range(MAX_REF_HOPS):
        ref = spec.get("$ref")
        target = json_schema.resolve_local(root, ref) if root and isinstance(ref, str) else None
        if not isinstance(target, dict):
            return spec
        json_schema.spend("following a reference")
        spec = {**target, **{k: v for k, v in spec.items() if k != "$ref"}}
    return spec


def _clean(spec: dict[str, Any], value: Any, where: str, path: str,
           changes: list[_Change], root: dict[str, Any] | None = None) -> Any:
    json_schema.spend("cleaning the arguments")  # an enum may be long, and so may the args
    spec = _followed(spec, root)
    cleaned = value.strip() if isinstance(value, str) else value
    types = _types(spec)
    kind = _json_type(cleaned) if types else ""
    if types and kind not in types and not (kind == "integer" and "number" in types):
        cleaned = _coerce(cleaned, types)
    if "integer" in types and isinstance(cleaned, float) and cleaned.is_integer() \
            and abs(cleaned) <= _EXACT_FLOAT_INTEGERS:
        cleaned = int(cleaned)
    enum = spec.get("enum")
    if isinstance(cleaned, str) and isinstance(enum, list) and cleaned not in enum:
        same = [e for e in enum if isinstance(e, str) and e.casefold() == cleaned.casefold()]
        cleaned = same[0] if len(same) == 1 else cleaned
    if cleaned is not value and (cleaned != value or type(cleaned) is not type(value)):
        if isinstance(value, str) and cleaned == value.strip():
            changes.append((f"{where}: stripped spaces", f"{path}: stripped spaces"))
        else:
            before, after = _kind(value), _kind(cleaned)
            kind = "the letter case of a listed value" if before == after == "string" \
                else f"{before} -> {after}"  # only an enum value is a string made a string
            changes.append((f"{where}: {_show(value)} -> {_show(cleaned)}", f"{path}: {kind}"))
    if isinstance(cleaned, list) and isinstance(spec.get("items"), dict):
        return [_clean(spec["items"], v, f"{where}.{i}", f"{path}.{i}", changes, root)
                for i, v in enumerate(cleaned)]
    if isinstance(cleaned, dict) and isinstance(spec.get("properties"), dict):
        return _clean_object(spec, cleaned, f"{where}.", f"{path}.", changes, root)
    return cleaned


def _fits(spec: dict[str, Any], value: Any) -> bool:
    """``value`` has a type ``spec`` declares (any, if it declares none) and is in its
    ``enum``, if it has one: a default that does not is no value the tool takes."""
    types = _types(spec)
    kind = _json_type(value)
    enum = spec.get("enum")
    return (not types or kind in types or (kind == "integer" and "number" in types)) \
        and (not isinstance(enum, list) or value in enum)


def _kind(value: Any) -> str:
    """The JSON type of a value of the arguments (``"number"`` for any float)."""
    return JSON_TYPES.get(_type_name(value), "value")


_EXACT_FLOAT_INTEGERS = 2**53
"""Every integer up to this size is a float exactly; a larger whole float (``1e300``) may not be
the integer the model wrote, so it is not turned into one."""
_INTEGER = re.compile(r"[+-]?\d+")
_NUMBER = JSON_NUMBER
_NONZERO = re.compile(r"[1-9]")


def _coerce(value: Any, types: list[str]) -> Any:
    """``value`` turned into one of ``types`` when that cannot change its meaning, else as is.

    A numeric string becomes a number only when the number means the same: an integer exactly
    (at most :data:`MAX_INTEGER_DIGITS` digits), a decimal as the nearest float (as JSON reads
    it) when that is finite and not a rounding of a nonzero value to 0. ``"1e999"`` stays a
    string, for validation to report."""
    if isinstance(value, str):
        text = value.strip()
        number: int | float | None
        if "integer" in types and _INTEGER.fullmatch(text):
            number = _integer(text, finite=False)
            return value if number is None else number
        if "number" in types and _NUMBER.fullmatch(text):
            number = _integer(text, finite=True) if _INTEGER.fullmatch(text) else _float(text)
            return value if number is None else number
        if "boolean" in types and text.lower() in ("true", "false"):
            return text.lower() == "true"
        if ("array" in types and text.startswith("[")) or ("object" in types and text[:1] == "{"):
            try:
                decoded = json.loads(text)
            except (ValueError, RecursionError):  # not JSON, too long a number, too deep
                return value
            if _json_type(decoded) not in types or _value_problems({"": decoded}):
                return value
            return decoded
    if "string" in types and isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return str(value)
        except ValueError:  # an integer too long to be text
            return value
    if "array" in types and not (isinstance(value, str) and value.strip()[:1] in ("[", "{")):
        return [value]
    return value


def _integer(text: str, *, finite: bool) -> int | None:
    """The integer ``text`` writes, or ``None``: more than :data:`MAX_INTEGER_DIGITS` digits, or,
    with ``finite``, past the range of a float."""
    if len(text.lstrip("+-")) > MAX_INTEGER_DIGITS:
        return None
    try:
        number = int(text)
        if finite:
            float(number)
    except (ValueError, OverflowError):  # Python's own digit limit may be lower
        return None
    return number


def _float(text: str) -> float | None:
    """The float ``text`` writes, or ``None`` when it is not finite (``"1e999"``) or is a
    nonzero value rounded to 0 (``"1e-999"``)."""
    number = float(text)
    if not math.isfinite(number):
        return None
    if number == 0 and _NONZERO.search(re.split("[eE]", text, maxsplit=1)[0]):
        return None
    return number


def _spec(schema: Any) -> dict[str, Any]:
    """A property's schema as an object: a boolean schema (``true``: anything, ``false``:
    nothing) says nothing to clean toward or show, and is left to validation."""
    return schema if isinstance(schema, dict) else {}


def _types(spec: dict[str, Any]) -> list[str]:
    declared = spec.get("type")
    if isinstance(declared, str):
        return [declared]
    if isinstance(declared, list):
        return [t for t in declared if isinstance(t, str)]
    return []


def _json_type(value: Any) -> str:
    """The JSON Schema type of a JSON value (a whole float counts as an integer)."""
    if isinstance(value, float) and value.is_integer():
        return "integer"
    return JSON_TYPES.get(type(value).__name__, "unknown")


def _show(value: Any) -> str:
    return _brief(value, 60)


def _brief(value: Any, limit: int) -> str:
    """``value`` as JSON (``repr`` for what JSON cannot hold), at most ``limit`` characters; a
    placeholder naming its type when no text can be made. Never raises (but
    ``KeyboardInterrupt``)."""
    try:
        text = shown_json(value)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        text = f"<{_type_name(value)} that cannot be shown: {_type_name(exc)}>"
    return text[:limit]


def check_args(schema: dict[str, Any], args: dict[str, Any]) -> list[str]:
    """Validate ``args`` against the tool's JSON Schema; one plain-words problem per field.

    The check takes at most :data:`~react_agent.tools.schema.VALIDATION_SECONDS` (or what is
    left of the budget it runs in): arguments it cannot decide within that (a costly schema:
    a backtracking ``pattern``, ``anyOf`` nested through references) get the one problem
    saying so, and must not be used."""
    try:
        with json_schema.budget():
            return _problems(schema, args)
    except json_schema.Unchecked as exc:
        return [_unchecked(exc)]


def _unchecked(exc: json_schema.Unchecked) -> str:
    return f"(args): could not be checked against the tool's schema within " \
        f"{json_schema.budget_seconds():g} s ({exc.reason}); the call was not run"


def _problems(schema: dict[str, Any], args: dict[str, Any]) -> list[str]:
    """:func:`check_args` inside a budget: raises :class:`~react_agent.tools.schema.Unchecked`
    when the arguments cannot be checked within it."""
    problems: list[str] = []
    props: dict[str, Any] = schema.get("properties", {})
    if schema.get("additionalProperties", False) is False:
        extras = [extra for extra in args if extra not in props]
        if extras:
            names = list(props)
            known = ", ".join(names[:MAX_NAMES_SHOWN]) or "none"
            if len(names) > MAX_NAMES_SHOWN:
                known += f", ... ({len(names)} in all)"
        for extra in extras[:MAX_PROBLEMS]:
            json_schema.spend("the names of unknown arguments")
            hint = _did_you_mean(extra, props)
            problems.append(f"{extra}: unknown argument{hint} (arguments: {known})")
        if len(extras) > MAX_PROBLEMS:
            problems.append(f"(args): {len(extras) - MAX_PROBLEMS} more unknown arguments")
    barred = [name for name in args if props.get(name) is False]  # declared `false`
    problems += [f"{name}: no value is allowed here; leave it out" for name in barred]
    if json_schema.surely_valid(schema, args):
        return problems
    try:
        errors: list[Any] = sorted(json_schema.validator(schema).errors(args, MAX_PROBLEMS),
                                   key=_error_key)
    except json_schema.UnresolvedReference as exc:
        return [*problems, f"(args): the tool's schema has a reference that cannot be "
                f"followed ({exc}); this tool cannot be called as it is declared"]
    for error in errors:
        if error.validator == "required":
            missing = [r for r in error.validator_value if r not in error.instance]
            for name in missing:
                expected = _spec(props.get(name)).get("type", "value")
                problems.append(f"{name}: missing (required {expected})")
        elif error.validator == "additionalProperties":
            continue  # reported above with a hint
        elif error.validator is None and barred and not error.absolute_path:
            continue  # a `false` property, reported above by name (jsonschema's error of a
            # `false` schema carries the path of the object around it, not its own)
        else:
            where = ".".join(str(p) for p in error.absolute_path) or "(args)"
            got = _brief(error.instance, 80)
            problems.append(f"{where}: {_expected(error)}, got {got}")
    return list(dict.fromkeys(problems))


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def control_character_problems(args: dict[str, Any]) -> list[str]:
    """One problem per argument (at any depth up to :data:`MAX_ARGS_DEPTH`, keys too) holding a
    control character other than tab, newline and carriage return: no argument means one, and
    passing it on silently (a NUL byte from ``"Ume\\u0000e5"``, a backspace from ``"\\bword"``)
    would hand the tool a value the model did not mean. The call is refused with this problem
    instead."""
    problems: list[str] = []
    for value, _, trail in walk(args, MAX_ARGS_DEPTH, trails=True):
        texts = [(f"{_where((trail, key, False))} (the name)", str(key)) for key in value
                 if _CONTROL.search(str(key))] if isinstance(value, dict) else \
            [(_where(trail), value)] if isinstance(value, str) else []
        for where, text in texts:
            if m := _CONTROL.search(text):
                problems.append(
                    f"{where}: contains the control character U+{ord(m.group()):04X} at "
                    f"character {m.start()}, which no argument means; send the text without it "
                    "(a \\u escape takes exactly four hex digits, and a backslash is written "
                    "\\\\)")
    return sorted(problems)


def _error_key(error: Any) -> tuple[str, ...]:
    return tuple(str(p) for p in error.absolute_path)


_ENUM_SHOWN = 20
"""A problem lists at most this many of the allowed values (each cut to 60 characters)."""


def _expected(error: Any) -> str:
    v = error.validator
    if v is None:  # a `false` schema
        return "holds a value where the schema allows none"
    if v == "type":
        return f"expected {error.validator_value}"
    if v == "enum":
        listed = [json.dumps(x, ensure_ascii=False) for x in error.validator_value[:_ENUM_SHOWN]]
        listed = [x if len(x) <= 60 else f"{x[:60]}..." for x in listed]
        more = len(error.validator_value) - len(listed)
        return "expected one of " + ", ".join(listed) + (f", ... ({more} more)" if more else "")
    message = str(error.message)  # it may quote the whole value: a line per field stays short
    return message if len(message) <= 200 else f"{message[:200]}..."
