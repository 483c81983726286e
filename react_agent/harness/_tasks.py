"""A tasks file of ``react-agent run --tasks`` read into :class:`BatchTask` values: one task or
conversation per JSON Lines line, each checked (an unknown key suggests the closest known one;
see :mod:`react_agent.harness._batch` for the whole format)."""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, Field, ValidationError, model_validator
from pydantic_core import PydanticCustomError

from .._persist import (
    MAX_COUNT,
    NameOrNumber,
    loads,
    problem_in_words,
    read_json_lines,
    shown,
)
from ..engine import output_spec
from ..errors import ConfigError
from . import _checks as checks

TaskChecks = dict[str, Any]

_TASK_HINT = ('a task is {"task": "...", "id": "...", "tools": "MODULE:OBJECT", "expected": '
              '["..."]} or {"turns": [{"task": "..."}, ...]} (docs: batches.md).')


@dataclass(frozen=True)
class BatchTask:
    """One line of a tasks file: ``task`` is its (first) user message; ``turns`` holds every
    turn of a conversation as ``(task, checks)`` (one turn for a plain task); ``checks`` are
    those of the last turn, ``max_steps`` overrides the agent's budget when set,
    ``output_schema`` (a bounded, checked JSON Schema) is the final answer's output type (its
    typed value must validate: a check of the task). ``line`` is
    its line in the tasks file; ``problem`` says why a line read by ``load_tasks(path,
    strict=False)`` is not a task (such a task is recorded as failed, ``bad_task``, not run)."""

    id: str
    task: str
    tools: str | None = None
    expected: tuple[str, ...] = ()
    checks: TaskChecks = field(default_factory=dict, compare=False)
    turns: tuple[tuple[str, TaskChecks], ...] = ()
    max_steps: int | None = None
    shape: str | None = None
    output_schema: dict[str, Any] | None = field(default=None, compare=False)
    line: int | None = field(default=None, compare=False)
    problem: str | None = field(default=None, compare=False)

    def all_turns(self) -> tuple[tuple[str, TaskChecks], ...]:
        """``(task, checks)`` of every turn, in order."""
        return self.turns or ((self.task, self.checks),)


def load_tasks(path: str | os.PathLike[str], strict: bool = True) -> list[BatchTask]:
    """The tasks of a JSON Lines file (blank lines ignored; ids default to the line number).

    Args:
        path: the tasks file.
        strict: raise on the first line that is not a task (or repeats an id). With ``False``
            such a line comes back as a task whose ``problem`` says what is wrong (and whose
            ``line`` is its line): :func:`run_batch` records it as failed and runs the others.

    Raises:
        ConfigError: the file cannot be read, or (``strict``) a line is not a task (the line
            is named).
    """
    tasks: list[BatchTask] = []
    seen: dict[str, int] = {}
    for number, data, problem in _lines(path, strict):
        task = None
        if problem is None:
            try:
                task = _task(data, str(number), Path(path).parent)
            except (ValueError, KeyError, AttributeError, TypeError) as exc:
                # a ValueError is our own message about the line; anything else is named
                why = str(exc) if type(exc) is ValueError else f"{type(exc).__name__}: {exc}"
                if strict:
                    raise ConfigError(f"{path}, line {number}: not a task ({why}); "
                                      f"{_TASK_HINT}") from exc
                problem = f"not a task ({why})"
        task_id = task.id if task else _raw_id(data, number)
        if task_id in seen:
            if strict:
                raise ConfigError(f"{path}, line {number}: the id {task_id!r} is used twice.")
            problem = f"the id {task_id!r} is used twice (first on line {seen[task_id]})"
            task_id = f"{task_id} (line {number})"
        seen.setdefault(task_id, number)
        if task is None or problem is not None:
            task = BatchTask(task_id, "", line=number, problem=problem)
        else:
            task = dataclasses.replace(task, line=number)
        tasks.append(task)
    return tasks


def _lines(path: str | os.PathLike[str], strict: bool) -> list[tuple[int, Any, str | None]]:
    """``(line number, JSON value, problem)`` of each non-blank line; a line that is not JSON
    has the value ``None`` and a problem (``strict``: raises, as :func:`read_json_lines`)."""
    if strict:
        return [(n, data, None) for n, data in read_json_lines(path, "tasks file")]
    try:
        lines = Path(path).read_bytes().splitlines()
    except OSError as exc:
        raise ConfigError(f"Cannot read the tasks file {path}: {exc.strerror or exc}") from exc
    found: list[tuple[int, Any, str | None]] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            found.append((number, loads(line.decode("utf-8")), None))
        except ValueError as exc:  # UnicodeDecodeError included
            found.append((number, None, f"not a JSON record ({exc})"))
    return found


def _raw_id(data: Any, number: int) -> str:
    """The id a line that is not a task names (its line number when it names none)."""
    raw = data.get("id") if isinstance(data, dict) else None
    return str(raw) if isinstance(raw, (str, int)) and not isinstance(raw, bool) else str(number)


def _non_empty(value: str) -> str:
    if not value.strip():
        raise PydanticCustomError("empty", "expected a non-empty string, got {got}",
                                  {"got": shown(value)})
    return value


_Text = Annotated[str, AfterValidator(_non_empty)]


class _Turn(checks.Checks):
    """One turn of a conversation: its task and its checks."""

    task: _Text
    note: Any = None


class _TaskLine(checks.Checks):
    """A line of a tasks file (see the module docs); ``note``, ``lang`` and ``reference`` are
    annotations no check reads. A conversation's task and checks are in its turns."""

    task: _Text | None = None
    id: NameOrNumber | None = None
    tools: str | None = None
    max_steps: Annotated[int, Field(ge=1, le=MAX_COUNT)] | None = None
    shape: str | None = None
    output_schema: dict[str, Any] | None = None
    expected: list[str] = Field(default_factory=list)
    turns: Annotated[list[_Turn], Field(min_length=1)] | None = None
    note: Any = None
    lang: Any = None
    reference: Any = None

    @model_validator(mode="after")
    def _task_or_turns(self) -> _TaskLine:
        if self.turns is None and self.task is None:
            raise PydanticCustomError("missing_task", "task: missing (or turns, for a "
                                      "conversation)")
        misplaced = [k for k in ("task", *checks.CHECK_KEYS) if k in self.model_fields_set]
        if self.turns is not None and misplaced:
            raise PydanticCustomError(
                "misplaced", "{key}: a conversation's task and checks go in its turns",
                {"key": misplaced[0]})
        return self


def _task(data: Any, number: str, folder: Path) -> BatchTask:
    """The task of one line.

    Raises:
        ValueError: the line is not a task (the message names the key at fault).
    """
    try:
        line = _TaskLine.model_validate(data)
    except ValidationError as exc:
        raise ValueError(problem_in_words(exc)) from None
    if line.output_schema is not None:
        try:
            output_spec(line.output_schema, "output_schema")
        except ConfigError as exc:
            raise ValueError(str(exc)) from None
    pairs = [(t["task"], {k: t[k] for k in checks.CHECK_KEYS if k in t}) for t in
             (data["turns"] if line.turns else [data])]
    return BatchTask(
        id=str(line.id if line.id is not None else number), task=pairs[0][0],
        tools=_tools_spec(line.tools, folder), expected=tuple(line.expected),
        checks=pairs[-1][1], turns=tuple(pairs) if line.turns else (),
        max_steps=line.max_steps, shape=line.shape, output_schema=line.output_schema,
    )


def _tools_spec(spec: str | None, folder: Path) -> str | None:
    """``FILE.py:OBJECT`` with a relative file found next to the tasks file made absolute."""
    if not spec:
        return None
    file, sep, obj = spec.rpartition(":")
    if file.endswith(".py") and not Path(file).is_absolute() and (folder / file).is_file():
        return f"{(folder / file).resolve()}{sep}{obj}"
    return spec
