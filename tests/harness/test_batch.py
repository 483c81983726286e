"""Tests for react_agent.harness._batch: tasks files, results and the summary (the CLI is tested in
test_cli.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import ResettableModel

from react_agent import Agent, ConfigError, Toolbox
from react_agent.harness._batch import BatchTask, load_tasks, read_records, run_batch, summary_table
from react_agent.models import ScriptedModel
from react_agent.policies import default_policies


def test_load_tasks(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"task": "a", "expected": ["x"]}\n\n'
                    '{"id": "b", "task": "b", "tools": "m:o"}\n')
    assert load_tasks(path) == [BatchTask("1", "a", None, ("x",)), BatchTask("b", "b", "m:o")]
    assert load_tasks(path)[0].all_turns() == (("a", {}),)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"task": ""}', "line 1: not a task"),
        ("[1, 2]", "line 1: not a task"),
        ('{"task": "a", "id": "x"}\n{"task": "b", "id": "x"}', "line 2: the id 'x' is used twice"),
        # a string where a list is due is not read as its letters
        ('{"task": "a"}\n{"task": "b", "expected": "Paris"}',
         "line 2: not a task \\(expected: expected a list, got a string"),
        # a check of the wrong type is refused when the file is read, not after the task ran
        ('{"task": "a", "memory": 5}', "line 1: not a task \\(memory: expected an object, got 5"),
        ('{"turns": [{"task": "a"}, {"task": "b", "memory": {"model_input_must_contain": "a"}}]}',
         "line 1: not a task \\(turns\\[1\\].memory.model_input_must_contain: expected a list"),
        ('{"task": "a", "max_steps": "3"}',
         "line 1: not a task \\(max_steps: expected an integer, got a string"),
        ('{"task": "a", "id": true}',
         "line 1: not a task \\(id: expected a string or an integer, got true"),
        ("[" * 200 + "]" * 200, "line 1:"),
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


def test_a_relative_tools_file_is_found_next_to_the_tasks_file(tmp_path: Path) -> None:
    (tmp_path / "my_tools.py").write_text("")
    tasks = load_tasks(_write(tmp_path, {"task": "a", "tools": "my_tools.py:box"},
                              {"id": "2", "task": "b", "tools": "pkg.mod:box"}))
    assert tasks[0].tools == f"{(tmp_path / 'my_tools.py').resolve()}:box"
    assert tasks[1].tools == "pkg.mod:box"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ({"task": "a", "expected_calls": [{"args": {}}]}, "expected_calls\\[0\\].name: missing"),
        ({"task": "a", "expected_calls": [{"name": "f", "args_match": {"x": {"near": 1}}}]},
         "expected_calls\\[0\\].args_match.x: unknown key 'near'"),
        ({"task": "a", "call_order": [[0]]},
         "call_order: the group \\[0\\] names a call that is not expected"),
        ({"task": "a", "final_answer": {"must_contain_any": ["x"]}},
         "final_answer.must_contain_any\\[0\\]: expected a list, got a string"),
        ({"turns": []}, "turns: expected at least 1 item"),
        ({"task": "a", "max_steps": 0}, "max_steps: expected a number at least 1, got 0"),
    ],
)
def test_malformed_checks_are_named(tmp_path: Path, line: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_tasks(_write(tmp_path, line))


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


@pytest.mark.parametrize(("line", "message"), [
    ({"task": "a", "final_answer": {"must_contian": ["x"]}},
     "final_answer: unknown key 'must_contian' (did you mean 'must_contain'?)"),
    ({"task": "a", "expected_call": [{"name": "f"}]},
     "unknown key 'expected_call' (did you mean 'expected_calls'?)"),
    ({"task": "a", "max_step": 3}, "unknown key 'max_step' (did you mean 'max_steps'?)"),
    ({"task": "a", "expected_calls": [{"name": "f", "args_match": {"x": {"one_off": [1]}}}]},
     "expected_calls[0].args_match.x: unknown key 'one_off' (did you mean 'one_of'?)"),
    ({"task": "a", "expected_calls": [{"name": "f", "requird": False}]},
     "expected_calls[0]: unknown key 'requird' (did you mean 'required'?)"),
    ({"turns": [{"task": "a", "memory": {"model_input_must_contains": ["x"]}}]},
     "turns[0].memory: unknown key 'model_input_must_contains' (did you mean "
     "'model_input_must_contain'?)"),
    ({"turns": [{"task": "a", "forbiden_tools": ["*"]}]},
     "turns[0]: unknown key 'forbiden_tools' (did you mean 'forbidden_tools'?)"),
    ({"task": "a", "turns": [{"task": "b"}]},
     "task: a conversation's task and checks go in its turns"),
    ({"turns": [{"task": "b"}], "final_answer": {"non_empty": True}},
     "final_answer: a conversation's task and checks go in its turns"),
])
def test_an_unknown_or_misplaced_key_is_an_error_with_the_closest_known_key(
    tmp_path: Path, line: dict[str, object], message: str
) -> None:
    """A typo in a tasks file is named, with the key it was probably meant to be, before any
    task runs: a check misspelt is never silently left out."""
    path = _write(tmp_path, line)
    with pytest.raises(ConfigError) as exc:
        load_tasks(path)
    assert str(exc.value).startswith(f"{path}, line 1: not a task ({message}")


@pytest.mark.parametrize("name", ["dev", "test", "seeds"])
def test_the_example_tasks_files_load_with_their_annotations(name: str) -> None:
    """The annotations of the example files (note, lang, reference; the seed format's
    observation and expected_by_seed in an expected call) are known keys."""
    path = Path(__file__).parents[2] / "examples" / "tasks" / f"{name}.jsonl"
    assert len(load_tasks(path)) == len(path.read_text("utf-8").splitlines())


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
