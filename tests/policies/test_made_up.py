"""Tests for react_agent.policies._made_up: a required free-text value from nowhere is refused
(:class:`~react_agent.policies.GroundValues`), and asked about again as the final answer."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import act, final

from react_agent import Agent, Toolbox
from react_agent.engine import Facts
from react_agent.models import ScriptedModel
from react_agent.policies import _made_up, default_policies
from react_agent.types import ToolCall, ToolResult


def _ferry_and_weather() -> tuple[Toolbox, list[dict[str, Any]]]:
    tb, ran = Toolbox(), []

    @tb.tool
    def find_ferry(from_city: str, to_city: str, seats: int = 1) -> str:
        """Search ferry crossings between two cities."""
        ran.append({"from_city": from_city, "to_city": to_city})
        return '{"ferries": []}'

    @tb.tool
    def get_weather(city: str, note: str = "") -> str:
        """The current weather of a city."""
        ran.append({"city": city})
        return '{"city": "Beijing", "sky": "clear"}'

    return tb, ran


def _stated(*user: str, results: tuple[str, ...] = ()) -> _made_up.Stated:
    facts = Facts(user=list(user))
    facts.observed([ToolResult(ToolCall("t", {}), r, ok=True) for r in results])
    return _made_up.Stated(facts)


@pytest.mark.parametrize(("args", "said", "made_up"), [
    ({"from_city": "Lakeview, OR", "to_city": "Millbrook"}, "I need a ferry ticket.",
     [("from_city", "Lakeview, OR"), ("to_city", "Millbrook")]),
    ({"from_city": "Fairhaven", "to_city": "Millbrook"}, "A ferry from Fairhaven, please.",
     [("to_city", "Millbrook")]),
    ({"from_city": "Germany", "to_city": "Berlin"}, "German ferries to BERLIN", []),  # a stem
    ({"from_city": "北京", "to_city": "上海市"}, "明天从北京坐轮渡去上海", []),  # CJK pairs
    ({"from_city": "U.S.", "to_city": "Lyon"}, "from the U.S to Lyon", []),  # short: not checked
    ({"from_city": "ORD-T2", "to_city": "2024-05-12"}, "a ferry", []),  # codes, a date
    # another script than the request's: maybe a translation, which no word match can tell
    ({"from_city": "Geneva", "to_city": "Lisbon"}, "明天从日内瓦坐轮渡去里斯本", []),
    ({"from_city": "日内瓦", "to_city": "里斯本"}, "A ferry from Geneva to Lisbon", []),
    ({"from_city": "Москва", "to_city": "Geneva"}, "Паром из Москвы", []),
    ({"from_city": "日内瓦", "to_city": "Millbrook"}, "从日内瓦坐轮渡", []),  # (nor made up)
    ({"from_city": "日内瓦", "to_city": "里斯本"}, "从日内瓦坐轮渡", [("to_city", "里斯本")]),
])
def test_a_required_value_the_request_does_not_state_is_made_up(
        args: dict[str, Any], said: str, made_up: list[tuple[str, str]]) -> None:
    tool = _ferry_and_weather()[0]["find_ferry"]
    assert _made_up.made_up(ToolCall("find_ferry", args), tool.parameters, _stated(said)) \
        == made_up


def test_optional_and_listed_values_are_not_checked_and_results_ground_values() -> None:
    weather = _ferry_and_weather()[0]["get_weather"]
    call = ToolCall("get_weather", {"city": "Beijing", "note": "Something made up"})
    assert _made_up.made_up(call, weather.parameters, _stated("Weather?")) == [
        ("city", "Beijing")]  # `note` is optional
    assert _made_up.made_up(call, weather.parameters,
                              _stated("Weather?", results=('{"home": "Beijing"}',))) == []
    listed = {"type": "object", "required": ["unit"],
              "properties": {"unit": {"type": "string", "enum": ["celsius", "kelvin"]}}}
    assert _made_up.made_up(ToolCall("t", {"unit": "kelvin"}), listed, _stated("x")) == []
    # a schema a client sent that is not one: nothing to check, no error
    assert _made_up.made_up(ToolCall("t", {"a": "word"}), {"required": "a"}, _stated("x")) \
        == []
    odd = {"type": "object", "required": [["a"], {"b": 1}, "a"],
           "properties": {"a": {"type": "string"}}}
    assert _made_up.made_up(ToolCall("t", {"a": "Lisbon"}), odd, _stated("x")) == [
        ("a", "Lisbon")]


def test_the_system_prompts_instructions_state_values_its_tool_descriptions_do_not() -> None:
    from react_agent import prompts
    from react_agent.policies import GroundValues

    toolbox, ran = _ferry_and_weather()
    login = Toolbox.from_openai_specs([{"type": "function", "function": {
        "name": "login", "description": "Log a user in with their username and password.",
        "parameters": {"type": "object", "required": ["password"],
                       "properties": {"password": {"type": "string"}}}}}],
        {"login": lambda password: ran.append({"password": password}) or "ok"})
    model = ScriptedModel([act("login", password="password"), final("Which size?"),
                           act("login", password="Wintergreen"), final("Logged in.")])
    agent = Agent(model, login, policies=[GroundValues()],
                  instructions="The user's secret word is Wintergreen.")
    assert agent.run("Is size XS out of stock?").steps[0].results[0].error == "made_up"
    assert agent.run("Log me in.").final_answer == "Logged in."
    assert ran == [{"password": "Wintergreen"}]
    # a value that only a tool's description holds is made up
    stated = _made_up.Stated(Facts(system=[prompts.render_system_prompt(toolbox)]),
                               prompts.render_system_prompt(toolbox))
    assert not stated.states("Search ferry crossings")
    # cut out as a whole, the descriptions leave the instructions' words to ground values,
    # even those a description also holds
    system = prompts.render_system_prompt(toolbox, "Ferry crossings only.")
    stated = _made_up.Stated(Facts(system=[system]), prompts.render_system_prompt(Toolbox()),
                             tools=lambda: prompts.defang(toolbox.describe()))
    assert stated.states("ferry crossings") and not stated.states("Search the current weather")


def test_composed_values_are_not_checked() -> None:
    tool = _ferry_and_weather()[0]["find_ferry"]
    for value in ("dir C:\\", "https://example.org/x?a=1", "(1234 * 5678)", "a/b/c.txt"):
        call = ToolCall("find_ferry", {"from_city": value, "to_city": value})
        assert _made_up.made_up(call, tool.parameters, _stated("List the drive.")) == []


def test_only_the_first_words_of_a_long_value_are_looked_for() -> None:
    long = " ".join(["zzzz"] * _made_up.MAX_VALUE_WORDS + ["Lisbon"])
    tool = _ferry_and_weather()[0]["get_weather"]
    call = ToolCall("get_weather", {"city": long})
    assert _made_up.made_up(call, tool.parameters, _stated("Weather in Lisbon?")) == [
        ("city", long)]
    shorter = ToolCall("get_weather", {"city": "zzzz Lisbon"})
    assert _made_up.made_up(shorter, tool.parameters, _stated("Weather in Lisbon?")) == []


def test_made_up_values_are_refused_then_sent_again_the_final_answer_is_asked_for() -> None:
    from react_agent.policies import GroundValues

    toolbox, ran = _ferry_and_weather()
    ferry = act("find_ferry", from_city="Lakeview, OR", to_city="Millbrook, NY")
    model = ScriptedModel([ferry, ferry, final("Where from and where to?")])
    result = Agent(model, toolbox, policies=[GroundValues()]).run("I need a ferry ticket.")
    assert ran == [] and result.final_answer == "Where from and where to?"
    refusals = [r for s in result.steps for r in s.results]
    assert [r.error for r in refusals] == ["made_up"]
    assert "'Lakeview, OR' (from_city)" in refusals[0].observation
    assert "ask the user" in refusals[0].observation
    # sent again (the refusal that quotes the values grounds nothing): set aside, the final
    # answer asked for, held to the answer's schema
    assert [n[2].split(":")[0] for s in result.steps for n in s.notes] == [
        "find_ferry", "sent again"]
    assert result.steps[1].in_history is False and result.steps[2].origin == "ground_values"
    options = model.schemas[2]["properties"]["action"]["anyOf"]  # type: ignore[index]
    assert [list(o["properties"]) for o in options] == [["final_answer"]]
    assert "'Millbrook, NY' (to_city)" in model.calls[2][-1]["content"]


def test_a_value_quoted_as_an_option_in_its_description_is_not_made_up() -> None:
    spec = {"type": "object", "required": ["transition"], "properties": {"transition": {
        "type": "string", "description": "Can be 'standard', 'express' or 'overnight'."}}}
    said = _stated("Ship it to arrive by tomorrow morning.")
    assert _made_up.made_up(ToolCall("t", {"transition": "overnight"}), spec, said) == []
    assert _made_up.made_up(ToolCall("t", {"transition": "same-day courier"}), spec, said) == [
        ("transition", "same-day courier")]


def test_only_the_narrow_check_is_on_by_default_and_stated_values_run() -> None:
    from react_agent.policies import GroundValues

    toolbox, ran = _ferry_and_weather()
    model = ScriptedModel([act("get_weather", city="Beijing"), final("Clear.")])
    Agent(model, toolbox, policies=[GroundValues()]).run("Is it clear in Beijing?")
    assert ran == [{"city": "Beijing"}]
    chosen = {p.name: p for p in default_policies()}
    assert chosen["ground_values"] == GroundValues(examples_only=True)
    big = type("Big", (), {"small_model": False})()
    assert "ground_values" not in [p.name for p in default_policies(big)]


@pytest.mark.parametrize(("value", "said", "is_made_up"), [
    ("Paris", "a comparison of ferry prices", True),  # whole words only
    ("LOS ANGELES", "a ferry, please", True),  # capitals are no code
    ("广州南站", "我想坐轮渡", True),  # a short CJK value is checked
    ("广州南站", "I want a ferry", False),  # another script: maybe a translation
    ("Zürich", "a ferry from Zurich", False),  # accents
    ("San Diego", "from SAN DIEGO!", False),
    ("de89370400440532013000", "to DE89 3704 0044 0532 0130 00", False),  # an identifier
    ("+1-555-0100", "call +1 (555) 0100", False),  # (a code as well)
    ("ab-20417-cd", "ref. ab 2041 7 cd", False),
    ("ab-20418-cd", "ref. ab 2041 7 cd", True),
    ("de893704004405", "to DE89 3704 0044 0532 0130 00", True),  # cut: no whole identifier
    ("Millbrook Harbor", "a ferry and a 5 µm filter", True),  # one µ is no other script
    ("里斯本", "查一下Lisbon的轮渡", False),  # the request writes Latin too: a translation?
    ("Salt Lake City", "a ferry from SLC", False),  # what an acronym stands for
    ("Buenos Aires", "ferries in BA?", False),
    ("Lakeview Orchard", "ferries in BA?", True),
    ("Buenos Aires", "ferries in ba", True),  # not written in capitals: no acronym
    ("Millbrook Harbor", "a ferry, π times 2", True),
])
def test_values_are_compared_as_whole_words_without_accents(value: str, said: str,
                                                            is_made_up: bool) -> None:
    tool = _ferry_and_weather()[0]["find_ferry"]
    call = ToolCall("find_ferry", {"from_city": value, "to_city": value})
    assert bool(_made_up.made_up(call, tool.parameters, _stated(said))) is is_made_up


def test_an_example_in_a_description_is_no_option_and_a_default_or_const_is() -> None:
    spec = {"type": "object", "required": ["city"], "properties": {"city": {
        "type": "string", "description": "The city, e.g. 'Lakeview, OR'.",
        "default": "Sacramento"}}}
    said = _stated("A ferry, please.")
    assert _made_up.made_up(ToolCall("t", {"city": "Lakeview, OR"}), spec, said)
    assert _made_up.made_up(ToolCall("t", {"city": "Sacramento"}), spec, said) == []
    const = {"type": "object", "required": ["scale"],
             "properties": {"scale": {"type": "string", "const": "celsius_scale"}}}
    assert _made_up.made_up(ToolCall("t", {"scale": "celsius_scale"}), const, said) == []


@pytest.mark.parametrize("first", [
    "I will look up ferries from Springfield to Shelbyville.",  # feedback quotes the reply
    act("Springfield_Shelbyville"),  # the unknown tool's result names it
])
def test_what_the_run_echoes_back_grounds_no_value(first: str) -> None:
    from react_agent.policies import GroundValues

    toolbox, ran = _ferry_and_weather()
    ferry = act("find_ferry", from_city="Springfield", to_city="Shelbyville")
    model = ScriptedModel([first, ferry, final("Where from?")])
    Agent(model, toolbox, policies=[GroundValues()]).run("I need a ferry ticket.")
    assert ran == []


def test_a_refusal_quotes_at_most_the_start_of_a_long_value() -> None:
    from react_agent.policies import GroundValues

    toolbox, _ = _ferry_and_weather()
    long = "Springfield " * 5_000
    model = ScriptedModel([act("find_ferry", from_city=long, to_city="Shelbyville"), final("?")])
    result = Agent(model, toolbox, policies=[GroundValues()]).run("A ferry, please.")
    refusal = result.steps[0].results[0]
    assert refusal.error == "made_up" and len(refusal.observation) < 1_000


def test_an_earlier_turns_answer_grounds_a_value_its_calls_do_not() -> None:
    from react_agent import Conversation
    from react_agent.policies import GroundValues

    toolbox, ran = _ferry_and_weather()
    model = ScriptedModel([
        final("Aegina is the closest island to Athens."),
        act("find_ferry", from_city="Athens", to_city="Aegina"), final("Two ferries."),
        act("get_weather", city="Lakeview"), final("Which city?")])
    chat = Conversation(Agent(model, toolbox, policies=[GroundValues()]))
    chat.ask("Which island is closest to Athens?")
    chat.ask("Find me a ferry there from Athens.")
    assert ran == [{"from_city": "Athens", "to_city": "Aegina"}]
    third = chat.ask("And the weather?")  # "Lakeview": no answer or user message said it
    assert ran == [{"from_city": "Athens", "to_city": "Aegina"}]
    assert third.steps[0].results[0].error == "made_up"


def test_earlier_answers_are_the_final_answers_before_the_task() -> None:
    messages = [
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": '{"thought": "t", "action": {"final_answer": "Aegina"}}'},
        {"role": "assistant", "content": '{"action": {"name": "f", "args": {"x": "Lakeview"}}}'},
        {"role": "assistant", "content": "Plain text from a client's history."},
        {"role": "assistant", "content": "{not json"},
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": '{"action": {"final_answer": "after the task"}}'},
    ]
    assert _made_up.earlier_answers(messages, "task") == [
        "Aegina", "Plain text from a client's history."]
    assert _made_up.earlier_answers(messages, "no such task") == []
    hostile = [{"role": "assistant", "content": '{"a":' * 200_000},  # too deep for json
               {"role": "assistant", "content": '{"a":' * 10_000},
               {"role": "user", "content": "task"}]
    assert _made_up.earlier_answers(hostile, "task") == []


@pytest.mark.parametrize(("value", "is_made_up"), [
    ("Lakeview, OR", True),  # the example place, copied
    ("Ada Lovelace", True),  # the example person
    ("Lakeview", False),  # one word: maybe a default the model rightly took
    ("celsius", False),  # an example unit
    ("English", False),  # an example language
    ("Fairhaven, OR", False),  # not the example: the narrow check lets it pass
])
def test_examples_only_checks_a_copied_example_name(value: str, is_made_up: bool) -> None:
    spec = {"type": "object", "required": ["where"], "properties": {"where": {
        "type": "string", "description": f"The place or person, e.g. '{value}' or the like"}}}
    if value == "Fairhaven, OR":
        spec["properties"]["where"]["description"] = "The place, e.g. 'Lakeview, OR'"
    said = _stated("What is it like there today?")
    found = _made_up.made_up(ToolCall("t", {"where": value}), spec, said, examples_only=True)
    assert bool(found) is is_made_up
    assert _made_up.made_up(ToolCall("t", {"where": value}), spec, said)  # the whole check


def test_by_default_a_copied_example_place_is_refused_and_a_stated_one_runs() -> None:
    tb, ran = Toolbox(), []

    def lookup(location: str) -> str:
        ran.append(location)
        return "clear"

    tb.tool(lookup, name="lookup", description="Today's sky over a place.", parameters={
        "type": "object", "required": ["location"], "properties": {"location": {
            "type": "string", "description": "The place, e.g. 'Lakeview, OR'."}}})
    model = ScriptedModel([act("lookup", location="Lakeview, OR"), final("Which place?")])
    result = Agent(model, tb, policies=default_policies(model)).run("Is the sky clear?")
    assert ran == [] and result.final_answer == "Which place?"
    assert [r.error for s in result.steps for r in s.results] == ["made_up"]
    model = ScriptedModel([act("lookup", location="Lakeview, OR"), final("Clear.")])
    Agent(model, tb, policies=default_policies(model)).run("Is the sky clear in Lakeview?")
    assert ran == ["Lakeview, OR"]


@pytest.mark.parametrize(("description", "value", "said", "is_made_up"), [
    ("The city, e.g. 'Lakeview, OR' or 'Fairhaven, WA'", "Fairhaven, WA", "Sky?", True),  # a list
    ("The city, like 'Lakeview, OR'", "Lakeview, OR", "Sky?", True),
    ("The city and state, e.g. Lakeview, OR", "Lakeview, OR", "Sky?", True),  # unquoted
    ("The city, such as Lakeview, OR or Fairhaven, WA.", "Lakeview, OR", "Sky?", True),
    ("The city, e.g. Lakeview, ORLANDO", "Lakeview, OR", "Sky?", False),  # not the example
    ("The city, e.g. 'Lake View, OR'", "Lake View, OR", "Sky over LV?", False),  # before a comma
    ("The city, e.g. 'Port Lakeview, OR'", "Port Lakeview, OR", "Sky in PLV today?", False),
    ("The city, e.g. 'Fort Mill, DC'", "Fort Mill, DC", "Sky in DC?", False),  # its acronym
    ("The city, e.g. 'Fort Mill, D.C.'", "Fort Mill, D.C.", "Sky in DC?", False),
    ("Sort order, e.g. 'Date Added'", "Date Added", "Newest first", False),  # no place
    ("Category, e.g. 'Office Supplies'", "Office Supplies", "Pens", False),  # nor person
    ("The contact, e.g. 'Ada Lovelace'", "Ada Lovelace", "Call her", True),
])
def test_examples_only_reads_example_lists_acronyms_and_what_an_argument_holds(
        description: str, value: str, said: str, is_made_up: bool) -> None:
    spec = {"type": "object", "required": ["arg"], "properties": {"arg": {
        "type": "string", "description": description}}}
    found = _made_up.made_up(ToolCall("t", {"arg": value}), spec, _stated(said),
                             examples_only=True)
    assert bool(found) is is_made_up


def test_the_instructions_ground_an_example_place_the_tools_descriptions_do_not() -> None:
    tb, ran = Toolbox(), []
    tb.tool(lambda location: ran.append(location) or "clear", name="lookup",
            description="Today's sky over a place.", parameters={
                "type": "object", "required": ["location"], "properties": {"location": {
                    "type": "string", "description": "The place, e.g. 'Lakeview, OR'."}}})
    for instructions, expected in (("", []), ("The user lives in Lakeview, OR.", ["Lakeview, OR"])):
        model = ScriptedModel([act("lookup", location="Lakeview, OR"), final("Which place?")])
        Agent(model, tb, policies=default_policies(model), instructions=instructions).run(
            "Is the sky clear?")
        assert ran == expected


def test_a_system_message_that_writes_the_tools_otherwise_loses_their_words() -> None:
    from react_agent import prompts

    toolbox = _ferry_and_weather()[0]
    system = "Tools: find_ferry (Search ferry crossings between two cities). Mind the tides."
    stated = _made_up.Stated(Facts(system=[system]), "",
                             tools=lambda: prompts.defang(toolbox.describe()))
    assert not stated.states("Search crossings") and stated.states("tides")
