"""Tests for react_agent._json: the one depth-bounded walk of JSON values."""

from __future__ import annotations

from typing import Any

import pytest

from react_agent._json import path_of, walk


def test_walk_meets_every_value_with_its_depth() -> None:
    met = [(value, depth) for value, depth, _ in walk({"a": [1, {"b": 2}]}, 10)]
    assert met == [({"a": [1, {"b": 2}]}, 1), ([1, {"b": 2}], 2), ({"b": 2}, 3), (2, 4), (1, 3)]


@pytest.mark.parametrize(("value", "deepest"), [
    (1, 1),
    ([[[[1]]]], 3),  # the container at depth 3 is met, its items are not
    ({"a": {"b": {"c": {"d": 1}}}}, 3),
])
def test_walk_does_not_go_below_a_container_deeper_than_the_bound(value: Any,
                                                                  deepest: int) -> None:
    assert max(depth for _, depth, _ in walk(value, 2)) == deepest


def test_a_nesting_far_past_the_stack_is_walked_without_recursion() -> None:
    value: Any = 1
    for _ in range(100_000):
        value = [value]
    assert sum(1 for _ in walk(value, 200_000)) == 100_001


def test_trails_name_where_each_value_sits() -> None:
    paths = {repr(value): path_of(trail)
             for value, _, trail in walk({"a": [{"b": "x"}]}, 10, trails=True)}
    assert paths["'x'"] == [("a", False), (0, True), ("b", False)]
    assert paths["{'a': [{'b': 'x'}]}"] == []


def test_without_trails_none_is_kept() -> None:
    assert {trail for _, _, trail in walk({"a": [1]}, 10)} == {None}
