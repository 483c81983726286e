"""Tests for react_agent.harness._tasks: a tasks file read, its errors named with their line and
the closest known key (running the tasks is tested in test_batch.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from react_agent import ConfigError
from react_agent.harness import BatchTask, load_tasks


def _write(tmp_path: Path, *lines: dict[str, object]) -> Path:
    path = tmp_path / "tasks.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


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


COUNT = {"type": "object", "properties": {"lines": {"type": "integer"}}, "required": ["lines"]}


def test_a_tasks_output_schema_is_read_and_checked(tmp_path: Path) -> None:
    (task,) = load_tasks(_write(tmp_path, {"task": "Count.", "output_schema": COUNT}))
    assert task.output_schema == COUNT


@pytest.mark.parametrize(("schema", "message"), [
    ([1], "output_schema: expected an object"),
    ({"type": "nothing"}, "output_schema is not a valid JSON Schema"),
    ({"$ref": "https://example.invalid/s.json"}, "refers outside the schema"),
    ({"type": "object", "properties": {f"f{i}": {"type": "string"} for i in range(10_001)}},
     "more than 10000 values"),
])
def test_a_bad_output_schema_names_the_line(tmp_path: Path, schema: object, message: str
                                            ) -> None:
    with pytest.raises(ConfigError, match="line 1: not a task") as info:
        load_tasks(_write(tmp_path, {"task": "Count.", "output_schema": schema}))
    assert message in str(info.value)
