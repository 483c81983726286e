"""A typed final answer: a run's output type as a JSON Schema, and a final answer read into a
value of that type.

:func:`output_spec` turns what ``Agent(..., output_type=...)`` was given (a pydantic model, a
dataclass, a ``TypedDict``, a plain type such as ``int``, ``list[str]`` or ``Literal[...]``,
or a JSON Schema ``dict``) into an :class:`Output`: the schema the system prompt shows and
constrained decoding holds the final answer to, and :meth:`Output.read`, which reads a final
answer into the typed value or says, field by field, why it does not fit.

Reading is tolerant the way the parser is: the final answer may be a JSON value given in the
action (``{"final_answer": {...}}``, which the parser hands on as its JSON text) or JSON inside
the answer's text, in a fence or with prose around it, with the parser's repairs. Two JSON
values, an object that gives one key twice with different values, and a number that is not
finite (``NaN``, ``Infinity``, ``1e999``; JSON has none) are errors, never a guess. The value
is then cleaned like tool arguments (``"4243"`` -> 4243 where an integer is due) and validated:
by pydantic for a Python type, by the bounded validator of :mod:`react_agent.tools.schema` for
a JSON Schema.

The idea is pydantic-ai's ``output_type`` in its prompted mode (``PromptedOutput``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from typing import Any

from pydantic import TypeAdapter, ValidationError
from pydantic_core import to_jsonable_python

from .._json import path_of, text_json, walk
from .._persist import shown
from ..errors import ConfigError, ToolDefinitionError
from ..parsing import FAIL, DuplicateKey, decode_at, load_json, load_or_repair, loads_lenient
from ..tools import MAX_ARGS_DEPTH, MAX_PROBLEMS, clean_value, value_problems
from ..tools import schema as json_schema
from ._protocol import _strip

MAX_OUTPUT_CHARS = 100_000
"""The longest final answer read for a typed value, in characters; a longer one does not fit."""

MAX_SCHEMA_CHARS = 50_000
"""The longest output type schema, as compact JSON, in characters: it is shown in every system
prompt (a longer one would not leave the model room in its context)."""

MAX_CANDIDATES = 64
"""At most this many places where a JSON value may start are tried in one final answer."""

_TITLE = frozenset({"title"})
_FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\n?(.*?)```", re.DOTALL)
_OPENER = re.compile(r"[{\[]")
_DUPLICATE = 'the key "'  # how DuplicateKey's message starts


@dataclass(frozen=True)
class Output:
    """The output type of a run.

    Attributes:
        schema: the JSON Schema of the typed value (bounded and checked): shown in the system
            prompt and, where the backend constrains decoding, the final answer's schema.
        adapter: pydantic's adapter of a Python type; ``None`` for a JSON Schema given as a
            ``dict`` (validated by the bounded validator).
        nullable: whether ``null`` is a value of the type (``int | None``): a ``null`` final
            answer is then read as that value, not refused by the parser.
    """

    schema: dict[str, Any]
    adapter: TypeAdapter[Any] | None = None
    nullable: bool = False

    @property
    def text(self) -> bool:
        """Whether the typed value is a string (the answer's text is the value)."""
        return self.schema.get("type") == "string"

    def read(self, answer: str) -> tuple[Any, list[str]]:
        """The typed value of the final answer ``answer``: ``(value, [])``, or ``(None,
        problems)`` with one problem per field in words for the model (``"count: missing"``,
        ``"(value): the answer holds 2 JSON values; give exactly one"``). Never raises for any
        ``answer``; bounded by :data:`MAX_OUTPUT_CHARS`, :data:`MAX_CANDIDATES` and the
        validation budget of :mod:`react_agent.tools.schema`."""
        if len(answer) > MAX_OUTPUT_CHARS:
            return None, [f"(value): the final answer is longer than {MAX_OUTPUT_CHARS} "
                          "characters; give only the value"]
        value, problem = self._found(answer)
        if problem:
            return None, [problem]
        for node, depth, _ in walk(value, MAX_ARGS_DEPTH):
            if depth > MAX_ARGS_DEPTH and isinstance(node, (dict, list)):
                return None, [f"(value): nested more than {MAX_ARGS_DEPTH} levels deep"]
        problems = _not_finite(value)
        if problems:
            return None, problems
        try:
            with json_schema.budget():
                value, _ = clean_value(self.schema, value)
        except json_schema.Unchecked:
            pass  # validation says what is wrong
        if self.adapter is None:
            problems = value_problems(self.schema, value) or _not_finite(value)
            return (None, problems) if problems else (value, [])
        try:
            typed = self.adapter.validate_python(value)
        except ValidationError as exc:
            return None, [_problem(e) for e in exc.errors(include_url=False)[:MAX_PROBLEMS]]
        except (ValueError, TypeError, RecursionError) as exc:  # a validator of the type's own
            return None, [f"(value): {type(exc).__name__}: {str(exc)[:200]}"]
        try:  # a type may make a non-finite float of text ("NaN", "1e999" for a float)
            problems = _not_finite(to_jsonable_python(typed))
        except (ValueError, TypeError, RecursionError):
            problems = []  # not JSON at all: saving the result says so
        return (None, problems) if problems else (typed, [])

    def _found(self, answer: str) -> tuple[Any, str]:
        """The one JSON value in ``answer`` (or, for a string type, the answer's text), and
        ``""``; or ``None`` and what is wrong."""
        text = answer.strip()
        whole = load_json(text)
        if self.text:  # the answer's text, unless it is written as one JSON string
            return (whole if isinstance(whole, str) else text), ""
        if whole is not FAIL:
            return whole, ""
        fenced = _FENCE.findall(text)
        if fenced:
            loaded = [_load(block.strip()) for block in fenced]
            problem = next((p for _, p in loaded if p), "")
            values = [v for v, _ in loaded if v is not FAIL]
        else:
            values, problem = _embedded(text)
        if problem:
            return None, problem
        if len(values) > 1:
            count = str(len(values)) if len(values) < MAX_CANDIDATES else "many"
            return None, (f"(value): the answer holds {count} JSON values; give exactly one, "
                          "the answer itself")
        if values:
            return values[0], ""
        if _OPENER.search(text):  # a broken value: the parser's repairs may read it
            start = _OPENER.search(text)
            assert start is not None
            end = max(text.rfind("}"), text.rfind("]"))
            repaired, problem = _load(text[start.start():end + 1]) if end > start.start() \
                else (FAIL, "")
            if problem:
                return None, problem
            if repaired is not FAIL:
                return repaired, ""
            return None, "(value): the answer holds no complete JSON value; give the value as JSON"
        return text, ""  # a bare word or number: cleaning and validation decide

    def shape(self) -> str:
        """The schema as compact JSON for the prompt, without titles (a field's description
        is kept: it helps the model)."""
        return text_json(_strip(self.schema, _TITLE))


def _load(text: str) -> tuple[Any, str]:
    """``text`` read like the parser reads JSON (strictly, else with its repairs) -> ``(value
    or FAIL, "")``; ``(FAIL, problem)`` for an object that gives a key twice with different
    values (also once repaired: ``{'a': 1, 'a': 2}``)."""
    try:
        return loads_lenient(text), ""
    except DuplicateKey as exc:
        return FAIL, f"(value): {exc}"
    except (ValueError, RecursionError):
        pass
    value, _, error = load_or_repair(text)
    if value is FAIL and error.startswith(_DUPLICATE):  # the repair's value gave a key twice
        return FAIL, f"(value): {error}"
    return value, ""


def _embedded(text: str) -> tuple[list[Any], str]:
    """The JSON objects and arrays written in ``text`` among prose, outermost only, in order
    (at most :data:`MAX_CANDIDATES` places tried), and ``""``; or what is wrong with one (a key
    given twice with different values)."""
    values: list[Any] = []
    pos, tried = 0, 0
    while tried < MAX_CANDIDATES:
        match = _OPENER.search(text, pos)
        if match is None:
            break
        tried += 1
        try:
            value, end = decode_at(text, match.start())
        except DuplicateKey as exc:
            return [], f"(value): {exc}"
        except (ValueError, RecursionError):
            pos = match.start() + 1
            continue
        values.append(value)
        pos = end
    return values, ""


def _not_finite(value: Any) -> list[str]:
    """One problem per number in ``value`` (a JSON value) that is not finite: JSON has no
    ``NaN`` or ``Infinity`` (a parser may accept them, ``1e999`` overflows to one)."""
    problems = []
    for node, _, trail in walk(value, MAX_ARGS_DEPTH, trails=True):
        if isinstance(node, float) and not math.isfinite(node):
            where = ".".join(str(key) for key, _ in path_of(trail)) or "(value)"
            shown = "NaN" if math.isnan(node) else ("-" if node < 0 else "") + "Infinity"
            problems.append(f"{where}: {shown} is not a finite number; give a plain number")
            if len(problems) >= MAX_PROBLEMS:
                break
    return sorted(problems)


def _problem(error: Any) -> str:
    where = ".".join(str(part) for part in error["loc"]) or "(value)"
    if error["type"] == "missing":
        return f"{where}: missing"
    return f"{where}: {error['msg']}, got {shown(error.get('input'))}"


def output_spec(output_type: Any, where: str = "output_type") -> Output:
    """The :class:`Output` of ``output_type``: a JSON Schema ``dict``, or any type pydantic
    can validate (a ``BaseModel``, a dataclass, a ``TypedDict``, ``int``, ``list[str]``,
    ``Literal["yes", "no"]``, ...). ``where`` names the schema in messages (a schema's own
    faults are placed under it: ``output_type.properties.count.type``).

    Raises:
        ConfigError: pydantic cannot make a schema of the type, or the schema is not a valid,
            bounded, self-contained JSON Schema (deeper than
            :data:`~react_agent.tools.schema.MAX_DEPTH`, more than
            :data:`~react_agent.tools.schema.MAX_NODES` values, a reference outside it).
    """
    adapter: TypeAdapter[Any] | None = None
    if isinstance(output_type, dict):
        schema = output_type
    else:
        try:
            adapter = TypeAdapter(output_type)
            schema = adapter.json_schema()
        except Exception as exc:  # a type's own hooks may raise anything
            raise ConfigError(f"output_type {_named(output_type)} is not a type pydantic can "
                              f"validate ({type(exc).__name__}: {_said(exc)}); give a "
                              "pydantic model, a dataclass, a TypedDict, a plain type or a "
                              "JSON Schema dict.") from exc
    try:
        json_schema.check_valid(schema, where)
        shown = text_json(_strip(schema, _TITLE))
    except ToolDefinitionError as exc:
        raise ConfigError(str(exc)) from None
    except (TypeError, ValueError) as exc:  # a dict holding no JSON value (a Decimal, a set)
        raise ConfigError(f"{where} is not JSON ({type(exc).__name__}: {_said(exc)}).") from None
    if len(shown) > MAX_SCHEMA_CHARS:
        raise ConfigError(f"{where} is {len(shown)} characters as JSON, more than "
                          f"{MAX_SCHEMA_CHARS}; shorten its descriptions and lists.")
    spec = Output(schema, adapter)
    value, problems = spec.read("null")
    return replace(spec, nullable=not problems and value is None)


def _named(output_type: Any) -> str:
    """``output_type`` as a message names it: its repr (at most 100 characters), else its
    qualified name, else the name of its class (a repr of the type's own may raise)."""
    try:
        return f"{output_type!r:.100}"
    except Exception:  # any repr
        pass
    try:
        return f"{type(output_type).__qualname__}:{output_type.__qualname__!s:.100}"
    except Exception:
        return f"<a {type(output_type).__qualname__:.100}>"


def _said(exc: BaseException) -> str:
    """What ``exc`` says (at most 200 characters); its class's name if that fails."""
    try:
        return str(exc)[:200]
    except Exception:  # an exception's own __str__
        return type(exc).__name__
