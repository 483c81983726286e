"""Tests for react_agent.harness._batch: running tasks, results and the summary (the tasks file is
tested in test_tasks.py, the CLI in test_cli.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import ResettableModel

from react_agent import Agent, ConfigError, Toolbox
from react_agent.harness import BatchTask, load_tasks, read_records, run_batch, summary_table
from react_agent.models import ScriptedModel
from react_agent.policies import default_policies


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
    assert rows[0] == ["status", "tasks", "passed", "failed", "steps", "tokens", "seconds",
                       "median", "s"]
    assert rows[1:] == [["final_answer", "1", "1", "0", "2", "15", "1.5", "1.5"],
                        ["max_steps", "1", "0", "1", "3", "2", "0.5", "0.5"],
                        ["total", "2", "1", "1", "5", "17", "2.0", "1.0"]]


def test_summary_table_by_shape_sorts_shapes() -> None:
    records = [{"shape": s, "status": "final_answer", "passed": p, "seconds": t}
               for s, p, t in [("compare", True, 4.0), ("chain", False, 2.0),
                               ("compare", True, 6.0)]]
    rows = [line.split() for line in summary_table(records, by="shape")]
    assert [r[:4] for r in rows] == [
        ["shape", "tasks", "passed", "failed"], ["chain", "1", "0", "1"],
        ["compare", "2", "2", "0"], ["total", "3", "2", "1"],
    ]
    assert rows[2][-1] == "5.0" and rows[3][-1] == "4.0"


def act(name: str, **args: object) -> str:
    return json.dumps({"thought": "t", "action": {"name": name, "args": args}})


def answer(text: str) -> str:
    return json.dumps({"thought": "t", "action": {"final_answer": text}})


def weather_toolbox() -> Toolbox:
    toolbox = Toolbox()

    @toolbox.tool
    def get_weather(city: str) -> str:
        """The weather of a city."""
        return {"Oslo": "light rain, 7.5 C"}.get(city, f"no city {city!r}")

    @toolbox.tool
    def send_email(to: str, body: str) -> str:
        """Send an email."""
        return "sent"

    return toolbox


CHECKED = {
    "id": "c", "shape": "conditional", "task": "Umbrella in Oslo?", "max_steps": 3,
    "expected_calls": [{"name": "get_weather", "args": {"city": "Oslo"}}],
    "forbidden_tools": ["send_email"],
    "final_answer": {"must_contain_any": [["7.5"]], "must_not_contain": ["no umbrella"]},
}


def _write(tmp_path: Path, *lines: dict[str, object]) -> Path:
    path = tmp_path / "tasks.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


@pytest.mark.parametrize(
    ("replies", "passed", "problems"),
    [
        ([act("get_weather", city="Oslo"), answer("Light rain, 7.5 C: take an umbrella.")], True,
         []),
        ([answer("7.5 C, take an umbrella.")], False,
         ['missing call get_weather {"city": "Oslo"}']),
        ([act("get_weather", city="Oslo"), act("send_email", to="a@b.c", body="x"),
          answer("7.5 C, umbrella.")], False,
         ['forbidden tool called: send_email {"to": "a@b.c", "body": "x"}']),
        ([act("get_weather", city="Oslo"), answer("7.5 C: no umbrella needed.")], False,
         ["the final answer contains 'no umbrella'"]),
        ([act("get_weather", city="Oslo"), answer("Rain.")], False,
         ["the final answer has none of ['7.5']"]),
    ],
)
def test_checked_task_is_scored(tmp_path: Path, replies: list[str], passed: bool,
                                problems: list[str]) -> None:
    tasks = load_tasks(_write(tmp_path, CHECKED))
    assert tasks[0].max_steps == 3 and tasks[0].shape == "conditional"
    report = run_batch(tasks, tmp_path / "r.jsonl",
                       lambda task: Agent(ScriptedModel(replies), weather_toolbox(),
                                          max_steps=task.max_steps or 10))
    record = report.records[0]
    assert (record["passed"], record["problems"], record["shape"]) == (passed, problems,
                                                                        "conditional")


def test_conversation_turns_share_one_chat(tmp_path: Path) -> None:
    line = {"id": "conv", "turns": [
        {"task": "Weather in Oslo?", "expected_calls": [{"name": "get_weather",
                                                         "args": {"city": "Oslo"}}]},
        {"task": "And what did I ask before?", "forbidden_tools": ["*"],
         "memory": {"model_input_must_contain": ["Weather in Oslo?"]},
         "final_answer": {"must_contain": ["Oslo"]}},
    ]}
    tasks = load_tasks(_write(tmp_path, line))
    replies = [act("get_weather", city="Oslo"), answer("7.5 C"), answer("The weather in Oslo.")]
    report = run_batch(tasks, tmp_path / "r.jsonl", lambda task: Agent(
        ScriptedModel(replies), weather_toolbox(), policies=default_policies(off=["review"])))
    record = report.records[0]
    assert record["passed"] is True and [t["passed"] for t in record["turns"]] == [True, True]
    assert record["steps"] == 3 and record["final_answer"] == "The weather in Oslo."

    replies[-1] = answer("I do not know.")
    report = run_batch(tasks, tmp_path / "r2.jsonl", lambda task: Agent(
        ScriptedModel(replies), weather_toolbox(), policies=default_policies(off=["review"])))
    assert report.records[0]["problems"] == ["turn 2: the final answer lacks 'Oslo'"]


@pytest.mark.parametrize(("record", "message"), [
    ('{"id": "a", "status": "final_answer", "steps": "many"}',
     "record.steps: expected an integer, got a string ('many')"),
    ('{"id": "a", "seconds": ' + "9" * 400 + "}",
     "record.seconds: expected a number in range, got a number of 400 digits"),
    ('{"id": "a", "seconds": Infinity}', "record.seconds: expected a finite number, got Infinity"),
    ('{"id": "a", "prompt_tokens": 1.5}', "record.prompt_tokens: expected an integer, got 1.5"),
    ('{"id": "a", "problems": "x"}', "record.problems: expected a list, got a string ('x')"),
    ('{"id": true}', "record.id: expected a string or an integer, got true"),
])
def test_a_results_record_of_the_wrong_shape_is_named(
    tmp_path: Path, record: str, message: str
) -> None:
    """The results file of an earlier batch is checked when it is read, before the summary sums
    its counts and times."""
    out = tmp_path / "r.jsonl"
    out.write_text(record + "\n", encoding="utf-8")
    with pytest.raises(ConfigError) as exc:
        read_records(out)
    assert str(exc.value).startswith(f"{out}, line 1: {message}")


def test_a_results_record_reads_with_its_missing_counts_as_zero(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    out.write_text('{"id": 1, "status": "final_answer", "passed": false}\n', encoding="utf-8")
    [record] = read_records(out)
    assert (record["steps"], record["problems"], record["missing"]) == (0, [], [])
    assert "turns" not in record and "result" not in record
    assert summary_table([record])[-1].split()[:4] == ["total", "1", "0", "1"]


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


@pytest.mark.parametrize(("fresh", "resets"), [(True, [0, 1]), (False, [])])
def test_the_model_is_reset_before_each_task(tmp_path: Path, fresh: bool,
                                             resets: list[int]) -> None:
    final = '{"thought": "t", "action": {"final_answer": "ok"}}'
    model = ResettableModel([final, final])
    report = run_batch([BatchTask("1", "one"), BatchTask("2", "two")], tmp_path / "r.jsonl",
                       lambda task: Agent(model), fresh_model=fresh)
    assert [r["final_answer"] for r in report.records] == ["ok", "ok"]
    assert model.resets == resets


def test_a_record_names_the_line_of_its_task(tmp_path: Path) -> None:
    tasks = load_tasks(_write(tmp_path, {"id": "x", "task": "one"}, {"task": "two"}))
    assert [(t.id, t.line) for t in tasks] == [("x", 1), ("2", 2)]
    final = '{"thought": "t", "action": {"final_answer": "ok"}}'
    report = run_batch(tasks, tmp_path / "r.jsonl", lambda task: Agent(ScriptedModel([final])))
    assert [(r["id"], r["line"]) for r in read_records(tmp_path / "r.jsonl")] == [("x", 1),
                                                                                ("2", 2)]
    assert report.records == read_records(tmp_path / "r.jsonl")


COUNT = {"type": "object", "properties": {"lines": {"type": "integer"}}, "required": ["lines"]}


@pytest.mark.parametrize(("reply", "valid", "output"), [
    (answer('{"lines": "173"}'), True, {"lines": 173}),
    (answer("About 173 lines."), False, None),
])
def test_a_tasks_typed_value_is_recorded_and_checked(tmp_path: Path, reply: str, valid: bool,
                                                      output: object) -> None:
    tasks = load_tasks(_write(tmp_path, {"task": "Count.", "output_schema": COUNT}))
    report = run_batch(tasks, tmp_path / "r.jsonl",
                       lambda task: Agent(ScriptedModel([reply]), output_type=task.output_schema,
                                          output_retries=0, policies=default_policies(
                                              off=["review"])))
    (record,) = report.records
    assert record["output"] == output and record["output_valid"] is valid
    assert record["passed"] is valid
    assert record["problems"] == ([] if valid else
                                  ["the final answer has no typed value that fits output_schema"])
    assert read_records(tmp_path / "r.jsonl")[0]["output"] == output


def test_a_null_typed_value_that_fits_passes(tmp_path: Path) -> None:
    nullable = {"type": ["integer", "null"]}
    tasks = load_tasks(_write(tmp_path, {"task": "Count.", "output_schema": nullable}))
    report = run_batch(tasks, tmp_path / "r.jsonl",
                       lambda task: Agent(ScriptedModel([answer("null")]),
                                          output_type=task.output_schema, output_retries=0,
                                          policies=default_policies(off=["review"])))
    (record,) = report.records
    assert record["output"] is None and record["output_valid"] is True
    assert record["passed"] is True and record["problems"] == []


def test_a_task_without_output_schema_records_no_typed_value(tmp_path: Path) -> None:
    tasks = load_tasks(_write(tmp_path, {"task": "Count."}))
    report = run_batch(tasks, tmp_path / "r.jsonl",
                       lambda task: Agent(ScriptedModel([answer("173")]), Toolbox()))
    assert report.records[0]["output"] is None and report.records[0]["output_valid"] is None
    assert report.records[0]["passed"] is None
