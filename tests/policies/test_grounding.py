"""Tests for react_agent.policies._grounding: a contact detail from nowhere is refused
(:func:`ungrounded`, :class:`~react_agent.policies.GroundContacts`), and the values nobody
stated are found (:func:`unstated`, used by :class:`~react_agent.policies.HoldDependentCalls`)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from helpers import act, directory_and_mail, final

from react_agent import Agent, Toolbox
from react_agent.engine import Facts
from react_agent.models import ScriptedModel
from react_agent.policies import _grounding, _held_calls, default_policies
from react_agent.policies._grounding import Known, ungrounded, unstated
from react_agent.policies._held_calls import Said
from react_agent.types import ToolCall, ToolResult


def told(text: str) -> Facts:
    """What a run knows after the user said ``text``, as the policies read it."""
    facts = Facts()
    facts.told({"role": "user", "content": text})
    return facts


@pytest.mark.parametrize(
    ("args", "known", "refused"),
    [
        ({"to": "ann.lee@example.com"}, "Email Ann Lee.", "ann.lee@example.com"),
        ({"to": "Ann.Lee@Example.com"}, '{"email": "ann.lee@example.com"}', None),
        ({"phone": "13800138000", "text": "hi"}, "Text Chen.", "13800138000"),
        ({"phone": "15000216658"}, '{"phone": "+86 150 0021 6658"}', None),
        ({"phone": "+86 150 0021 6658"}, "phone: 150-0021-6658", None),
        ({"body": "Call me on 555 0199 123."}, "Tell Bo to call me.", "555 0199 123"),
        ({"to": ["a@b.co", "c@d.co"]}, "mail a@b.co", "c@d.co"),
        ({"order_id": "A-1042", "date": "2024-05-17"}, "Where is order 1042?", None),
        ({"amount": 1234567}, "convert it", None),  # numbers are not contact values
    ],
)
def test_made_up_addresses_and_numbers_are_not_sent(args: dict[str, Any], known: str,
                                                    refused: str | None) -> None:
    grounds = Known(told(known))
    result = ungrounded(ToolCall("send", args), lambda: grounds.text, lambda: grounds.digits)
    if refused is None:
        assert result is None
    else:
        assert result is not None and result.error == "ungrounded" and not result.ok
        assert f"{refused!r}" in result.observation
        assert "look it up with a tool first" in result.observation
        kind = "an address" if "@" in refused else "a number"
        assert f"Do not make up {kind}:" in result.observation


@pytest.mark.parametrize(
    ("args", "said", "missing"),
    [
        ({"value": 36.9, "unit": "°F"}, '{"temperature_c": 33.1}', ["36.9"]),
        ({"value": 33.1, "unit": "°F"}, '{"temperature_c": 33.1}', []),
        ({"amount": 4200, "days": 3}, "Send 4,200 yen.", []),  # 3: a count, not a value
        ({"amount": 4263.0}, "Send 4,200 yen plus 1.5%.", ["4263.0"]),
        ({"to": "the client's mailbox"}, "Mail the client of order B-77.",
         ["the client's mailbox"]),
        ({"city": "berlin", "loud": True}, "Weather in Berlin?", []),  # any case; no bools
        ({"to": ["a@b.co", "c@d.co"]}, "mail a@b.co", ["c@d.co"]),
        ({"units": "fahrenheit"}, "in F please", []),  # one of the argument's enum
        ({"text": "Sorry, running late", "to": "Bo"}, "Tell Bo we are late.",
         ["Sorry, running late"]),  # a message's text is never stated
    ],
)
def test_unstated_lists_the_values_nobody_stated(args: dict[str, Any], said: str,
                                                 missing: list[str]) -> None:
    schema = {"type": "object", "properties": {"units": {"enum": ["celsius", "fahrenheit"]}}}
    stated = Said(told(said))
    assert unstated(ToolCall("tool", args), stated.text, stated.numbers, schema) == missing


# -- in a run (GroundContacts) ------------------------------------------------------------------
def test_a_send_to_a_made_up_address_is_not_run_until_it_was_looked_up() -> None:
    tb, sent = directory_and_mail()
    replies = [act("send_email", to="ann@example.com", body="hi"),
               act("find_person", person="Ann Lee"),
               act("send_email", to="ann.lee@corp.example", body="hi"), final("Sent.")]
    no_review = default_policies(off=["review"])
    result = Agent(ScriptedModel(replies), tb, policies=no_review).run("Email Ann Lee: hi")
    assert sent == ["ann.lee@corp.example"]
    assert result.steps[0].results[0].error == "ungrounded"
    assert "'ann@example.com' in to is in neither the task" in result.steps[0].observations[0]
    off = Agent(ScriptedModel([*replies[:1], final("Sent.")]), tb,
                policies=default_policies(off=["review", "ground_contacts"])
                ).run("Email Ann Lee: hi")
    assert off.steps[0].results[0].ok and sent[-1] == "ann@example.com"
    # the guess sent again after the lookup: refused again, now naming the address looked up
    sent.clear()
    again = [replies[0], replies[1], replies[0], replies[2], final("Sent.")]
    result = Agent(ScriptedModel(again), tb, policies=no_review).run("Email Ann Lee: hi")
    assert sent == ["ann.lee@corp.example"]
    refusal = result.steps[2].results[0]
    assert refusal.error == "ungrounded"
    assert refusal.observation.endswith(
        "The task and the tool results hold: 'ann.lee@corp.example'; use the one that belongs "
        "to whom the task means.")


def test_a_made_up_address_is_not_grounded_by_the_echo_of_its_own_refused_call() -> None:
    # several calls in one step come back as "[2] send_email {...}: ...": that line quotes the
    # made-up address, which must not count as found when the model sends it again
    tb, sent = directory_and_mail()
    guess = {"name": "send_email", "args": {"to": "ann@example.com", "body": "hi"}}
    both = json.dumps({"thought": "t", "action": [
        {"name": "find_person", "args": {"person": "Ann Lee"}}, guess]})
    replies = [both, act("send_email", to="ann@example.com", body="hi"), final("Done.")]
    result = Agent(ScriptedModel(replies), tb, policies=default_policies(
        off=["review", "held_calls"])).run("Email Ann Lee: hi")  # both run at once
    assert "ann@example.com" in result.messages[3]["content"]  # the echo is there
    assert sent == []
    assert [r.error for r in result.steps[1].results] == ["ungrounded"]


class _CountingPattern:
    """``_EMAIL`` with a count of the characters each ``match`` may look at."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern, self.looked_at = pattern, 0

    def match(self, text: str, start: int, end: int) -> re.Match[str] | None:
        self.looked_at += end - start
        return self.pattern.match(text, start, end)


@pytest.mark.parametrize("text", [
    "a" * 80_000 + "@", "@" + "a" * 80_000, "a@" * 40_000, ("x" * 500 + "@") * 100,
    "a" * 40_000 + "@b." + "c" * 40_000, "." * 80_000 + "@a.b",
])
def test_the_address_scan_looks_at_each_character_a_bounded_number_of_times(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hostile input (issue 30, item 5): ``findall`` took time quadratic in a long run of word
    characters (an 80 KB argument: 26 s). The scan widens each ``@`` by a bounded amount, so
    the characters examined are at most a constant times the text's length."""
    counting = _CountingPattern(_grounding._EMAIL)
    monkeypatch.setattr(_grounding, "_EMAIL", counting)
    found = _grounding._emails(text)
    bound = (_grounding._MAX_LOCAL + _grounding._MAX_DOMAIN + 2) * text.count("@")
    assert counting.looked_at <= bound
    assert all("@" in mail for mail in found)


@pytest.mark.parametrize("text", [
    "write to ann@example.com and bob.smith+x@mail.co.uk, not to @nobody or foo@bar",
    "a@b.c@d.e, x@y.zz; first.last@sub.domain.org.", "邮件 li@qq.com 或 wang@163.com。",
    "user@host.example", "no address here", "a@b.c d@e.f g@h.i",
])
def test_the_address_scan_finds_what_findall_finds_in_ordinary_text(text: str) -> None:
    assert _grounding._emails(text) == _grounding._EMAIL.findall(text)


# -- the policies' state: what grounds a value, what was stated, read as the run grows ----------
def test_what_the_checks_read_follows_texts_that_come_after_a_first_read() -> None:
    facts = Facts()
    known, said = Known(facts), Said(facts)
    facts.told({"role": "system", "content": "Support line +1 555 010 9999."})
    facts.told({"role": "user", "content": "Find Ann's Email, and the price of 1,250 apples."})
    assert said.text == ("find ann's email, and the price of 1,250 apples.\n"
                         "find ann s email and the price of 1 250 apples")  # and squashed
    assert said.numbers == {1250.0}
    assert known.digits == ["15550109999"]
    facts.observed([result("Ann: ANN@Example.com, +44 20 7946 0958"), result("Price 3.5")])
    facts.observed([result("Error: no such item 77", ok=False, error="raised")])
    facts.observed([result("Error: 555 123 4567 is made up", ok=False, error="ungrounded")])
    facts.told({"role": "user", "content": "And 12 pears."})
    assert said.text.split("\n")[::2] == [
        "find ann's email, and the price of 1,250 apples.", "and 12 pears.",
        "ann: ann@example.com, +44 20 7946 0958", "price 3.5",
    ]  # the user's words, then the successful results; a failed result says nothing
    assert said.numbers == {1250.0, 12.0, 3.5, 20.0, 7946.0, 958.0, 44.0}
    assert "ann@example.com" in known.text and "no such item 77" in known.text
    assert "made up" not in known.text  # a refusal quoting a made-up value grounds nothing
    assert sorted(known.digits) == ["15550109999", "442079460958"]


def result(text: str, ok: bool = True, error: str | None = None) -> ToolResult:
    return ToolResult(ToolCall("lookup", {"q": text[:8]}), text, ok=ok, error=error)


def test_each_text_is_read_once_however_often_the_checks_ask(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    read: list[str] = []

    def counted(text: str) -> Any:
        read.append(text)
        return set()

    monkeypatch.setattr(_held_calls, "numbers", counted)
    facts = Facts()
    said = Said(facts)
    facts.told({"role": "user", "content": "task"})
    for n in range(20):
        facts.observed([result(f"result {n}")])
        assert said.numbers == set()
        assert said.numbers == set()
    assert read == ["task", *(f"result {n}" for n in range(20))]


def test_nothing_is_derived_before_a_check_asks(monkeypatch: pytest.MonkeyPatch) -> None:
    read: list[str] = []
    monkeypatch.setattr(_grounding, "phone_digits", lambda text: read.append(text) or [])
    facts = Facts()
    known = Known(facts)
    facts.told({"role": "system", "content": "a long system prompt"})
    facts.observed([result("x")])
    assert read == []
    assert known.digits == []
    assert read == ["a long system prompt", "x"]


# -- GroundValues: a required free-text value from nowhere ---------------------------------------
def _bus_and_weather() -> tuple[Toolbox, list[dict[str, Any]]]:
    tb, ran = Toolbox(), []

    @tb.tool
    def find_bus(from_city: str, to_city: str, seats: int = 1) -> str:
        """Search bus itineraries between two cities."""
        ran.append({"from_city": from_city, "to_city": to_city})
        return '{"buses": []}'

    @tb.tool
    def get_weather(city: str, note: str = "") -> str:
        """The current weather of a city."""
        ran.append({"city": city})
        return '{"city": "Beijing", "sky": "clear"}'

    return tb, ran


def _stated(*user: str, results: tuple[str, ...] = ()) -> _grounding.Stated:
    facts = Facts(user=list(user))
    facts.observed([ToolResult(ToolCall("t", {}), r, ok=True) for r in results])
    return _grounding.Stated(facts)


@pytest.mark.parametrize(("args", "said", "made_up"), [
    ({"from_city": "New York, NY", "to_city": "Los Angeles"}, "I'm looking for a bus.",
     [("from_city", "New York, NY"), ("to_city", "Los Angeles")]),
    ({"from_city": "Anaheim", "to_city": "Los Angeles"}, "A bus from Anaheim, please.",
     [("to_city", "Los Angeles")]),
    ({"from_city": "Germany", "to_city": "Berlin"}, "German buses to BERLIN", []),  # a stem
    ({"from_city": "北京", "to_city": "上海市"}, "明天从北京坐大巴去上海", []),  # CJK pairs
    ({"from_city": "U.S.", "to_city": "Lyon"}, "from the U.S to Lyon", []),  # short: not checked
    ({"from_city": "ORD-T2", "to_city": "2024-05-12"}, "a bus", []),  # codes, a date
])
def test_a_required_value_the_request_does_not_state_is_made_up(
        args: dict[str, Any], said: str, made_up: list[tuple[str, str]]) -> None:
    tool = _bus_and_weather()[0]["find_bus"]
    assert _grounding.made_up(ToolCall("find_bus", args), tool.parameters, _stated(said)) \
        == made_up


def test_optional_and_listed_values_are_not_checked_and_results_ground_values() -> None:
    weather = _bus_and_weather()[0]["get_weather"]
    call = ToolCall("get_weather", {"city": "Beijing", "note": "Something made up"})
    assert _grounding.made_up(call, weather.parameters, _stated("Weather?")) == [
        ("city", "Beijing")]  # `note` is optional
    assert _grounding.made_up(call, weather.parameters,
                              _stated("Weather?", results=('{"home": "Beijing"}',))) == []
    listed = {"type": "object", "required": ["unit"],
              "properties": {"unit": {"type": "string", "enum": ["celsius", "kelvin"]}}}
    assert _grounding.made_up(ToolCall("t", {"unit": "kelvin"}), listed, _stated("x")) == []
    # a schema a client sent that is not one: nothing to check, no error
    assert _grounding.made_up(ToolCall("t", {"a": "word"}), {"required": "a"}, _stated("x")) \
        == []
    odd = {"type": "object", "required": [["a"], {"b": 1}, "a"],
           "properties": {"a": {"type": "string"}}}
    assert _grounding.made_up(ToolCall("t", {"a": "Lisbon"}), odd, _stated("x")) == [
        ("a", "Lisbon")]


def test_the_system_prompts_instructions_state_values_its_tool_descriptions_do_not() -> None:
    from react_agent import prompts
    from react_agent.policies import GroundValues

    toolbox, ran = _bus_and_weather()
    login = Toolbox.from_openai_specs([{"type": "function", "function": {
        "name": "login", "description": "Log a user in with their username and password.",
        "parameters": {"type": "object", "required": ["password"],
                       "properties": {"password": {"type": "string"}}}}}],
        {"login": lambda password: ran.append({"password": password}) or "ok"})
    model = ScriptedModel([act("login", password="password"), final("Which size?"),
                           act("login", password="Wintergreen"), final("Logged in.")])
    agent = Agent(model, login, policies=[GroundValues()],
                  instructions="The user's password is Wintergreen.")
    assert agent.run("Is size XS out of stock?").steps[0].results[0].error == "made_up"
    assert agent.run("Log me in.").final_answer == "Logged in."
    assert ran == [{"password": "Wintergreen"}]
    # a value that only a tool's description holds is made up
    stated = _grounding.Stated(Facts(system=[prompts.render_system_prompt(toolbox)]),
                               prompts.render_system_prompt(toolbox))
    assert not stated.states("Search bus itineraries")


def test_composed_values_are_not_checked() -> None:
    tool = _bus_and_weather()[0]["find_bus"]
    for value in ("dir C:\\", "https://example.org/x?a=1", "(1234 * 5678)", "a/b/c.txt"):
        call = ToolCall("find_bus", {"from_city": value, "to_city": value})
        assert _grounding.made_up(call, tool.parameters, _stated("List the drive.")) == []


def test_only_the_first_words_of_a_long_value_are_looked_for() -> None:
    long = " ".join(["zzzz"] * _grounding.MAX_VALUE_WORDS + ["Lisbon"])
    tool = _bus_and_weather()[0]["get_weather"]
    call = ToolCall("get_weather", {"city": long})
    assert _grounding.made_up(call, tool.parameters, _stated("Weather in Lisbon?")) == [
        ("city", long)]
    shorter = ToolCall("get_weather", {"city": "zzzz Lisbon"})
    assert _grounding.made_up(shorter, tool.parameters, _stated("Weather in Lisbon?")) == []


def test_made_up_values_are_refused_then_sent_again_the_final_answer_is_asked_for() -> None:
    from react_agent.policies import GroundValues

    toolbox, ran = _bus_and_weather()
    bus = act("find_bus", from_city="New York, NY", to_city="Los Angeles, CA")
    model = ScriptedModel([bus, bus, final("Where from and where to?")])
    result = Agent(model, toolbox, policies=[GroundValues()]).run("I'm looking for a bus.")
    assert ran == [] and result.final_answer == "Where from and where to?"
    refusals = [r for s in result.steps for r in s.results]
    assert [r.error for r in refusals] == ["made_up"]
    assert "'New York, NY' (from_city)" in refusals[0].observation
    assert "ask the user" in refusals[0].observation
    # sent again (the refusal that quotes the values grounds nothing): set aside, the final
    # answer asked for, held to the answer's schema
    assert [n[2].split(":")[0] for s in result.steps for n in s.notes] == [
        "find_bus", "made up again"]
    assert result.steps[1].in_history is False and result.steps[2].origin == "ground_values"
    options = model.schemas[2]["properties"]["action"]["anyOf"]  # type: ignore[index]
    assert [list(o["properties"]) for o in options] == [["final_answer"]]
    assert "'Los Angeles, CA' (to_city)" in model.calls[2][-1]["content"]


def test_a_value_quoted_as_an_option_in_its_description_is_not_made_up() -> None:
    spec = {"type": "object", "required": ["transition"], "properties": {"transition": {
        "type": "string", "description": "Can be 'melting', 'freezing' or 'vaporization'."}}}
    said = _stated("Energy to turn 100 g of water to steam?")
    assert _grounding.made_up(ToolCall("t", {"transition": "vaporization"}), spec, said) == []
    assert _grounding.made_up(ToolCall("t", {"transition": "sublimation"}), spec, said) == [
        ("transition", "sublimation")]


def test_ground_values_is_off_by_default_and_lets_stated_values_run() -> None:
    from react_agent.policies import GroundValues

    toolbox, ran = _bus_and_weather()
    model = ScriptedModel([act("get_weather", city="Beijing"), final("Clear.")])
    Agent(model, toolbox, policies=[GroundValues()]).run("Is it clear in Beijing?")
    assert ran == [{"city": "Beijing"}]
    assert "ground_values" not in [p.name for p in default_policies()]


@pytest.mark.parametrize(("value", "said", "is_made_up"), [
    ("Paris", "a comparison of bus prices", True),  # whole words only
    ("LOS ANGELES", "a bus, please", True),  # capitals are no code
    ("广州南站", "I want a bus", True),  # a short CJK value is checked
    ("Zürich", "a bus from Zurich", False),  # accents
    ("San Diego", "from SAN DIEGO!", False),
])
def test_values_are_compared_as_whole_words_without_accents(value: str, said: str,
                                                            is_made_up: bool) -> None:
    tool = _bus_and_weather()[0]["find_bus"]
    call = ToolCall("find_bus", {"from_city": value, "to_city": value})
    assert bool(_grounding.made_up(call, tool.parameters, _stated(said))) is is_made_up


def test_an_example_in_a_description_is_no_option_and_a_default_or_const_is() -> None:
    spec = {"type": "object", "required": ["city"], "properties": {"city": {
        "type": "string", "description": "The city, e.g. 'San Francisco, CA'.",
        "default": "Sacramento"}}}
    said = _stated("A bus, please.")
    assert _grounding.made_up(ToolCall("t", {"city": "San Francisco, CA"}), spec, said)
    assert _grounding.made_up(ToolCall("t", {"city": "Sacramento"}), spec, said) == []
    const = {"type": "object", "required": ["scale"],
             "properties": {"scale": {"type": "string", "const": "celsius_scale"}}}
    assert _grounding.made_up(ToolCall("t", {"scale": "celsius_scale"}), const, said) == []


@pytest.mark.parametrize("first", [
    "I will look up buses from Springfield to Shelbyville.",  # feedback quotes the reply
    act("Springfield_Shelbyville"),  # the unknown tool's result names it
])
def test_what_the_run_echoes_back_grounds_no_value(first: str) -> None:
    from react_agent.policies import GroundValues

    toolbox, ran = _bus_and_weather()
    bus = act("find_bus", from_city="Springfield", to_city="Shelbyville")
    model = ScriptedModel([first, bus, final("Where from?")])
    Agent(model, toolbox, policies=[GroundValues()]).run("I'm looking for a bus.")
    assert ran == []


def test_a_refusal_quotes_at_most_the_start_of_a_long_value() -> None:
    from react_agent.policies import GroundValues

    toolbox, _ = _bus_and_weather()
    long = "Springfield " * 5_000
    model = ScriptedModel([act("find_bus", from_city=long, to_city="Shelbyville"), final("?")])
    result = Agent(model, toolbox, policies=[GroundValues()]).run("A bus, please.")
    refusal = result.steps[0].results[0]
    assert refusal.error == "made_up" and len(refusal.observation) < 1_000
