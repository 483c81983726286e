"""The embedded model's grammar for a reply schema: bounded whatever the schema asks for."""

from __future__ import annotations

from typing import Any

import pytest

from react_agent.models._llama_cpp import GRAMMAR_MAX_COUNT, _counts, _for_grammar


@pytest.mark.parametrize("schema", [
    {"type": "string", "minLength": 100_000_000},
    {"type": "string", "maxLength": 20_000_000},
    {"type": "array", "items": {"type": "integer"}, "minItems": 10**9},
    {"type": "string", "pattern": "^a{20000000}$"},
    {"type": "string", "pattern": "^(a{200}){200}$"},  # counted repeats multiply
    {"type": "string", "pattern": "^a{99999999999999999999999999,}$"},
])
def test_a_count_the_grammar_would_write_out_is_left_to_validation(
    schema: dict[str, Any],
) -> None:
    """Attack (2026-12-06): ``minLength: 100000000`` in a client's output schema made an 8.6 s,
    500 MB grammar for every constrained reply."""
    nested = {"type": "object", "properties": {"a": schema}, "anyOf": [schema]}
    kept = _for_grammar(nested)
    assert kept["properties"]["a"] == {"type": schema["type"], **(
        {"items": schema["items"]} if "items" in schema else {})}
    assert kept["anyOf"] == [kept["properties"]["a"]]


def test_counts_a_grammar_can_hold_are_kept() -> None:
    schema = {"type": "string", "minLength": 2, "maxLength": GRAMMAR_MAX_COUNT,
              "pattern": "^[A-Z]{3}-[0-9]{4}$"}
    assert _for_grammar(schema) == schema
    assert _counts("^[A-Z]{3}-[0-9]{4}$") == 12 and _counts("^(ab){2,5}$") == 5
