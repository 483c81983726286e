"""The Printer: it turns a run's events into a readable thought chain."""

from __future__ import annotations

import io
import json
import re

import pytest

from react_agent import Agent, ModelError, OutputParseError, Toolbox, parse_reply
from react_agent.harness._display import Printer, summary, usage_lines
from react_agent.models import ScriptedModel
from react_agent.policies import Review, default_policies
from react_agent.types import ModelReply

ANSI = re.compile(r"\x1b\[[0-9;]*m")

REPLIES = [
    json.dumps({"thought": "I need the weather.",
                "action": {"name": "get_weather", "args": {"city": "北京"}}}),
    json.dumps({"thought": "Try an unknown city.",
                "action": {"name": "get_weather", "args": {"city": "Atlantis"}}}),
    "no JSON here",
    json.dumps({"thought": "I have it.", "action": {"final_answer": "北京: sunny, 3 °C."}}),
    json.dumps({"thought": "Complete.", "action": {"final_answer": "北京 is sunny, 3 °C."}}),
]
REVIEW_ALWAYS = default_policies(use=[Review(mode="always")])  # the draft is reviewed


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def agent() -> Agent:
    toolbox = Toolbox()

    @toolbox.tool
    def get_weather(city: str) -> str:
        """Get the current weather for a city."""
        if city == "Atlantis":
            raise LookupError("unknown city")
        return "sunny, 3 °C"

    return Agent(ScriptedModel(REPLIES), toolbox, policies=REVIEW_ALWAYS)


def print_run(agent: Agent, stream: io.StringIO, **options: object) -> str:
    printer = Printer(stream, **options)  # type: ignore[arg-type]
    for event in agent.iter("北京天气怎么样?"):
        printer(event)
    return stream.getvalue()


def parse_problem(reply: str) -> str:
    with pytest.raises(OutputParseError) as info:
        parse_reply(reply)
    return info.value.problem


def test_thought_chain_lines(agent: Agent) -> None:
    lines = print_run(agent, io.StringIO()).splitlines()
    assert lines[:9] == [
        "Task: 北京天气怎么样?",
        "Thought: I need the weather.",
        'Action: get_weather {"city": "北京"}',
        "Observation: sunny, 3 °C",
        "Thought: Try an unknown city.",
        'Action: get_weather {"city": "Atlantis"}',
        "Observation: Error: LookupError: unknown city",
        f"Unusable reply: {parse_problem('no JSON here')} (asking again)",
        "Thought: I have it.",
    ]
    assert lines[9:13] == [
        "Draft answer: 北京: sunny, 3 °C.",
        "Review: the draft answer is reviewed every time (Review(mode='always')); asking again "
        "in a focused call",
        "Thought: Complete.", "Final answer: 北京 is sunny, 3 °C."]
    assert lines[13].startswith("Status: final_answer, 5 model calls, 2 tool calls, ")
    assert lines[13].endswith(" s")
    assert len(lines) == 14


@pytest.mark.parametrize(
    ("stream_class", "color", "no_color_env", "expect_ansi"),
    [
        (io.StringIO, None, False, False),   # not a terminal
        (FakeTTY, None, False, True),        # a terminal
        (FakeTTY, None, True, False),        # a terminal, but NO_COLOR is set
        (io.StringIO, True, False, True),    # forced on
        (FakeTTY, False, False, False),      # forced off
    ],
)
def test_colours(
    agent: Agent, monkeypatch: pytest.MonkeyPatch, stream_class: type[io.StringIO],
    color: bool | None, no_color_env: bool, expect_ansi: bool,
) -> None:
    if no_color_env:
        monkeypatch.setenv("NO_COLOR", "1")
    else:
        monkeypatch.delenv("NO_COLOR", raising=False)
    text = print_run(agent, stream_class(), color=color)
    assert bool(ANSI.search(text)) is expect_ansi
    assert "Final answer:" in ANSI.sub("", text)


def test_colour_codes_per_kind(agent: Agent) -> None:
    text = print_run(agent, io.StringIO(), color=True)
    assert "\x1b[36mThought:\x1b[0m I need the weather." in text
    assert "\x1b[33mAction:\x1b[0m get_weather" in text
    assert "\x1b[32mObservation:\x1b[0m sunny, 3 °C" in text
    assert "\x1b[31mObservation:\x1b[0m Error: LookupError" in text  # a failed call is red
    assert "\x1b[1;35mFinal answer:\x1b[0m" in text
    # Without colours the same text remains.
    plain = print_run(
        Agent(ScriptedModel(REPLIES), agent.toolbox, policies=REVIEW_ALWAYS), io.StringIO(),
        color=False,
    )
    assert ANSI.sub("", text) == plain


def test_long_observation_shortened_on_screen_only() -> None:
    toolbox = Toolbox()

    @toolbox.tool
    def long_report() -> str:
        """A long report."""
        return "z" * 300

    replies = [
        json.dumps({"thought": "t", "action": {"name": "long_report", "args": {}}}),
        json.dumps({"thought": "t", "action": {"final_answer": "done"}}),
    ]
    stream = io.StringIO()
    printer = Printer(stream, max_observation_chars=50)
    result = None
    for event in Agent(ScriptedModel(replies), toolbox).iter("task"):
        printer(event)
        result = getattr(event, "result", result)
    assert "Observation: " + "z" * 50 + " [... 300 chars in all]" in stream.getvalue()
    assert result is not None
    assert result.steps[0].observations == ["z" * 300]


def test_summary_counts_what_the_run_kept(agent: Agent) -> None:
    result = agent.run("task")
    tokens = result.usage["prompt_tokens"] + result.usage["completion_tokens"]
    assert tokens > 0
    line = f"final_answer, 5 model calls, 2 tool calls, {tokens} tokens, "
    assert summary(result).startswith(line)


def test_summary_of_a_failed_run_says_why_on_its_own_line(agent: Agent) -> None:
    def down(messages: object) -> str:
        raise ModelError("The model server at http://127.0.0.1:9/v1 is down.", cause="connection")

    agent.model = ScriptedModel([REPLIES[0], down])
    result = agent.run("task")
    first, second = summary(result).split("\n")
    assert first.startswith("model_error, ") and ", 1 tool call, " in first
    assert second == result.error == "The model server at http://127.0.0.1:9/v1 is down."


def test_a_resumed_run_says_so() -> None:
    from react_agent import Toolbox as TB

    tb = TB()
    tb.add(lambda: "ok", name="noop", description="Does nothing.")
    act = '{"thought": "t", "action": {"name": "noop", "args": {}}}'
    first = Agent(ScriptedModel([act]), tb, max_steps=1,
                  policies=default_policies(off=["best_effort"])).run("task")
    out = io.StringIO()
    agent = Agent(ScriptedModel(['{"thought": "t", "action": {"final_answer": "done"}}']), tb,
                  callbacks=[Printer(out)])
    agent.resume(first)
    lines = out.getvalue().splitlines()
    assert lines[:2] == ["Task: task", "Resuming: after 1 step of the saved run"]



def test_a_final_answer_taken_by_the_answer_floor_says_so() -> None:
    class Floored(ScriptedModel):  # a backend whose floor took the final answer
        accepts_answer_floor = True

        def complete(self, messages, schema=None, strict=False, answer_floor=None):  # type: ignore[no-untyped-def, override]
            reply = super().complete(messages, schema, strict)
            return ModelReply(reply.text, answer_probability=0.21, answer_taken=True)

    reply = '{"thought": "No tool fits.", "action": {"final_answer": "Bonjour."}}'
    lines = print_run(Agent(Floored([reply]), Toolbox()), io.StringIO()).splitlines()
    assert lines[1:4] == [
        "Thought: No tool fits.",
        "Answer floor: the model gave the final answer 21% of the probability where it chose "
        "its action; taking it instead of a tool call",
        "Final answer: Bonjour.",
    ]


def test_usage_lines_name_the_policy_of_an_extra_call() -> None:
    from react_agent.policies import Relevance

    call = json.dumps({"thought": "t", "action": {"name": "get_weather", "args": {"city": "北京"}}})
    question = ModelReply("yes", choices={"yes": 0.9, "no": 0.1}, prompt_tokens=50,
                          completion_tokens=0)
    replies = [call, question, REPLIES[3], REPLIES[4]]
    toolbox = Toolbox()
    toolbox.tool(lambda city: "sunny", name="get_weather", description="Weather of a city.")
    policies = default_policies(use=[Relevance(), Review(mode="always")])
    agent = Agent(ScriptedModel(replies), toolbox, policies=policies)
    result = agent.run("北京天气怎么样?")
    assert [s.origin for s in result.steps] == [None, "relevance", None, "review"]
    lines = usage_lines(result)
    assert lines[0].endswith("tools 0.00 s")  # a step of the loop: no label
    assert lines[1].endswith("; relevance's question (its choices scored, nothing decoded)")
    assert lines[2].endswith("tools 0.00 s")
    assert lines[3].endswith("; review's call")
    assert lines[4].startswith("in all: ")
