"""What a view reads from files (react_agent.harness._view_entries): a file that is neither a
trace nor a results file, or a record of the wrong shape, is refused with the place at fault;
the entries of good files are tested with their pages in test_view.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from react_agent import ConfigError
from react_agent.harness import load_view


def test_what_is_not_a_trace_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text('{"hello": 1}\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="neither a trace"):
        load_view(path)
    with pytest.raises(ConfigError, match="Cannot read"):
        load_view(tmp_path / "missing.jsonl")


@pytest.mark.parametrize(("record", "message"), [
    ('{"id": "a", "seconds": ' + "9" * 400 + ', "result": null}',
     "line 1: record.seconds: expected a number in range, got a number of 400 digits"),
    ('{"id": "a", "passed": "yes", "result": null}',
     "line 1: record.passed: expected true or false, got a string ('yes')"),
    ('{"id": "a", "turns": [3], "result": null}',
     "line 1: record.turns[0]: expected an object, got 3"),
    ('{"id": "a", "result": {"task": "t", "status": "final_answer", "steps": [{"index": 1, '
     '"tool_calls": [], "model_seconds": Infinity}]}}',
     "line 1: result.steps[0].model_seconds: expected a finite number, got Infinity"),
])
def test_a_results_record_of_the_wrong_shape_is_refused(tmp_path: Path, record: str,
                                                        message: str) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(record + "\n", encoding="utf-8")
    with pytest.raises(ConfigError) as exc:
        load_view(path)
    assert str(exc.value).startswith(f"{path}, {message}")
