"""The contract a tool-calling server keeps with its clients, modelled on vLLM's
``tests/tool_use``, checked on ``react-agent serve`` with the scripted backend: the
``finish_reason``, call ids, the shape of a streamed reply, ``tool_choice`` and
``parallel_tool_calls``, a repeated call after its result came back, and errors."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from typing import Any

import httpx2
import openai
import pytest

from react_agent.models import ScriptedModel
from react_agent.serve import ServeConfig, create_app, running

WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "Get the current weather of a city.",
    "parameters": {"type": "object", "properties": {
        "city": {"type": "string"}, "unit": {"type": "string", "enum": ["C", "F"]}},
        "required": ["city"]}}}
TIME = {"type": "function", "function": {
    "name": "get_time", "description": "The local time of a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                   "required": ["city"]}}}
TOOLS = [WEATHER, TIME]
USER = [{"role": "user", "content": "Weather and time in Paris and Rome?"}]


def reply(action: Any, thought: str = "I look it up.") -> str:
    return json.dumps({"thought": thought, "action": action}, ensure_ascii=False)


def call(name: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "args": args}


ONE = reply(call("get_weather", city="Paris", unit="C"))
THREE = reply([call("get_weather", city="Paris"), call("get_weather", city="Rome"),
               call("get_time", city="Rome")])
ANSWER = reply({"final_answer": 'It is 18 °C in Paris ("mild"), \\ and 20 in Rome.'}, "Done.")


@pytest.fixture
def client() -> Iterator[Callable[[list[str]], openai.OpenAI]]:
    """``client(replies)``: an openai client of a server whose model gives ``replies``."""
    with contextlib.ExitStack() as stack:
        def make(replies: list[str], **options: Any) -> openai.OpenAI:
            url = stack.enter_context(running(create_app(
                ScriptedModel(list(replies), chunk_chars=3), ServeConfig(**options))))
            return openai.OpenAI(base_url=url, api_key="unused", max_retries=0)

        yield make


def create(client: openai.OpenAI, **request: Any) -> Any:
    return client.chat.completions.create(model="any", **{"messages": USER, "tools": TOOLS,
                                                          **request})


def stream(client: openai.OpenAI, **request: Any) -> list[Any]:
    return list(create(client, stream=True, **request))


@pytest.mark.parametrize("replies, calls", [([ONE], 1), ([THREE], 3), ([ANSWER], 0)],
                         ids=["one call", "parallel calls", "no call"])
def test_finish_reason_is_tool_calls_exactly_when_there_are_calls(
    client: Callable[..., openai.OpenAI], replies: list[str], calls: int
) -> None:
    choice = create(client(replies)).choices[0]
    assert len(choice.message.tool_calls or []) == calls
    assert choice.finish_reason == ("tool_calls" if calls else "stop")
    if not calls:
        assert choice.message.content == 'It is 18 °C in Paris ("mild"), \\ and 20 in Rome.'


def test_call_ids_are_unique_and_long_enough(client: Callable[..., openai.OpenAI]) -> None:
    ids: list[str] = []
    server = client([THREE] * 3)
    for _ in range(3):
        ids += [c.id for c in create(server).choices[0].message.tool_calls]
    assert len(ids) == 9 and len(set(ids)) == 9
    assert all(len(i) >= 9 for i in ids)


def test_typed_empty_and_escaped_arguments_arrive_as_json_objects(
    client: Callable[..., openai.OpenAI]
) -> None:
    news = {"type": "function", "function": {
        "name": "get_news", "description": "Headlines.",
        "parameters": {"type": "object", "properties": {
            "limit": {"type": "integer"}, "query": {"type": "string"}}}}}
    replies = [reply([call("get_news"),
                      call("get_news", limit="3", query='say "hi" \\ ok\nnext')])]
    calls = create(client(replies), tools=[news]).choices[0].message.tool_calls
    assert [json.loads(c.function.arguments) for c in calls] == [
        {}, {"limit": 3, "query": 'say "hi" \\ ok\nnext'}]


@pytest.mark.parametrize("replies", [[ONE], [THREE]], ids=["one call", "parallel calls"])
def test_a_stream_sends_the_role_and_each_name_once_and_the_same_arguments(
    client: Callable[..., openai.OpenAI], replies: list[str]
) -> None:
    whole = create(client(replies)).choices[0]
    chunks = stream(client(replies))
    deltas = [c.choices[0].delta for c in chunks if c.choices]
    assert sum(d.role == "assistant" for d in deltas) == 1
    names: dict[int, list[str]] = {}
    arguments: dict[int, str] = {}
    ids: dict[int, list[str]] = {}
    for delta in deltas:
        for piece in delta.tool_calls or []:
            if piece.function and piece.function.name:
                names.setdefault(piece.index, []).append(piece.function.name)
            if piece.id:
                ids.setdefault(piece.index, []).append(piece.id)
            if piece.function and piece.function.arguments:
                arguments[piece.index] = arguments.get(piece.index, "") + piece.function.arguments
    expected = whole.message.tool_calls
    assert [names[i] for i in sorted(names)] == [[c.function.name] for c in expected]
    assert all(len(v) == 1 for v in ids.values())
    assert [json.loads(arguments[i]) for i in sorted(arguments)] == \
        [json.loads(c.function.arguments) for c in expected]
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "tool_calls"


def test_a_streamed_answer_is_the_whole_answer(client: Callable[..., openai.OpenAI]) -> None:
    chunks = stream(client([ANSWER]))
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == 'It is 18 °C in Paris ("mild"), \\ and 20 in Rome.'
    assert not any(c.choices[0].delta.tool_calls for c in chunks if c.choices)


def test_tool_choice_required_is_never_answered_with_text(
    client: Callable[..., openai.OpenAI]
) -> None:
    server = client([ANSWER, ANSWER, ONE])
    choice = create(server, tool_choice="required").choices[0]
    assert choice.finish_reason == "tool_calls" and choice.message.tool_calls
    failing = client([ANSWER] * 4)
    choice = create(failing, tool_choice="required").choices[0]
    assert not choice.message.tool_calls  # no usable reply: the raw text, flagged
    assert choice.finish_reason == "stop"


def test_tool_choice_none_gives_text_and_a_named_function_that_function(
    client: Callable[..., openai.OpenAI]
) -> None:
    none = create(client([ONE, ANSWER]), tool_choice="none").choices[0]
    assert none.finish_reason == "stop" and not none.message.tool_calls
    named = create(client([ONE, reply(call("get_time", city="Rome"))]),
                   tool_choice={"type": "function", "function": {"name": "get_time"}})
    (only,) = named.choices[0].message.tool_calls
    assert only.function.name == "get_time"


def test_parallel_tool_calls_false_gives_at_most_one_call(
    client: Callable[..., openai.OpenAI]
) -> None:
    calls = create(client([THREE]), parallel_tool_calls=False).choices[0].message.tool_calls
    assert len(calls) == 1
    chunks = stream(client([THREE]), parallel_tool_calls=False)
    indexes = {p.index for c in chunks if c.choices for p in c.choices[0].delta.tool_calls or []}
    assert indexes == {0}


def test_a_repeated_call_after_its_result_is_not_passed_to_the_client(
    client: Callable[..., openai.OpenAI]
) -> None:
    server = client([ONE, ONE, ANSWER])
    first = create(server).choices[0].message
    history = [*USER, first.model_dump(exclude_none=True),
               {"role": "tool", "tool_call_id": first.tool_calls[0].id, "content": "18 °C"}]
    second = create(server, messages=history).choices[0]
    assert second.finish_reason == "stop" and not second.message.tool_calls
    assert "18 °C" in second.message.content


@pytest.mark.parametrize("request_, status", [
    ({"tools": [{"type": "function", "function": {"name": "x y"}}]}, 400),
    ({"tool_choice": {"type": "function", "function": {"name": "nope"}}}, 400),
    ({"messages": []}, 400),
    ({"n": 2}, 400),
])
def test_errors_have_openais_shape(
    client: Callable[..., openai.OpenAI], request_: dict[str, Any], status: int
) -> None:
    server = client([ONE])
    body = {"model": "any", "messages": USER, "tools": TOOLS, **request_}
    response = httpx2.post(f"{server.base_url}chat/completions", json=body)
    assert response.status_code == status
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"} and error["message"]
    with pytest.raises(openai.BadRequestError):
        create(server, **request_)
