"""Tests for react_agent._persist: atomic writes and the one JSON Lines reader."""

from __future__ import annotations

from pathlib import Path

import pytest

from react_agent import ConfigError
from react_agent._persist import read_json, read_json_lines, write_atomically

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
