"""Running many tasks from a JSON Lines file (``react-agent run --tasks FILE --out RESULTS``).

Each input line is one task::

    {"task": str, "id": str, "tools": "MODULE:OBJECT" | "FILE.py:OBJECT", "max_steps": int,
     "shape": str, "output_schema": {a JSON Schema the final answer's typed value must fit},
     "expected": [substrings the final answer must contain],
     ...checks (see :mod:`react_agent.harness._checks`): "expected_calls", "call_order",
     "parallel_allowed", "forbidden_tools", "final_answer", "memory"}

or a conversation, ``{"id", "tools", "turns": [{"task": str, ...checks}, ...]}``, whose turns
run one after the other in one chat. Only ``task`` (or ``turns``) is required; a key not named
here is an error suggesting the closest known one, except the annotations ``note``, ``lang`` and
``reference``, which no check reads. A relative ``FILE.py`` in ``tools`` is looked up next to
the tasks file first; ``shape`` is a free label (conditional, compare, ...) that the summary
counts by.

Each finished task appends one line to the output (flushed at once), so an interrupted batch
resumes where it stopped: tasks whose id is already in the output are skipped, except those
whose last record says the run did not get to the task (:data:`RERUN_STATUSES`: the model
server failed, the line was malformed, the Ray worker died each time), which run again. A task
cut short by Ctrl-C is not written, so it runs again next time.

With ``concurrency=N``, N tasks run at once in worker threads (each with its own agent, as
``make_agent`` gives it); the records are written by the calling thread as the tasks finish.
:mod:`react_agent.harness._ray` runs the same batch on a Ray cluster.
"""

from __future__ import annotations

import copy
import logging
import os
import queue
import statistics
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any, Generic, TypeVar

from pydantic import Field

from .._persist import (
    Count,
    NameOrNumber,
    Seconds,
    Shape,
    append_json_lines,
    check_shape,
    read_json_lines,
    write_json_line,
)
from ..agent import Agent
from ..errors import ConfigError
from ..events import Event
from ..models import LlamaCppModel
from ..models.base import fresh_state
from ..tools import value_problems
from ..types import RunResult
from . import _checks as checks
from ._tasks import BatchTask

Progress = Callable[[int, int, "BatchTask", "dict[str, Any] | None"], Any]
"""``progress(done, total, task, record)``: see :func:`run_batch`."""

RERUN_STATUSES = frozenset({"model_error", "bad_task", "worker_lost"})
"""Statuses of records whose task runs again when the batch is run again: the model server
failed (``model_error``: it may be back), the line was not a task (``bad_task``: it may have
been fixed) or every Ray worker that tried it died (``worker_lost``)."""

_log = logging.getLogger("react_agent")

@dataclass
class BatchReport:
    """What a batch did: ``records`` holds the last record of every task in the output file
    (earlier runs included), ``skipped`` how many tasks were already done, and ``interrupted``
    whether Ctrl-C stopped it."""

    records: list[dict[str, Any]] = field(default_factory=list)
    skipped: int = 0
    interrupted: bool = False


class BatchRecord(Shape):
    """A line of a results file (see :func:`run_batch`); ``result`` and ``turns[].result`` are
    read as saved runs where they are shown (``react-agent view``)."""

    id: NameOrNumber
    line: Count | None = None
    shape: str | None = None
    task: str | None = None
    status: str | None = None
    final_answer: str | None = None
    best_effort: bool = False
    error: str | None = None
    passed: bool | None = None
    problems: list[str] = Field(default_factory=list)
    missing: list[str] = Field(default_factory=list)
    steps: Count = 0
    tool_calls: Count = 0
    prompt_tokens: Count = 0
    completion_tokens: Count = 0
    seconds: Seconds = 0.0
    result: dict[str, Any] | None = None
    turns: list[dict[str, Any]] | None = None


def read_records(path: str | os.PathLike[str],
                 shape: type[Shape] = BatchRecord) -> list[dict[str, Any]]:
    """The records already in an output file (none if it does not exist; a line cut short by
    a crash is passed over), each checked against ``shape`` (a results file of ``run --tasks``;
    ``eval`` passes its own), the fields it leaves out filled in with their defaults (a count
    with 0, ``problems`` with ``[]``).

    Raises:
        ConfigError: the file exists but cannot be read, or a line is not a result record (the
            message names the line and the field at fault).
    """
    records = []
    for number, record in read_json_lines(path, "results file", missing_ok=True,
                                          skip_broken="all"):
        if not isinstance(record, dict) or "id" not in record:
            raise ConfigError(f"{path}, line {number}: not a result record (an object with an "
                              "id); is this the results file of a batch?")
        checked = check_shape(shape, record, f"{path}, line {number}: record")
        records.append({**{k: v for k, v in checked if v is not None}, **record})
    return records


def latest_records(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The last record of each task id (a task run again after a ``model_error`` has two), in
    the order the ids first appear."""
    last: dict[str, dict[str, Any]] = {}
    for record in records:
        last[str(record.get("id"))] = record
    return list(last.values())


def plan_batch(tasks: Iterable[BatchTask], out: str | os.PathLike[str]
               ) -> tuple[BatchReport, list[BatchTask]]:
    """The report of what ``out`` already holds and the tasks still to run: those with no
    record, or whose last record has a status of :data:`RERUN_STATUSES` (a line that is still
    not a task is recorded once)."""
    tasks = list(tasks)
    report = BatchReport(records=latest_records(read_records(out)))
    status = {str(r.get("id")): r.get("status") for r in report.records}
    todo = [t for t in tasks if t.id not in status
            or (t.problem is None and status[t.id] in RERUN_STATUSES)]
    report.skipped = len(tasks) - len(todo)
    return report, todo


def run_batch(
    tasks: Iterable[BatchTask],
    out: str | os.PathLike[str],
    make_agent: Callable[[BatchTask], Agent],
    progress: Progress | None = None,
    fresh_model: bool = True,
    concurrency: int = 1,
) -> BatchReport:
    """Run each task not yet in ``out`` with a fresh ``make_agent(task)`` and append its record
    (the turns of a conversation run in one chat of that agent).

    With ``fresh_model`` (the default), the agent's model is reset before each task when it has
    a ``reset()`` method (the embedded model forgets its KV cache), so a task gets the replies a
    freshly loaded model gives, whatever ran before it: results do not depend on the order of
    the tasks, and a task run on its own replays exactly. It costs reading each task's system
    prompt again.

    With ``concurrency`` N > 1, N worker threads run tasks at once, each calling
    ``make_agent(task)`` (so it must be safe to call from several threads; an
    :class:`OpenAIChatModel` may be shared by all agents, see :class:`WorkerLocal` for one
    object per worker). Records are written in the order tasks finish, by the calling thread,
    which also calls ``progress``. The embedded model answers one request at a time, so
    sharing it gains little (a warning says so), and the replies of tasks that share it can
    depend on what ran beside them. Ctrl-C stops handing out tasks; the tasks running end at
    their next step and are not written (a second Ctrl-C stops waiting for them).

    Tasks of ``load_tasks(path, strict=False)`` that are not tasks (``problem``) are not run:
    they are recorded with status ``bad_task``, ``passed`` false, their ``line`` and problem.

    ``progress(done, total, task, record)`` is called (by the calling thread) when a task
    starts (``record`` ``None``) and when it finished (``done`` counts finished tasks). A
    record holds ``id``, ``line`` (in the tasks file, ``None`` for tasks not read from one),
    ``shape``, ``task``, ``status``, ``final_answer``, ``best_effort``, ``error``, ``passed``
    (``None`` when the task has no checks), ``problems`` (in words), ``missing`` (``expected``
    substrings not found), ``steps``, ``tool_calls``, ``prompt_tokens``,
    ``completion_tokens``, ``seconds``, ``result`` (the last turn's whole RunResult) and, for
    a conversation, ``turns`` (per turn: ``passed``, ``problems``, ``final_answer``,
    ``result``).

    Raises:
        ConfigError: ``concurrency`` is below 1, or the output file is not a results file.
    """
    if concurrency < 1:
        raise ConfigError(f"concurrency must be at least 1, got {concurrency}.")
    report, todo = plan_batch(tasks, out)
    with append_json_lines(out) as sink:
        if concurrency == 1 or len(todo) <= 1:
            _run_serially(todo, make_agent, progress, fresh_model, report, sink)
        else:
            _run_in_threads(todo, make_agent, progress, fresh_model, concurrency, report, sink)
    report.records = latest_records(report.records)
    return report


def _run_serially(todo: list[BatchTask], make_agent: Callable[[BatchTask], Agent],
                  progress: Progress | None, fresh_model: bool, report: BatchReport,
                  sink: IO[str]) -> None:
    for number, task in enumerate(todo, 1):
        if progress:
            progress(number - 1, len(todo), task, None)
        record = run_task(task, make_agent, fresh_model)
        if record is None:
            report.interrupted = True
            break
        write_json_line(sink, record)
        report.records.append(record)
        if progress:
            progress(number, len(todo), task, record)


def run_task(task: BatchTask, make_agent: Callable[[BatchTask], Agent], fresh_model: bool = True,
             stop: threading.Event | None = None) -> dict[str, Any] | None:
    """Run one task with ``make_agent(task)`` and return its record, or ``None`` when the run
    was interrupted (Ctrl-C, or ``stop`` set: the run ends at its next step). A task that is
    not a task (``problem``) is not run: its record says why."""
    if task.problem is not None:
        return bad_task_record(task)
    started = time.perf_counter()
    agent = make_agent(task)
    if stop is not None:
        agent = _stoppable(agent, stop)
    if fresh_model:
        fresh_state(agent.model)
    results = []
    try:
        if not task.turns:
            results.append(agent.run(task.task))
        else:
            chat = agent.chat()
            for text, _ in task.turns:
                results.append(chat.ask(text))
                if results[-1].status == "interrupted":
                    break
    except KeyboardInterrupt:  # after the run ended (a callback of its last event)
        return None
    if results[-1].status == "interrupted":
        return None
    return task_record(task, results, time.perf_counter() - started)


def _stoppable(agent: Agent, stop: threading.Event) -> Agent:
    """A copy of ``agent`` whose run ends (status ``interrupted``) at its next event once
    ``stop`` is set: a callback's ``KeyboardInterrupt`` ends the run as Ctrl-C does."""

    def check(event: Event) -> None:
        if stop.is_set():
            raise KeyboardInterrupt

    twin = copy.copy(agent)
    twin.callbacks = [*agent.callbacks, check]
    return twin


class _Warned:
    """Whether a batch has warned about its model yet (once per batch, from any thread)."""

    def __init__(self) -> None:
        self.lock, self.done = threading.Lock(), False

    def once(self, model: object, concurrency: int) -> None:
        if not isinstance(model, LlamaCppModel):
            return
        with self.lock:
            if self.done:
                return
            self.done = True
        _log.warning(
            "concurrency %d with the embedded model: it answers one request at a time, so "
            "tasks take turns at it (little faster than one at a time), and the replies of a "
            "task can depend on the tasks run beside it. Use an OpenAI-compatible server "
            "(--base-url) to run tasks at once, or one model per worker (--model-per-worker) "
            "where memory allows.", concurrency)


def _run_in_threads(todo: list[BatchTask], make_agent: Callable[[BatchTask], Agent],
                    progress: Progress | None, fresh_model: bool, concurrency: int,
                    report: BatchReport, sink: IO[str]) -> None:
    """Run ``todo`` in ``concurrency`` worker threads; this thread writes each record as its
    task finishes and calls ``progress``."""
    pending: Iterator[BatchTask] = iter(todo)
    take = threading.Lock()
    news: queue.Queue[tuple[str, BatchTask | None, Any]] = queue.Queue()
    stop = threading.Event()
    warned = _Warned()
    users: dict[int, int] = {}  # id(model) -> the first worker thread that used it

    def shared_agent(task: BatchTask) -> Agent:
        agent = make_agent(task)
        thread = threading.get_ident()
        if users.setdefault(id(agent.model), thread) != thread:
            warned.once(agent.model, concurrency)
        return agent

    def work() -> None:
        try:
            while not stop.is_set():
                with take:
                    task = next(pending, None)
                if task is None:
                    break
                news.put(("start", task, None))
                try:
                    record = run_task(task, shared_agent, fresh_model, stop)
                except BaseException as exc:  # raised to the caller by the writing thread
                    news.put(("error", task, exc))
                    break
                news.put(("done", task, record))
        finally:
            news.put(("exit", None, None))

    workers = [threading.Thread(target=work, name=f"react-agent-batch-{n}", daemon=True)
               for n in range(min(concurrency, len(todo)))]
    for worker in workers:
        worker.start()
    running, done = len(workers), 0
    error: BaseException | None = None
    while running:
        try:
            kind, task, value = news.get(timeout=0.5)
        except queue.Empty:
            continue
        except KeyboardInterrupt:
            if report.interrupted and stop.is_set():
                break  # a second Ctrl-C: stop waiting for the tasks still running
            report.interrupted = True
            stop.set()
            continue
        try:
            if kind == "exit":
                running -= 1
            elif kind == "error":
                error = error or value
                stop.set()
            elif kind == "done" and value is None:  # the task was interrupted: not written
                report.interrupted = True
                stop.set()
            elif kind == "done":
                write_json_line(sink, value)
                report.records.append(value)
                done += 1
                if progress and task:
                    progress(done, len(todo), task, value)
            elif progress and task and not stop.is_set():
                progress(done, len(todo), task, None)
        except KeyboardInterrupt:  # in progress(): the record, if any, is written
            report.interrupted = True
            stop.set()
    if error is not None:
        raise error


T = TypeVar("T")


class WorkerLocal(Generic[T]):
    """One ``factory()`` per worker thread, made when that thread first asks: for one model
    (or client, or session) per worker of a concurrent batch, where one object must not serve
    two tasks at once (the embedded model, which answers one request at a time).

    ``get()`` gives the calling thread's object; ``instances`` lists every object made (to close
    them at the end)."""

    def __init__(self, factory: Callable[[], T]) -> None:
        self.factory = factory
        self.instances: list[T] = []
        self._local = threading.local()
        self._lock = threading.Lock()

    def get(self) -> T:
        """The calling thread's object (made now if this thread has none)."""
        if not hasattr(self._local, "value"):
            self._local.value = self.factory()
            with self._lock:
                self.instances.append(self._local.value)
        value: T = self._local.value
        return value


def bad_task_record(task: BatchTask) -> dict[str, Any]:
    """The record of a line that is not a task (status ``bad_task``): its line and problem."""
    problem = f"line {task.line}: {task.problem}"
    return {
        "id": task.id, "line": task.line, "shape": task.shape, "task": None,
        "status": "bad_task", "final_answer": None, "best_effort": False, "error": problem,
        "passed": False, "problems": [problem], "missing": [], "steps": 0, "tool_calls": 0,
        "prompt_tokens": 0, "completion_tokens": 0, "seconds": 0.0, "result": None,
    }


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
    saved = last.to_dict()
    typed = task.output_schema is not None
    output_valid = typed and last.status == "final_answer" and last.has_output \
        and not value_problems(task.output_schema or {}, saved["output"])
    if typed and not output_valid:
        problems.append("the final answer has no typed value that fits output_schema")
    scored = bool(task.expected) or typed or any(t["passed"] is not None for t in turns)
    record = {
        "id": task.id, "line": task.line, "shape": task.shape, "task": task.task,
        "status": last.status, "final_answer": last.final_answer,
        "output": saved["output"], "output_valid": output_valid if typed else None,
        "best_effort": last.best_effort, "error": last.error,
        "passed": not problems if scored else None, "problems": problems, "missing": missing,
        "steps": sum(r.usage["model_calls"] for r in results),
        "tool_calls": sum(r.usage["tool_calls"] for r in results),
        "prompt_tokens": sum(r.usage["prompt_tokens"] for r in results),
        "completion_tokens": sum(r.usage["completion_tokens"] for r in results),
        "seconds": round(seconds, 3), "result": saved,
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
