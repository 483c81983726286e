"""Tests for react_agent._persist: atomic writes and the one JSON Lines reader."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import Field

from react_agent import ConfigError
from react_agent._persist import (
    Count,
    Seconds,
    Shape,
    check_shape,
    read_json,
    read_json_lines,
    shown,
    write_atomically,
)

CUT_LAST = '{"a": 1}\n\n{"b": 2}\n{"c": '
CUT_MIDDLE = '{"a": 1}\n{"b": \n{"c": 3}\n'


@pytest.mark.parametrize(
    ("text", "skip_broken", "values"),
    [
        ('{"a": 1}\n\n[2]\n"three"\n', "none", [(1, {"a": 1}), (3, [2]), (4, "three")]),
        (CUT_LAST, "last", [(1, {"a": 1}), (3, {"b": 2})]),
        (CUT_LAST, "all", [(1, {"a": 1}), (3, {"b": 2})]),
        (CUT_MIDDLE, "all", [(1, {"a": 1}), (3, {"c": 3})]),
    ],
)
def test_read_json_lines(tmp_path: Path, text: str, skip_broken: str, values: list) -> None:
    (tmp_path / "f.jsonl").write_text(text, encoding="utf-8")
    assert read_json_lines(tmp_path / "f.jsonl", "file", skip_broken=skip_broken) == values


@pytest.mark.parametrize(("text", "skip_broken"), [(CUT_LAST, "none"), (CUT_MIDDLE, "last")])
def test_a_broken_line_that_is_not_skipped_is_named(
    tmp_path: Path, text: str, skip_broken: str
) -> None:
    (tmp_path / "f.jsonl").write_text(text, encoding="utf-8")
    line = len(text.splitlines()) if skip_broken == "none" else 2
    with pytest.raises(ConfigError, match=rf"f.jsonl, line {line}: not a JSON record"):
        read_json_lines(tmp_path / "f.jsonl", "file", skip_broken=skip_broken)


def test_a_missing_file(tmp_path: Path) -> None:
    assert read_json_lines(tmp_path / "nope.jsonl", "results file", missing_ok=True) == []
    with pytest.raises(ConfigError, match=r"Cannot read the tasks file .*nope\.jsonl"):
        read_json_lines(tmp_path / "nope.jsonl", "tasks file")


def test_write_atomically_replaces_the_file_whole(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "run.json"
    write_atomically(path, '{"v": 1}')
    write_atomically(path, '{"v": 2}')
    assert read_json(path) == {"v": 2}
    assert [p.name for p in path.parent.iterdir()] == ["run.json"]  # no temporary file left


def test_a_record_may_hold_a_unicode_line_separator(tmp_path: Path) -> None:
    (tmp_path / "f.jsonl").write_text('{"text": "a\u2028b"}\n', encoding="utf-8")
    assert read_json_lines(tmp_path / "f.jsonl", "file") == [(1, {"text": "a\u2028b"})]


class _Record(Shape):
    name: str
    steps: Count = 0
    seconds: Seconds | None = None
    tags: list[str] = Field(default_factory=list)
    nested: list[_Record] = Field(default_factory=list)


@pytest.mark.parametrize(("data", "message"), [
    ([], "f, line 3: record: expected an object, got a list."),
    ({}, "f, line 3: record.name: missing."),
    ({"name": 3}, "f, line 3: record.name: expected a string, got 3."),
    ({"name": "n", "steps": True}, "f, line 3: record.steps: expected an integer, got true."),
    ({"name": "n", "steps": "2"},
     "f, line 3: record.steps: expected an integer, got a string ('2')."),
    ({"name": "n", "steps": 10**400},
     "f, line 3: record.steps: expected a number at most 1000000000000, got a number of 401 "
     "digits."),
    ({"name": "n", "steps": -1}, "f, line 3: record.steps: expected a number at least 0, got -1."),
    ({"name": "n", "seconds": float("nan")},
     "f, line 3: record.seconds: expected a finite number, got NaN."),
    ({"name": "n", "seconds": float("-inf")},
     "f, line 3: record.seconds: expected a finite number, got -Infinity."),
    ({"name": "n", "seconds": 10**400},
     "f, line 3: record.seconds: expected a number in range, got a number of 401 digits."),
    ({"name": "n", "seconds": 2e9},
     "f, line 3: record.seconds: expected a number at most 1000000000, got 2000000000.0."),
    ({"name": "n", "tags": ["a", None]},
     "f, line 3: record.tags[1]: expected a string, got null."),
    ({"name": "n", "nested": [{"name": "m", "nested": [{"name": {}}]}]},
     "f, line 3: record.nested[0].nested[0].name: expected a string, got an object."),
])
def test_a_record_of_the_wrong_shape_is_named_with_its_field(data: object, message: str) -> None:
    with pytest.raises(ConfigError) as exc:
        check_shape(_Record, data, "f, line 3: record")
    assert str(exc.value) == message


def test_a_record_of_the_right_shape_reads() -> None:
    record = check_shape(_Record, {"name": "n", "steps": 2, "seconds": 1, "more": "x"}, "f")
    assert (record.name, record.steps, record.seconds) == ("n", 2, 1.0)


@pytest.mark.parametrize(("value", "words"), [
    (None, "null"), (False, "false"), (12, "12"), (-(10**25), "a number of 26 digits"),
    (float("inf"), "Infinity"), ("x" * 50, "a string ('" + "x" * 40 + "'…)"), ({}, "an object"),
])
def test_a_value_in_a_few_words(value: object, words: str) -> None:
    assert shown(value) == words
