"""Running many tasks from a JSON Lines file (``react-agent run --tasks FILE --out RESULTS``).

Each input line is ``{"task": str, "id": optional str, "tools": optional "MODULE:OBJECT",
"expected": optional [substrings the final answer must contain]}``. Each finished task appends
one line to the output (flushed at once), so an interrupted batch resumes where it stopped:
tasks whose id is already in the output are skipped. A task cut short by Ctrl-C is not
written, so it runs again next time.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import ConfigError

if TYPE_CHECKING:
    from .agent import Agent, RunResult


@dataclass(frozen=True)
class BatchTask:
    """One line of a tasks file."""

    id: str
    task: str
    tools: str | None = None
    expected: tuple[str, ...] = ()


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
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ConfigError(f"Cannot read the tasks file {path}: {exc.strerror or exc}") from exc
    tasks, seen = [], set()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            task = BatchTask(
                id=str(data.get("id", number)), task=data["task"], tools=data.get("tools"),
                expected=tuple(data.get("expected") or ()),
            )
            if not isinstance(task.task, str) or not task.task.strip():
                raise ValueError("task must be a non-empty string")
        except (ValueError, KeyError, AttributeError, TypeError) as exc:
            raise ConfigError(
                f"{path}, line {number}: not a task ({type(exc).__name__}: {exc}); expected "
                '{"task": "...", "id": "...", "tools": "MODULE:OBJECT", "expected": ["..."]}.'
            ) from exc
        if task.id in seen:
            raise ConfigError(f"{path}, line {number}: the id {task.id!r} is used twice.")
        seen.add(task.id)
        tasks.append(task)
    return tasks


def read_records(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The records already in an output file (none if it does not exist; a cut-off last line
    is ignored)."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []
    records = []
    for line in lines:
        try:
            records.append(json.loads(line))
        except ValueError:
            continue
    return records


def run_batch(
    tasks: Iterable[BatchTask],
    out: str | os.PathLike[str],
    make_agent: Callable[[BatchTask], Agent],
    progress: Callable[[int, int, BatchTask, dict[str, Any] | None], Any] | None = None,
) -> BatchReport:
    """Run each task not yet in ``out`` with ``make_agent(task)`` and append its record.

    ``progress(done, total, task, record)`` is called before each task (``record`` ``None``) and
    after it. A record holds ``id``, ``task``, ``status``, ``final_answer``, ``best_effort``,
    ``error``, ``passed`` (``None`` without ``expected``), ``missing``, ``steps``,
    ``tool_calls``, ``prompt_tokens``, ``completion_tokens``, ``seconds`` and ``result`` (the
    whole RunResult).
    """
    tasks = list(tasks)
    report = BatchReport(records=read_records(out))
    done = {str(r.get("id")) for r in report.records}
    todo = [t for t in tasks if t.id not in done]
    report.skipped = len(tasks) - len(todo)
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    with Path(out).open("a", encoding="utf-8", errors="backslashreplace") as sink:
        for number, task in enumerate(todo, 1):
            if progress:
                progress(number - 1, len(todo), task, None)
            started = time.perf_counter()
            result = make_agent(task).run(task.task)
            if result.status == "interrupted":
                report.interrupted = True
                break
            record = task_record(task, result, time.perf_counter() - started)
            sink.write(json.dumps(record, ensure_ascii=False) + "\n")
            sink.flush()
            report.records.append(record)
            if progress:
                progress(number, len(todo), task, record)
    return report


def task_record(task: BatchTask, result: RunResult, seconds: float) -> dict[str, Any]:
    answer = result.final_answer or ""
    missing = [s for s in task.expected if s not in answer]
    usage = result.usage
    return {
        "id": task.id, "task": task.task, "status": result.status,
        "final_answer": result.final_answer, "best_effort": result.best_effort,
        "error": result.error, "passed": (not missing) if task.expected else None,
        "missing": missing, "steps": usage["model_calls"], "tool_calls": usage["tool_calls"],
        "prompt_tokens": usage["prompt_tokens"], "completion_tokens": usage["completion_tokens"],
        "seconds": round(seconds, 3), "result": result.to_dict(),
    }


def summary_table(records: list[dict[str, Any]]) -> list[str]:
    """Lines of a plain-text summary: one row per status and a total row, with the tasks whose
    expected text was found / missing, steps, tokens and time."""
    rows: list[tuple[str, list[dict[str, Any]]]] = [
        (status, [r for r in records if r["status"] == status])
        for status, _ in Counter(r["status"] for r in records).most_common()
    ]
    rows.append(("total", records))
    lines = [f"{'status':<14}{'tasks':>6}{'passed':>8}{'failed':>8}{'steps':>7}{'tokens':>9}"
             f"{'seconds':>9}"]
    for name, group in rows:
        passed = sum(1 for r in group if r.get("passed") is True)
        failed = sum(1 for r in group if r.get("passed") is False)
        steps = sum(r.get("steps", 0) for r in group)
        tokens = sum(r.get("prompt_tokens", 0) + r.get("completion_tokens", 0) for r in group)
        seconds = sum(r.get("seconds", 0.0) for r in group)
        lines.append(f"{name:<14}{len(group):>6}{passed:>8}{failed:>8}{steps:>7}{tokens:>9}"
                     f"{seconds:>9.1f}")
    return lines
