"""The toolbox: schemas from signatures, registration forms, definition errors
and the plain-text rendering used in the system prompt."""

from __future__ import annotations

import asyncio
import dataclasses
import enum
from collections.abc import Mapping
from typing import Annotated, Any, Literal, Optional, TypedDict

import pytest
from pydantic import BaseModel, Field

from react_agent import Tool, Toolbox, ToolCall, ToolDefinitionError
from react_agent.tools import ToolSpecError
from react_agent.tools._invoker import invoke
from react_agent.tools._toolbox import DEFAULT_TOOL_TIMEOUT, schema_from_function


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclasses.dataclass
class City:
    name: str
    country: str = "FR"


class _Named(TypedDict):
    name: str


class CityTD(_Named, total=False):  # typing.TypedDict, which pydantic refuses before 3.12
    country: str


class CityModel(BaseModel):
    name: str
    country: str = "FR"


class Node(BaseModel):
    children: list[Node] = []


CITY_SCHEMA_TD = {"type": "object", "properties": {"name": {"type": "string"},
                                                    "country": {"type": "string"}},
                  "required": ["name"]}
CITY_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"},
                                                 "country": {"type": "string", "default": "FR"}},
               "required": ["name"]}


def _schema(func: Any) -> dict[str, Any]:
    return schema_from_function(func)


def _prop(hint: Any) -> dict[str, Any]:
    """The property schema built for one required parameter annotated with ``hint``."""

    def f(x):  # the annotation is set below
        """Doc."""

    f.__annotations__ = {"x": hint}
    return schema_from_function(f)["properties"]["x"]


# -- schema from signatures ---------------------------------------------------------------------
@pytest.mark.parametrize(
    ("hint", "expected"),
    [
        (str, {"type": "string"}),
        (int, {"type": "integer"}),
        (float, {"type": "number"}),
        (bool, {"type": "boolean"}),
        (list[str], {"type": "array", "items": {"type": "string"}}),
        (list[int], {"type": "array", "items": {"type": "integer"}}),
        (list, {"type": "array", "items": {}}),
        (dict, {"type": "object", "additionalProperties": True}),
        (dict[str, int], {"type": "object", "additionalProperties": {"type": "integer"}}),
        (tuple[int, ...], {"type": "array", "items": {"type": "integer"}}),
        (set[str], {"type": "array", "items": {"type": "string"}, "uniqueItems": True}),
        (Optional[int], {"type": ["integer", "null"]}),  # noqa: UP045 - testing Optional itself
        (int | None, {"type": ["integer", "null"]}),
        (list[int] | None, {"type": ["array", "null"], "items": {"type": "integer"}}),
        (Literal["c", "f"], {"type": "string", "enum": ["c", "f"]}),
        (Color, {"type": "string", "enum": ["red", "blue"]}),
        (Color | None, {"type": ["string", "null"], "enum": ["red", "blue", None]}),
        (Annotated[int, Field(description="Days ahead.", ge=1)],
         {"type": "integer", "description": "Days ahead.", "minimum": 1}),
        (City, CITY_SCHEMA),
        (CityTD, CITY_SCHEMA_TD),
        (CityModel, CITY_SCHEMA),
        (list[City], {"type": "array", "items": CITY_SCHEMA}),
        (Any, {}),
    ],
    ids=lambda v: getattr(v, "__name__", None) or repr(v)[:30],
)
def test_type_hint_to_schema(hint: Any, expected: dict[str, Any]) -> None:
    assert _prop(hint) == expected


def test_required_and_defaults() -> None:
    def search(query: str, limit: int = 5, unit: Literal["c", "f"] = "c",
               color: Color = Color.BLUE, tag: str | None = None) -> str:
        """Search."""
        return ""

    schema = _schema(search)
    assert schema["type"] == "object"
    assert schema["required"] == ["query"]
    props = schema["properties"]
    assert list(props) == ["query", "limit", "unit", "color", "tag"]
    assert "default" not in props["query"]
    assert props["limit"]["default"] == 5
    assert props["unit"]["default"] == "c"
    assert props["color"]["default"] == "blue"  # the Enum member's value, not the member
    assert props["tag"]["default"] is None
    assert "additionalProperties" not in schema


def test_no_required_key_when_all_optional() -> None:
    def f(a: int = 1) -> None:
        """Doc."""

    assert "required" not in _schema(f)


def test_non_json_default_is_not_recorded() -> None:
    sentinel = object()

    def f(a: Any = sentinel) -> None:
        """Doc."""

    schema = _schema(f)
    assert "default" not in schema["properties"]["a"]
    assert "required" not in schema


def test_var_keyword_makes_schema_open_and_var_positional_is_hidden() -> None:
    def f(a: str, *rest: str, **options: Any) -> None:
        """Doc."""

    schema = _schema(f)
    assert list(schema["properties"]) == ["a"]
    assert schema["additionalProperties"] is True


def test_var_positional_alone_keeps_schema_closed() -> None:
    def f(a: str, *rest: str) -> None:
        """Doc."""

    assert "additionalProperties" not in _schema(f)


def test_docstring_summary_and_google_args() -> None:
    toolbox = Toolbox()

    @toolbox.tool
    def get_weather(city: str, unit: str = "c") -> str:
        """Get the current weather
        for a city.

        Use it for any weather question.

        Args:
            city: The city name, e.g. "Beijing";
                pass only the name.
            unit (str): "c" or "f".

        Returns:
            A short text.
        """
        return ""

    tool = toolbox["get_weather"]
    assert tool.description == "Get the current weather for a city."
    props = tool.parameters["properties"]
    assert props["city"]["description"] == 'The city name, e.g. "Beijing"; pass only the name.'
    assert props["unit"]["description"] == '"c" or "f".'


def test_other_docstring_styles_and_field_descriptions() -> None:
    def find(query: str, limit: Annotated[int, Field(description="At most this many.")] = 5,
             ) -> str:
        """Find documents.

        :param query: words to look for
        :param limit: ignored: the Field's description comes first
        """
        return ""

    tool = Toolbox().add(find)
    assert tool.description == "Find documents."
    assert tool.parameters["properties"] == {
        "query": {"type": "string", "description": "words to look for"},
        "limit": {"type": "integer", "description": "At most this many.", "default": 5},
    }


def test_structured_arguments_reach_the_tool_as_the_types_it_declares() -> None:
    got: list[Any] = []
    toolbox = Toolbox()

    @toolbox.tool
    def plan(stops: list[City], owner: CityModel, note: CityTD, when: complex = 0j) -> str:
        """Plan a trip."""
        got.extend([stops, owner, note, when])
        return "ok"

    @toolbox.tool
    async def aplan(owner: CityModel) -> str:
        """Plan a trip, asynchronously."""
        return f"{type(owner).__name__} {owner.name}"

    assert plan is not toolbox["plan"].func  # wrapped, to convert the arguments
    call = {"stops": [{"name": "Lyon"}], "owner": {"name": "Ann", "country": "BE"},
            "note": {"name": "x"}, "when": "1+2j"}
    assert invoke(toolbox, ToolCall("plan", call)).observation == "ok"
    assert got == [[City("Lyon")], CityModel(name="Ann", country="BE"), {"name": "x"}, 1 + 2j]
    result = invoke(toolbox, ToolCall("aplan", {"owner": {"name": "Bo"}}))
    assert result.observation == "CityModel Bo"
    assert asyncio.run(toolbox["aplan"].func(owner={"name": "Cy"})) == "CityModel Cy"
    got.clear()
    bad = invoke(toolbox, ToolCall("plan", {**call, "stops": [{"country": "FR"}]}))
    assert bad.error == "invalid_args" and "name: missing" in bad.observation  # from the schema
    assert got == []


def test_plain_json_arguments_are_passed_unconverted() -> None:
    def f(x: int, tags: list[str], color: Color = Color.RED) -> str:
        """Doc."""
        return ""

    assert Toolbox().add(f).func is f


def test_a_recursive_model_is_refused_with_the_fix() -> None:
    def walk(tree: Node) -> str:
        """Walk a tree."""
        return ""

    with pytest.raises(ToolDefinitionError, match=r"walk\(tree\).*refers to itself.*parameters="):
        Toolbox().add(walk)


def test_explicit_description_overrides_docstring() -> None:
    toolbox = Toolbox()

    def f() -> None:
        """Docstring text."""

    tool = toolbox.add(f, description="  Explicit text.  ")
    assert tool.description == "Explicit text."


# -- registration forms -------------------------------------------------------------------------
def test_decorator_bare_returns_function_unchanged() -> None:
    toolbox = Toolbox()

    @toolbox.tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    assert add(2, 3) == 5
    assert toolbox.names == ["add"]
    tool = toolbox["add"]
    assert tool.func is add
    assert tool.timeout == DEFAULT_TOOL_TIMEOUT
    assert tool.parameters["required"] == ["a", "b"]


def test_decorator_with_options() -> None:
    toolbox = Toolbox()

    @toolbox.tool(name="weather.get", timeout=2.5, requires_approval=True, group="web")
    def get_weather(city: str) -> str:
        """Get the weather."""
        return city

    assert get_weather("x") == "x"
    assert toolbox.names == ["weather.get"]
    tool = toolbox["weather.get"]
    assert (tool.timeout, tool.requires_approval, tool.group) == (2.5, True, "web")


def test_add_with_explicit_parameters() -> None:
    toolbox = Toolbox()
    params = {
        "type": "object",
        "properties": {"q": {"type": "string", "description": "the query"}},
        "required": ["q"],
    }

    def anything(**kwargs: Any) -> str:
        return str(kwargs)

    tool = toolbox.add(anything, name="search", description="Search the web.", parameters=params)
    assert tool.parameters == params
    assert tool.name == "search"
    assert toolbox["search"] is tool


OPENAI_FUNCTION = {
    "name": "get_weather",
    "description": "Get the weather for a city.",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
}


@pytest.mark.parametrize(
    "spec",
    [{"type": "function", "function": OPENAI_FUNCTION}, OPENAI_FUNCTION],
    ids=["wrapped", "bare"],
)
def test_add_openai_tool(spec: dict[str, Any]) -> None:
    toolbox = Toolbox()

    def impl(city: str) -> str:
        return city

    tool = toolbox.add_openai_tool(spec, impl, timeout=3)
    assert tool.name == "get_weather"
    assert tool.description == "Get the weather for a city."
    assert tool.parameters == OPENAI_FUNCTION["parameters"]
    assert tool.func is impl
    assert tool.timeout == 3
    assert tool.openai_spec() == {"type": "function", "function": OPENAI_FUNCTION}


def test_add_openai_tool_without_parameters_means_no_args() -> None:
    toolbox = Toolbox()
    tool = toolbox.add_openai_tool(
        {"type": "function", "function": {"name": "now", "description": "Current time."}},
        lambda: "noon",
    )
    assert tool.parameters == {"type": "object", "properties": {}}


def test_add_openai_tool_without_name() -> None:
    with pytest.raises(ToolDefinitionError, match="function name"):
        Toolbox().add_openai_tool({"type": "function", "function": {}}, lambda: None)


# -- bad definitions ----------------------------------------------------------------------------
def _documented(x: str) -> str:
    """A documented tool."""
    return x


def _positional_only(x: str, /) -> str:
    """Positional-only parameter."""
    return x


class _Opaque:
    """A class pydantic knows nothing about."""


def _opaque_hint(x: _Opaque) -> str:
    """Unsupported type."""
    return str(x)


def _undocumented(x: str) -> str:
    return x


BAD_DEFINITIONS = [
    pytest.param(
        dict(func=_documented, parameters={"type": "string"}),
        r'"type": "object"', id="non-object-schema",
    ),
    pytest.param(
        dict(func=_documented, parameters=["x"]),
        r'"type": "object"', id="schema-not-a-dict",
    ),
    pytest.param(
        dict(func=_documented,
             parameters={"type": "object", "properties": {"x": {"type": "strnig"}}}),
        "not a valid JSON Schema", id="invalid-json-schema",
    ),
    pytest.param(
        dict(func=_documented,
             parameters={"type": "object", "properties": {"x": {}}, "required": ["x", "y"]}),
        r"\['y'\] are not in properties.*declare them", id="required-not-in-properties",
    ),
    pytest.param(
        dict(func=_undocumented),
        "no description; add a docstring or pass description=", id="missing-description",
    ),
    pytest.param(
        dict(func=_documented, description="   "),
        "no description", id="blank-description",
    ),
    pytest.param(
        dict(func=_documented, name="get weather"),
        "not usable: use 1-64 letters", id="name-with-space",
    ),
    pytest.param(
        dict(func=_documented, name="1tool"),
        "starting with a letter", id="name-starting-with-digit",
    ),
    pytest.param(
        dict(func=_documented, name="x" * 65),
        "1-64", id="name-too-long",
    ),
    pytest.param(
        dict(func=lambda x: x, description="Anonymous."),
        "pass name=", id="lambda-without-name",
    ),
    pytest.param(
        dict(func="not callable"),
        "needs a callable", id="not-callable",
    ),
    pytest.param(
        dict(func=_opaque_hint),
        r"_opaque_hint\(x\).*_Opaque.*pass parameters=", id="unsupported-type-hint",
    ),
    pytest.param(
        dict(func=_positional_only),
        "positional-only.*remove the '/'", id="positional-only",
    ),
    pytest.param(
        dict(func=_documented, timeout=0),
        "timeout must be > 0", id="zero-timeout",
    ),
]


@pytest.mark.parametrize(("kwargs", "message"), BAD_DEFINITIONS)
def test_bad_definition_raises_at_once(kwargs: dict[str, Any], message: str) -> None:
    toolbox = Toolbox()
    with pytest.raises(ToolDefinitionError, match=message):
        toolbox.add(**kwargs)
    assert len(toolbox) == 0


def test_tool_definition_error_is_a_value_error() -> None:
    assert issubclass(ToolDefinitionError, ValueError)


def test_duplicate_name() -> None:
    toolbox = Toolbox()
    toolbox.add(_documented, name="echo")
    with pytest.raises(ToolDefinitionError, match=r"already in this toolbox.*pass name="):
        toolbox.add(_documented, name="echo")
    assert toolbox.names == ["echo"]


def test_duplicate_name_through_constructor() -> None:
    tool = Tool("echo", "Echo.", {"type": "object", "properties": {}}, _documented)
    with pytest.raises(ToolDefinitionError, match="already"):
        Toolbox([tool, tool])


# -- Mapping behaviour --------------------------------------------------------------------------
def test_toolbox_is_a_read_only_mapping() -> None:
    toolbox = Toolbox()
    toolbox.add(_documented, name="b")
    toolbox.add(_documented, name="a")
    assert isinstance(toolbox, Mapping)
    assert toolbox.names == ["b", "a"]  # registration order
    assert list(toolbox) == ["b", "a"]
    assert len(toolbox) == 2
    assert "a" in toolbox and "c" not in toolbox
    assert toolbox.get("c") is None
    assert isinstance(toolbox["a"], Tool)
    with pytest.raises(KeyError):
        toolbox["c"]
    with pytest.raises(TypeError):
        toolbox["c"] = toolbox["a"]  # type: ignore[index]
    assert repr(toolbox) == "Toolbox(['b', 'a'])"
    assert [s["function"]["name"] for s in toolbox.openai_specs()] == ["b", "a"]


def test_constructor_takes_tools() -> None:
    tool = Tool("echo", "Echo the text.", {"type": "object", "properties": {}}, _documented)
    assert Toolbox([tool]).names == ["echo"]


# -- describe() ---------------------------------------------------------------------------------
def test_describe_renders_every_detail() -> None:
    toolbox = Toolbox()

    @toolbox.tool
    def get_weather(city: str, unit: Literal["c", "f"] = "c", days: int = 1,
                    color: Color = Color.RED, tags: list[str] | None = None) -> str:
        """Get the weather forecast for a city.

        Args:
            city: The city name, e.g. "Beijing".
            days: How many days ahead.
        """
        return ""

    lines = toolbox.describe().splitlines()
    assert lines[0] == "- get_weather: Get the weather forecast for a city."
    assert lines[1] == '  - city (string, required): The city name, e.g. "Beijing".'
    assert lines[2] == '  - unit (string, optional, default "c"): one of "c", "f"'
    assert lines[3] == "  - days (integer, optional, default 1): How many days ahead."
    assert lines[4] == '  - color (string, optional, default "red"): one of "red", "blue"'
    assert lines[5].startswith("  - tags (array")
    assert "optional, default null" in lines[5]
    assert len(lines) == 6


def test_describe_nullable_list_keeps_item_type() -> None:
    toolbox = Toolbox()

    @toolbox.tool
    def tag(tags: list[str] | None = None) -> str:
        """Tag things."""
        return ""

    assert "  - tags (array of string or null, optional, default null)" in toolbox.describe()


def test_describe_explicit_schema_with_examples_and_non_ascii() -> None:
    toolbox = Toolbox()
    toolbox.add(
        _documented, name="lookup", description="Look up a word.",
        parameters={
            "type": "object",
            "properties": {
                "word": {"type": "string", "description": "The word.", "examples": ["北京"]},
                "limits": {"type": "array", "items": {"type": "integer"}},
                "level": {"enum": [1, 2, 3]},
                "anything": {},
            },
            "required": ["word", "level"],
        },
    )
    text = toolbox.describe()
    assert '- word (string, required): The word.; example: "北京"' in text
    assert "- limits (array of integer, optional)" in text
    assert "- level (integer, required): one of 1, 2, 3" in text
    assert "- anything (any JSON value, optional)" in text


def test_describe_tool_without_arguments_and_several_tools() -> None:
    toolbox = Toolbox()

    @toolbox.tool
    def now() -> str:
        """The current time."""
        return ""

    toolbox.add(_documented, name="echo")
    text = toolbox.describe()
    assert text.splitlines()[:2] == [
        "- now: The current time.",
        '  Arguments: none (send "args": {}).',
    ]
    assert "- echo: A documented tool." in text
    assert "  - x (string, required)" in text
    assert Toolbox().describe() == ""


def test_default_timeout_of_the_toolbox() -> None:
    tb = Toolbox(default_timeout=2.5)
    a = tb.add(lambda_free_add, name="a")
    b = tb.add(lambda_free_add, name="b", timeout=None)
    c = tb.add(lambda_free_add, name="c", timeout=9)
    assert (a.timeout, b.timeout, c.timeout) == (2.5, None, 9)
    assert Toolbox().add(lambda_free_add).timeout is None  # no limit: runs in the caller's thread
    with pytest.raises(ToolDefinitionError, match="default_timeout must be > 0"):
        Toolbox(default_timeout=0)


def lambda_free_add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def test_a_toolbox_from_openai_specs_normalises_loose_types_in_order() -> None:
    specs = [
        {"type": "function", "function": {"name": "b", "description": "B.", "parameters": {
            "type": "dict", "properties": {"x": {"type": "float"}}}}},
        {"name": "a", "description": "A."},  # the bare function object, no parameters
    ]
    toolbox = Toolbox.from_openai_specs(specs, {"a": lambda: "ran"})
    assert toolbox.names == ["b", "a"]
    assert toolbox["b"].parameters == {"type": "object", "properties": {"x": {"type": "number"}}}
    assert toolbox["a"].parameters == {"type": "object"}
    assert invoke(toolbox, ToolCall("a", {})).observation == "ran"
    declared = invoke(toolbox, ToolCall("b", {"x": 1.5}))
    assert not declared.ok and "declared by a spec alone" in declared.observation


@pytest.mark.parametrize(("specs", "index", "message"), [
    ([{"name": "a", "description": "A."}, "not a spec"], 1, "no function name"),
    ([{"name": "a", "description": "A."}, {"name": "a", "description": "Again."}], 1,
     "already in this toolbox"),
    ([{"name": "a", "parameters": {"$ref": "file:///etc/passwd"}}], 0, "refers outside"),
    ([{"name": "a", "description": "A.", "parameters": {"type": "object", "required": 5}}], 0,
     "not a valid JSON Schema"),
])
def test_an_unusable_openai_spec_is_named_by_its_place(specs: list[Any], index: int,
                                                        message: str) -> None:
    with pytest.raises(ToolSpecError, match=message) as caught:
        Toolbox.from_openai_specs(specs)
    assert caught.value.index == index and isinstance(caught.value, ToolDefinitionError)
