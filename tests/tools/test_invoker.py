"""The invoker: every tool call becomes one observation, whatever happens."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import threading
from collections.abc import Iterator
from typing import Annotated, Any, Literal

import pytest
from pydantic import Field

from react_agent import Toolbox, ToolCall, ToolResult
from react_agent.tools import (
    DEFAULT_MAX_OBSERVATION_CHARS,
    ainvoke_all,
    call_example,
    check_args,
    clean_args,
    format_result,
    invoke,
    invoke_all,
)


class Opaque:
    def __repr__(self) -> str:
        return "<Opaque thing>"


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """An event a hanging tool waits on; set at teardown so no thread outlives the test long."""
    event = threading.Event()
    yield event
    event.set()


@pytest.fixture
def toolbox(release: threading.Event) -> Toolbox:
    tb = Toolbox()

    @tb.tool
    def get_weather(city: str, days: int = 1, unit: Literal["c", "f"] = "c") -> str:
        """Get the weather for a city."""
        return f"{city}|{days}|{unit}"

    @tb.tool
    def get_time(zone: str) -> str:
        """Get the time in a zone."""
        return f"noon in {zone}"

    @tb.tool
    def average(numbers: list[int]) -> float:
        """Average of numbers."""
        return sum(numbers) / len(numbers)

    @tb.tool
    def divide(a: float, b: float) -> float:
        """Divide a by b."""
        return a / b

    @tb.tool
    def configure(name: str, **options: Any) -> dict[str, Any]:
        """Configure with any options."""
        return {"name": name, **options}

    @tb.tool(timeout=0.2)
    def hang() -> str:
        """Hang until released."""
        release.wait(5)
        return "released"

    @tb.tool
    def echo(value: Any = None) -> Any:
        """Return the value as given."""
        return value

    @tb.tool
    def opaque() -> Opaque:
        """Return something that is not JSON."""
        return Opaque()

    @tb.tool
    def when() -> dict[str, Any]:
        """A dict holding a non-JSON value."""
        return {"at": dt.date(2024, 5, 1)}

    @tb.tool
    def long_text(n: int) -> str:
        """n characters of text."""
        return "x" * n

    @tb.tool
    async def async_weather(city: str) -> str:
        """Async weather."""
        await asyncio.sleep(0)
        return f"async sunny in {city}"

    @tb.tool
    async def async_fail() -> str:
        """Async failure."""
        raise RuntimeError("async broke")

    return tb


def call(tool: str, /, **args: Any) -> ToolCall:
    return ToolCall(tool, args)


# -- successful calls ---------------------------------------------------------------------------
def test_success(toolbox: Toolbox) -> None:
    result = invoke(toolbox, call("get_weather", city="Paris", days=2))
    assert isinstance(result, ToolResult)
    assert (result.ok, result.error) == (True, None)
    assert result.observation == "Paris|2|c"
    assert result.args == {"city": "Paris", "days": 2, "unit": "c"}
    assert result.cleaning == ['unit: filled in the default "c"']
    assert result.seconds >= 0


def test_string_args_are_stripped_and_recorded(toolbox: Toolbox) -> None:
    raw = call("get_weather", city="  Paris \n", unit="f")
    result = invoke(toolbox, raw)
    assert result.ok
    assert result.observation == "Paris|1|f"
    assert result.args == {"city": "Paris", "unit": "f", "days": 1}
    assert result.cleaning == ["city: stripped spaces", "days: filled in the default 1"]
    assert result.call == raw  # the call as the model wrote it is kept
    assert raw.args["city"] == "  Paris \n"


def test_stripping_happens_before_validation(toolbox: Toolbox) -> None:
    result = invoke(toolbox, call("get_weather", city="Rome", unit=" c "))
    assert result.ok, result.observation
    assert result.observation == "Rome|1|c"


def test_to_dict_is_json(toolbox: Toolbox) -> None:
    data = invoke(toolbox, call("get_weather", city=" Oslo")).to_dict()
    assert json.loads(json.dumps(data)) == data
    assert data["name"] == "get_weather"
    assert data["args"] == {"city": " Oslo"}
    assert data["cleaned_args"] == {"city": "Oslo", "days": 1, "unit": "c"}
    assert data["ok"] is True


def test_open_schema_accepts_extra_args(toolbox: Toolbox) -> None:
    result = invoke(toolbox, call("configure", name="x", verbose=True))
    assert result.ok, result.observation
    assert json.loads(result.observation) == {"name": "x", "verbose": True}


# -- unknown tools ------------------------------------------------------------------------------
def test_unknown_tool_lists_tools_and_suggests(toolbox: Toolbox) -> None:
    result = invoke(toolbox, call("get_wether", city="Paris"))
    assert (result.ok, result.error) == (False, "unknown_tool")
    assert result.observation.startswith("Error: there is no tool named 'get_wether'")
    assert "did you mean 'get_weather'?" in result.observation
    assert "Available tools: " + ", ".join(toolbox.names) + "." in result.observation


@pytest.mark.parametrize("written, meant, others", [
    ("get_time", "get_current_time", ["convert_time"]),
    ("search_file", "search_files", ["read_file", "list_files"]),
    ("weather", "get_weather", ["get_news", "whether_open"]),
])
def test_an_unknown_tool_is_matched_on_the_words_of_its_name(
    written: str, meant: str, others: list[str]
) -> None:
    """A name made of words is taken for the tool that shares most of them (seen: get_time
    taken for convert_time by spelling alone, while get_current_time was meant)."""
    tb = Toolbox()
    for name in [*others, meant]:
        tb.add(lambda: "x", name=name, description="A tool.")
    assert f"did you mean {meant!r}?" in invoke(tb, call(written)).observation


def test_unknown_tool_without_close_match(toolbox: Toolbox) -> None:
    result = invoke(toolbox, call("book_flight"))
    assert result.error == "unknown_tool"
    assert "did you mean" not in result.observation
    assert "get_weather" in result.observation
    assert result.observation.endswith("If none of them does what the task needs, call no tool: "
                                       "give the final answer yourself.")
    assert "give the final answer yourself" not in invoke(toolbox, call("get_wether")).observation


def test_unknown_tool_in_empty_toolbox() -> None:
    result = invoke(Toolbox(), call("anything"))
    assert result.error == "unknown_tool"
    assert "Available tools: none." in result.observation


# -- invalid arguments --------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "args", "expected_lines"),
    [
        pytest.param("get_weather", {}, ["- city: missing (required string)"], id="missing"),
        pytest.param(
            "get_weather", {"city": [3]}, ["- city: expected string, got [3]"], id="wrong-type",
        ),
        pytest.param(
            "get_weather", {"city": "a", "days": "two"}, ['- days: expected integer, got "two"'],
            id="string-for-integer",
        ),
        pytest.param(
            "get_weather", {"city": "a", "days": True}, ["- days: expected integer, got true"],
            id="bool-for-integer",
        ),
        pytest.param(
            "get_weather", {"city": "a", "unit": "k"},
            ['- unit: expected one of "c", "f", got "k"'],
            id="enum",
        ),
        pytest.param(
            "get_weather", {"city": "a", "dayz": 2},
            ["- dayz: unknown argument (did you mean 'days'?) (arguments: city, days, unit)"],
            id="unknown-arg",
        ),
        pytest.param(
            "get_time", {"zone": "UTC", "color": 1},
            ["- color: unknown argument (arguments: zone)"], id="unknown-arg-no-hint",
        ),
        pytest.param(
            "average", {"numbers": [1, "two"]}, ['- numbers.1: expected integer, got "two"'],
            id="nested",
        ),
        pytest.param(
            "get_weather", {"cty": "a", "days": "x", "unit": "k"},
            [
                "- cty: unknown argument (did you mean 'city'?) (arguments: city, days, unit)",
                "- city: missing (required string)",
                '- days: expected integer, got "x"',
                '- unit: expected one of "c", "f", got "k"',
            ],
            id="several",
        ),
    ],
)
def test_invalid_args_one_line_per_field(
    toolbox: Toolbox, name: str, args: dict[str, Any], expected_lines: list[str]
) -> None:
    result = invoke(toolbox, ToolCall(name, args))
    assert (result.ok, result.error) == (False, "invalid_args")
    lines = result.observation.splitlines()
    assert lines[0] == f"Error: invalid arguments for {name}:"
    assert lines[1:-1] == expected_lines
    assert lines[-1] == f"Call {name} again with corrected args."


def test_invalid_args_do_not_call_the_tool() -> None:
    calls: list[Any] = []
    tb = Toolbox()

    @tb.tool
    def record(n: int) -> str:
        """Record n."""
        calls.append(n)
        return "ok"

    assert invoke(tb, call("record", n="1 item")).error == "invalid_args"
    assert calls == []


# -- failures and timeouts ----------------------------------------------------------------------
def test_tool_exception_becomes_observation(toolbox: Toolbox) -> None:
    result = invoke(toolbox, call("divide", a=1, b=0))
    assert (result.ok, result.error) == (False, "tool_error")
    assert result.observation == "Error: ZeroDivisionError: division by zero"


def test_tool_timeout(toolbox: Toolbox) -> None:
    result = invoke(toolbox, call("hang"))
    assert (result.ok, result.error) == (False, "timeout")
    assert result.observation.startswith("Error: hang did not finish within 0.2 seconds")
    assert "released" not in result.observation


# -- results as text ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("plain text", "plain text"),
        ({"temp": 22, "city": "北京"}, '{"temp": 22, "city": "北京"}'),
        ([1, 2.5, None], "[1, 2.5, null]"),
        (42, "42"),
        (2.5, "2.5"),
        (True, "true"),
        (None, "(the tool returned no result)"),
        ("", "(the tool returned an empty string)"),
        ("  \n", "(the tool returned an empty string)"),
        (Opaque(), "<Opaque thing>"),
        ({"at": dt.date(2024, 5, 1)}, "{'at': datetime.date(2024, 5, 1)}"),
    ],
    ids=repr,
)
def test_format_result(value: Any, expected: str) -> None:
    assert format_result(value) == expected


@pytest.mark.parametrize(
    ("name", "args", "expected"),
    [
        ("echo", {"value": {"a": [1, 2]}}, '{"a": [1, 2]}'),
        ("echo", {}, "(the tool returned no result)"),
        ("opaque", {}, "<Opaque thing>"),
        ("when", {}, "{'at': datetime.date(2024, 5, 1)}"),
        ("average", {"numbers": [1, 2]}, "1.5"),
    ],
)
def test_non_string_results_through_invoke(
    toolbox: Toolbox, name: str, args: dict[str, Any], expected: str
) -> None:
    result = invoke(toolbox, ToolCall(name, args))
    assert result.ok
    assert result.observation == expected


def test_long_result_is_cut_with_marker(toolbox: Toolbox) -> None:
    result = invoke(toolbox, call("long_text", n=250), max_chars=100)
    assert result.ok
    head, marker = result.observation.split("\n", 1)
    assert head == "x" * 100
    assert "150 more characters cut" in marker


def test_default_cut_limit(toolbox: Toolbox) -> None:
    n = DEFAULT_MAX_OBSERVATION_CHARS + 10
    result = invoke(toolbox, call("long_text", n=n))
    assert result.observation.startswith("x" * DEFAULT_MAX_OBSERVATION_CHARS + "\n")
    assert "10 more characters cut" in result.observation
    exact = invoke(toolbox, call("long_text", n=DEFAULT_MAX_OBSERVATION_CHARS))
    assert exact.observation == "x" * DEFAULT_MAX_OBSERVATION_CHARS


# -- async tools --------------------------------------------------------------------------------
def test_async_tool(toolbox: Toolbox) -> None:
    result = invoke(toolbox, call("async_weather", city="Lima"))
    assert result.ok
    assert result.observation == "async sunny in Lima"


def test_async_tool_exception(toolbox: Toolbox) -> None:
    result = invoke(toolbox, call("async_fail"))
    assert (result.ok, result.error) == (False, "tool_error")
    assert result.observation == "Error: RuntimeError: async broke"


# -- several calls ------------------------------------------------------------------------------
def test_invoke_all_keeps_order_and_isolates_failures(toolbox: Toolbox) -> None:
    calls = [
        call("get_weather", city="Paris"),
        call("divide", a=1, b=0),
        call("nope"),
        call("get_weather", city=None),
        call("async_weather", city="Rome"),
        call("get_time", zone="UTC"),
    ]
    results = invoke_all(toolbox, calls)
    assert [r.call for r in results] == calls
    assert [r.error for r in results] == [
        None, "tool_error", "unknown_tool", "invalid_args", None, None,
    ]
    assert results[0].observation == "Paris|1|c"
    assert results[4].observation == "async sunny in Rome"
    assert results[5].observation == "noon in UTC"


def test_invoke_all_order_is_the_given_order_not_completion_order() -> None:
    second_done = threading.Event()
    tb = Toolbox()

    @tb.tool
    def first() -> str:
        """Waits for the second call to finish."""
        return f"first saw second done: {second_done.wait(5)}"

    @tb.tool
    def second() -> str:
        """Finishes at once."""
        second_done.set()
        return "second"

    results = invoke_all(tb, [call("first"), call("second")])
    assert [r.observation for r in results] == ["first saw second done: True", "second"]


def test_invoke_all_with_timeout_among_calls(toolbox: Toolbox) -> None:
    results = invoke_all(toolbox, [call("hang"), call("get_time", zone="CET")])
    assert [r.error for r in results] == ["timeout", None]
    assert results[1].observation == "noon in CET"


def test_invoke_all_single_and_empty(toolbox: Toolbox) -> None:
    (only,) = invoke_all(toolbox, [call("get_time", zone="UTC")])
    assert only.observation == "noon in UTC"
    assert invoke_all(toolbox, []) == []


def test_invoke_all_respects_max_chars(toolbox: Toolbox) -> None:
    results = invoke_all(
        toolbox, [call("long_text", n=300), call("long_text", n=50)], max_chars=100
    )
    assert "200 more characters cut" in results[0].observation
    assert results[1].observation == "x" * 50


# -- schema-driven cleaning ---------------------------------------------------------------------
COERCION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "n": {"type": "integer"},
        "x": {"type": "number"},
        "flag": {"type": "boolean"},
        "label": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "ids": {"type": "array", "items": {"type": "integer"}},
        "unit": {"enum": ["celsius", "fahrenheit"]},
        "maybe": {"type": ["integer", "null"]},
        "opts": {"type": "object", "properties": {"depth": {"type": "integer"}}},
        "mode": {"type": "string", "default": "fast"},
    },
}


@pytest.mark.parametrize(
    ("args", "cleaned", "changes"),
    [
        ({"n": "5"}, {"n": 5}, ['n: "5" -> 5']),
        ({"n": " -12 "}, {"n": -12}, ['n: " -12 " -> -12']),
        ({"n": 3.0}, {"n": 3}, ["n: 3.0 -> 3"]),
        ({"x": "2.5"}, {"x": 2.5}, ['x: "2.5" -> 2.5']),
        ({"x": "4"}, {"x": 4}, ['x: "4" -> 4']),
        ({"x": "1e3"}, {"x": 1000.0}, ['x: "1e3" -> 1000.0']),
        ({"flag": "true"}, {"flag": True}, ['flag: "true" -> true']),
        ({"flag": "False"}, {"flag": False}, ['flag: "False" -> false']),
        ({"label": 42}, {"label": "42"}, ['label: 42 -> "42"']),
        ({"label": "  hi "}, {"label": "hi"}, ["label: stripped spaces"]),
        ({"tags": "red"}, {"tags": ["red"]}, ['tags: "red" -> ["red"]']),
        ({"tags": '["a", "b"]'}, {"tags": ["a", "b"]},
         ['tags: "[\\"a\\", \\"b\\"]" -> ["a", "b"]']),
        ({"ids": ["1", 2]}, {"ids": [1, 2]}, ['ids.0: "1" -> 1']),
        ({"ids": 7}, {"ids": [7]}, ["ids: 7 -> [7]"]),
        ({"unit": "Celsius"}, {"unit": "celsius"}, ['unit: "Celsius" -> "celsius"']),
        ({"unit": " FAHRENHEIT"}, {"unit": "fahrenheit"}, ['unit: " FAHRENHEIT" -> "fahrenheit"']),
        ({"maybe": "8"}, {"maybe": 8}, ['maybe: "8" -> 8']),
        ({"maybe": None}, {"maybe": None}, []),
        ({"opts": '{"depth": "2"}'}, {"opts": {"depth": 2}},
         ['opts: "{\\"depth\\": \\"2\\"}" -> {"depth": "2"}', 'opts.depth: "2" -> 2']),
    ],
)
def test_clean_args_coerces_where_the_schema_says(
    args: dict[str, Any], cleaned: dict[str, Any], changes: list[str]
) -> None:
    schema = {**COERCION_SCHEMA, "properties": {
        k: v for k, v in COERCION_SCHEMA["properties"].items() if k != "mode"
    }}
    got, made = clean_args(schema, args)
    assert got == cleaned
    assert [type(v) for v in got.values()] == [type(v) for v in cleaned.values()]
    assert made == changes


@pytest.mark.parametrize(
    "args",
    [
        {"n": "5 apples"}, {"n": "2.5"}, {"n": "five"}, {"n": True}, {"x": "1,5"}, {"x": "nan"},
        {"flag": "yes"}, {"flag": 1}, {"label": True}, {"unit": "kelvin"}, {"tags": "[broken"},
        {"ids": '{"a": 1}'},
    ],
)
def test_clean_args_leaves_what_it_cannot_convert_safely(args: dict[str, Any]) -> None:
    got, _ = clean_args(COERCION_SCHEMA, args)
    key = next(iter(args))
    assert got[key] == args[key] and type(got[key]) is type(args[key])
    assert check_args(COERCION_SCHEMA, got), "validation must still reject it"


def test_clean_args_fills_defaults_without_sharing_them() -> None:
    schema = {"type": "object", "properties": {"tags": {"type": "array", "default": []}}}
    first, changes = clean_args(schema, {})
    assert first == {"tags": []} and changes == ["tags: filled in the default []"]
    first["tags"].append("x")
    assert clean_args(schema, {})[0] == {"tags": []}


@pytest.mark.parametrize(("spec", "filled"), [
    ({"type": "string", "default": None}, {}),  # BFCL's "optional, no value" (null)
    ({"type": "boolean", "default": "false"}, {}),  # a string for a boolean
    ({"type": "string", "enum": ["ASC", "DESC"], "default": "asc"}, {}),
    ({"type": ["string", "null"], "default": None}, {"v": None}),
    ({"type": "number", "default": 5}, {"v": 5}),
    ({"enum": ["EQ", "CO"], "default": "EQ"}, {"v": "EQ"}),
    ({"default": {"any": "thing"}}, {"v": {"any": "thing"}}),
])
def test_clean_args_fills_only_defaults_that_fit_their_schema(
    spec: dict[str, Any], filled: dict[str, Any]
) -> None:
    schema = {"type": "object", "properties": {"v": spec}}
    got, changes = clean_args(schema, {})
    assert got == filled
    assert len(changes) == len(filled)
    assert check_args(schema, got) == []  # a call leaving the argument out stays valid


def test_enum_match_is_exact_when_case_is_ambiguous() -> None:
    schema = {"type": "object", "properties": {"v": {"enum": ["A", "a"]}}}
    assert clean_args(schema, {"v": "a"})[0] == {"v": "a"}
    two = {"type": "object", "properties": {"v": {"enum": ["Ab", "aB"]}}}
    assert clean_args(two, {"v": "ab"})[0] == {"v": "ab"}  # two candidates: no guess


def test_coercion_reaches_the_tool_and_is_recorded(toolbox: Toolbox) -> None:
    result = invoke(toolbox, call("get_weather", city="Oslo", days="3", unit="F"))
    assert result.ok, result.observation
    assert result.observation == "Oslo|3|f"
    assert result.cleaning == ['days: "3" -> 3', 'unit: "F" -> "f"']
    assert result.call.args == {"city": "Oslo", "days": "3", "unit": "F"}


def test_scalar_becomes_a_one_element_list(toolbox: Toolbox) -> None:
    result = invoke(toolbox, call("average", numbers="4"))
    assert result.ok and result.observation == "4.0"
    assert result.cleaning == ['numbers: "4" -> ["4"]', 'numbers.0: "4" -> 4']


@pytest.mark.parametrize(("tool", "args", "kinds"), [
    ("get_weather", {"city": " Oslo", "days": "3", "unit": "F"},
     ["city: stripped spaces", "days: string -> integer",
      "unit: the letter case of a listed value"]),
    ("get_weather", {"city": "Oslo"},
     ["days: filled in the default", "unit: filled in the default"]),
    ("average", {"numbers": "4"}, ["numbers: string -> array", "numbers.0: string -> integer"]),
    ("configure", {"name": "x", "secret 4243": " y "}, ["*: stripped spaces"]),
])
def test_cleaning_kinds_hold_no_values(toolbox: Toolbox, tool: str, args: dict[str, Any],
                                       kinds: list[str]) -> None:
    """The changes without the values, for telemetry without content (the same number of
    changes, in the same order, as in words)."""
    result = invoke(toolbox, call(tool, **args))
    assert result.cleaning_kinds == kinds
    assert len(result.cleaning) == len(kinds)
    assert ToolResult.from_dict(result.to_dict()).cleaning_kinds == kinds  # saved with the run


# -- approval -----------------------------------------------------------------------------------
@pytest.fixture
def guarded() -> tuple[Toolbox, list[str]]:
    ran: list[str] = []
    tb = Toolbox()

    @tb.tool(requires_approval=True)
    def delete_file(path: str) -> str:
        """Delete a file."""
        ran.append(path)
        return f"deleted {path}"

    @tb.tool
    def look(path: str) -> str:
        """Look at a file."""
        ran.append(f"look {path}")
        return "a file"

    return tb, ran


def test_approved_call_runs_with_cleaned_args(guarded: tuple[Toolbox, list[str]]) -> None:
    tb, ran = guarded
    asked: list[tuple[str, dict[str, Any]]] = []

    def approve(tool: Any, args: dict[str, Any]) -> bool:
        asked.append((tool.name, args))
        return True

    result = invoke(tb, call("delete_file", path=" a.txt "), approver=approve)
    assert result.ok and result.observation == "deleted a.txt"
    assert asked == [("delete_file", {"path": "a.txt"})]
    assert ran == ["a.txt"]


def test_declined_call_is_an_observation(guarded: tuple[Toolbox, list[str]]) -> None:
    tb, ran = guarded
    result = invoke(tb, call("delete_file", path="a.txt"), approver=lambda tool, args: False)
    assert (result.ok, result.error) == (False, "declined")
    assert result.observation.startswith(
        'Error: the user declined to run delete_file {"path": "a.txt"}.'
    )
    assert ran == []


def test_tools_without_the_flag_are_not_asked(guarded: tuple[Toolbox, list[str]]) -> None:
    tb, ran = guarded
    result = invoke(tb, call("look", path="b"), approver=lambda tool, args: pytest.fail("asked"))
    assert result.ok and ran == ["look b"]


def test_no_approver_means_not_run(guarded: tuple[Toolbox, list[str]]) -> None:
    tb, ran = guarded
    result = invoke(tb, call("delete_file", path="a.txt"))
    assert result.error == "declined"
    assert "needs the user's approval" in result.observation
    assert ran == []


def test_failing_approver_declines(guarded: tuple[Toolbox, list[str]]) -> None:
    tb, ran = guarded

    def broken(tool: Any, args: dict[str, Any]) -> bool:
        raise OSError("no terminal")

    result = invoke(tb, call("delete_file", path="a.txt"), approver=broken)
    assert result.error == "declined"
    assert "OSError: no terminal" in result.observation
    assert ran == []


def test_invalid_args_are_not_sent_for_approval(guarded: tuple[Toolbox, list[str]]) -> None:
    tb, _ = guarded
    result = invoke(tb, call("delete_file"), approver=lambda tool, args: pytest.fail("asked"))
    assert result.error == "invalid_args"


def test_parallel_approvals_are_asked_in_order_before_anything_runs(
    guarded: tuple[Toolbox, list[str]],
) -> None:
    tb, ran = guarded
    asked: list[str] = []

    def approve(tool: Any, args: dict[str, Any]) -> bool:
        assert ran == [], "a call ran before all approvals were asked"
        asked.append(args["path"])
        return args["path"] != "b"

    calls = [call("delete_file", path=p) for p in "abc"]
    results = invoke_all(tb, calls, approver=approve)
    assert asked == ["a", "b", "c"]
    assert [r.error for r in results] == [None, "declined", None]
    assert sorted(ran) == ["a", "c"]


# -- asyncio ------------------------------------------------------------------------------------
def test_ainvoke_all_mixes_sync_and_async_tools_in_order(toolbox: Toolbox) -> None:
    calls = [
        call("async_weather", city="Rome"), call("get_time", zone="UTC"), call("async_fail"),
        call("nope"), call("divide", a="6", b=3),
    ]
    results = asyncio.run(ainvoke_all(toolbox, calls))
    assert [r.observation for r in results] == [
        "async sunny in Rome", "noon in UTC", "Error: RuntimeError: async broke",
        results[3].observation, "2.0",
    ]
    assert results[3].error == "unknown_tool"
    assert results[4].cleaning == ['a: "6" -> 6']


def test_ainvoke_all_times_out_async_and_sync_tools(toolbox: Toolbox) -> None:
    tb = Toolbox()

    @tb.tool(timeout=0.1)
    async def stuck() -> str:
        """Never finishes."""
        await asyncio.sleep(30)
        return "done"

    tb.add_tool(toolbox["hang"])
    results = asyncio.run(ainvoke_all(tb, [call("stuck"), call("hang"), call("stuck")]))
    assert [r.error for r in results] == ["timeout", "timeout", "timeout"]
    assert results[0].observation.startswith("Error: stuck did not finish within 0.1 seconds")


def test_ainvoke_all_bounds_concurrency() -> None:
    tb = Toolbox()
    running = {"now": 0, "max": 0}

    @tb.tool
    async def work(i: int) -> int:
        """Work a little."""
        running["now"] += 1
        running["max"] = max(running["max"], running["now"])
        await asyncio.sleep(0.01)
        running["now"] -= 1
        return i

    results = asyncio.run(ainvoke_all(tb, [call("work", i=i) for i in range(9)], max_workers=3))
    assert [r.observation for r in results] == [str(i) for i in range(9)]
    assert running["max"] == 3


def test_ainvoke_all_checks_arguments_off_the_event_loop_and_asks_approvals_on_it(
    monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hostile input (issue 38, item 1): the arguments were checked on the event loop, so a
    costly schema held every other task of the loop (every client of ``serve``)."""
    import react_agent.tools._invoker as invoker

    threads: dict[str, set[int]] = {"check": set(), "approve": set()}
    checked = invoker._problems

    def spy(schema: dict[str, Any], args: dict[str, Any]) -> list[str]:
        threads["check"].add(threading.get_ident())
        return checked(schema, args)

    monkeypatch.setattr(invoker, "_problems", spy)
    tb = Toolbox()

    @tb.tool(requires_approval=True)
    def remove(path: str) -> str:
        """Remove a file."""
        return f"removed {path}"

    def approve(tool: Any, args: dict[str, Any]) -> bool:
        threads["approve"].add(threading.get_ident())
        return True

    async def run() -> tuple[int, list[ToolResult]]:
        results = await ainvoke_all(tb, [call("remove", path="a"), call("remove", path="b")],
                                    approver=approve)
        return threading.get_ident(), results

    loop_thread, results = asyncio.run(run())
    assert [r.observation for r in results] == ["removed a", "removed b"]
    assert threads["check"] and loop_thread not in threads["check"]
    assert threads["approve"] == {loop_thread}


def test_a_tool_with_a_timeout_and_a_backtracking_pattern_is_refused_within_the_budget(
    monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hostile input (issue 38, item 5): the pattern ran before the call's timeout applied,
    for as long as it backtracked. The check has its own budget: past it the call is refused
    as invalid, and the tool never runs."""
    from react_agent.tools.schema import _validation as _schema

    monkeypatch.setattr(_schema, "VALIDATION_SECONDS", 0.2)
    ran: list[str] = []
    tb = Toolbox()
    tb.add(lambda key: ran.append(key), name="lookup", description="Look a key up.", timeout=5,
           parameters={
        "type": "object", "properties": {"key": {"type": "string", "pattern": "^(a|a)*$"}},
        "required": ["key"]})
    for results in (invoke_all(tb, [call("lookup", key="a" * 27 + "!")]),
                    asyncio.run(ainvoke_all(tb, [call("lookup", key="a" * 27 + "!")]))):
        [result] = results
        assert result.error == "invalid_args" and not result.ok
        assert "could not be checked against the tool's schema within 0.2 s" in \
            result.observation
        assert "takes too long" in result.observation and "not run" in result.observation
    assert ran == []
    assert invoke(tb, call("lookup", key="aaa")).ok and ran == ["aaa"]


def test_cleaning_many_values_against_a_long_enum_stays_within_the_budget(
    monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cleaning compares a value outside an ``enum`` with each of its values: many values and
    a long enum multiply. The cleaning counts against the call's budget too."""
    from react_agent.tools.schema import _validation as _schema

    monkeypatch.setattr(_schema, "VALIDATION_SECONDS", 0.2)
    tb = Toolbox()
    tb.add(lambda tags: len(tags), name="tag", description="Tag things.", parameters={
        "type": "object", "properties": {"tags": {"type": "array", "items": {
            "type": "string", "enum": [f"tag{i}" for i in range(5000)]}}}})
    result = invoke(tb, call("tag", tags=[f"other{i}" for i in range(20_000)]))
    assert result.error == "invalid_args" and "could not be checked" in result.observation
    assert "cleaning the arguments" in result.observation


# -- helpers the agent uses for unusable replies -------------------------------------------------


def test_boolean_subschemas_are_validated_not_a_crash() -> None:
    """``true`` (anything) and ``false`` (nothing) are schemas too, and a client's tool may use
    them for a property."""
    tb = Toolbox()
    tb.add(lambda **kw: "ran", name="t", description="d", parameters={
        "type": "object", "required": ["b"],
        "properties": {"a": {"type": "string"}, "b": False, "c": True,
                       "e": {"type": "object", "properties": {"x": False}}}})
    assert json.loads(call_example(tb["t"]))["action"]["args"] == {"b": "<value>"}
    missing = invoke(tb, ToolCall("t", {"a": " x ", "c": [1]}))
    assert missing.error == "invalid_args" and "- b: missing" in missing.observation
    refused = invoke(tb, ToolCall("t", {"b": 1, "e": {"x": 2}}))
    assert refused.error == "invalid_args"
    assert "- b: no value is allowed here; leave it out" in refused.observation
    assert "- e: holds a value where the schema allows none, got 2" in refused.observation
    assert "False schema" not in refused.observation
    assert "  - b (no value is allowed: leave it out)" in tb.describe()


# -- control characters in arguments -----------------------------------------------------------
def test_a_control_character_in_an_argument_is_refused_not_passed_on() -> None:
    seen: list[str] = []
    tb = Toolbox()

    @tb.tool
    def search(query: str) -> str:
        """Search."""
        seen.append(query)
        return "found"

    result = invoke(tb, ToolCall("search", {"query": "Ume\u0000e5"}))
    assert (result.ok, result.error) == (False, "invalid_args")
    assert "query: contains the control character U+0000 at character 3" in result.observation
    assert seen == []
    assert invoke(tb, ToolCall("search", {"query": "line one\nline two\tand a tab\r"})).ok


# -- where a tool runs -------------------------------------------------------------------------
def test_a_sqlite_connection_made_before_the_run_works_in_a_tool() -> None:
    """The classic text-to-SQL agent: the connection is opened at start-up, in this thread, and
    sqlite3 refuses to be used from any other thread."""
    import sqlite3

    from react_agent import Agent
    from react_agent.models import ScriptedModel

    conn = sqlite3.connect(":memory:")
    conn.execute("create table city (name text, people integer)")
    conn.executemany("insert into city values (?, ?)", [("Oslo", 709_000), ("Bergen", 291_000)])
    tb = Toolbox()

    @tb.tool
    def run_sql(query: str) -> list[list[Any]]:
        """Run a read-only SQL query on the city table (name, people)."""
        return [list(row) for row in conn.execute(query)]

    call = json.dumps({"thought": "Ask the table.", "action": {
        "name": "run_sql", "args": {"query": "select name from city order by people desc"}}})
    done = json.dumps({"thought": "Done.", "action": {"final_answer": "Oslo"}})
    result = Agent(ScriptedModel([call, done]), tb).run("Which city is bigger?")
    assert result.steps[0].results[0].ok, result.steps[0].observations
    assert result.steps[0].observations == ['[["Oslo"], ["Bergen"]]']


def test_a_tool_runs_in_the_callers_thread_unless_it_has_a_timeout() -> None:
    tb = Toolbox()
    local = threading.local()
    local.user = "ana"

    @tb.tool
    def here() -> list[Any]:
        """Where it runs."""
        return [threading.get_ident(), getattr(local, "user", None)]

    @tb.tool(timeout=5)
    def limited() -> int:
        """Where a tool with a timeout runs."""
        return threading.get_ident()

    me = threading.get_ident()
    assert json.loads(invoke(tb, ToolCall("here", {})).observation) == [me, "ana"]
    assert json.loads(invoke_all(tb, [ToolCall("here", {})])[0].observation) == [me, "ana"]
    assert int(invoke(tb, ToolCall("limited", {})).observation) != me


def test_a_tool_with_a_timeout_still_times_out_and_parallel_calls_still_overlap() -> None:
    tb = Toolbox()
    both_running = threading.Barrier(2, timeout=5)

    @tb.tool
    def meet(who: str) -> str:
        """Returns only once another call is running at the same time."""
        both_running.wait()
        return who

    @tb.tool(timeout=0.2)
    def stuck() -> str:
        """Never returns in time."""
        threading.Event().wait(2)
        return "late"

    results = invoke_all(tb, [ToolCall("meet", {"who": "a"}), ToolCall("meet", {"who": "b"})])
    assert [r.observation for r in results] == ["a", "b"]  # each waited for the other
    assert invoke(tb, ToolCall("stuck", {})).error == "timeout"


def test_errors_and_exit_in_the_callers_thread_are_observations() -> None:
    tb = Toolbox()

    @tb.tool
    def boom() -> str:
        """Fails."""
        raise ValueError("no data")

    @tb.tool
    def leave() -> str:
        """Exits."""
        raise SystemExit(3)

    assert invoke(tb, ToolCall("boom", {})).observation == "Error: ValueError: no data"
    assert invoke(tb, ToolCall("leave", {})).error == "tool_error"


def test_arguments_sent_to_the_wrong_tool_name_the_tool_they_fit() -> None:
    tb = Toolbox()

    @tb.tool
    def find_invoice(invoice_no: str) -> str:
        """An invoice by number."""
        return "paid"

    @tb.tool
    def find_person(name: str) -> str:
        """A person's phone number."""
        return "555-0101"

    @tb.tool
    def convert(amount: float, to: str) -> str:
        """Convert an amount."""
        return "1"

    wrong = invoke(tb, call("find_invoice", name="Ann Lee")).observation
    assert wrong.splitlines()[-1] == (
        "These arguments fit find_person as they are: call find_person instead if that is the "
        "tool the task needs; otherwise call find_invoice again with corrected args.")
    fits_none = invoke(tb, call("find_invoice", number="7")).observation
    assert fits_none.splitlines()[-1] == "Call find_invoice again with corrected args."
    partial = invoke(tb, call("find_person", amount=3)).observation  # convert also needs `to`
    assert partial.splitlines()[-1] == "Call find_person again with corrected args."


# -- hostile results and exceptions (issue 30, defect 6) ---------------------------------------
class ReprFails:
    def __repr__(self) -> str:
        raise RuntimeError("no repr")


class StrFails(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no str")


class Boom(BaseException):
    """Not an Exception: what a tool may still raise."""


class Sly(str):
    """A string whose methods raise: only its characters may be used."""

    def strip(self, chars: Any = None) -> str:
        raise RuntimeError("strip")

    def __format__(self, spec: str) -> str:
        raise RuntimeError("format")

    def __len__(self) -> int:
        raise RuntimeError("len")


class NamelessMeta(type):
    @property
    def __name__(cls) -> str:  # type: ignore[override]
        raise RuntimeError("no name")


class Nameless(Exception, metaclass=NamelessMeta):
    pass


def _nested(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


def _raise(exc: BaseException) -> Any:
    raise exc


UNSHOWABLE_RESULTS = [
    pytest.param(lambda: 10**5000, "(the tool returned an integer of about 5001 digits, too "
                 "long to show)", id="int-past-the-digit-limit"),
    pytest.param(ReprFails, "(the tool returned a ReprFails that cannot be shown as text: "
                 "RuntimeError)", id="repr-raises"),
    pytest.param(lambda: [1, ReprFails()], "(the tool returned a list that cannot be shown as "
                 "text: RuntimeError)", id="repr-raises-inside"),
    pytest.param(lambda: {"n": 10**5000}, "(the tool returned a dict that cannot be shown as "
                 "text: ValueError)", id="json-and-repr-fail"),
    pytest.param(lambda: _nested(5000), "(the tool returned a list that cannot be shown as text: "
                 "RecursionError)", id="nested-too-deep"),
    pytest.param(lambda: Sly("plain text"), "plain text", id="str-subclass"),
]


@pytest.mark.parametrize(("make", "expected"), UNSHOWABLE_RESULTS)
@pytest.mark.parametrize("timeout", [None, 5.0], ids=["caller-thread", "worker-thread"])
def test_a_result_that_cannot_be_shown_is_a_placeholder_naming_its_type(
    make: Any, expected: str, timeout: float | None,
) -> None:
    tb = Toolbox()

    def produce() -> Any:
        """Return something awkward."""
        return make()

    tb.add(produce, timeout=timeout)
    result = invoke(tb, call("produce"))
    assert (result.ok, result.observation) == (True, expected)
    assert type(result.observation) is str
    assert format_result(make()) == expected


UNSHOWABLE_ERRORS = [
    pytest.param(StrFails, "Error: StrFails (its message cannot be shown: RuntimeError)",
                 id="str-raises"),
    pytest.param(lambda: Boom("bang"), "Error: Boom: bang", id="base-exception"),
    pytest.param(GeneratorExit, "Error: GeneratorExit: ", id="generator-exit"),
    pytest.param(lambda: SystemExit(3), "Error: SystemExit: 3", id="system-exit"),
    pytest.param(lambda: ValueError(10**5000), "Error: ValueError (its message cannot be "
                 "shown: ValueError)", id="message-past-the-digit-limit"),
    pytest.param(lambda: ValueError(Sly("sly")), "Error: ValueError: sly", id="str-subclass"),
    pytest.param(Nameless, "Error: Nameless: ", id="metaclass-name-raises"),
]


@pytest.mark.parametrize(("make", "expected"), UNSHOWABLE_ERRORS)
@pytest.mark.parametrize("kind", ["caller-thread", "worker-thread", "async", "async-in-loop"])
def test_whatever_a_tool_raises_but_ctrl_c_is_an_observation(
    make: Any, expected: str, kind: str,
) -> None:
    tb = Toolbox()

    def fail() -> str:
        """Fail awkwardly."""
        raise make()

    async def afail() -> str:
        """Fail awkwardly, asynchronously."""
        raise make()

    tb.add(afail if kind.startswith("async") else fail, name="fail",
           timeout=5.0 if kind == "worker-thread" else None)
    if kind == "async-in-loop":
        (result,) = asyncio.run(ainvoke_all(tb, [call("fail")]))
    else:
        result = invoke(tb, call("fail"))
    assert (result.ok, result.error, result.observation) == (False, "tool_error", expected)


@pytest.mark.parametrize("timeout", [None, 5.0], ids=["caller-thread", "worker-thread"])
def test_an_agent_run_survives_unshowable_results_and_ends_on_ctrl_c(
    timeout: float | None,
) -> None:
    from react_agent import Agent, ScriptedModel

    tb = Toolbox()

    def awkward(kind: str) -> Any:
        """Return or raise something awkward."""
        if kind == "interrupt":
            raise KeyboardInterrupt
        if kind in ("str", "boom"):
            raise {"str": StrFails(), "boom": Boom()}[kind]
        return {"int": 10**5000, "repr": ReprFails(), "deep": _nested(5000)}[kind]

    tb.add(awkward, timeout=timeout)
    done = json.dumps({"thought": "Done.", "action": {"final_answer": "ok"}})
    for kind in ("int", "repr", "deep", "str", "boom"):
        act = json.dumps({"thought": "Try.", "action": {"name": "awkward", "args": {"kind": kind}}})
        result = Agent(ScriptedModel([act, done]), tb).run("Go.")
        assert result.status == "final_answer", kind
        assert len(result.steps[0].observations) == 1
    act = json.dumps({"thought": "Try.", "action": {"name": "awkward",
                                                    "args": {"kind": "interrupt"}}})
    assert Agent(ScriptedModel([act, done]), tb).run("Go.").status == "interrupted"


def test_an_async_tool_raising_timeout_error_itself_is_its_error_not_a_timeout() -> None:
    tb = Toolbox()

    @tb.tool
    async def fetch() -> str:
        """Fetch something (no timeout of its own)."""
        raise TimeoutError("the server did not answer")

    @tb.tool(timeout=5)
    async def limited() -> str:
        """Fetch with a timeout."""
        raise TimeoutError("the server did not answer")

    for name in ("fetch", "limited"):
        result = invoke(tb, call(name))
        assert (result.error, result.observation) == (
            "tool_error", "Error: TimeoutError: the server did not answer")
        (result,) = asyncio.run(ainvoke_all(tb, [call(name)]))
        assert (result.error, result.observation) == (
            "tool_error", "Error: TimeoutError: the server did not answer")


def test_an_async_tool_exiting_does_not_stop_the_event_loop() -> None:
    tb = Toolbox()

    @tb.tool(timeout=5)
    async def leave() -> str:
        """Exits."""
        raise SystemExit(2)

    async def main() -> list[ToolResult]:
        results = await ainvoke_all(tb, [call("leave"), call("leave")])
        await asyncio.sleep(0)  # the loop still runs
        return results

    assert [r.observation for r in asyncio.run(main())] == ["Error: SystemExit: 2"] * 2


def test_a_hostile_approver_declines() -> None:
    tb = Toolbox()

    @tb.tool(requires_approval=True)
    def delete_file(path: str) -> str:
        """Delete a file."""
        return "deleted"

    class NoTruth:
        def __bool__(self) -> bool:
            raise RuntimeError("no answer")

    approvers: list[tuple[Any, str]] = [
        (lambda tool, args: _raise(StrFails()),
         "(StrFails (its message cannot be shown: RuntimeError))"),
        (lambda tool, args: _raise(Boom("bang")), "(Boom: bang)"),
    ]
    for approver, why in approvers:
        result = invoke(tb, call("delete_file", path="a"), approver=approver)
        assert result.error == "declined"
        assert result.observation == \
            f"Error: delete_file was not run: asking for approval failed {why}."
    for answer in (NoTruth(), "n", "no", 1, None):  # only True approves
        result = invoke(tb, call("delete_file", path="a"), approver=lambda t, a, x=answer: x)
        assert result.error == "declined" and "the user declined" in result.observation
    with pytest.raises(KeyboardInterrupt):
        invoke(tb, call("delete_file", path="a"),
               approver=lambda tool, args: _raise(KeyboardInterrupt()))


def test_every_observation_is_bounded_failures_included() -> None:
    tb = Toolbox()

    @tb.tool(requires_approval=True)
    def send(text: str) -> str:
        """Send a text."""
        return "sent"

    @tb.tool
    def short(text: Annotated[str, Field(max_length=5)]) -> str:
        """Take a short text."""
        return text

    @tb.tool
    def fail(text: str) -> str:
        """Fail with the text."""
        raise ValueError(text)

    huge = "x" * 100_000
    cases = [
        invoke(tb, call("send", text=huge), max_chars=200, approver=lambda tool, args: False),
        invoke(tb, call("send", text=huge), max_chars=200,
               approver=lambda tool, args: _raise(ValueError(huge))),
        invoke(tb, call("short", text=huge), max_chars=200),
        invoke(tb, call("fail", text=huge), max_chars=200),
        invoke(tb, ToolCall("n" * 100_000, {}), max_chars=200),
    ]
    for result in cases:
        assert not result.ok
        assert len(result.observation) <= 200 + len("\n[... 999999 more characters cut; the "
                                                     "result was too long]"), result.error


def test_surrogates_in_a_result_become_text_any_encoding_can_write() -> None:
    tb = Toolbox()

    @tb.tool
    def odd(which: str) -> Any:
        """Return text with surrogates."""
        return {"lone": "a\ud800b", "pair": "smile \ud83d\ude00", "list": ["\udfff"],
                "long": "smile \ud83d\ude00!"}[which]

    assert invoke(tb, call("odd", which="lone")).observation == "a\ufffdb"
    assert invoke(tb, call("odd", which="pair")).observation == "smile \U0001f600"
    assert invoke(tb, call("odd", which="list")).observation == '["\ufffd"]'
    for which in ("lone", "pair", "list"):
        invoke(tb, call("odd", which=which)).observation.encode("utf-8")
    cut = invoke(tb, call("odd", which="long"), max_chars=7).observation
    assert cut.startswith("smile \U0001f600\n[... 1 more")  # the pair is one character


# -- hostile arguments (issue 30, defect 7) ----------------------------------------------------
@pytest.mark.parametrize(
    "args",
    [
        {"n": "9" * 5000}, {"x": "1" * 5000}, {"x": "-" + "1" * 5000}, {"x": "1e999"},
        {"x": "-1e999"}, {"x": "1" * 400 + ".5"}, {"x": "1e-999"}, {"x": "0." + "0" * 400 + "1"},
        {"maybe": "9" * 5000}, {"ids": "[" + "9" * 5000 + "]"}, {"tags": "[" * 5000 + "]" * 5000},
        {"opts": '{"depth": ' + "[" * 5000 + "]" * 5000 + "}"}, {"xs": "[1e999]"},
        {"xs": "[NaN]"}, {"xs": "[-Infinity]"}, {"opts": '{"depth": 1e999}'},
    ],
    ids=lambda args: repr(args)[:40],
)
def test_clean_args_keeps_numbers_that_cannot_be_exact_or_finite_as_strings(
    args: dict[str, Any],
) -> None:
    schema = {**COERCION_SCHEMA, "properties": {
        **COERCION_SCHEMA["properties"], "xs": {"type": "array", "items": {"type": "number"}},
    }}
    got, _ = clean_args(schema, args)
    key = next(iter(args))
    assert got[key] == args[key] and type(got[key]) is str
    assert check_args(schema, got), "validation must report it"


def test_clean_args_converts_integers_exactly() -> None:
    digits = "1" * 30
    got, _ = clean_args(COERCION_SCHEMA, {"x": digits, "n": digits, "maybe": "-" + digits})
    assert got == {"x": int(digits), "n": int(digits), "maybe": -int(digits), "mode": "fast"}
    near_limit = "9" * 4300
    assert clean_args(COERCION_SCHEMA, {"n": near_limit})[0]["n"] == int(near_limit)
    # A whole float past 2**53 may not be the integer written: it is not turned into one.
    assert type(clean_args(COERCION_SCHEMA, {"n": 1e300})[0]["n"]) is float
    assert clean_args(COERCION_SCHEMA, {"n": 2.0**53})[0]["n"] == 2**53
    assert clean_args(COERCION_SCHEMA, {"x": "0e5", "n": "0"})[0] == {"x": 0, "n": 0, "mode":
                                                                     "fast"}


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (float("nan"), "x: NaN is not a finite number; send a plain number"),
        (float("inf"), "x: Infinity is not a finite number; send a plain number"),
        ([1.0, float("-inf")], "x.1: -Infinity is not a finite number; send a plain number"),
        (10**5000, "x: an integer of more than 4300 digits is too long to use; send a shorter "
         "number"),
        (_nested(5000), "(args): nested more than 64 levels deep; send them flatter"),
    ],
    ids=["nan", "inf", "nested-inf", "huge-int", "too-deep"],
)
def test_values_no_argument_can_mean_are_refused_before_the_tool(
    value: Any, problem: str,
) -> None:
    ran: list[Any] = []
    tb = Toolbox()

    @tb.tool
    def take(x: Any) -> str:
        """Take anything."""
        ran.append(x)
        return "taken"

    @tb.tool
    def halve(x: float) -> float:
        """Half of x."""
        ran.append(x)
        return x / 2

    for name in ("take", "halve"):
        result = invoke(tb, call(name, x=value))
        assert (result.ok, result.error) == (False, "invalid_args")
        assert result.observation.splitlines() == [
            f"Error: invalid arguments for {name}:", f"- {problem}",
            f"Call {name} again with corrected args."]
    assert ran == []


def test_a_thread_that_cannot_be_started_is_an_observation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tb = Toolbox()

    @tb.tool(timeout=5)
    def limited() -> str:
        """Runs in a worker thread."""
        return "ran"

    @tb.tool
    def plain() -> str:
        """Runs in a worker thread under asyncio."""
        return "ran"

    def no_thread(self: threading.Thread) -> None:
        raise RuntimeError("can't start new thread")

    async def no_worker(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(threading.Thread, "start", no_thread)
    monkeypatch.setattr(asyncio, "to_thread", no_worker)
    expected = "Error: RuntimeError: can't start new thread"
    assert invoke(tb, call("limited")).observation == expected
    assert [r.observation for r in invoke_all(tb, [call("limited"), call("limited")])] == \
        [expected] * 2
    assert [r.observation for r in asyncio.run(ainvoke_all(tb, [call("plain")]))] == [expected]


