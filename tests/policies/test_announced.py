"""Tests for react_agent.policies._announced: a final answer that announces an action instead of
reporting one is sent back (:class:`~react_agent.policies.AnnouncedAction`)."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import act, directory_and_mail, final, weather_and_units

from react_agent import Agent, ConfigError, Step, Toolbox
from react_agent.events import AnswerToken
from react_agent.models import ScriptedModel
from react_agent.policies import AnnouncedAction, default_policies
from react_agent.policies._announced import announcement


def _mail() -> Toolbox:
    return directory_and_mail()[0]


@pytest.mark.parametrize("answer", [
    "I will send the email to Ann now.",
    "Sure. I'll email Ann the agenda.",
    "Let me send that message to Ann right away.",
    "I am going to write to Ann about it.",
    "我这就给安发邮件。",
    "好的，我会给安发一封邮件。",
])
def test_an_announced_action_a_tool_could_take_is_found(answer: str) -> None:
    assert announcement(answer, _mail(), "Tell Ann the meeting moved.") is not None


@pytest.mark.parametrize(("answer", "said"), [
    ("I sent the email to Ann.", "Email Ann"),  # done, reported
    ("Let me know if you need anything else.", "Email Ann"),
    ("I'll be happy to help with anything else.", "Email Ann"),
    ("I will need Ann's address to send it.", "Email Ann"),
    ("I will not be able to send the email because the address was not found.", "Email Ann"),
    ("I will never send mail without an address.", "Email Ann"),
    ("我将无法发送邮件，因为没有找到地址。", "Email Ann"),  # what it will not do
    ("If you like, I will send the email now.", "Email Ann"),
    ("Once you confirm, I'll send it.", "Email Ann"),
    ("I'll reach out to Ann myself.", "No email, I'll reach out to Ann myself."),  # theirs
    ("I'll take a jacket tomorrow.", "Should I take a jacket?"),  # no tool does that
    ("It is 18 °C in Paris.", "Weather?"),
])
def test_an_answer_that_announces_nothing_a_tool_does_is_left_alone(answer: str, said: str
                                                                      ) -> None:
    assert announcement(answer, _mail(), said) is None
    assert announcement("I will send the email.", Toolbox(), said) is None  # no tools


def test_the_model_is_asked_to_act_and_the_run_ends_with_what_was_done() -> None:
    toolbox, sent = directory_and_mail()
    model = ScriptedModel([final("I will send the email to Ann now."),
                           act("send_email", to="ann@example.com", body="moved"),
                           final("I sent Ann the email.")])
    events: list[object] = []
    result = Agent(model, toolbox, policies=[AnnouncedAction(max_asks=1)],
                   callbacks=[events.append],
                   stream=True).run("Email ann@example.com that the meeting moved.")
    assert sent == ["ann@example.com"]
    assert result.final_answer == "I sent Ann the email."
    first = result.steps[0]
    assert first.records["announced"] == {"sentence": "I will send the email to Ann now."}
    assert [note[:2] for note in first.notes] == [["announced", "Announced"]]
    feedback = model.calls[1][-1]["content"]
    assert "reports what was done" in feedback and "I will send the email" in feedback
    streamed = "".join(e.text for e in events if isinstance(e, AnswerToken))
    assert streamed == "I sent Ann the email."  # the answer sent back was not streamed
    assert Step.from_dict(first.to_dict()).records == first.records


def test_it_asks_max_asks_times_per_run_then_takes_the_answer() -> None:
    toolbox, sent = directory_and_mail()
    model = ScriptedModel([final("I will send the email to Ann now."),
                           final("I will send the email to Ann soon.")])
    agent = Agent(model, toolbox, policies=[AnnouncedAction(max_asks=1)])
    result = agent.run("Email ann@example.com that the meeting moved.")
    assert sent == [] and result.status == "final_answer"
    assert result.final_answer == "I will send the email to Ann soon."
    assert sum("announced" in s.records for s in result.steps) == 1


def test_the_reply_to_an_answer_sent_back_gets_no_answer_floor_and_a_second_ask() -> None:
    toolbox, sent = directory_and_mail()
    model = ScriptedModel([final("I will send the email to Ann now."),
                           final("I will send the email to Ann now."),  # the feedback's quote
                           act("send_email", to="ann@example.com", body="moved"),
                           final("I sent Ann the email.")])
    floors: list[object] = []

    class Floor(AnnouncedAction):  # what the answer floor (earlier in ORDER) asks for
        def before_query(self, run: Any, query: Any) -> None:
            query.answer_floor = 0.035
            super().before_query(run, query)
            floors.append(query.answer_floor)

    result = Agent(model, toolbox, policies=[Floor(max_asks=2)]).run(
        "Email ann@example.com that the meeting moved.")
    assert sent == ["ann@example.com"] and result.final_answer == "I sent Ann the email."
    assert floors == [0.035, None, None, 0.035]  # none for a reply to an answer sent back
    assert [s.records.get("announced") for s in result.steps[:2]] == [
        {"sentence": "I will send the email to Ann now."}] * 2
    assert [n[1] for s in result.steps for n in s.notes] == ["Announced", "Announced"]


def test_max_asks_must_not_be_negative() -> None:
    with pytest.raises(ConfigError, match="max_asks"):
        AnnouncedAction(max_asks=-1)


def test_it_is_off_by_default() -> None:
    toolbox, _ = weather_and_units()
    model = ScriptedModel([final("I will convert it for you.")])
    result = Agent(model, toolbox, policies=default_policies(off=["review"])).run("Convert 3 C")
    assert result.final_answer == "I will convert it for you."


def test_only_the_first_tools_and_the_start_of_their_descriptions_are_read() -> None:
    """Hostile input: 128 tools with 3.8 MB of description words made the check of one answer
    take 46 s; it reads the first MAX_TOOLS tools and MAX_DESCRIPTION_CHARS of each."""
    from react_agent.policies._announced import MAX_DESCRIPTION_CHARS, MAX_TOOLS

    many = Toolbox()
    for n in range(MAX_TOOLS + 1):
        many.add(lambda: "x", name=f"tool_{n}",
                 description="Does nothing. " + ("zz " * MAX_DESCRIPTION_CHARS) +
                 ("Sends faxes." if n == 0 else ""))
    many.add(lambda: "x", name="send_fax", description="Sends a fax.")  # past MAX_TOOLS
    assert announcement("I will fax it to Ann.", many, "Tell Ann.") is None
