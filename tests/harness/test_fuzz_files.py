"""Fuzzing the files react-agent reads (traces, saved runs to resume, tasks and results files):
whatever a line holds, reading gives a result, or a ``ConfigError`` that names the file (and,
for JSON Lines files, the line). The same property runs longer in
``benchmarks/fuzz_files.py``."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from react_agent import ConfigError, RunResult
from react_agent.harness import load_tasks, read_trace
from react_agent.harness._batch import read_records

KEYS = ("type", "task", "step", "status", "steps", "result", "messages", "role", "content",
        "index", "tool_calls", "results", "name", "args", "observation", "ok", "id", "turns",
        "expected", "memory", "final_answer", "expected_calls", "call_order", "args_match",
        "system_prompt", "resumed_steps", "records", "notes", "in_history", "origin", "stage",
        "tools", "max_steps", "parse_error", "policy", "label", "text")
WORDS = ("run_start", "model_call", "tool_call", "observation", "note", "run_end",
         "final_answer", "max_steps", "user", "assistant", "system", "x", "", "tools.py:t")
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

READERS = {"trace": read_trace, "tasks": load_tasks, "results": read_records}


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
