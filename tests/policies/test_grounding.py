"""Tests for react_agent.policies._grounding: a contact detail from nowhere is refused
(:func:`ungrounded`, :class:`~react_agent.policies.GroundContacts`), and the values nobody
stated are found (:func:`unstated`, used by :class:`~react_agent.policies.HoldDependentCalls`)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from helpers import act, directory_and_mail, final

from react_agent import Agent
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
