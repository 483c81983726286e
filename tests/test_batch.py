"""Tests for react_agent.batch: tasks files, results and the summary (the CLI is tested in
test_cli.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from react_agent import Agent, ConfigError
from react_agent.batch import BatchTask, load_tasks, read_records, run_batch, summary_table
from react_agent.models import ScriptedModel


def test_load_tasks(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"task": "a", "expected": ["x"]}\n\n'
                    '{"id": "b", "task": "b", "tools": "m:o"}\n')
    assert load_tasks(path) == [BatchTask("1", "a", None, ("x",)), BatchTask("b", "b", "m:o")]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"task": ""}', "line 1: not a task"),
        ("[1, 2]", "line 1: not a task"),
        ('{"task": "a", "id": "x"}\n{"task": "b", "id": "x"}', "line 2: the id 'x' is used twice"),
    ],
)
def test_bad_tasks(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "t.jsonl").write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_tasks(tmp_path / "t.jsonl")


def test_interrupted_task_is_not_written(tmp_path: Path) -> None:
    def interrupt(messages: object) -> str:
        raise KeyboardInterrupt

    tasks = [BatchTask("1", "one"), BatchTask("2", "two"), BatchTask("3", "three")]
    replies = iter(['{"thought": "t", "action": {"final_answer": "ok"}}', interrupt])
    report = run_batch(tasks, tmp_path / "r.jsonl",
                       lambda task: Agent(ScriptedModel([next(replies)])))
    assert report.interrupted and [r["id"] for r in report.records] == ["1"]
    assert [r["id"] for r in read_records(tmp_path / "r.jsonl")] == ["1"]


def test_summary_table_counts() -> None:
    records = [
        {"status": "final_answer", "passed": True, "steps": 2, "prompt_tokens": 10,
         "completion_tokens": 5, "seconds": 1.5},
        {"status": "max_steps", "passed": False, "steps": 3, "prompt_tokens": 1,
         "completion_tokens": 1, "seconds": 0.5},
    ]
    rows = [line.split() for line in summary_table(records)]
    assert rows[0] == ["status", "tasks", "passed", "failed", "steps", "tokens", "seconds"]
    assert rows[1:] == [["final_answer", "1", "1", "0", "2", "15", "1.5"],
                        ["max_steps", "1", "0", "1", "3", "2", "0.5"],
                        ["total", "2", "1", "1", "5", "17", "2.0"]]


def test_the_results_file_holds_each_task_record_as_run(tmp_path: Path) -> None:
    tasks = [BatchTask("a", "one", expected=("Paris",)), BatchTask("b", "two", expected=("Rome",))]
    answers = iter(["Paris it is.", "Oslo."])

    def make_agent(task: BatchTask) -> Agent:
        reply = json.dumps({"thought": "t", "action": {"final_answer": next(answers)}})
        return Agent(ScriptedModel([reply]))

    report = run_batch(tasks, tmp_path / "r.jsonl", make_agent)
    assert read_records(tmp_path / "r.jsonl") == report.records
    assert [(r["id"], r["passed"], r["missing"]) for r in report.records] == [
        ("a", True, []), ("b", False, ["Rome"]),
    ]
    assert report.records[1]["result"]["final_answer"] == "Oslo."


def test_a_results_line_cut_short_by_a_crash_does_not_stop_the_batch(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    out.write_text('{"id": "1", "status": "final_answer"}\n{"id": "2", "task": "二',
                   encoding="utf-8")
    with out.open("ab") as f:
        f.write("三".encode()[:2])  # the crash cut the last character in half
    final = '{"thought": "t", "action": {"final_answer": "ok"}}'
    tasks = [BatchTask("1", "one"), BatchTask("2", "two")]
    report = run_batch(tasks, out, lambda task: Agent(ScriptedModel([final])))
    assert report.skipped == 1  # task 1 was done; task 2 was cut short and runs again
    assert [r["id"] for r in read_records(out)] == ["1", "2"]
    assert len(out.read_bytes().splitlines()) == 3  # the cut-short line stays on its own
