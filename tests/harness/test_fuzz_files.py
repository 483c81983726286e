"""Fuzzing the files react-agent reads (traces, saved runs to resume, tasks and results files):
whatever a line holds, reading gives a result, or a ``ConfigError`` that names the file (and,
for JSON Lines files, the line); and ``react-agent replay`` and ``view`` of such a file end with
an exit code and a message naming the file, never a traceback. Besides random records, real
files have one field at a time replaced by a value of the wrong type or size (Infinity, NaN, a
400-digit number, a record of another shape). The same properties run longer in
``benchmarks/fuzz_files.py``."""

from __future__ import annotations

import contextlib
import copy
import functools
import io
import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from react_agent import Agent, ConfigError, RunResult, Toolbox
from react_agent.cli import main
from react_agent.harness import (
    BatchTask,
    latest_records,
    load_tasks,
    read_records,
    read_trace,
    run_batch,
    summary_table,
)
from react_agent.harness._trace import TraceWriter
from react_agent.models import ScriptedModel
from react_agent.policies import Review, default_policies

KEYS = ("type", "task", "step", "status", "steps", "result", "messages", "role", "content",
        "index", "tool_calls", "results", "name", "args", "observation", "ok", "id", "turns",
        "expected", "memory", "final_answer", "expected_calls", "call_order", "args_match",
        "system_prompt", "resumed_steps", "records", "notes", "in_history", "origin", "stage",
        "tools", "max_steps", "parse_error", "policy", "label", "text", "seconds",
        "model_seconds", "prompt_tokens", "review", "reasons", "probability", "answer_floor")
WORDS = ("run_start", "model_call", "tool_call", "observation", "note", "run_end",
         "final_answer", "max_steps", "user", "assistant", "system", "x", "", "tools.py:t")
HUGE = 10**400 - 1  # 400 digits: a float() of it overflows
scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 10**30),
                    st.floats(allow_nan=False), st.sampled_from(WORDS), st.text(max_size=6))
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.sampled_from(KEYS), inner, max_size=6)),
    max_leaves=40,
)
records = st.dictionaries(st.sampled_from(KEYS), values, max_size=8)
lines = st.lists(st.one_of(records.map(json.dumps), values.map(json.dumps),
                           st.just("[" * 200 + "]" * 200), st.text(max_size=10)), max_size=6)
hostile = st.one_of(
    st.sampled_from([float("inf"), float("-inf"), float("nan"), HUGE, -HUGE, 1e308, -1, 0.5,
                     True, None, "many", "", [], {}, [[1]], [{"name": 1}],
                     {"type": "tool_call", "step": 1}, {"reviews": {"reasons": 3}}]),
    scalars, values,
)
"""A value put in place of one field of a real file: the wrong type, out of range, not finite,
or a record of another shape."""

def summarised(path: Path) -> list[str]:
    """A results file read as ``run --tasks`` reads it: its records, summed up."""
    return summary_table(latest_records(read_records(path)))


READERS = {"trace": read_trace, "tasks": load_tasks, "results": summarised}


def read(kind: str, text: str) -> Any:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"input-{kind}.jsonl"
        path.write_text(text, encoding="utf-8")
        try:
            return READERS[kind](path) if kind in READERS else RunResult.load(path)
        except ConfigError as exc:
            assert str(path) in str(exc), exc
            if kind in READERS and "line" in str(exc):
                assert ", line " in str(exc)
            return exc


COMMANDS = {"trace": (["replay"], ["replay", "--json"], ["view"]), "results": (["view"],)}
"""The commands of the CLI that read a file of each kind (in-process, with no model)."""


def through_cli(kind: str, text: str) -> list[int]:
    """Exit codes of the commands that read a ``kind`` file holding ``text``; an error (exit 2)
    names the file on stderr. An exception out of ``main`` is the CLI's traceback."""
    codes = []
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"input-{kind}.jsonl"
        path.write_text(text, encoding="utf-8")
        for command in COMMANDS.get(kind, ()):
            out, err = io.StringIO(), io.StringIO()
            extra = ["-o", str(Path(folder) / "view.html")] if command == ["view"] else []
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = main([*command, str(path), *extra])
            assert code in (0, 1, 2, 130), (command, code, err.getvalue())
            if code == 2:
                assert str(path) in err.getvalue(), err.getvalue()
            codes.append(code)
    return codes


# -- real files, one field at a time replaced --------------------------------------------------
@functools.cache
def real_files() -> dict[str, list[Any]]:
    """The records of a real trace (a tool call, an unusable reply, a review with its draft),
    results file, tasks file and saved run, one JSON value per line."""
    tools = Toolbox()

    @tools.tool
    def get_weather(city: str) -> str:
        """Current weather of a city."""
        return f"18 °C in {city}"

    replies = [
        json.dumps({"thought": "look", "action": {"name": "get_weather", "args": {"city": "X"}}}),
        "no JSON at all",
        json.dumps({"thought": "done", "action": {"final_answer": "18 °C"}}),
        json.dumps({"thought": "again", "action": {"final_answer": "It is 18 °C."}}),
    ]
    policies = default_policies(use=[Review(mode="always")])
    with tempfile.TemporaryDirectory() as folder:
        trace = Path(folder) / "trace.jsonl"
        with TraceWriter(trace, model="scripted") as writer:
            run = Agent(ScriptedModel(replies), tools, callbacks=[writer],
                        policies=policies).run("Weather in X?")
        out = Path(folder) / "results.jsonl"
        run_batch([BatchTask("a", "Weather in X?", expected=("18",))], out,
                  lambda task: Agent(ScriptedModel(replies), tools, policies=policies))
        files = {kind: [json.loads(line) for line in path.read_text("utf-8").splitlines()]
                 for kind, path in (("trace", trace), ("results", out))}
    files["run"] = [run.to_dict()]
    files["tasks"] = [
        {"id": "a", "task": "Weather in X?", "tools": "tools.py:t", "max_steps": 3,
         "shape": "lookup", "expected": ["18"],
         "expected_calls": [{"name": "get_weather", "args": {"city": "X"},
                             "args_match": {"city": {"one_of": ["X"], "optional": False}}}],
         "call_order": [[0]], "parallel_allowed": False, "forbidden_tools": ["send"],
         "final_answer": {"must_contain": ["18"], "must_contain_any": [["°C", "C"]],
                          "must_not_contain": ["rain"], "non_empty": True}},
        {"id": "b", "turns": [{"task": "Hi", "memory": {"model_input_must_contain": ["X"]}}]},
    ]
    return files


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The path of every value inside ``value`` (keys and indices), ``value`` itself first."""
    found = [path]
    items = value.items() if isinstance(value, dict) else enumerate(value) \
        if isinstance(value, list) else ()
    for key, item in items:
        found += _paths(item, (*path, key))
    return found


def _replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    value = copy.copy(value)
    value[path[0]] = _replaced(value[path[0]], path[1:], new)
    return value


@st.composite
def mutated(draw: st.DrawFn) -> tuple[str, str]:
    """``(kind, text)``: a real file of ``kind`` with one value anywhere in one line replaced
    by a :data:`hostile` one; a trace may end before its ``run_end`` (the process was killed),
    so that the run is rebuilt from its records."""
    kind = draw(st.sampled_from(["trace", "results", "tasks", "run"]))
    chosen = list(real_files()[kind])
    if kind == "trace" and draw(st.booleans()):
        chosen = chosen[:-1]
    n = draw(st.integers(0, len(chosen) - 1))
    path = draw(st.sampled_from(_paths(chosen[n])))
    chosen[n] = _replaced(chosen[n], path, draw(hostile))
    if kind == "run":
        return kind, json.dumps(chosen[0])
    return kind, "\n".join(json.dumps(line) for line in chosen)


# -- the properties -------------------------------------------------------------------------
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(READERS)), lines)
def test_a_json_lines_file_reads_or_fails_naming_the_file_and_line(kind: str,
                                                                   text: list[str]) -> None:
    read(kind, "\n".join(text))


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(records, values))
def test_a_saved_run_loads_or_fails_naming_the_file(data: Any) -> None:
    read("run", json.dumps(data))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(records, max_size=5))
def test_a_trace_made_of_trace_records_reads_or_fails_naming_the_line(
    body: list[dict[str, Any]]
) -> None:
    start = {"type": "run_start", "task": "t", "system_prompt": "s"}
    read("trace", "\n".join(json.dumps(r) for r in [start, *body]))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_a_real_file_with_one_field_replaced_reads_or_fails_naming_the_line(
    file: tuple[str, str]
) -> None:
    read(*file)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated().filter(lambda file: file[0] in COMMANDS))
def test_replay_and_view_of_a_real_file_with_one_field_replaced_end_without_a_traceback(
    file: tuple[str, str]
) -> None:
    through_cli(*file)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(COMMANDS)), lines)
def test_replay_and_view_of_random_records_end_without_a_traceback(kind: str,
                                                                   text: list[str]) -> None:
    through_cli(kind, "\n".join(text))


def test_the_real_files_read_and_show() -> None:
    """The files the properties start from are good ones: a field replaced is all that fails."""
    files = real_files()
    assert [r["type"] for r in files["trace"]].count("note") >= 1  # a review note
    for kind in ("trace", "results", "tasks"):
        assert not isinstance(read(kind, "\n".join(map(json.dumps, files[kind]))), ConfigError)
    assert not isinstance(read("run", json.dumps(files["run"][0])), ConfigError)
    for kind in COMMANDS:
        assert set(through_cli(kind, "\n".join(map(json.dumps, files[kind])))) <= {0}
