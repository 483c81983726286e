"""Tests for react_agent.engine._output: an output type as a JSON Schema, and a final answer read
into a typed value of it (each kind of type, and each way an answer fails to fit)."""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

import pytest
from pydantic import BaseModel
from typing_extensions import TypedDict

from react_agent import ConfigError
from react_agent.engine import MAX_OUTPUT_CHARS, output_spec
from react_agent.tools.schema import MAX_DEPTH, MAX_NODES


class LineCount(BaseModel):
    file: str
    lines: int


@dataclasses.dataclass
class Point:
    x: int
    y: int


class Person(TypedDict):
    name: str
    age: int


COUNT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"file": {"type": "string"}, "lines": {"type": "integer"}},
    "required": ["file", "lines"],
    "additionalProperties": False,
}


def read(output_type: Any, answer: str) -> tuple[Any, list[str]]:
    return output_spec(output_type).read(answer)


# -- each kind of type --------------------------------------------------------------------------
def test_a_pydantic_model_from_the_json_of_an_object_answer() -> None:
    value, problems = read(LineCount, '{"file": "a.md", "lines": 173}')
    assert problems == [] and value == LineCount(file="a.md", lines=173)


def test_a_dataclass() -> None:
    assert read(Point, '{"x": 1, "y": "2"}') == (Point(1, 2), [])


def test_a_typed_dict() -> None:
    assert read(Person, '{"name": "Ada", "age": 36}') == ({"name": "Ada", "age": 36}, [])


@pytest.mark.parametrize(("output_type", "answer", "value"), [
    (int, "519", 519),
    (int, '"4243"', 4243),  # cleaned like a tool argument: a numeric string where an int is due
    (float, "2.5", 2.5),
    (bool, "true", True),
    (list[str], '["a", "b"]', ["a", "b"]),
    (list[int], '["1", 2]', [1, 2]),
    (Literal["yes", "no"], '"yes"', "yes"),
    (str, "Some prose, kept whole {not json}.", "Some prose, kept whole {not json}."),
    (str, "42", "42"),
    (str, '"quoted"', "quoted"),
])
def test_plain_types(output_type: Any, answer: str, value: Any) -> None:
    got, problems = read(output_type, answer)
    assert problems == [] and got == value and type(got) is type(value)


def test_a_json_schema_dict_is_validated_by_the_bounded_validator() -> None:
    spec = output_spec(COUNT_SCHEMA)
    assert spec.adapter is None
    assert spec.read('{"file": "a", "lines": "12"}') == ({"file": "a", "lines": 12}, [])
    _, problems = spec.read('{"file": "a", "lines": 12, "extra": 1}')
    assert problems and "extra" in problems[0]


# -- reading the answer tolerantly ---------------------------------------------------------------
def test_json_in_a_fence_with_prose_around_it() -> None:
    answer = 'Here it is:\n```json\n{"file": "a.md", "lines": 3}\n```\nDone.'
    assert read(LineCount, answer) == (LineCount(file="a.md", lines=3), [])


def test_json_among_prose_without_a_fence() -> None:
    answer = 'The result is {"file": "a.md", "lines": 3} as counted.'
    assert read(LineCount, answer) == (LineCount(file="a.md", lines=3), [])


def test_broken_json_is_read_with_the_parsers_repairs() -> None:
    answer = "{'file': 'a.md', 'lines': 3,}"  # single quotes and a trailing comma
    assert read(LineCount, answer) == (LineCount(file="a.md", lines=3), [])


# -- each failure -------------------------------------------------------------------------------
def test_a_missing_field_is_named() -> None:
    value, problems = read(LineCount, '{"file": "a.md"}')
    assert value is None and problems == ["lines: missing"]


def test_a_missing_field_of_a_json_schema_is_named() -> None:
    value, problems = read(COUNT_SCHEMA, '{"file": "a.md"}')
    assert value is None and problems == ["lines: missing"]


def test_a_wrong_type_is_named_with_its_field() -> None:
    value, problems = read(LineCount, '{"file": "a.md", "lines": [1]}')
    assert value is None and len(problems) == 1 and problems[0].startswith("lines: ")


def test_a_value_that_cannot_be_coerced() -> None:
    value, problems = read(LineCount, '{"file": "a.md", "lines": "many"}')
    assert value is None and problems[0].startswith("lines: ") and "many" in problems[0]
    value, problems = read(COUNT_SCHEMA, '{"file": "a.md", "lines": "many"}')
    assert value is None and problems[0].startswith("lines: ")


def test_prose_where_a_number_is_due_is_not_guessed_at() -> None:
    value, problems = read(int, "There are 173 lines.")
    assert value is None and problems


def test_a_second_json_value_is_an_error_never_a_guess() -> None:
    answer = '{"file": "a.md", "lines": 3} or maybe {"file": "b.md", "lines": 4}'
    value, problems = read(LineCount, answer)
    assert value is None and problems == [
        "(value): the answer holds 2 JSON values; give exactly one, the answer itself"]
    fenced = '```json\n{"file": "a", "lines": 1}\n```\n```json\n{"file": "b", "lines": 2}\n```'
    assert read(LineCount, fenced)[0] is None


def test_a_broken_value_that_cannot_be_repaired() -> None:
    value, problems = read(LineCount, 'It is {"file": "a.md", "lines": }')
    assert value is None and problems


def test_an_answer_too_long_is_refused_before_reading() -> None:
    value, problems = read(list[int], "[" + "1," * MAX_OUTPUT_CHARS + "1]")
    assert value is None and "longer than" in problems[0]


def test_a_value_nested_too_deeply_is_refused() -> None:
    value, problems = read(list[Any], "[" * 200 + "]" * 200)
    assert value is None and "nested" in problems[0]


# -- the type itself ----------------------------------------------------------------------------
def test_a_schema_nested_too_deeply_is_refused_at_construction() -> None:
    deep: dict[str, Any] = {"type": "string"}
    for _ in range(MAX_DEPTH + 5):
        deep = {"type": "array", "items": deep}
    with pytest.raises(ConfigError, match="nested deeper"):
        output_spec(deep)


def test_a_huge_schema_is_refused_at_construction() -> None:
    huge = {"type": "object", "properties": {f"f{i}": {"type": "string"}
                                             for i in range(MAX_NODES)}}
    with pytest.raises(ConfigError, match="more than"):
        output_spec(huge)


def test_a_schema_referring_outside_itself_is_refused() -> None:
    with pytest.raises(ConfigError, match="refers outside"):
        output_spec({"$ref": "https://example.invalid/schema.json"})


def test_an_invalid_schema_is_refused() -> None:
    with pytest.raises(ConfigError, match="not a valid JSON Schema"):
        output_spec({"type": "no-such-type"})


def test_a_value_that_is_not_a_type_is_refused() -> None:
    with pytest.raises(ConfigError, match="not a type pydantic can validate"):
        output_spec(object())


def test_the_shape_shown_has_no_titles() -> None:
    shape = output_spec(LineCount).shape()
    assert '"title"' not in shape and '"lines"' in shape


def test_many_json_values_are_looked_for_only_so_far() -> None:
    value, problems = read(LineCount, '{"file": "a", "lines": 1} ' * 1_000)
    assert value is None and problems == [
        "(value): the answer holds many JSON values; give exactly one, the answer itself"]


AMOUNT_SCHEMA: dict[str, Any] = {"type": "object", "properties": {"amount": {"type": "number"}},
                                 "required": ["amount"]}


class Amount(BaseModel):
    amount: float


@pytest.mark.parametrize("answer", [
    '{"amount": NaN}', '{"amount": -Infinity}', '{"amount": 1e999}',
    'The amount: {"amount": NaN}', '```json\n{"amount": Infinity}\n```',
])
@pytest.mark.parametrize("output_type", [AMOUNT_SCHEMA, Amount])
def test_a_number_that_is_not_finite_is_refused(answer: str, output_type: Any) -> None:
    value, problems = output_spec(output_type).read(answer)
    assert value is None
    assert len(problems) == 1 and problems[0].startswith("amount: ")
    assert "is not a finite number" in problems[0]


@pytest.mark.parametrize("answer", ["NaN", "-Infinity", "1e999", '"NaN"', '"inf"', '["NaN"]'])
def test_a_float_type_refuses_what_reads_as_a_number_that_is_not_finite(answer: str) -> None:
    output_type = list[float] if answer.startswith("[") else float
    value, problems = output_spec(output_type).read(answer)
    assert value is None and len(problems) == 1 and "is not a finite number" in problems[0]
    assert output_spec(float).read("2.5") == (2.5, [])


@pytest.mark.parametrize("answer", [
    '{"amount": 1, "amount": 1000000}',
    'It is {"amount": 1, "amount": 1000000} in all.',
    'It is:\n```json\n{"amount": 1, "amount": 1000000}\n```',
    '[{"amount": 1, "amount": 1000000}]',
    "{'amount': 1, 'amount': 1000000}",  # once repaired
    'It is {"amount": 1, "amount": 1000000,} in all.',
])
def test_a_key_given_twice_with_different_values_is_refused_not_guessed(answer: str) -> None:
    output_type = list[Amount] if answer.startswith("[") else AMOUNT_SCHEMA
    value, problems = output_spec(output_type).read(answer)
    assert value is None
    assert len(problems) == 1 and '"amount" appears twice' in problems[0]


def test_a_key_given_twice_with_the_same_value_is_read() -> None:
    assert output_spec(AMOUNT_SCHEMA).read('So: {"amount": 2, "amount": 2}') == (
        {"amount": 2}, [])


class _RaisingHook:
    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
        raise RuntimeError("the hook failed")


class _BadRepr(type):
    def __repr__(cls) -> str:
        raise RuntimeError("no repr")


class _Unshown(metaclass=_BadRepr):
    pass


def test_a_type_whose_own_hook_raises_is_a_config_error_naming_it() -> None:
    with pytest.raises(ConfigError, match=r"_RaisingHook.*RuntimeError: the hook failed"):
        output_spec(_RaisingHook)


def test_a_type_whose_repr_raises_is_a_config_error_naming_it() -> None:
    with pytest.raises(ConfigError, match=r"output_type _BadRepr:_Unshown is not a type"):
        output_spec(_Unshown)


# -- the second look (new user and attacker, 2026-12-06) ------------------------------------------

def test_a_schema_fault_is_placed_by_its_path() -> None:
    bad = {"type": "object", "properties": {"x": {"type": "integer", "minimum": "3"}}}
    with pytest.raises(ConfigError, match=r"at output_type\.properties\.x\.minimum: '3'"):
        output_spec(bad)
    with pytest.raises(ConfigError, match=r"^its schema is not a valid JSON Schema at its "
                                          r"schema\.properties\.x\.minimum"):
        output_spec(bad, "its schema")


def test_a_referenced_part_of_a_schema_is_cleaned_like_an_inline_one() -> None:
    inner = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    by_ref = {"type": "object", "properties": {"inner": {"$ref": "#/$defs/I"}},
              "required": ["inner"], "$defs": {"I": inner}}
    assert read(by_ref, '{"inner": {"a": "1"}}') == ({"inner": {"a": 1}}, [])
    loop = {"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/b"},
                                           "b": {"$ref": "#/$defs/a"}}}
    value, problems = read(loop, '"1"')  # a chain of references back to itself ends
    assert problems or value == "1"


def test_null_is_a_value_only_of_a_type_that_allows_it() -> None:
    assert output_spec(int | None).nullable and output_spec({"type": ["integer", "null"]}).nullable
    assert not output_spec(int).nullable and not output_spec(str).nullable


@pytest.mark.parametrize("schema", [
    {"type": "object", "description": "x" * 60_000},
    {"enum": ["x" * 380 + str(i) for i in range(200)]},
])
def test_a_schema_too_long_for_a_prompt_is_refused(schema: dict[str, Any]) -> None:
    with pytest.raises(ConfigError, match="more than 50000"):
        output_spec(schema)


def test_a_schema_dict_holding_no_json_value_is_a_config_error() -> None:
    from decimal import Decimal
    with pytest.raises(ConfigError, match="output_type is not JSON"):
        output_spec({"type": "number", "maximum": Decimal("1.5")})
