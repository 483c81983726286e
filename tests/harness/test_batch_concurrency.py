"""Tests for concurrent batches (``run_batch(..., concurrency=N)``, ``run --tasks --concurrency``):
the same records as one task at a time, none missing or twice, resumable after Ctrl-C; lines
that are not tasks; tasks whose model failed run again. The scripted tasks here are also run on
Ray by test_ray.py."""

from __future__ import annotations

import _thread
import itertools
import json
import os
import re
import signal
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from helpers import observed

from react_agent import Agent, ConfigError, ModelError, Toolbox
from react_agent.cli import main
from react_agent.harness import (
    BatchTask,
    WorkerLocal,
    _batch,
    latest_records,
    load_tasks,
    read_records,
    run_batch,
)
from react_agent.models import ScriptedModel
from react_agent.models.base import Message

# -- scripted tasks: task i asks i * 3 through a tool; the model answers from the messages ------
KILL_ONCE, KILL_ALWAYS = 1001, 1002
"""Operands whose multiply call kills its (Ray worker) process: the first time / every time."""


def task_lines(n: int) -> list[dict[str, Any]]:
    """``n`` tasks: plain ones (every 10th fails its checks), a conversation every 25, and a
    task whose model server fails (``model_error``) every 50."""
    lines: list[dict[str, Any]] = []
    for i in range(n):
        ask = f"What is {i} times 3?"
        call = {"name": "multiply", "args": {"a": i, "b": 3}}
        if i % 25 == 3:
            lines.append({"id": f"c{i}", "shape": "conversation", "turns": [
                {"task": ask, "expected_calls": [call]},
                {"task": "And that plus one?", "final_answer": {"must_contain": [str(3 * i + 1)]},
                 "memory": {"model_input_must_contain": [ask]}},
            ]})
        else:
            want = 3 * i if i % 10 else 3 * i + 5  # every 10th: a check that fails
            lines.append({"id": f"t{i}", "shape": "plain" if i % 50 != 7 else "server_gone",
                          "task": ask, "max_steps": 4, "expected_calls": [call],
                          "final_answer": {"must_contain": [str(want)]}})
    return lines


def write_tasks(path: Path, lines: Sequence[dict[str, Any] | str]) -> Path:
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n"
                            for line in lines), encoding="utf-8")
    return path


def respond(messages: Sequence[Message]) -> str:
    """The scripted model: a tool call for a question, the answer for an observation."""
    last = messages[-1]["content"]
    if results := observed(last):
        number = re.search(r"-?\d+", results[0])
        return json.dumps({"thought": "t", "action": {
            "final_answer": f"The answer is {number.group() if number else '?'}."}})
    if last.startswith("And that plus one?"):
        answers = [m["content"] for m in messages if m["role"] == "assistant"]
        found = re.findall(r"The answer is (-?\d+)", " ".join(answers))
        return json.dumps({"thought": "t", "action": {
            "final_answer": f"The answer is {int(found[-1]) + 1}." if found else "?"}})
    asked = re.search(r"What is (\d+) times 3\?", last)
    if asked and int(asked.group(1)) % 50 == 7:
        raise ModelError("The model server at http://127.0.0.1:1/v1 went away.",
                         cause="connection")
    if asked:
        return json.dumps({"thought": "t", "action": {
            "name": "multiply", "args": {"a": int(asked.group(1)), "b": 3}}})
    return json.dumps({"thought": "t", "action": {"final_answer": "I do not know."}})


def multiply_toolbox(marker_dir: str | None = None) -> Toolbox:
    toolbox = Toolbox()

    @toolbox.tool
    def multiply(a: int, b: int) -> int:
        """Multiply two integers."""
        time.sleep((a * 7 % 5) / 1000)  # tasks finish in another order than they started
        if marker_dir and a in (KILL_ONCE, KILL_ALWAYS):
            marker = Path(marker_dir) / f"killed-{a}-{os.getpid()}"
            if a == KILL_ALWAYS or not any(Path(marker_dir).glob(f"killed-{a}-*")):
                marker.touch()
                os.kill(os.getpid(), signal.SIGKILL)
        return a * b

    return toolbox


def scripted_agent(task: BatchTask, marker_dir: str | None = None) -> Agent:
    """A fresh agent for ``task``: its own scripted model and tools."""
    return Agent(ScriptedModel([respond] * 20), multiply_toolbox(marker_dir),
                 max_steps=task.max_steps or 6)


def scripted_setup(marker_dir: str | None = None) -> Callable[[BatchTask], Agent]:
    """The agents of a Ray worker (test_ray.py)."""
    return partial(scripted_agent, marker_dir=marker_dir)


TIMES = ("seconds", "model_seconds", "tool_seconds")


def timeless(value: Any) -> Any:
    """``value`` without wall times (the only fields that differ between two runs)."""
    if isinstance(value, dict):
        return {k: timeless(v) for k, v in value.items() if k not in TIMES}
    if isinstance(value, list):
        return [timeless(v) for v in value]
    return value


def by_id(records: list[dict[str, Any]]) -> dict[str, Any]:
    return {r["id"]: timeless(r) for r in records}


@pytest.fixture(scope="module")
def serial(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The records of the 200 tasks run one at a time, by id."""
    folder = tmp_path_factory.mktemp("serial")
    tasks = load_tasks(write_tasks(folder / "tasks.jsonl", task_lines(200)))
    report = run_batch(tasks, folder / "r.jsonl", scripted_agent)
    return by_id(report.records)


def test_the_serial_run_has_every_kind_of_outcome(serial: dict[str, Any]) -> None:
    assert len(serial) == 200
    statuses = Counter(r["status"] for r in serial.values())
    assert statuses == {"final_answer": 196, "model_error": 4}
    assert Counter(r["passed"] for r in serial.values()) == {True: 176, False: 24}
    assert serial["c3"]["final_answer"] == "The answer is 10." and serial["c3"]["passed"]
    assert serial["t12"]["line"] == 13 and serial["t12"]["tool_calls"] == 1


@pytest.mark.parametrize("concurrency", [1, 4, 16])
def test_concurrent_runs_give_the_serial_records(tmp_path: Path, serial: dict[str, Any],
                                                 concurrency: int) -> None:
    tasks = load_tasks(write_tasks(tmp_path / "tasks.jsonl", task_lines(200)))
    out = tmp_path / "r.jsonl"
    seen: list[tuple[int, int, str, bool]] = []
    threads: set[str] = set()
    gate = threading.Barrier(concurrency, timeout=60)
    first = itertools.count()

    def make_agent(task: BatchTask) -> Agent:
        threads.add(threading.current_thread().name)
        if next(first) < concurrency:  # the first tasks wait until `concurrency` run at once
            gate.wait()  # (else quick workers may take every task before the last one starts)
        return scripted_agent(task)

    report = run_batch(tasks, out, make_agent, concurrency=concurrency,
                       progress=lambda done, total, task, record: seen.append(
                           (done, total, task.id, record is None)))
    written = read_records(out)
    assert [r["id"] for r in written].count("t5") == 1
    assert len(written) == 200 and len({r["id"] for r in written}) == 200
    assert by_id(written) == serial and by_id(report.records) == serial
    assert len(threads) == concurrency
    finished = [s for s in seen if not s[3]]
    assert [s[0] for s in finished] == list(range(1, 201))  # the bar counts finished tasks
    assert {s[2] for s in finished} == set(serial) and {s[1] for s in seen} == {200}
    if concurrency > 1:
        assert [r["id"] for r in written] != [t.id for t in tasks]  # written as they finished


@pytest.mark.parametrize("how", ["progress", "interrupt_main"])
def test_ctrl_c_keeps_every_finished_task_and_a_rerun_runs_the_others_once(
    tmp_path: Path, serial: dict[str, Any], how: str
) -> None:
    tasks = load_tasks(write_tasks(tmp_path / "tasks.jsonl", task_lines(200)))
    out = tmp_path / "r.jsonl"
    ran: list[str] = []
    interrupted: list[str] = []

    def make_agent(task: BatchTask) -> Agent:
        ran.append(task.id)
        if how == "interrupt_main" and task.id == "t60" and not interrupted:
            interrupted.append(task.id)
            _thread.interrupt_main()  # Ctrl-C, as the writing thread gets it
        time.sleep(0.01)  # the workers do not run far ahead of the writing thread
        return scripted_agent(task)

    def progress(done: int, total: int, task: BatchTask, record: Any) -> None:
        if how == "progress" and done == 60 and record is not None:
            raise KeyboardInterrupt  # Ctrl-C in the middle, while the bar is drawn

    first = run_batch(tasks, out, make_agent, progress=progress, concurrency=8)
    assert first.interrupted
    kept = read_records(out)
    assert 50 <= len(kept) < 200 and len({r["id"] for r in kept}) == len(kept)
    assert all(serial[r["id"]] == timeless(r) for r in kept)  # nothing half written
    assert out.read_text("utf-8").endswith("\n")

    ran.clear()
    second = run_batch(tasks, out, make_agent, concurrency=8)
    assert not second.interrupted and second.skipped == len(kept) - sum(
        r["status"] == "model_error" for r in kept)
    assert not {r["id"] for r in kept if r["status"] != "model_error"} & set(ran)
    assert len(ran) == len(set(ran))
    assert by_id(second.records) == serial
    assert len(read_records(out)) == len(kept) + len(ran)


def test_a_task_interrupted_in_a_worker_stops_the_batch_unwritten(tmp_path: Path) -> None:
    def interrupted(messages: object) -> str:
        raise KeyboardInterrupt

    def make_agent(task: BatchTask) -> Agent:
        if task.id == "5":
            return Agent(ScriptedModel([interrupted]))
        return Agent(ScriptedModel([json.dumps({"thought": "t", "action": {
            "final_answer": "ok"}})]))

    tasks = [BatchTask(str(i), f"task {i}") for i in range(40)]
    report = run_batch(tasks, tmp_path / "r.jsonl", make_agent, concurrency=4)
    ids = [r["id"] for r in read_records(tmp_path / "r.jsonl")]
    assert report.interrupted and "5" not in ids and len(ids) < 40
    assert len(set(ids)) == len(ids)


def test_an_error_in_a_worker_is_raised_after_the_others_stop(tmp_path: Path) -> None:
    def make_agent(task: BatchTask) -> Agent:
        if task.id == "7":
            raise RuntimeError("a bug in make_agent")
        return scripted_agent(task)

    tasks = [BatchTask(str(i), f"What is {i} times 3?") for i in range(30)]
    with pytest.raises(RuntimeError, match="a bug in make_agent"):
        run_batch(tasks, tmp_path / "r.jsonl", make_agent, concurrency=4)
    ids = [r["id"] for r in read_records(tmp_path / "r.jsonl")]
    assert "7" not in ids and len(set(ids)) == len(ids)


def test_concurrency_below_one_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="at least 1"):
        run_batch([], tmp_path / "r.jsonl", scripted_agent, concurrency=0)


# -- lines that are not tasks ---------------------------------------------------------------------
BAD_LINES = [
    {"id": "a", "task": "What is 1 times 3?"},
    '{"id": "b", "task": "What is 2 times 3?"',  # cut short: not JSON
    {"id": "c", "task": ""},
    {"id": "a", "task": "What is 4 times 3?"},  # the id again
    {"task": "What is 5 times 3?", "max_steps": 0},
    {"id": "f", "task": "What is 6 times 3?"},
]


def test_lines_that_are_not_tasks_are_recorded_with_their_line(tmp_path: Path) -> None:
    path = write_tasks(tmp_path / "tasks.jsonl", BAD_LINES)
    with pytest.raises(ConfigError, match="line 2: not a JSON record"):
        load_tasks(path)
    tasks = load_tasks(path, strict=False)
    assert [(t.id, t.line, t.problem is None) for t in tasks] == [
        ("a", 1, True), ("2", 2, False), ("c", 3, False), ("a (line 4)", 4, False),
        ("5", 5, False), ("f", 6, True)]
    assert tasks[3].problem == "the id 'a' is used twice (first on line 1)"
    out = tmp_path / "r.jsonl"
    report = run_batch(tasks, out, scripted_agent, concurrency=3)
    records = {r["id"]: r for r in report.records}
    assert (records["a"]["status"], records["f"]["final_answer"]) == ("final_answer",
                                                                      "The answer is 18.")
    bad = records["c"]
    assert (bad["status"], bad["passed"], bad["line"], bad["result"]) == ("bad_task", False, 3,
                                                                          None)
    assert bad["problems"] == ["line 3: not a task (task: expected a non-empty string, got a "
                               "string (''))"]
    assert records["2"]["error"].startswith("line 2: not a JSON record")
    assert "max_steps: expected a number at least 1, got 0" in records["5"]["error"]

    again = run_batch(load_tasks(path, strict=False), out, scripted_agent, concurrency=3)
    assert again.skipped == 6 and len(read_records(out)) == 6  # recorded once

    lines = [*BAD_LINES]
    lines[2] = {"id": "c", "task": "What is 3 times 3?"}  # fixed: it runs
    fixed = run_batch(load_tasks(write_tasks(path, lines), strict=False), out, scripted_agent)
    assert fixed.skipped == 5 and {r["id"]: r["status"] for r in fixed.records}["c"] == \
        "final_answer"
    assert [r["id"] for r in read_records(out)].count("c") == 2


def test_tasks_whose_model_failed_run_again(tmp_path: Path) -> None:
    tasks = [BatchTask(str(i), f"What is {i} times 3?") for i in range(6)]
    out = tmp_path / "r.jsonl"

    def gone(task: BatchTask) -> Agent:
        if task.id in ("1", "4"):
            def fail(messages: object) -> str:
                raise ModelError("Could not connect to the model server.", cause="connection")

            return Agent(ScriptedModel([fail]))
        return scripted_agent(task)

    first = run_batch(tasks, out, gone, concurrency=3)
    assert Counter(r["status"] for r in first.records) == {"final_answer": 4, "model_error": 2}
    ran: list[str] = []
    second = run_batch(tasks, out, lambda task: ran.append(task.id) or scripted_agent(task),
                       concurrency=3)
    assert sorted(ran) == ["1", "4"] and second.skipped == 4
    assert [r["status"] for r in second.records] == ["final_answer"] * 6
    assert len(read_records(out)) == 8 and latest_records(read_records(out)) == second.records


# -- one model per worker; the embedded model shared -----------------------------------------------
def test_worker_local_makes_one_object_per_thread() -> None:
    made = WorkerLocal(object)
    seen: list[object] = []
    threads = [threading.Thread(target=lambda: seen.extend([made.get(), made.get()]))
               for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(made.instances) == 3 and len(set(map(id, seen))) == 3


class SharedModel(ScriptedModel):
    """A scripted model that several threads may call at once."""

    def __init__(self) -> None:
        super().__init__([])
        self.lock = threading.Lock()

    def complete(self, messages: Sequence[Message], schema: Any = None,
                 strict: bool = False) -> Any:
        with self.lock:
            self.replies.append(respond)
            return super().complete(messages, schema, strict)


@pytest.mark.parametrize("per_worker", [False, True])
def test_a_shared_embedded_model_is_warned_about(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
    per_worker: bool,
) -> None:
    monkeypatch.setattr(_batch, "LlamaCppModel", SharedModel)  # stands in for the embedded one
    shared = SharedModel()
    models = WorkerLocal(SharedModel)
    tasks = [BatchTask(str(i), f"What is {i} times 3?") for i in range(10, 22)]
    report = run_batch(tasks, tmp_path / "r.jsonl", lambda task: Agent(
        models.get() if per_worker else shared, multiply_toolbox()), concurrency=3)
    assert [r["status"] for r in report.records] == ["final_answer"] * 12
    warnings = [r.message for r in caplog.records if "one request at a time" in r.message]
    assert len(warnings) == (0 if per_worker else 1)
    if per_worker:
        assert len(models.instances) == 3


# -- the command line ----------------------------------------------------------------------
def _final(answer: str) -> str:
    return "reply:" + json.dumps({"thought": "t", "action": {"final_answer": answer}})


def test_cli_concurrency_records_bad_lines_and_reruns_model_errors(
    fault_server: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tasks = write_tasks(tmp_path / "tasks.jsonl", [
        *({"id": f"t{i}", "task": f"Say {i}"} for i in range(5)), "{not json"])
    out = tmp_path / "r.jsonl"
    common = ["run", "--tasks", str(tasks), "--out", str(out), "--concurrency", "3"]
    assert main([*common, "--base-url", "http://127.0.0.1:9/v1"]) == 2  # --bad-lines stop
    assert "tasks.jsonl, line 6: not a JSON record" in capsys.readouterr().err
    assert not out.exists()

    code = main([*common, "--bad-lines", "record", "--base-url", "http://127.0.0.1:9/v1"])
    captured = capsys.readouterr()
    assert code == 1
    assert "tasks.jsonl, line 6: not a JSON record" in captured.err
    assert "5 model_error: run the same command again" in captured.out
    assert Counter(r["status"] for r in read_records(out)) == {"model_error": 5, "bad_task": 1}

    fault_server.script = [_final("ok")]
    assert main([*common, "--bad-lines", "record", "--base-url", fault_server.url]) == 1
    captured = capsys.readouterr()
    assert len(fault_server.requests) == 5 and "[########################] 5/5" in captured.err
    latest = latest_records(read_records(out))
    assert Counter(r["status"] for r in latest) == {"final_answer": 5, "bad_task": 1}
    assert "model_error: run the same command again" not in captured.out
    assert len(read_records(out)) == 11


def test_cli_refuses_a_trace_with_concurrency(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    tasks = write_tasks(tmp_path / "tasks.jsonl", [{"task": "a"}])
    assert main(["run", "--tasks", str(tasks), "--concurrency", "2", "--trace",
                 str(tmp_path / "t.jsonl"), "--base-url", "http://127.0.0.1:9/v1"]) == 2
    assert "--trace writes one run after another" in capsys.readouterr().err


# -- a real llama.cpp server ------------------------------------------------------------------
@pytest.mark.real_model
def test_a_real_llama_server_runs_two_tasks_at_once(llama_server: str, tmp_path: Path) -> None:
    tasks = write_tasks(tmp_path / "tasks.jsonl", [
        {"id": "mul", "task": "What is 17 times 23? Use the calculator.", "expected": ["391"]},
        {"id": "add", "task": "What is 1234 plus 4321? Use the calculator.",
         "expected": ["5555"]},
    ])
    out = tmp_path / "r.jsonl"
    code = main(["run", "--tasks", str(tasks), "--out", str(out), "--base-url", llama_server,
                 "--concurrency", "2", "--max-steps", "4"])
    records = read_records(out)
    assert sorted(r["id"] for r in records) == ["add", "mul"]
    assert [(r["id"], r["status"], r["passed"]) for r in records if not r["passed"]] == []
    assert all(r["tool_calls"] >= 1 for r in records) and code == 0
