"""Saving and loading JSON files safely: runs, conversations, checkpoints and memory; reading
JSON Lines files (tasks, eval suites, results, traces); and checking what a file holds against
the shape of its records.

Writes are atomic (a temporary file in the same folder, flushed to disk, then ``os.replace``d
over the target), so a crash or a full disk never leaves half a file and never loses the
previous version.

A record read from a file is checked against its :class:`Shape` (a pydantic model with strict
types: no ``"3"`` for 3, no ``true`` for 1; numbers finite and in range, counts integers) by
:func:`check_shape`, whose error names the file, the line and the field at fault, so that a file
edited by hand or by another program fails when it is read, not later with a traceback.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path
from typing import IO, Annotated, Any, Literal, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic_core import ErrorDetails, PydanticCustomError

from ._json import is_container, walk
from ._lexical import did_you_mean
from .errors import ConfigError


def write_atomically(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` (UTF-8) in one step. A lone surrogate (half a UTF-16
    pair, which a model reply can carry) is written as its JSON escape ``\\udXXX`` instead of
    failing the write; inside a JSON string that reads back as the same character.

    Raises:
        OSError: the folder is not writable or the disk is full; ``path`` is then unchanged.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


MAX_JSON_DEPTH = 100
"""The deepest nesting of arrays and objects the JSON this package reads may have: files,
request bodies and arguments written as JSON text (the values it writes stay far below)."""


def loads(text: str | bytes, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """``json.loads`` with the nesting bounded: work on the value stays linear and shallow.

    Raises:
        ValueError: ``text`` is not JSON, or nests arrays and objects deeper than
            ``max_depth`` levels (the message says so).
    """
    try:
        value = json.loads(text)
    except RecursionError:
        raise ValueError(f"nested deeper than {max_depth} levels") from None
    for node, depth, _ in walk(value, max_depth):
        if depth > max_depth and is_container(node):
            raise ValueError(f"nested deeper than {max_depth} levels")
    return value


def read_json(path: Path) -> Any:
    """The JSON value in ``path``.

    Raises:
        ConfigError: the file is missing, unreadable or not JSON (the message names the file).
    """
    try:
        return loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"Cannot read {path}: {exc.strerror or exc}.") from exc
    except ValueError as exc:
        raise ConfigError(f"{path} is not valid JSON: {exc}.") from exc


def read_json_lines(
    path: str | os.PathLike[str],
    what: str,
    *,
    missing_ok: bool = False,
    skip_broken: Literal["none", "last", "all"] = "none",
) -> list[tuple[int, Any]]:
    """The JSON value of each non-blank line of a JSON Lines file, with its line number.

    Args:
        path: the file (UTF-8).
        what: what the file is, for messages (``"tasks file"``, ``"trace"``, ...).
        missing_ok: a missing file reads as no lines (an output file not written yet).
        skip_broken: which lines that are not JSON are passed over instead of raising:
            ``"none"`` (files people write), ``"last"`` (a file this package writes in one go,
            whose last line a crash can cut short) or ``"all"`` (a file this package appends
            to across runs, where a cut-short line can end up in the middle).

    Returns:
        ``[(line number (1-based), value), ...]`` in file order.

    Raises:
        ConfigError: the file cannot be read, or a line that is not JSON is not skipped (the
            line is named).
    """
    try:  # bytes: a line cut short may end inside a character; U+2028 is no line break here
        lines = Path(path).read_bytes().splitlines()
    except FileNotFoundError as exc:
        if missing_ok:
            return []
        raise ConfigError(f"Cannot read the {what} {path}: {exc.strerror or exc}") from exc
    except OSError as exc:
        raise ConfigError(f"Cannot read the {what} {path}: {exc.strerror or exc}") from exc
    values = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            values.append((number, loads(line.decode("utf-8"))))
        except ValueError as exc:  # UnicodeDecodeError included
            if skip_broken == "all" or (skip_broken == "last" and number == len(lines)):
                continue
            raise ConfigError(f"{path}, line {number}: not a JSON record ({exc}).") from exc
    return values


def append_json_lines(path: str | os.PathLike[str]) -> IO[str]:
    """``path`` opened to append JSON lines (its folder made if needed), starting on a new line
    if a crash left the last one cut short, so that the next record is not glued to it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("ab+") as raw:  # bytes: a cut-short line may end inside a character
        size = raw.seek(0, os.SEEK_END)
        raw.seek(max(0, size - 1))
        cut_short = size > 0 and raw.read(1) != b"\n"
    sink = path.open("a", encoding="utf-8", errors="backslashreplace")  # a lone surrogate
    if cut_short:
        sink.write("\n")
    return sink


def write_json_line(sink: IO[str], record: Any) -> None:
    """Append ``record`` as one line and flush it, so that it survives a crash that follows."""
    sink.write(json.dumps(record, ensure_ascii=False) + "\n")
    sink.flush()


# -- the shapes of records read from files ------------------------------------------------------
MAX_COUNT = 10**12
"""The largest count (steps, tokens, tool calls, a line number) a file may hold."""

MAX_SECONDS = 1e9
"""The longest duration (about 31 years) a file may hold, in seconds."""

Count = Annotated[int, Field(ge=0, le=MAX_COUNT)]
"""A count: an integer from 0 to :data:`MAX_COUNT`."""

Seconds = Annotated[float, Field(ge=0, le=MAX_SECONDS, allow_inf_nan=False)]
"""A duration: a finite number of seconds from 0 to :data:`MAX_SECONDS`."""

Probability = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
"""A probability: a number from 0 to 1."""


def _name_or_number(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise PydanticCustomError("name_type", "expected a string or an integer, got {got}",
                                  {"got": shown(value)})
    return value


NameOrNumber = Annotated[Any, AfterValidator(_name_or_number)]
"""An id: a string or an integer (not ``true``)."""


class Shape(BaseModel):
    """The shape of a record read from a file: its fields with strict types (``null`` only where
    a field's type allows ``None``). Keys it does not name are passed over: a file written by a
    later version reads."""

    model_config = ConfigDict(strict=True, extra="ignore", protected_namespaces=())


class ClosedShape(Shape):
    """A :class:`Shape` whose keys are all known, for files people write (a tasks file): a key it
    does not name is an error that says which known key is closest (``must_contian``: did you
    mean ``must_contain``?), never a check silently left out."""

    model_config = ConfigDict(strict=True, extra="forbid", protected_namespaces=())

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        if isinstance(data, dict):
            known = list(cls.model_fields)
            for key in data:
                if key not in cls.model_fields:
                    raise PydanticCustomError(
                        "unknown_key", "unknown key {key}{hint} (known: {known})",
                        {"key": repr(str(key)[:60]), "hint": did_you_mean(str(key), known),
                         "known": ", ".join(known)})
        return data


M = TypeVar("M", bound=BaseModel)


def check_shape(shape: type[M], data: Any, where: str) -> M:
    """``data`` read as ``shape``.

    Raises:
        ConfigError: ``data`` does not have the shape; the message names ``where`` (the file
            and line), the field at fault (``steps[2].tool_calls[0].name``) and what is wrong.
    """
    try:
        return shape.model_validate(data)
    except ValidationError as exc:
        field, problem = _first_problem(exc)
        raise ConfigError(f"{where}{'.' + field if field else ''}: {problem}.") from None


def problem_in_words(exc: ValidationError) -> str:
    """The first problem of a failed check of a shape, as ``field: what is wrong`` (e.g.
    ``steps[0].seconds: expected a finite number, got Infinity``), or what is wrong with the
    record itself."""
    field, problem = _first_problem(exc)
    return f"{field}: {problem}" if field else problem


def _first_problem(exc: ValidationError) -> tuple[str, str]:
    error = exc.errors(include_url=False)[0]
    field = "".join(f"[{part}]" if isinstance(part, int) else f".{part}"
                    for part in error["loc"]).lstrip(".")
    return field, _problem(error)


_EXPECTED = {
    "string_type": "a string", "int_type": "an integer", "float_type": "a number",
    "bool_type": "true or false", "dict_type": "an object", "model_type": "an object",
    "model_attributes_type": "an object", "list_type": "a list", "finite_number":
    "a finite number",
}


def _problem(error: ErrorDetails) -> str:
    kind, ctx = error["type"], error.get("ctx") or {}
    got = shown(error.get("input"))
    if kind == "missing":
        return "missing"
    if kind == "float_type" and isinstance(error.get("input"), int):  # beyond a float's range
        return f"expected a number in range, got {got}"
    if kind in _EXPECTED:
        return f"expected {_EXPECTED[kind]}, got {got}"
    bounds = {"greater_than_equal": ("ge", "at least"), "less_than_equal": ("le", "at most"),
              "greater_than": ("gt", "more than"), "less_than": ("lt", "less than")}
    if kind in bounds:
        key, words = bounds[kind]
        return f"expected a number {words} {_number(ctx.get(key))}, got {got}"
    if kind in ("too_short", "too_long"):
        words = "at least" if kind == "too_short" else "at most"
        return f"expected {words} {ctx.get('min_length', ctx.get('max_length'))} item(s)"
    if kind == "literal_error":
        return f"expected one of {ctx.get('expected')}, got {got}"
    return str(error["msg"]).removeprefix("Value error, ")  # our own words


def _number(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) and not value.is_integer() else \
        str(int(value)) if isinstance(value, (int, float)) else str(value)


def shown(value: Any) -> str:
    """A JSON value in a few words for an error message: its type, or a short number."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        try:
            digits = len(str(abs(value)))
        except ValueError:  # more digits than Python converts (sys.set_int_max_str_digits)
            return "a number of thousands of digits"
        return str(value) if digits <= 20 else f"a number of {digits} digits"
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        return str(value) if math.isfinite(value) else ("-" if value < 0 else "") + "Infinity"
    if isinstance(value, str):
        return f"a string ({value[:40]!r}{'…' if len(value) > 40 else ''})"
    if isinstance(value, dict):
        return "an object"
    return "a list" if isinstance(value, list) else type(value).__name__
