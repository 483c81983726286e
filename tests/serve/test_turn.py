"""Tests for react_agent.serve._turn: one model turn read as tool calls or a final answer, unusable
replies asked again within the budget (never seen by the client), on the scripted model."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import pytest
from helpers import observed

from react_agent.agent._model_io import in_thread
from react_agent.errors import ModelError
from react_agent.models import ModelReply, ScriptedModel
from react_agent.policies import Policy
from react_agent.serve._openai import read_request
from react_agent.serve._turn import TurnResult, take_turn, turn_policies

WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "Weather of a city.",
    "parameters": {"type": "object", "properties": {
        "city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"]},
}}
NEWS = {"type": "function", "function": {
    "name": "get_news", "description": "Headlines.",
    "parameters": {"type": "object", "properties": {}}},
}


def act(*calls: tuple[str, dict[str, Any]]) -> str:
    action: Any = [{"name": n, "args": a} for n, a in calls]
    return json.dumps({"thought": "t", "action": action[0] if len(action) == 1 else action})


ANSWER = json.dumps({"thought": "done", "action": {"final_answer": "Sunny, \"22\" °C."}})


def turn(model: Any, stream: bool = False, max_retries: int = 3,
         policies: Sequence[Policy] | None = None, **request: Any) -> tuple[list[str], TurnResult]:
    body = {"messages": [{"role": "user", "content": "Weather in Paris?"}],
            "tools": [WEATHER, NEWS], **request}

    async def collect() -> tuple[list[str], TurnResult]:
        items = [i async for i in take_turn(model, read_request(body), max_retries=max_retries,
                                            stream=stream, policies=policies)]
        assert isinstance(items[-1], TurnResult)
        return items[:-1], items[-1]

    return asyncio.run(collect())


def test_a_usable_reply_is_one_attempt_with_cleaned_arguments() -> None:
    model = ScriptedModel([act(("get_weather", {"city": " Paris ", "days": "3"}))])
    pieces, result = turn(model)
    assert pieces == [] and result.error is None and result.attempts == 1
    assert [(c.name, c.args) for c in result.calls] == [("get_weather", {"city": "Paris",
                                                                        "days": 3})]
    assert result.calls[0].cleaning == ["city: stripped spaces", 'days: "3" -> 3']
    assert result.thought == "t" and result.stage == "direct"
    assert result.prompt_tokens > 100 and result.completion_tokens > 0


@pytest.mark.parametrize(
    ("first", "said", "request_options"),
    [
        ("I think it is sunny.", "It held no JSON object", {}),
        (act(("get_wether", {"city": "Paris"})),
         "there is no tool named 'get_wether' (did you mean 'get_weather'?)", {}),
        (act(("get_weather", {"town": "Paris"})), "town: unknown argument", {}),
        (ANSWER, "must call one of the tools (get_weather, get_news)",
         {"tool_choice": "required"}),
        (act(("get_news", {})), "It called get_news, but this reply must call get_weather",
         {"tool_choice": {"type": "function", "function": {"name": "get_weather"}}}),
    ],
)
def test_an_unusable_reply_is_asked_again_with_what_was_wrong(
    first: str, said: str, request_options: dict[str, Any]
) -> None:
    model = ScriptedModel([first, act(("get_weather", {"city": "Paris"}))])
    _, result = turn(model, **request_options)
    assert result.error is None and result.attempts == 2
    assert [c.name for c in result.calls] == ["get_weather"]
    retry = model.calls[1]
    assert retry[-2] == {"role": "assistant", "content": first}
    assert retry[-1]["content"].startswith("Error: your last reply could not be used.")
    assert said in retry[-1]["content"]


def test_no_tool_may_be_called_with_tool_choice_none() -> None:
    model = ScriptedModel([act(("get_weather", {"city": "Paris"})), ANSWER])
    _, result = turn(model, tool_choice="none")
    assert result.answer == 'Sunny, "22" °C.' and result.attempts == 2
    assert "no tool may be called now" in model.calls[1][-1]["content"]
    assert "call no tool" in model.calls[0][0]["content"]  # told in the system prompt first


def test_after_the_budget_the_text_comes_back_with_the_problem() -> None:
    model = ScriptedModel(["first try", "second try"])
    _, result = turn(model, max_retries=1)
    assert result.attempts == 2 and result.calls == [] and result.answer is None
    assert result.text == "second try"
    assert result.error is not None and result.error.kind == "no_json"
    _, once = turn(ScriptedModel(["only try"]), max_retries=0)
    assert once.attempts == 1 and once.error is not None


def test_without_parallel_calls_only_the_first_call_is_kept() -> None:
    reply = act(("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Rome"}))
    _, both = turn(ScriptedModel([reply]))
    assert [c.args["city"] for c in both.calls] == ["Paris", "Rome"]
    _, one = turn(ScriptedModel([reply]), parallel_tool_calls=False)
    assert [c.args["city"] for c in one.calls] == ["Paris"]


def test_the_answer_streams_as_it_is_written_and_calls_do_not() -> None:
    pieces, result = turn(ScriptedModel([ANSWER], chunk_chars=3), stream=True)
    assert len(pieces) > 3 and "".join(pieces) == result.answer == result.streamed
    pieces, result = turn(ScriptedModel([act(("get_news", {}))], chunk_chars=3), stream=True)
    assert pieces == [] and [c.name for c in result.calls] == ["get_news"]
    # where a call is required, a final answer must not reach the client: nothing streams
    model = ScriptedModel([ANSWER, act(("get_news", {}))], chunk_chars=3)
    pieces, result = turn(model, stream=True, tool_choice="required")
    assert pieces == [] and result.attempts == 2


def test_a_reply_whose_answer_was_already_streamed_is_not_asked_again() -> None:
    both = json.dumps({"thought": "t", "action": {"final_answer": "Sunny.",
                                                 "name": "get_news", "args": {}}})
    model = ScriptedModel([both, ANSWER], chunk_chars=4)
    pieces, result = turn(model, stream=True)
    assert "".join(pieces) == "Sunny." == result.streamed
    assert result.attempts == 1 and len(model.calls) == 1
    assert result.error is not None and result.error.kind == "ambiguous"


def test_backend_failures_are_model_errors() -> None:
    def down(messages: Sequence[Any]) -> str:
        raise ModelError("The model server at http://x/v1 failed.", cause="server")

    with pytest.raises(ModelError, match="http://x/v1") as info:
        turn(ScriptedModel([down]))
    assert info.value.cause == "server"

    class Broken:
        name = "broken"

        def complete(self, messages: Sequence[Any]) -> ModelReply:
            raise RuntimeError("out of cheese")

    with pytest.raises(ModelError, match="broken failed: RuntimeError: out of cheese"):
        turn(Broken())


def test_a_stream_given_up_early_is_closed_in_its_thread() -> None:
    closed = threading.Event()
    threads: set[str] = set()

    class Endless:
        name = "endless"

        def stream(self, messages: Sequence[Any]) -> Iterator[str]:
            try:
                while True:
                    threads.add(threading.current_thread().name)
                    yield "x"
            finally:
                closed.set()

    async def take_two() -> list[Any]:
        pieces = in_thread(lambda: Endless().stream([]))
        got = [await anext(pieces), await anext(pieces)]
        await pieces.aclose()
        return got

    assert asyncio.run(take_two()) == ["x", "x"]
    assert closed.wait(5)
    assert threading.current_thread().name not in threads


MULTIPLY = {"type": "function", "function": {
    "name": "multiply", "description": "Multiply two numbers.",
    "parameters": {"type": "object", "properties": {
        "a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]},
}}


def test_a_call_repeated_after_its_result_came_back_is_not_handed_out_again() -> None:
    """Issue 29: after the client sent back the result of multiply(23, 19), the model asked for
    the same call again; serve handed it out, and the client framework looped. Now the repeat
    is set aside as in the library and the final answer asked for in the same context."""
    body = {"tools": [MULTIPLY], "messages": [
        {"role": "user", "content": "What is 23 times 19? Use the tool."},
        {"role": "assistant", "content": "I multiply.", "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "multiply", "arguments": '{"a": 23, "b": 19}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "437"}]}
    repeat = act(("multiply", {"a": 23, "b": 19}))
    model = ScriptedModel([repeat, json.dumps(
        {"thought": "I have it.", "action": {"final_answer": "23 × 19 = 437."}})])

    async def collect() -> TurnResult:
        items = [i async for i in take_turn(model, read_request(body))]
        assert isinstance(items[-1], TurnResult)
        return items[-1]

    result = asyncio.run(collect())
    assert result.calls == [] and result.answer == "23 × 19 = 437." and result.error is None
    assert result.attempts == 2
    second = model.calls[1]
    assert observed(second[-1]["content"]) == ["437"]  # the repeat left the history
    assert all(m["content"] != repeat for m in second)


def test_a_repeat_is_handed_out_when_the_request_requires_a_call() -> None:
    body = {"tools": [MULTIPLY], "tool_choice": "required", "messages": [
        {"role": "user", "content": "Multiply 23 by 19."},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": "multiply", "arguments": '{"a": 23, "b": 19}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "437"}]}
    model = ScriptedModel([act(("multiply", {"a": 23, "b": 19}))])

    async def collect() -> TurnResult:
        return [i async for i in take_turn(model, read_request(body))][-1]  # type: ignore[return-value]

    result = asyncio.run(collect())
    assert [(c.name, c.args) for c in result.calls] == [("multiply", {"a": 23, "b": 19})]


def test_a_reply_with_thousands_of_calls_hands_out_at_most_a_step_of_them() -> None:
    calls = [("get_weather", {"city": f"City {i}"}) for i in range(5_000)]
    _, result = turn(ScriptedModel([act(*calls)]))
    assert result.error is None
    assert [c.args["city"] for c in result.calls] == [f"City {i}" for i in range(16)]


@dataclass(frozen=True)
class _SetsAside(Policy):
    name: ClassVar[str] = "sets_aside"
    sets_calls_aside: ClassVar[bool] = True


@dataclass(frozen=True)
class _Plain(Policy):
    name: ClassVar[str] = "plain"


def test_a_turns_policies_follow_what_each_policy_declares_not_its_name() -> None:
    plan = read_request({"messages": [{"role": "user", "content": "Weather?"}],
                         "tools": [WEATHER]})
    names = [p.name for p in turn_policies(plan, [_Plain(), _SetsAside(), _Plain()])]
    assert names == ["plain", "tool_choice", "sets_aside", "plain"]  # cleaned calls first
    assert [p.name for p in turn_policies(plan, [_Plain()])] == ["plain", "tool_choice"]
    required = read_request({"messages": [{"role": "user", "content": "Weather?"}],
                             "tools": [WEATHER], "tool_choice": "required"})
    assert [p.name for p in turn_policies(required, [_SetsAside(), _Plain()])] == [
        "plain", "tool_choice"]  # a reply must call a tool: nothing may set calls aside
    defaults = [p.name for p in turn_policies(plan)]
    assert "review" not in defaults and "best_effort" not in defaults  # runs_in_serve = False
    assert defaults.index("tool_choice") == defaults.index("repeat") - 1


# -- response_format json_schema: a typed final answer ------------------------------------------
FORECAST = {"type": "object", "properties": {"city": {"type": "string"},
                                             "celsius": {"type": "integer"}},
            "required": ["city", "celsius"], "additionalProperties": False}
TYPED = {"response_format": {"type": "json_schema",
                             "json_schema": {"name": "forecast", "schema": FORECAST}}}


def typed_answer(value: Any) -> str:
    return json.dumps({"thought": "done", "action": {"final_answer": value}})


@pytest.mark.parametrize("stream", [False, True])
def test_a_typed_answer_is_the_json_of_the_validated_value(stream: bool) -> None:
    model = ScriptedModel([typed_answer({"city": "Paris"}),
                           typed_answer({"city": "Paris", "celsius": "22"})])
    pieces, result = turn(model, stream=stream, **TYPED)
    assert pieces == []  # nothing handed out before the value validates
    assert result.error is None and result.attempts == 2
    assert json.loads(result.answer or "") == {"city": "Paris", "celsius": 22}
    assert "- celsius: missing" in model.calls[1][-1]["content"]
    assert '"celsius"' in model.calls[0][0]["content"]  # the system prompt shows the schema


def test_a_typed_answer_that_never_fits_is_an_error() -> None:
    model = ScriptedModel([typed_answer("Sunny.")] * 2)
    _, result = turn(model, max_retries=1, **TYPED)
    assert result.answer is None and result.error is not None
    assert result.error.kind == "output_invalid" and result.attempts == 2


def test_a_typed_turn_still_hands_out_tool_calls() -> None:
    model = ScriptedModel([act(("get_weather", {"city": "Paris"}))])
    _, result = turn(model, **TYPED)
    assert [c.name for c in result.calls] == ["get_weather"] and result.answer is None


def test_without_response_format_the_answer_is_text() -> None:
    _, result = turn(ScriptedModel([ANSWER]), response_format={"type": "text"})
    assert result.answer == 'Sunny, "22" °C.'


# -- a policy's focused question in a turn ---------------------------------------------------------
def _relevance_turn(replies: list[Any], **request: Any) -> tuple[list[str], TurnResult]:
    from react_agent.policies import Relevance, default_policies

    model = ScriptedModel(replies)
    policies = [p for p in default_policies(model, use=[Relevance()]) if p.runs_in_serve]
    return turn(model, stream=True, policies=policies,
                messages=[{"role": "user", "content": "What is 2 + 2?"}], **request)


def test_a_call_the_relevance_question_doubts_becomes_the_answer_of_the_turn() -> None:
    no = ModelReply("no", choices={"yes": 0.2, "no": 0.8})
    pieces, result = _relevance_turn([act(("get_weather", {"city": " Paris "})), no, ANSWER])
    assert result.calls == [] and result.answer == 'Sunny, "22" °C.'
    assert result.text == ANSWER and result.attempts == 3 and result.error is None
    assert pieces == []  # the answer asked again is not streamed: it comes whole


def test_a_call_the_relevance_question_keeps_is_handed_out_cleaned() -> None:
    yes = ModelReply("yes", choices={"yes": 0.9, "no": 0.1})
    call = act(("get_weather", {"city": " Paris ", "days": "3"}))
    _, result = _relevance_turn([call, yes])
    assert [(c.name, c.args) for c in result.calls] == [("get_weather", {"city": "Paris",
                                                                        "days": 3})]
    assert result.calls[0].cleaning == ["city: stripped spaces", 'days: "3" -> 3']
    assert result.text == call and result.attempts == 2


def test_a_turn_that_requires_a_call_asks_no_relevance_question() -> None:
    call = act(("get_weather", {"city": "Paris"}))
    _, result = _relevance_turn([call], tool_choice="required")
    assert [c.name for c in result.calls] == ["get_weather"] and result.attempts == 1


def test_when_no_answer_replaces_the_calls_the_turns_thought_is_the_calls_own() -> None:
    no = ModelReply("no", choices={"yes": 0.2, "no": 0.8})
    call = json.dumps({"thought": "first thought", "action": {"name": "get_weather",
                                                              "args": {"city": "Paris"}}})
    again = json.dumps({"thought": "again thought", "action": {"name": "get_news",
                                                               "args": {}}})
    _, result = _relevance_turn([call, no, again])
    assert [c.name for c in result.calls] == ["get_weather"]
    assert result.thought == "first thought" and result.text == call


def _missed_call_turn(replies: list[Any], **request: Any) -> tuple[list[str], TurnResult]:
    from react_agent.policies import MissedCall, default_policies

    model = ScriptedModel(replies)
    policies = [p for p in default_policies(model, use=[MissedCall()]) if p.runs_in_serve]
    return turn(model, stream=True, policies=policies, **request)


def test_an_answer_the_question_finds_a_tool_for_becomes_the_turns_cleaned_call() -> None:
    yes = ModelReply("yes", choices={"yes": 0.9, "no": 0.1})
    call = act(("get_weather", {"city": " Paris ", "days": "3"}))
    pieces, result = _missed_call_turn([ANSWER, yes, call])
    assert [(c.name, c.args) for c in result.calls] == [("get_weather", {"city": "Paris",
                                                                        "days": 3})]
    assert result.answer is None and result.text == call and result.attempts == 3
    assert pieces == []  # the answer set aside was never streamed


def test_an_answer_the_question_doubts_is_the_turns_answer() -> None:
    doubt = ModelReply("yes", choices={"yes": 0.5, "no": 0.5})
    pieces, result = _missed_call_turn([ANSWER, doubt])
    assert result.calls == [] and result.answer == 'Sunny, "22" °C.' and result.attempts == 2
    assert pieces == []  # it may have been set aside: it comes whole, not streamed


def test_a_turn_that_lets_no_tool_be_called_asks_no_missed_call_question() -> None:
    _, result = _missed_call_turn([ANSWER], tool_choice="none")
    assert result.answer == 'Sunny, "22" °C.' and result.attempts == 1


def test_a_call_asked_for_that_breaks_the_clients_schema_keeps_the_answer() -> None:
    yes = ModelReply("yes", choices={"yes": 0.9, "no": 0.1})
    bad = act(("get_weather", {"town": "Paris"}))
    _, result = _missed_call_turn([ANSWER, yes, bad])
    assert result.calls == [] and result.answer == 'Sunny, "22" °C.'
