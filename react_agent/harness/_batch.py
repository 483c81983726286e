"""Running many tasks from a JSON Lines file (``react-agent run --tasks FILE --out RESULTS``).

Each input line is one task::

    {"task": str, "id": str, "tools": "MODULE:OBJECT" | "FILE.py:OBJECT", "max_steps": int,
     "shape": str, "expected": [substrings the final answer must contain],
     ...checks (see :mod:`react_agent.harness._checks`): "expected_calls", "call_order",
     "parallel_allowed", "forbidden_tools", "final_answer", "memory"}

or a conversation, ``{"id", "tools", "turns": [{"task": str, ...checks}, ...]}``, whose turns
run one after the other in one chat. Only ``task`` (or ``turns``) is required. A relative
``FILE.py`` in ``tools`` is looked up next to the tasks file first; ``shape`` is a free label
(conditional, compare, ...) that the summary counts by.

Each finished task appends one line to the output (flushed at once), so an interrupted batch
resumes where it stopped: tasks whose id is already in the output are skipped. A task cut short
by Ctrl-C is not written, so it runs again next time.
"""

from __future__ import annotations

import os
import statistics
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._persist import append_json_lines, read_json_lines, write_json_line
from ..agent._agent import Agent
from ..errors import ConfigError
from ..models.base import fresh_state
from ..types import RunResult
from . import _checks as checks

TaskChecks = dict[str, Any]


@dataclass(frozen=True)
class BatchTask:
    """One line of a tasks file: ``task`` is its (first) user message; ``turns`` holds every
    turn of a conversation as ``(task, checks)`` (one turn for a plain task); ``checks`` are
    those of the last turn, ``max_steps`` overrides the agent's budget when set."""

    id: str
    task: str
    tools: str | None = None
    expected: tuple[str, ...] = ()
    checks: TaskChecks = field(default_factory=dict, compare=False)
    turns: tuple[tuple[str, TaskChecks], ...] = ()
    max_steps: int | None = None
    shape: str | None = None

    def all_turns(self) -> tuple[tuple[str, TaskChecks], ...]:
        """``(task, checks)`` of every turn, in order."""
        return self.turns or ((self.task, self.checks),)


@dataclass
class BatchReport:
    """What a batch did: ``records`` of every task in the output file (earlier runs included),
    how many were ``skipped`` as already done, and whether Ctrl-C ``interrupted`` it."""

    records: list[dict[str, Any]] = field(default_factory=list)
    skipped: int = 0
    interrupted: bool = False


def load_tasks(path: str | os.PathLike[str]) -> list[BatchTask]:
    """The tasks of a JSON Lines file (blank lines ignored; ids default to the line number).

    Raises:
        ConfigError: the file cannot be read, or a line is not a task (the line is named).
    """
    tasks, seen = [], set()
    for number, data in read_json_lines(path, "tasks file"):
        try:
            task = _task(data, str(number), Path(path).parent)
        except (ValueError, KeyError, AttributeError, TypeError) as exc:
            raise ConfigError(
                f"{path}, line {number}: not a task ({type(exc).__name__}: {exc}); expected "
                '{"task": "...", "id": "...", "tools": "MODULE:OBJECT", "expected": ["..."]} '
                "or {\"turns\": [{\"task\": \"...\"}, ...]} (see the README)."
            ) from exc
        if task.id in seen:
            raise ConfigError(f"{path}, line {number}: the id {task.id!r} is used twice.")
        seen.add(task.id)
        tasks.append(task)
    return tasks


def _task(data: dict[str, Any], number: str, folder: Path) -> BatchTask:
    if not isinstance(data, dict):
        raise ValueError("a task is a JSON object")
    turns = data.get("turns", [data])
    if not isinstance(turns, list) or not turns:
        raise ValueError("turns must be a non-empty list")
    for key, kind in (("id", (str, int)), ("tools", str), ("shape", str)):
        if data.get(key) is not None and (not isinstance(data[key], kind)
                                          or isinstance(data[key], bool)):
            raise ValueError(f"{key} must be a string")
    expected = data.get("expected") or []
    if not isinstance(expected, list) or not all(isinstance(e, str) for e in expected):
        raise ValueError("expected must be a list of strings the final answer must contain")
    pairs = []
    for turn in turns:
        if not isinstance(turn, dict) or not isinstance(turn.get("task"), str) \
                or not turn["task"].strip():
            raise ValueError("task must be a non-empty string")
        spec = {k: turn[k] for k in checks.CHECK_KEYS if k in turn}
        checks.validate(spec)
        pairs.append((turn["task"], spec))
    max_steps = data.get("max_steps")
    if max_steps is not None and (not isinstance(max_steps, int) or isinstance(max_steps, bool)
                                  or max_steps < 1):
        raise ValueError("max_steps must be a positive integer")
    return BatchTask(
        id=str(data.get("id", number)), task=pairs[0][0], tools=_tools_spec(data.get("tools"),
                                                                           folder),
        expected=tuple(expected), checks=pairs[-1][1],
        turns=tuple(pairs) if "turns" in data else (), max_steps=max_steps,
        shape=data.get("shape"),
    )


def _tools_spec(spec: str | None, folder: Path) -> str | None:
    """``FILE.py:OBJECT`` with a relative file found next to the tasks file made absolute."""
    if not spec:
        return None
    file, sep, obj = spec.rpartition(":")
    if file.endswith(".py") and not Path(file).is_absolute() and (folder / file).is_file():
        return f"{(folder / file).resolve()}{sep}{obj}"
    return spec


def read_records(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The records already in an output file (none if it does not exist; a line cut short by
    a crash is passed over).

    Raises:
        ConfigError: the file exists but cannot be read, or a line is not a result record.
    """
    records = []
    for number, record in read_json_lines(path, "results file", missing_ok=True,
                                          skip_broken="all"):
        if not isinstance(record, dict) or not isinstance(record.get("id"), (str, int)):
            raise ConfigError(f"{path}, line {number}: not a result record (an object with an "
                              "id); is this the results file of a batch?")
        records.append(record)
    return records


def run_batch(
    tasks: Iterable[BatchTask],
    out: str | os.PathLike[str],
    make_agent: Callable[[BatchTask], Agent],
    progress: Callable[[int, int, BatchTask, dict[str, Any] | None], Any] | None = None,
    fresh_model: bool = True,
) -> BatchReport:
    """Run each task not yet in ``out`` with a fresh ``make_agent(task)`` and append its record
    (the turns of a conversation run in one chat of that agent).

    With ``fresh_model`` (the default), the agent's model is reset before each task when it has
    a ``reset()`` method (the embedded model forgets its KV cache), so a task gets the replies a
    freshly loaded model gives, whatever ran before it: results do not depend on the order of
    the tasks, and a task run on its own replays exactly. It costs reading each task's system
    prompt again.

    ``progress(done, total, task, record)`` is called before each task (``record`` ``None``) and
    after it. A record holds ``id``, ``shape``, ``task``, ``status``, ``final_answer``,
    ``best_effort``, ``error``, ``passed`` (``None`` when the task has no checks), ``problems``
    (in words), ``missing`` (``expected`` substrings not found), ``steps``, ``tool_calls``,
    ``prompt_tokens``, ``completion_tokens``, ``seconds``, ``result`` (the last turn's whole
    RunResult) and, for a conversation, ``turns`` (per turn: ``passed``, ``problems``,
    ``final_answer``, ``result``).
    """
    tasks = list(tasks)
    report = BatchReport(records=read_records(out))
    done = {str(r.get("id")) for r in report.records}
    todo = [t for t in tasks if t.id not in done]
    report.skipped = len(tasks) - len(todo)
    with append_json_lines(out) as sink:
        for number, task in enumerate(todo, 1):
            if progress:
                progress(number - 1, len(todo), task, None)
            started = time.perf_counter()
            agent = make_agent(task)
            if fresh_model:
                fresh_state(agent.model)
            results = []
            if not task.turns:
                results.append(agent.run(task.task))
            else:
                chat = agent.chat()
                for text, _ in task.turns:
                    results.append(chat.ask(text))
                    if results[-1].status == "interrupted":
                        break
            if results[-1].status == "interrupted":
                report.interrupted = True
                break
            record = task_record(task, results, time.perf_counter() - started)
            write_json_line(sink, record)
            report.records.append(record)
            if progress:
                progress(number, len(todo), task, record)
    return report


def task_record(task: BatchTask, results: list[RunResult], seconds: float) -> dict[str, Any]:
    """The output line of one task (see :func:`run_batch`) from the results of its turns."""
    last = results[-1]
    answer = last.final_answer or ""
    missing = [s for s in task.expected if s not in answer]
    turns: list[dict[str, Any]] = []
    problems: list[str] = []
    for n, ((_, spec), result) in enumerate(zip(task.all_turns(), results, strict=True), 1):
        found = checks.check_run(result, spec) if checks.has_checks(spec) else []
        turns.append({"passed": not found if checks.has_checks(spec) else None,
                      "problems": found, "final_answer": result.final_answer})
        problems += [f"turn {n}: {p}" if len(results) > 1 else p for p in found]
    problems += [f"the final answer lacks {s!r}" for s in missing]
    scored = bool(task.expected) or any(t["passed"] is not None for t in turns)
    record = {
        "id": task.id, "shape": task.shape, "task": task.task, "status": last.status,
        "final_answer": last.final_answer, "best_effort": last.best_effort, "error": last.error,
        "passed": not problems if scored else None, "problems": problems, "missing": missing,
        "steps": sum(r.usage["model_calls"] for r in results),
        "tool_calls": sum(r.usage["tool_calls"] for r in results),
        "prompt_tokens": sum(r.usage["prompt_tokens"] for r in results),
        "completion_tokens": sum(r.usage["completion_tokens"] for r in results),
        "seconds": round(seconds, 3), "result": last.to_dict(),
    }
    if task.turns:
        record["turns"] = [{**t, "result": r.to_dict()}
                           for t, r in zip(turns, results, strict=True)]
    return record


def summary_table(records: list[dict[str, Any]], by: str = "status") -> list[str]:
    """Lines of a plain-text summary: one row per value of ``by`` (``"status"`` or
    ``"shape"``) and a total row, with the tasks that passed / failed their checks, model
    steps, tokens, total seconds and the median seconds per task."""
    rows: list[tuple[str, list[dict[str, Any]]]] = [
        (str(value), [r for r in records if r.get(by) == value])
        for value, _ in Counter(r.get(by) for r in records).most_common()
    ]
    if by == "shape":
        rows.sort()
    rows.append(("total", records))
    lines = [f"{by:<22}{'tasks':>6}{'passed':>8}{'failed':>8}{'steps':>7}{'tokens':>9}"
             f"{'seconds':>9}{'median s':>10}"]
    for name, group in rows:
        passed = sum(1 for r in group if r.get("passed") is True)
        failed = sum(1 for r in group if r.get("passed") is False)
        steps = sum(r.get("steps", 0) for r in group)
        tokens = sum(r.get("prompt_tokens", 0) + r.get("completion_tokens", 0) for r in group)
        seconds = [r.get("seconds", 0.0) for r in group]
        median = statistics.median(seconds) if seconds else 0.0
        lines.append(f"{name[:21]:<22}{len(group):>6}{passed:>8}{failed:>8}{steps:>7}"
                     f"{tokens:>9}{sum(seconds):>9.1f}{median:>10.1f}")
    return lines
