"""What a view shows, read from files: one entry per run of a trace (``run --trace``) and one
per task of a results file (``run --tasks``), with the bounded readers of the package."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._persist import check_shape, read_json_lines
from ..errors import ConfigError
from ..types import RunResult
from ._batch import BatchRecord
from ._trace import read_trace


@dataclass
class ViewEntry:
    """One row of a view's index: a task of a results file (all its turns) or a run of a trace.

    Attributes:
        label: what the row is called (the task's id, or ``run 2`` of a trace).
        runs: the run, or each turn of a conversation, in order.
        model: the model's name, when the file recorded it.
        shape: the task's shape (a free label of the tasks file).
        passed: whether the task passed its checks (``None``: it has none).
        problems: what the checks found, in words.
        seconds: the task's wall time, when recorded.
        source: the file it was read from.
        started: when the run started (ISO 8601), when recorded.
        resumed_steps: for each run, how many of its first steps are those of the run it
            continued (``run --resume``).
        status: the record's status when it holds no run (``bad_task``, ``worker_lost``).
        error: the record's error when it holds no run.
    """

    label: str
    runs: list[RunResult]
    model: str | None = None
    shape: str | None = None
    passed: bool | None = None
    problems: list[str] = field(default_factory=list)
    seconds: float | None = None
    source: str | None = None
    started: str | None = None
    resumed_steps: list[int] = field(default_factory=list)
    status: str | None = None
    error: str | None = None

    @property
    def outcome(self) -> str:
        """The status of its last run (or of the record, when it holds none)."""
        return self.runs[-1].status if self.runs else self.status or "no run"


def load_view(*paths: str | os.PathLike[str]) -> list[ViewEntry]:
    """The entries of trace files (one per run) and results files of ``run --tasks`` (one per
    task), read with the package's bounded readers, in order.

    Raises:
        ConfigError: a file cannot be read or is neither a trace nor a results file (the
            message names the file, the line and the field at fault).
    """
    if not paths:
        raise ConfigError("Name at least one trace or results file to view.")
    entries: list[ViewEntry] = []
    for path in paths:
        lines = read_json_lines(path, "trace or results file", skip_broken="all")
        if not lines:
            raise ConfigError(f"{path} is empty: it holds no run to show.")
        first = next((r for _, r in lines if isinstance(r, dict)), None)
        if first is not None and first.get("type") == "run_start":
            entries += _trace_entries(path, lines)
        elif first is not None and "id" in first and "result" in first:
            entries += _results_entries(path, lines)
        else:
            raise ConfigError(f"{path} is neither a trace (run --trace) nor a results file "
                              "(run --tasks): its first record has neither type run_start "
                              "nor an id and a result.")
    return entries


def _trace_entries(path: str | os.PathLike[str], lines: list[tuple[int, Any]]
                   ) -> list[ViewEntry]:
    runs = read_trace(path)
    starts = [r for _, r in lines if isinstance(r, dict) and r.get("type") == "run_start"]
    name = Path(path).name
    entries = []
    for n, result in enumerate(runs):
        start = starts[n] if n < len(starts) else {}
        model, started = start.get("model"), start.get("time")
        resumed = start.get("resumed_steps")
        entries.append(ViewEntry(
            label=f"{name}: run {n + 1}" if len(runs) > 1 else name, runs=[result],
            model=model if isinstance(model, str) else None, source=name,
            started=started if isinstance(started, str) else None,
            resumed_steps=[resumed if isinstance(resumed, int) and resumed > 0 else 0],
        ))
    return entries


def _results_entries(path: str | os.PathLike[str], lines: list[tuple[int, Any]]
                     ) -> list[ViewEntry]:
    latest: dict[str, tuple[str, BatchRecord]] = {}  # a task run again: its last record
    for number, data in lines:
        where = f"{path}, line {number}"
        if not isinstance(data, dict) or "id" not in data:
            raise ConfigError(f"{where}: not a result record (an object with an id).")
        record = check_shape(BatchRecord, data, f"{where}: record")
        latest[str(record.id)] = (where, record)
    entries = []
    for where, record in latest.values():
        if record.turns:
            runs = [RunResult.from_dict(t.get("result"), f"{where}: turns[{k}].result")
                    for k, t in enumerate(record.turns)]
        elif record.result is None:  # a line that was not a task, a worker lost
            runs = []
        else:
            runs = [RunResult.from_dict(record.result, f"{where}: result")]
        entries.append(ViewEntry(
            label=str(record.id), runs=runs, shape=record.shape, passed=record.passed,
            problems=list(record.problems),
            seconds=record.seconds if "seconds" in record.model_fields_set else None,
            source=Path(path).name, status=record.status, error=record.error,
        ))
    return entries
