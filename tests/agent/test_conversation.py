"""Conversations: turns sharing a history, summarising old turns, saving."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from helpers import observed
from scenarios import check_run, seed_turns
from tools import seed004

from react_agent import Agent, ConfigError, ModelError, Toolbox
from react_agent.agent._conversation import SUMMARY_ACK, Conversation, estimate_tokens
from react_agent.events import HistoryCompressed, RunStarted
from react_agent.models import ScriptedModel
from react_agent.models.base import Message
from react_agent.policies import default_policies
from react_agent.prompts import render


def act(name: str, **args: Any) -> str:
    return json.dumps({"thought": f"call {name}", "action": {"name": name, "args": args}})


def final(answer: str) -> str:
    return json.dumps({"thought": "answer", "action": {"final_answer": answer}})


def test_seed004_turns_share_the_history() -> None:
    turns = [t.spec for t in seed_turns("004")]
    model = ScriptedModel([
        act("get_current_weather", location="Tokyo"), final("It is 10 °C in Tokyo."),
        act("get_stock_price", ticker="AAPL"), final("AAPL is at 150.0."),
        final("You asked about Tokyo."),
    ])
    chat = Agent(model, seed004, policies=default_policies(off=["review"])).chat()
    results = [chat.ask(t["user"]) for t in turns]
    assert [check_run(r, t) for r, t in zip(results, turns, strict=True)] == [[], [], []]
    second_input = "\n".join(m["content"] for m in model.calls[2])
    for needle in turns[1]["memory"]["model_input_must_contain"]:
        assert needle in second_input
    third_input = model.calls[4]
    assert third_input[1] == {"role": "user", "content": "What's the weather in Tokyo?"}
    assert [m["role"] for m in third_input].count("system") == 1
    assert len(chat.turns) == 3 and chat.messages == results[-1].messages
    assert results[2].steps[0].index == 1, "each turn numbers its own steps"


def test_reset_forgets() -> None:
    model = ScriptedModel([final("one"), final("two")])
    chat = Agent(model).chat()
    chat.ask("first")
    chat.reset()
    chat.ask("second")
    assert [m["role"] for m in model.calls[1]] == ["system", "user"]
    assert chat.turns[0].task == "second"


def test_save_and_load_continue_the_conversation(tmp_path: Path) -> None:
    chat = Agent(ScriptedModel([final("Paris is sunny.")])).chat()
    chat.ask("Weather in Paris?")
    chat.save(tmp_path / "chat.json")
    model = ScriptedModel([final("You asked about Paris.")])
    again = Conversation.load(Agent(model, instructions="Be brief."), tmp_path / "chat.json")
    result = again.ask("What did I ask?")
    sent = model.calls[0]
    assert "Be brief." in sent[0]["content"], "the new agent's system prompt is used"
    assert sent[1:3] == [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": final("Paris is sunny.")},
    ]
    assert result.final_answer == "You asked about Paris."
    assert [t.task for t in again.turns] == ["Weather in Paris?", "What did I ask?"]


SYSTEM = '{"role": "system", "content": "s"}'


@pytest.mark.parametrize(("text", "message"), [
    ('{"messages": []}', r"conversation\.messages: expected at least 1 item"),
    (f'{{"messages": [{SYSTEM}]}}', r"conversation\.turn_starts: missing"),
    (f'{{"messages": [{SYSTEM}], "turn_starts": [Infinity], "turns": []}}',
     r"conversation\.turn_starts\[0\]: expected an integer, got Infinity"),
    (f'{{"messages": [{SYSTEM}], "turn_starts": [1], "turns": [{{"task": "t"}}]}}',
     r"x\.json: turns\[0\]\.status: missing"),
])
def test_loading_a_bad_file(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "x.json").write_text(text)
    with pytest.raises(ConfigError, match=message):
        Conversation.load(Agent(ScriptedModel([])), tmp_path / "x.json")


# -- summarising old turns ----------------------------------------------------------------------
def scripted_person(summaries: list[str]) -> ScriptedModel:
    """Answers turn N about fact N with one tool call, and summarises when asked."""

    def respond(messages: Sequence[Message]) -> str:
        last = messages[-1]["content"]
        if last.startswith("Summarize the conversation"):
            summaries.append(last)
            return "The user asked about facts; the lookup tool gave their values."
        if results := observed(last):
            return final(f"The value is {results[0].split()[0]}.")
        return act("lookup", key=last.split()[-1].rstrip("?"))

    return ScriptedModel([respond] * 200)


def lookup_toolbox() -> Toolbox:
    tb = Toolbox()

    @tb.tool
    def lookup(key: str) -> str:
        """Look a key up."""
        return f"{key}-value " + "filler " * 60

    return tb


def test_old_turns_are_summarised_and_recent_ones_kept() -> None:
    summaries: list[str] = []
    model = scripted_person(summaries)
    agent = Agent(model, lookup_toolbox(), policies=default_policies(off=["review"]))
    chat = Conversation(agent, max_history_tokens=1500, keep_last=2)
    events: list[Any] = []
    for n in range(1, 13):
        events += list(chat.iter(f"What is fact{n}?"))
    compressed = [e for e in events if isinstance(e, HistoryCompressed)]
    assert compressed and all(e.error is None for e in compressed)
    assert all(e.tokens_after < e.tokens_before for e in compressed)
    first = compressed[0]
    assert first.turns >= 1
    assert "What is fact1?" in summaries[0] and "fact1-value" in summaries[0]
    # the history: system, summary, ack, then the last turns verbatim
    assert chat.messages[0]["role"] == "system"
    assert chat.messages[1]["content"].startswith("Summary of our earlier conversation")
    assert chat.messages[2]["content"] == render(SUMMARY_ACK)
    assert chat.messages[-8]["content"] == "What is fact11?"
    assert chat.messages[-4]["content"] == "What is fact12?"
    assert len(chat.turns) == 12 and chat.turns[0].task == "What is fact1?"
    assert chat.history_tokens() <= 1500 + 200  # back under budget (plus one turn)
    # the next call after a summary sees the summary, not the old turns
    after = next(i for i, e in enumerate(events) if isinstance(e, HistoryCompressed))
    assert isinstance(events[after + 1], RunStarted)


def test_a_failed_summary_keeps_the_history() -> None:
    def respond(messages: Sequence[Message]) -> str:
        if messages[-1]["content"].startswith("Summarize"):
            raise ModelError("server down", cause="connection")
        return final("ok " * 300)

    chat = Conversation(Agent(ScriptedModel([respond] * 20)), max_history_tokens=200, keep_last=1)
    chat.ask("one")
    chat.ask("two")
    before = list(chat.messages)
    result = chat.ask("three")
    assert result.status == "final_answer"
    assert chat.compressions[-1].error == "ModelError: server down"
    assert chat.messages[: len(before)] == before


def test_no_summary_when_disabled_or_under_budget() -> None:
    chat = Conversation(Agent(ScriptedModel([final("x")] * 5)), max_history_tokens=None)
    for n in range(5):
        chat.ask(f"q{n}")
    assert chat.compressions == [] and len(chat.messages) == 1 + 2 * 5


def test_estimate_tokens() -> None:
    assert estimate_tokens("abcd" * 10) == 10
    assert estimate_tokens("北京天气") == 4
    assert estimate_tokens("") == 0


def test_keep_last_must_be_positive() -> None:
    with pytest.raises(ConfigError, match="keep_last"):
        Conversation(Agent(ScriptedModel([])), keep_last=0)
