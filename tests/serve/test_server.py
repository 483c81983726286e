"""Tests for react_agent.serve._app (``react-agent serve``): the endpoint runs on 127.0.0.1 and is
driven by clients no one here wrote: the ``openai`` SDK (sync and async, streamed and not) and the
OpenAI Agents SDK. The fast tests use the scripted model or a misbehaving OpenAI-compatible
server as the backend; the ``real_model`` ones the embedded model and a llama.cpp server."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx2
import openai
import pytest
from helpers import observed
from probes import CountingListener, opened

from react_agent.errors import ConfigError
from react_agent.models import ChatModel, OpenAIChatModel, ScriptedModel
from react_agent.policies import Policy, default_policies
from react_agent.serve import ServeConfig, create_app, running, server_options

WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "Get the current weather of a city.",
    "parameters": {"type": "object", "properties": {
        "city": {"type": "string", "description": "the city name"},
        "days": {"type": "int", "description": "forecast days"}},
        "required": ["city"]},
}}
USER = [{"role": "user", "content": "What's the weather in Paris?"}]


def act(name: str, args: dict[str, Any], thought: str = "I look it up.") -> str:
    return json.dumps({"thought": thought, "action": {"name": name, "args": args}})


def answer(text: str) -> str:
    return json.dumps({"thought": "I have it.", "action": {"final_answer": text}})


@pytest.fixture
def serve() -> Iterator[Callable[..., str]]:
    """``serve(model, **ServeConfig options) -> base URL`` of a running endpoint."""
    with contextlib.ExitStack() as stack:
        yield lambda model, **options: stack.enter_context(
            running(create_app(model, ServeConfig(**options))))


# -- the openai SDK through a complete tool loop ------------------------------------------------
def loop_model() -> ScriptedModel:
    return ScriptedModel([act("get_weather", {"city": " Paris ", "days": "2"}),
                          answer("It is sunny in Paris, 22 °C.")], chunk_chars=4)


def check_loop(model: ScriptedModel, first: Any, second: Any) -> None:
    """``first``: the call (a ChatCompletion); ``second``: the final answer."""
    choice = first.choices[0]
    assert choice.finish_reason == "tool_calls"
    (call,) = choice.message.tool_calls
    assert call.id.startswith("call_") and call.type == "function"
    assert call.function.name == "get_weather"
    assert json.loads(call.function.arguments) == {"city": "Paris", "days": 2}  # cleaned
    assert choice.message.content == "I look it up."
    final = second.choices[0]
    assert final.finish_reason == "stop" and not final.message.tool_calls
    assert final.message.content == "It is sunny in Paris, 22 °C."
    # the model saw the tool result as its own observation, after its own call
    sent = model.calls[1]
    assert json.loads(sent[-2]["content"])["action"] == {
        "name": "get_weather", "args": {"city": "Paris", "days": 2}}
    assert observed(sent[-1]["content"]) == ["22 °C, sunny"]


def tool_result(first: Any) -> list[dict[str, Any]]:
    message = first.choices[0].message
    return [*USER, message.model_dump(exclude_none=True),
            {"role": "tool", "tool_call_id": message.tool_calls[0].id, "content": "22 °C, sunny"}]


def test_openai_sync_tool_loop(serve: Callable[..., str]) -> None:
    model = loop_model()
    client = openai.OpenAI(base_url=serve(model), api_key="unused")
    first = client.chat.completions.create(model="any", messages=USER, tools=[WEATHER])
    second = client.chat.completions.create(model="any", messages=tool_result(first),
                                            tools=[WEATHER])
    check_loop(model, first, second)
    assert first.usage.prompt_tokens > 100 and first.usage.completion_tokens > 0
    assert first.model == "scripted"


def test_openai_sync_streamed_tool_loop(serve: Callable[..., str]) -> None:
    model = loop_model()
    client = openai.OpenAI(base_url=serve(model), api_key="unused")
    with client.chat.completions.stream(model="any", messages=USER, tools=[WEATHER]) as stream:
        first = stream.get_final_completion()  # the SDK puts the tool call deltas together
    chunks = list(client.chat.completions.create(
        model="any", messages=tool_result(first), tools=[WEATHER], stream=True,
        stream_options={"include_usage": True}))
    model.replies += [answer("Unread."), answer("Read.")]
    with client.chat.completions.stream(model="any", messages=USER, tools=[WEATHER]):
        pass  # a stream the client leaves unread does not hold the model
    assert client.chat.completions.create(model="any", messages=USER, tools=[WEATHER]) \
        .choices[0].message.content == "Read."
    pieces = [c.choices[0].delta.content for c in chunks
              if c.choices and c.choices[0].delta.content]
    assert len(pieces) > 3  # the answer arrives as the model writes it
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].usage is not None and chunks[-1].usage.total_tokens > 0
    second = openai.types.chat.ChatCompletion.model_validate({
        "id": "x", "created": 0, "model": "m", "object": "chat.completion",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": "".join(pieces)}}]})
    check_loop(model, first, second)


def test_openai_async_tool_loop_streamed_and_not(serve: Callable[..., str]) -> None:
    model = loop_model()
    url = serve(model)

    async def run() -> tuple[Any, Any, Any]:
        client = openai.AsyncOpenAI(base_url=url, api_key="unused")
        first = await client.chat.completions.create(model="any", messages=USER,
                                                     tools=[WEATHER])
        second = await client.chat.completions.create(model="any", messages=tool_result(first),
                                                      tools=[WEATHER])
        model.replies += [act("get_weather", {"city": "Paris"})]
        async with client.chat.completions.stream(model="any", messages=USER,
                                                  tools=[WEATHER]) as stream:
            streamed = await stream.get_final_completion()
        return first, second, streamed

    first, second, streamed = asyncio.run(run())
    check_loop(model, first, second)
    (call,) = streamed.choices[0].message.tool_calls
    assert (call.function.name, json.loads(call.function.arguments)) == (
        "get_weather", {"city": "Paris"})
    assert streamed.choices[0].finish_reason == "tool_calls"


@pytest.mark.parametrize("framed", [True, False])
def test_tool_results_are_framed_as_data_unless_turned_off(
    serve: Callable[..., str], framed: bool
) -> None:
    model = loop_model()
    client = openai.OpenAI(base_url=serve(model, frame_observations=framed), api_key="unused")
    first = client.chat.completions.create(model="any", messages=USER, tools=[WEATHER])
    client.chat.completions.create(model="any", messages=tool_result(first), tools=[WEATHER])
    system, observation = model.calls[1][0]["content"], model.calls[1][-1]["content"]
    assert "<data" not in system  # what a frame holds is said where the frames are
    assert observed(observation) == (["22 °C, sunny"] if framed else [])
    assert observation.startswith("Observation: 22 °C, sunny\n") is not framed


def test_parallel_calls_come_back_as_several_tool_calls(serve: Callable[..., str]) -> None:
    reply = json.dumps({"thought": "Both.", "action": [
        {"name": "get_weather", "args": {"city": "Paris"}},
        {"name": "get_weather", "args": {"city": "Rome"}}]})
    client = openai.OpenAI(base_url=serve(ScriptedModel([reply, reply])), api_key="unused")
    calls = client.chat.completions.create(model="any", messages=USER,
                                           tools=[WEATHER]).choices[0].message.tool_calls
    assert [json.loads(c.function.arguments)["city"] for c in calls] == ["Paris", "Rome"]
    assert len({c.id for c in calls}) == 2
    one = client.chat.completions.create(model="any", messages=USER, tools=[WEATHER],
                                         parallel_tool_calls=False)
    assert len(one.choices[0].message.tool_calls) == 1


def test_an_unreadable_reply_is_retried_then_returned_as_text(serve: Callable[..., str]) -> None:
    model = ScriptedModel(["Hmm.", "Let me think.", act("get_weather", {"city": "Paris"}),
                           "Still no JSON.", "Not JSON either.", "Nope."])
    client = openai.OpenAI(base_url=serve(model, max_parse_retries=2), api_key="unused")
    fixed = client.chat.completions.create(model="any", messages=USER, tools=[WEATHER])
    assert fixed.choices[0].message.tool_calls  # two retries the client never saw
    assert fixed.model_extra["react_agent"]["attempts"] == 3
    raw = client.chat.completions.with_raw_response.create(model="any", messages=USER,
                                                           tools=[WEATHER])
    assert raw.headers["x-react-agent-parse-error"] == "no_json"
    given_up = raw.parse()
    assert given_up.choices[0].message.content == "Nope."
    assert given_up.choices[0].finish_reason == "stop"
    assert "no JSON object" in given_up.model_extra["react_agent"]["parse_error"]
    assert len(model.calls) == 6


def test_requests_without_tools_pass_through(serve: Callable[..., str]) -> None:
    model = ScriptedModel(["Hello there!", "Streamed hello."], chunk_chars=3)
    client = openai.OpenAI(base_url=serve(model), api_key="unused")
    messages = [{"role": "system", "content": "Be nice."}, {"role": "user", "content": "Hi"}]
    reply = client.chat.completions.create(model="any", messages=messages)
    assert reply.choices[0].message.content == "Hello there!"
    assert model.calls[0] == messages  # no tool prompt, nothing added
    chunks = list(client.chat.completions.create(model="any", messages=messages, stream=True))
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == "Streamed hello."


# -- an OpenAI-compatible server as the backend ------------------------------------------------
def upstream(fault_server: Any, **options: Any) -> OpenAIChatModel:
    return OpenAIChatModel(base_url=fault_server.url, max_retries=0, **options)


def test_a_server_without_tools_gets_text_and_the_client_gets_calls(
    serve: Callable[..., str], fault_server: Any
) -> None:
    fault_server.script = [f"reply:<tool_call>{act('get_weather', {'city': 'Oslo'})}</tool_call>"]
    client = openai.OpenAI(base_url=serve(upstream(fault_server)), api_key="unused")
    reply = client.chat.completions.create(model="any", messages=USER, tools=[WEATHER])
    (call,) = reply.choices[0].message.tool_calls
    assert (call.function.name, json.loads(call.function.arguments)) == (
        "get_weather", {"city": "Oslo"})
    sent = fault_server.requests[-1]
    assert "tools" not in sent and sent["messages"][0]["role"] == "system"
    assert "get_weather" in sent["messages"][0]["content"]
    assert reply.model == "fault-model"


def test_without_tools_the_body_reaches_the_server_unchanged(
    serve: Callable[..., str], fault_server: Any
) -> None:
    fault_server.script = ["reply:plain hello"]
    client = openai.OpenAI(base_url=serve(upstream(fault_server)), api_key="unused")
    reply = client.chat.completions.create(
        model="whatever", messages=USER, temperature=0.7, max_tokens=33, seed=5,
        extra_body={"top_k": 12})
    assert reply.choices[0].message.content == "plain hello"
    sent = fault_server.requests[-1]
    assert sent == {"model": "fault-model", "messages": USER, "temperature": 0.7,
                    "max_tokens": 33, "seed": 5, "top_k": 12}
    chunks = list(client.chat.completions.create(model="x", messages=USER, stream=True))
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == \
        "plain hello"


@pytest.mark.parametrize(
    ("script", "status", "words", "streams"),
    [
        (["status:500:kaboom"], 502, "HTTP 500", (False, True)),
        (["garbage"], 502, "not an OpenAI-style JSON", (False,)),
        (["stall"], 504, "did not answer in time", (False, True)),
    ],
)
def test_a_failing_backend_is_a_502_or_504_naming_the_cause(
    serve: Callable[..., str], fault_server: Any, script: list[str], status: int, words: str,
    streams: tuple[bool, ...],
) -> None:
    fault_server.script = script
    url = serve(upstream(fault_server, timeout=1.0))
    client = openai.OpenAI(base_url=url, api_key="unused", max_retries=0)
    for stream in streams:
        with pytest.raises(openai.APIStatusError) as info:
            client.chat.completions.create(model="any", messages=USER, tools=[WEATHER],
                                           stream=stream)
        assert info.value.status_code == status
        assert words in info.value.message and fault_server.url in info.value.message
    with pytest.raises(openai.APIStatusError) as info:  # and without tools too
        client.chat.completions.create(model="any", messages=USER)
    assert info.value.status_code == status


def test_a_backend_reply_nested_too_deeply_is_a_502(
    serve: Callable[..., str], fault_server: Any
) -> None:
    fault_server.script = ["deep"]
    client = openai.OpenAI(base_url=serve(upstream(fault_server)), api_key="unused",
                           max_retries=0)
    with pytest.raises(openai.APIStatusError) as relayed:  # no tools: relayed once checked
        client.chat.completions.create(model="any", messages=USER)
    assert relayed.value.status_code == 502
    assert "not OpenAI-style JSON" in relayed.value.message
    with pytest.raises(openai.APIStatusError) as agent:  # tools: the agent's model call fails
        client.chat.completions.create(model="any", messages=USER, tools=[WEATHER])
    assert agent.value.status_code == 502 and "RecursionError" in agent.value.message
    fault_server.script = ["reply:still here"]  # and the server goes on serving
    assert client.chat.completions.create(
        model="any", messages=USER).choices[0].message.content == "still here"


def test_a_stream_that_breaks_off_ends_in_an_error_event(
    serve: Callable[..., str], fault_server: Any
) -> None:
    fault_server.script = ['cut:{"thought": "t", "action": {"final_answer": "The weather is']
    client = openai.OpenAI(base_url=serve(upstream(fault_server)), api_key="unused")
    seen: list[str] = []
    with pytest.raises(openai.APIError, match="broke"):
        for piece in client.chat.completions.create(model="any", messages=USER,
                                                    tools=[WEATHER], stream=True):
            seen.append(piece.choices[0].delta.content or "")
    assert "".join(seen).startswith("The weather")


# -- errors, limits, security -------------------------------------------------------------------
@pytest.mark.parametrize(
    ("changes", "param", "words"),
    [
        ({"tools": [{"type": "function", "function": {
            "name": "f", "description": "d", "parameters": {"type": "array"}}}]},
         "tools[0].function", "JSON Schema object"),
        ({"tools": [{"type": "function", "function": {"name": "f", "description": 5}}]},
         "tools[0].function.description", "must be a string"),
        ({"tool_choice": "whenever"}, "tool_choice", "tool_choice must be"),
        ({"tool_choice": {"type": "function", "function": {"name": "get_news"}}},
         "tool_choice", "not in tools"),
        ({"messages": [*USER, {"role": "tool", "tool_call_id": "call_x", "content": "?"}]},
         "messages[1].tool_call_id", "call_x"),
    ],
)
def test_bad_requests_are_400_in_openais_error_shape(
    serve: Callable[..., str], changes: dict[str, Any], param: str, words: str
) -> None:
    model = ScriptedModel([])
    url = serve(model)
    body = {"model": "any", "messages": USER, "tools": [WEATHER], **changes}
    response = httpx2.post(f"{url}/chat/completions", json=body)
    assert response.status_code == 400
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert error["type"] == "invalid_request_error" and error["param"] == param
    assert words in error["message"]
    assert model.calls == []
    with pytest.raises(openai.BadRequestError, match=words):
        openai.OpenAI(base_url=url, api_key="unused").chat.completions.create(**body)


def nested_tool(levels: int, leaf: dict[str, Any] | None = None) -> dict[str, Any]:
    """A function tool whose only argument is an object ``levels`` properties deep."""
    node: dict[str, Any] = leaf or {"type": "string"}
    for _ in range(levels):
        node = {"type": "object", "properties": {"a": node}}
    return {"type": "function", "function": {"name": "deep", "description": "Deep.",
                                             "parameters": node}}


class Waiting(Policy):
    """Reads each reply only once :attr:`go` is set (or 10 s have passed); records whether
    it was let go, and signals when it starts waiting."""

    name = "waiting"

    def __init__(self) -> None:
        self.go, self.entered = threading.Event(), threading.Event()
        self.released: list[bool] = []

    def after_reply(self, run: Any, step: Any, reply: Any) -> Any:
        self.entered.set()
        self.released.append(self.go.wait(10))
        return reply


def test_health_is_answered_while_a_reply_is_being_checked(serve: Callable[..., str]) -> None:
    """Hostile input (issue 38, item 1): the model's reply was parsed and its arguments
    checked against the client's schema on the event loop; a costly schema froze the server
    for every client, ``/health`` included. The reply is checked in a worker thread: here it
    waits until ``/health`` has been answered."""
    waiting = Waiting()
    url = serve(ScriptedModel([act("get_weather", {"city": "Paris"})]),
                policies=[*default_policies(off=["review", "best_effort"]), waiting])
    with ThreadPoolExecutor(1) as pool:
        pending = pool.submit(httpx2.post, f"{url}/chat/completions", timeout=60, json={
            "model": "any", "messages": USER, "tools": [WEATHER]})
        assert waiting.entered.wait(30)
        health = httpx2.get(f"{url.removesuffix('/v1')}/health", timeout=60)
        assert health.status_code == 200
        waiting.go.set()
        response = pending.result()
    assert waiting.released == [True]
    assert response.status_code == 200
    [call] = response.json()["choices"][0]["message"]["tool_calls"]
    assert json.loads(call["function"]["arguments"]) == {"city": "Paris"}


def tool_f(parameters: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": "f", "description": "F.",
                                             "parameters": parameters}}


def test_arguments_too_costly_to_check_are_asked_again_within_the_budget(
    serve: Callable[..., str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hostile input (issue 38, item 1): a client's backtracking ``pattern`` took as long as
    the model's argument made it. The check stops at the validation budget; the reply is
    treated as any invalid one: the model is told, and asked again."""
    from react_agent.tools.schema import _validation as _schema

    monkeypatch.setattr(_schema, "VALIDATION_SECONDS", 0.2)
    model = ScriptedModel([act("f", {"a": "a" * 40 + "!"}), act("f", {"a": "aaa"})])
    url = serve(model)
    response = httpx2.post(f"{url}/chat/completions", timeout=60, json={
        "model": "any", "messages": USER, "tools": [tool_f({"type": "object", "properties": {
            "a": {"type": "string", "pattern": "^(a|a)*$"}}})]})
    assert response.status_code == 200, response.text
    [call] = response.json()["choices"][0]["message"]["tool_calls"]
    assert json.loads(call["function"]["arguments"]) == {"a": "aaa"}
    told = model.calls[1][-1]["content"]
    assert "could not be checked against the tool's schema within 0.2 s" in told


def test_unique_items_over_thousands_of_objects_is_checked_at_once(
    serve: Callable[..., str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hostile input (issue 38, item 1): ``uniqueItems`` over a few thousand objects took
    ~45 s (every pair compared), on the event loop. The budget is raised to 10 s so that a
    busy machine cannot refuse the check (the pairwise way still could not finish in it)."""
    from react_agent.tools.schema import _validation as _schema

    monkeypatch.setattr(_schema, "VALIDATION_SECONDS", 10.0)
    items = [{"k": i} for i in range(3000)]
    url = serve(ScriptedModel([act("f", {"a": items}), act("f", {"a": [*items, {"k": 7}]}),
                               act("f", {"a": items[:2]})]))
    tools = [tool_f({"type": "object", "properties": {
        "a": {"type": "array", "uniqueItems": True}}})]
    first = httpx2.post(f"{url}/chat/completions", timeout=30, json={
        "model": "any", "messages": USER, "tools": tools})
    [call] = first.json()["choices"][0]["message"]["tool_calls"]
    assert json.loads(call["function"]["arguments"]) == {"a": items}
    second = httpx2.post(f"{url}/chat/completions", timeout=30, json={
        "model": "any", "messages": USER, "tools": tools})
    [call] = second.json()["choices"][0]["message"]["tool_calls"]
    assert json.loads(call["function"]["arguments"]) == {"a": items[:2]}  # a duplicate: again


def test_a_deeply_nested_tool_schema_is_a_400_and_the_server_keeps_answering(
    serve: Callable[..., str]
) -> None:
    """Hostile input (issue 30, item 1): a ~1.4 KB request whose schema nests 30 levels of
    properties took time doubling with each level, on the event loop."""
    model = ScriptedModel([])
    url = serve(model)
    body = {"model": "any", "messages": USER, "tools": [WEATHER, nested_tool(30)]}
    assert len(json.dumps(body)) < 2000
    with ThreadPoolExecutor(4) as pool:
        hostile = [pool.submit(httpx2.post, f"{url}/chat/completions", json=body, timeout=30)
                   for _ in range(3)]
        assert httpx2.get(f"{url.removesuffix('/v1')}/health", timeout=30).status_code == 200
        for future in hostile:
            response = future.result()
            assert response.status_code == 400
            error = response.json()["error"]
            assert error["param"] == "tools[1].function.parameters"
            assert "deeper than" in error["message"]
    assert model.calls == []


def test_more_tools_than_openai_takes_are_refused_before_any_is_read(
    serve: Callable[..., str]
) -> None:
    """Hostile input (issue 30, item 4): thousands of tools in one request were all compiled,
    on the event loop, before anything was refused."""
    model = ScriptedModel([])
    url = serve(model)
    many = [{"type": "function", "function": {"name": f"t{i}", "parameters": {"type": "object"}}}
            for i in range(2000)]
    response = httpx2.post(f"{url}/chat/completions", timeout=30,
                           json={"model": "any", "messages": USER, "tools": many})
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["param"] == "tools" and "2000 tools; at most 128" in error["message"]
    assert model.calls == []


def test_the_cache_of_toolboxes_is_bounded_by_the_size_of_their_specs(
    monkeypatch: pytest.MonkeyPatch
) -> None:
    """Item 4's other half: each request with other tools adds a toolbox to the cache; their
    specs' total size stays under the bound, the least recently used go first, and a tool list
    larger than the whole cache is used but not kept."""
    import cachetools

    from react_agent.serve import _openai

    cache: cachetools.LRUCache[str, Any] = cachetools.LRUCache(
        maxsize=20_000, getsizeof=_openai._TOOLBOXES.getsizeof)
    monkeypatch.setattr(_openai, "_TOOLBOXES", cache)

    def tools(n: int, size: int) -> list[dict[str, Any]]:
        return [{"type": "function", "function": {"name": f"t{n}", "description": "x" * size}}]

    for n in range(50):
        _openai.read_tools(tools(n, 1000))
        assert sum(len(k) for k in cache) <= 20_000
    assert 10 <= len(cache) < 50
    kept = next(iter(cache))  # the oldest kept, used again: it stays, the next oldest goes
    again = [{"type": "function", "function": f} for f in json.loads(kept)]
    assert _openai.read_tools(again) is cache[kept][0]
    _openai.read_tools(tools(99, 30_000))
    assert all("t99" not in k for k in cache) and kept in cache

COUNT = {"type": "function", "function": {"name": "count", "description": "Count.", "parameters": {
    "type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}}}


@pytest.mark.parametrize("value", ["9" * 5000, "1e999", "-1e999", "NaN", ["9" * 5000]])
def test_a_number_no_argument_can_hold_is_asked_again_not_a_500(
    serve: Callable[..., str], value: Any
) -> None:
    """Hostile input (issue 30, item 7), through ``serve``: coercing a numeric string of
    thousands of digits raised (a 500), and ``"1e999"`` reached the client as ``inf``. The
    value stays what it is, fails the schema, and the model is asked again."""
    model = ScriptedModel([act("count", {"n": value}), act("count", {"n": 3})])
    url = serve(model)
    response = httpx2.post(f"{url}/chat/completions", timeout=30, json={
        "model": "any", "messages": USER, "tools": [COUNT]})
    assert response.status_code == 200, response.text
    [call] = response.json()["choices"][0]["message"]["tool_calls"]
    assert json.loads(call["function"]["arguments"]) == {"n": 3}
    assert len(model.calls) == 2 and "n" in model.calls[1][-1]["content"]


@pytest.mark.parametrize(("tool", "param", "words"), [
    (nested_tool(1, {"type": ["int", "any", 5]}), "tools[0].function",
     "Tool 'deep': parameters is not"),
    (nested_tool(1, {"$ref": "#/$defs/missing"}), "tools[0].function.parameters", "nowhere"),
    (nested_tool(1, {"type": "string", "pattern": "("}), "tools[0].function",
     "'(' is not a 'regex'"),
    (nested_tool(1, {"type": "string", "pattern": "(" * 1500 + ")" * 1500}), "tools[0].function",
     "could not be checked as a JSON Schema (RecursionError)"),
    (nested_tool(1, {"type": "string", "pattern": "(" * 3000 + ")" * 3000}),
     "tools[0].function.parameters", "a pattern longer than 4096 characters"),
])
def test_a_client_schema_we_cannot_use_is_a_400_naming_it(
    serve: Callable[..., str], tool: dict[str, Any], param: str, words: str
) -> None:
    """Hostile input (issue 30, item 10): an invalid ``type`` list, a ``$ref`` that leads
    nowhere, a pattern that is not a regular expression were answered 500."""
    model = ScriptedModel([])
    url = serve(model)
    response = httpx2.post(f"{url}/chat/completions", timeout=30, json={
        "model": "any", "messages": USER, "tools": [tool]})
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["param"] == param and words in error["message"], error
    assert model.calls == []


def test_arguments_nested_too_deeply_in_the_history_are_a_400(serve: Callable[..., str]) -> None:
    """Item 10: a tool call in the history whose ``arguments`` nest deeper than the bound."""
    deep = "[" * 5000 + "]" * 5000
    messages = [*USER, {"role": "assistant", "content": None, "tool_calls": [{
        "id": "c1", "type": "function", "function": {"name": "get_weather",
                                                     "arguments": deep}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"}]
    model = ScriptedModel([])
    url = serve(model)
    response = httpx2.post(f"{url}/chat/completions", timeout=30, json={
        "model": "any", "messages": messages, "tools": [WEATHER]})
    assert response.status_code == 400, response.text
    assert response.json()["error"]["param"].startswith("messages[1]")
    assert model.calls == []

def test_a_tool_schema_reference_to_a_url_or_file_is_refused_unopened(
    serve: Callable[..., str], tmp_path: Path
) -> None:
    """Hostile input (issue 30, item 2): validating a call made jsonschema fetch a remote
    ``$ref`` or read a ``file://`` one, and its values came back in the error text."""
    listener = CountingListener()
    fifo = tmp_path / "secret.json"
    os.mkfifo(fifo)
    secret = tmp_path / "plain.json"
    secret.write_text('{"enum": ["top-secret-value"]}')
    url = serve(ScriptedModel([act("deep", {"a": "x"})] * 3))
    try:
        for ref in (f"http://127.0.0.1:{listener.port}/s.json", f"file://{fifo}",
                    f"file://{secret}", str(secret)):
            body = {"model": "any", "messages": USER,
                    "tools": [nested_tool(1, {"$ref": ref})]}
            response = httpx2.post(f"{url}/chat/completions", json=body, timeout=30)
            assert response.status_code == 400, response.text
            error = response.json()["error"]
            assert error["param"] == "tools[0].function.parameters"
            assert "refers outside the schema" in error["message"]
            assert "top-secret-value" not in response.text
        assert listener.connections == 0 and not opened(fifo)
    finally:
        listener.close()


def test_a_body_nested_too_deeply_is_a_400(serve: Callable[..., str]) -> None:
    url = serve(ScriptedModel([]))
    for depth in (150, 100_000):
        body = b'{"messages": ' + b"[" * depth + b"]" * depth + b"}"
        response = httpx2.post(f"{url}/chat/completions", content=body,
                               headers={"content-type": "application/json"})
        assert response.status_code == 400 and "nested deeper" in response.text


def error_of(response: httpx2.Response) -> dict[str, Any]:
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    return dict(error)


def test_a_web_page_cannot_drive_the_server(serve: Callable[..., str]) -> None:
    """Hostile input (issue 30, item 3): a page the user visits could POST to the loopback
    server (a simple cross-site request: text/plain, any Origin) or reach it by DNS
    rebinding (a Host of its own)."""
    model = ScriptedModel([answer("hi")] * 3)
    url = serve(model)
    body = json.dumps({"model": "any", "messages": USER, "tools": [WEATHER]})
    plain = httpx2.post(f"{url}/chat/completions", content=body,
                        headers={"content-type": "text/plain"})
    assert plain.status_code == 415 and error_of(plain)["code"] == "unsupported_media_type"
    form = httpx2.post(f"{url}/chat/completions", content=body,
                       headers={"content-type": "application/x-www-form-urlencoded"})
    assert form.status_code == 415
    page = httpx2.post(f"{url}/chat/completions", content=body, headers={
        "content-type": "application/json", "origin": "https://evil.example"})
    assert page.status_code == 403 and error_of(page)["code"] == "origin_not_allowed"
    rebound = httpx2.post(f"{url}/chat/completions", content=body, headers={
        "content-type": "application/json", "host": "evil.example:8000"})
    assert rebound.status_code == 403 and error_of(rebound)["code"] == "host_not_allowed"
    assert httpx2.get(f"{url}/models", headers={"host": "evil.example"}).status_code == 403
    assert model.calls == []
    for host in ("localhost:8000", "127.0.0.1", "[::1]:9"):
        ok = httpx2.post(f"{url}/chat/completions", content=body,
                         headers={"content-type": "application/json; charset=utf-8",
                                  "host": host})
        assert ok.status_code == 200, (host, ok.text)


def test_allowed_origins_get_cors_and_a_key_allows_any_host(serve: Callable[..., str]) -> None:
    url = serve(ScriptedModel([answer("hi")] * 2), allowed_origins=("https://app.example",))
    preflight = httpx2.options(f"{url}/chat/completions", headers={
        "origin": "https://app.example", "access-control-request-method": "POST",
        "access-control-request-headers": "content-type"})
    assert preflight.status_code == 200
    assert preflight.headers["access-control-allow-origin"] == "https://app.example"
    ok = httpx2.post(f"{url}/chat/completions", json={"messages": USER, "tools": [WEATHER]},
                     headers={"origin": "https://app.example"})
    assert ok.status_code == 200
    assert ok.headers["access-control-allow-origin"] == "https://app.example"
    keyed = serve(ScriptedModel([answer("hi")]), api_key="k")
    assert httpx2.post(f"{keyed}/chat/completions", json={"messages": USER, "tools": [WEATHER]},
                       headers={"host": "my-box.lan", "authorization": "Bearer k"}
                       ).status_code == 200


def test_a_bug_of_ours_is_a_500_that_keeps_the_connection(
    serve: Callable[..., str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hostile input (issue 30, item 10): after a 500 the server closed the keep-alive
    connection without saying so, and the client's next pooled request failed."""
    import react_agent.serve._app as app

    calls = iter([RuntimeError("a bug"), None])

    def read_request(body: Any, *options: Any) -> Any:
        error = next(calls)
        if error is not None:
            raise error
        return original(body, *options)

    original = app.read_request
    monkeypatch.setattr(app, "read_request", read_request)
    url = serve(ScriptedModel([answer("hi")]))
    with httpx2.Client(base_url=url) as client:
        body = {"messages": USER, "tools": [WEATHER]}
        first = client.post("/chat/completions", json=body)
        assert first.status_code == 500 and error_of(first)["type"] == "server_error"
        assert "a bug" not in first.text  # no internals in the answer
        second = client.post("/chat/completions", json=body)  # the same pooled connection
        assert second.status_code == 200


def test_malformed_bodies_and_routes(serve: Callable[..., str]) -> None:
    url = serve(ScriptedModel([]), max_body_bytes=2048)
    not_json = httpx2.post(f"{url}/chat/completions", content=b"{nope",
                           headers={"content-type": "application/json"})
    assert not_json.status_code == 400 and "not valid JSON" in not_json.json()["error"]["message"]
    huge = {"messages": [{"role": "user", "content": "x" * 5000}], "tools": [WEATHER]}
    too_large = httpx2.post(f"{url}/chat/completions", json=huge)
    assert too_large.status_code == 413 and "2048 bytes" in too_large.json()["error"]["message"]

    def chunked() -> Iterator[bytes]:  # no Content-Length: the limit holds while reading
        yield json.dumps(huge).encode()

    assert httpx2.post(f"{url}/chat/completions", content=chunked(),
                       headers={"content-type": "application/json"}).status_code == 413
    missing = httpx2.get(f"{url}/nothing")
    assert missing.status_code == 404 and "error" in missing.json()


def test_a_server_key_is_required_when_set(serve: Callable[..., str]) -> None:
    url = serve(ScriptedModel([answer("hi")]), api_key="s3cret")
    with pytest.raises(openai.AuthenticationError, match="API key"):
        openai.OpenAI(base_url=url, api_key="wrong").chat.completions.create(
            model="any", messages=USER, tools=[WEATHER])
    assert httpx2.get(f"{url}/models").status_code == 401
    client = openai.OpenAI(base_url=url, api_key="s3cret")
    assert client.models.list().data[0].id == "scripted"
    assert client.chat.completions.create(model="any", messages=USER, tools=[WEATHER]) \
        .choices[0].message.content == "hi"
    assert httpx2.get(url.removesuffix("/v1") + "/health").json()["status"] == "ok"


@pytest.mark.parametrize("key", ["", "  "])
def test_an_empty_api_key_is_refused_at_start(key: str) -> None:
    """Hostile input (issue 38, item 9): ``--api-key ""`` let ``Authorization: Bearer`` with
    no token in, and turned the Host check off."""
    with pytest.raises(ConfigError, match="api_key is empty"):
        ServeConfig(api_key=key)


def test_a_server_answers_to_the_address_it_is_bound_to_and_no_other_name(
    serve: Callable[..., str]
) -> None:
    """Hostile input (issue 38, item 9): ``serve --host 127.0.0.2`` refused its own printed
    URL (403): only the loopback names were allowed hosts."""
    with running(create_app(ScriptedModel([answer("hi")] * 2)), host="127.0.0.2") as url:
        assert url.startswith("http://127.0.0.2:")
        body = {"messages": USER, "tools": [WEATHER]}
        assert httpx2.post(f"{url}/chat/completions", json=body).status_code == 200
        assert httpx2.get(f"{url.removesuffix('/v1')}/health").status_code == 200
        rebound = httpx2.post(f"{url}/chat/completions", json=body,
                              headers={"host": "evil.example"})
        assert rebound.status_code == 403 and error_of(rebound)["code"] == "host_not_allowed"
        other = httpx2.post(f"{url}/chat/completions", json=body, headers={"host": "127.0.0.3"})
        assert other.status_code == 403


def raw_request(url: str, head: bytes, body: bytes) -> socket.socket:
    """A connection to the server at ``url`` that sent ``head`` and the start of a body."""
    host, port = url.removeprefix("http://").split("/")[0].split(":")
    connection = socket.create_connection((host, int(port)), timeout=30)
    connection.sendall(head + body)
    return connection


def test_a_body_that_does_not_arrive_in_time_is_a_408_and_the_connection_closes(
    serve: Callable[..., str]
) -> None:
    """Hostile input (issue 38, item 9): there was no timeout on reading a request body, so
    slow bodies (a byte now and then) held their connections open without end."""
    url = serve(ScriptedModel([]), body_seconds=0.5)
    head = (b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n")
    with raw_request(url, head, b'{"messages": ') as connection:
        answer = b""
        while b"\r\n\r\n" not in answer or not answer.rstrip().endswith(b"}"):
            piece = connection.recv(65536)
            if not piece:
                break
            answer += piece
        assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
        assert b"request_timeout" in answer
        while connection.recv(65536):  # the server closes the connection
            pass


def test_connections_past_the_cap_get_503_until_some_close(serve: Callable[..., str]) -> None:
    """Hostile input (issue 38, item 9): there was no cap on connections (1,100 slow bodies
    were held open at once); past ``max_connections`` the server answers 503 at once."""
    url = serve(ScriptedModel([]), max_connections=3)
    health = f"{url.removesuffix('/v1')}/health"
    idle = [raw_request(url, b"", b"") for _ in range(3)]
    try:
        assert httpx2.get(health).status_code == 503
    finally:
        for connection in idle:
            connection.close()
    for _ in range(100):  # the server sees the closes as they come
        if httpx2.get(health).status_code == 200:
            break
        time.sleep(0.05)
    assert httpx2.get(health).status_code == 200


def test_the_server_options_come_from_the_config() -> None:
    assert server_options(ServeConfig(max_connections=7, keep_alive_seconds=2.5)) == {
        "limit_concurrency": 7, "timeout_keep_alive": 2.5}
    with pytest.raises(ConfigError):
        ServeConfig(body_seconds=0)


class Held:
    """A backend whose replies wait until :attr:`go` is set; counts the calls it answers."""

    name = "held"

    def __init__(self) -> None:
        self.go = threading.Event()
        self.started = threading.Semaphore(0)
        self.answered: list[str] = []
        self._lock = threading.Lock()

    def complete(self, messages: Sequence[Any]) -> Any:
        from react_agent.models import ModelReply

        self.started.release()
        self.go.wait(30)
        task = messages[-1]["content"]
        with self._lock:
            self.answered.append(task)
        return ModelReply(answer(f"done: {task}"), 10, 5)


def test_a_full_queue_answers_503_and_loses_nothing(serve: Callable[..., str]) -> None:
    model = Held()
    url = serve(model, concurrency=1, queue=2, retry_after=3)

    def ask(n: int) -> httpx2.Response:
        body = {"model": "any", "messages": [{"role": "user", "content": f"task {n}"}],
                "tools": [WEATHER]}
        return httpx2.post(f"{url}/chat/completions", json=body, timeout=30)

    with ThreadPoolExecutor(8) as pool:
        first = [pool.submit(ask, n) for n in range(3)]  # one at the model, two waiting
        assert model.started.acquire(timeout=10)
        health = url.removesuffix("/v1") + "/health"
        while httpx2.get(health).json()["waiting"] < 2:
            pass
        refused = [ask(n) for n in range(3, 6)]
        model.go.set()
        accepted = [f.result() for f in first]
    assert [r.status_code for r in refused] == [503] * 3
    assert all(r.headers["retry-after"] == "3" for r in refused)
    assert refused[0].json()["error"]["code"] == "queue_full"
    assert [r.status_code for r in accepted] == [200] * 3
    answers = [r.json()["choices"][0]["message"]["content"] for r in accepted]
    assert answers == [f"done: task {n}" for n in range(3)]  # each its own, none twice
    assert sorted(model.answered) == [f"task {n}" for n in range(3)]
    assert httpx2.get(health).json() | {"running": 0, "waiting": 0} == httpx2.get(health).json()


def test_a_backend_server_gets_requests_at_once_up_to_the_limit(
    serve: Callable[..., str], fault_server: Any
) -> None:
    fault_server.script = ["stall"]  # holds each request until released
    url = serve(upstream(fault_server), concurrency=2)
    health = url.removesuffix("/v1") + "/health"
    body = {"model": "any", "messages": USER, "tools": [WEATHER]}
    with ThreadPoolExecutor(3) as pool:
        pending = [pool.submit(httpx2.post, f"{url}/chat/completions", json=body, timeout=30)
                   for _ in range(3)]
        # a slot is taken before its request reaches the backend: wait for both to arrive
        deadline = time.monotonic() + 20
        while (httpx2.get(health).json()["waiting"] < 1 or len(fault_server.requests) < 2) \
                and time.monotonic() < deadline:
            time.sleep(0.01)
        assert httpx2.get(health).json()["running"] == 2
        assert len(fault_server.requests) == 2
        fault_server.release.set()  # the stalled server now hangs up on each request
        statuses = [f.result().status_code for f in pending]
    assert statuses == [502, 502, 502] and len(fault_server.requests) == 3


def test_the_app_can_be_mounted_in_another(serve: Callable[..., str]) -> None:
    from starlette.applications import Starlette
    from starlette.routing import Mount

    parent = Starlette(routes=[Mount("/tools-bridge", app=create_app(
        ScriptedModel([act("get_weather", {"city": "Paris"})])))])
    with running(parent) as url:
        client = openai.OpenAI(base_url=url.removesuffix("/v1") + "/tools-bridge/v1",
                               api_key="unused")
        reply = client.chat.completions.create(model="any", messages=USER, tools=[WEATHER])
    assert reply.choices[0].message.tool_calls[0].function.name == "get_weather"


# -- an agent framework that speaks tools= -----------------------------------------------------
def framework_run(url: str, task: str) -> Any:
    """The OpenAI Agents SDK, unchanged, with two tools, against the endpoint at ``url``."""
    from agents import (
        Agent,
        OpenAIChatCompletionsModel,
        Runner,
        function_tool,
        set_tracing_disabled,
    )

    set_tracing_disabled(True)  # no trace upload

    @function_tool
    def find_home_city(person: str) -> str:
        """Find the city where a person lives."""
        return {"alice": "Alice lives in Lyon."}.get(person.strip().lower(), "Unknown person.")

    @function_tool
    def get_temperature(city: str) -> str:
        """Get the current temperature of a city, in degrees Celsius."""
        return {"lyon": "14 °C in Lyon."}.get(city.strip().lower(), "No data for that city.")

    client = openai.AsyncOpenAI(base_url=url, api_key="unused")
    agent = Agent(
        name="assistant", instructions="Answer with the tools' results.",
        model=OpenAIChatCompletionsModel(model="served", openai_client=client),
        tools=[find_home_city, get_temperature],
    )
    return Runner.run_sync(agent, task, max_turns=6)


def tool_outputs(result: Any) -> list[str]:
    return [str(item.output) for item in result.new_items if type(item).__name__ ==
            "ToolCallOutputItem"]


def test_agents_sdk_two_step_task_on_the_scripted_model(serve: Callable[..., str]) -> None:
    model = ScriptedModel([act("find_home_city", {"person": "Alice"}),
                           act("get_temperature", {"city": "Lyon"}),
                           answer("It is 14 °C where Alice lives (Lyon).")])
    result = framework_run(serve(model), "What is the temperature where Alice lives?")
    assert tool_outputs(result) == ["Alice lives in Lyon.", "14 °C in Lyon."]
    assert result.final_output == "It is 14 °C where Alice lives (Lyon)."
    assert observed(model.calls[2][-1]["content"]) == ["14 °C in Lyon."]


def pydantic_ai_run(url: str, task: str) -> tuple[str, list[tuple[str, str]]]:
    """pydantic-ai, unchanged, with two tools, against the endpoint at ``url``: its final
    output and the calls its tools received."""
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    agent = Agent(OpenAIChatModel("served", provider=OpenAIProvider(base_url=url,
                                                                    api_key="unused")))
    calls: list[tuple[str, str]] = []

    @agent.tool_plain
    def find_home_city(person: str) -> str:
        """Find the city a person lives in."""
        calls.append(("find_home_city", person))
        return {"bob": "Bob lives in Porto."}.get(person.strip().lower(), "Unknown person.")

    @agent.tool_plain
    def get_temperature(city: str) -> str:
        """Get the current temperature of a city, in degrees Celsius."""
        calls.append(("get_temperature", city))
        return {"porto": "17 °C in Porto."}.get(city.strip().lower(), "No data for that city.")

    return str(agent.run_sync(task).output), calls


def test_pydantic_ai_two_step_task_on_the_scripted_model(serve: Callable[..., str]) -> None:
    model = ScriptedModel([act("find_home_city", {"person": "Bob"}),
                           act("get_temperature", {"city": "Porto"}),
                           answer("It is 17 °C where Bob lives (Porto).")])
    output, calls = pydantic_ai_run(serve(model), "What is the temperature where Bob lives?")
    assert calls == [("find_home_city", "Bob"), ("get_temperature", "Porto")]
    assert output == "It is 17 °C where Bob lives (Porto)."


# -- real models --------------------------------------------------------------------------------
@pytest.mark.real_model
def test_openai_sdk_tool_loop_on_the_embedded_model(
    serve: Callable[..., str], embedded_model: ChatModel
) -> None:
    """Sync and not streamed for the call, async and streamed for the answer."""
    url = serve(embedded_model)
    first = openai.OpenAI(base_url=url, api_key="unused").chat.completions.create(
        model="any", messages=USER, tools=[WEATHER])
    (call,) = first.choices[0].message.tool_calls
    assert call.function.name == "get_weather"
    assert json.loads(call.function.arguments)["city"] == "Paris"

    async def final() -> list[str]:
        client = openai.AsyncOpenAI(base_url=url, api_key="unused")
        stream = await client.chat.completions.create(
            model="any", messages=tool_result(first), tools=[WEATHER], stream=True)
        return [c.choices[0].delta.content or "" async for c in stream if c.choices]

    text = "".join(asyncio.run(final()))
    assert "22" in text


@pytest.mark.real_model
def test_agents_sdk_two_step_task_on_the_embedded_model(
    serve: Callable[..., str], embedded_model: ChatModel
) -> None:
    result = framework_run(serve(embedded_model), "What is the temperature where Alice lives?")
    assert tool_outputs(result)[:2] == ["Alice lives in Lyon.", "14 °C in Lyon."]
    assert "14" in result.final_output


@pytest.mark.real_model
def test_serve_gives_tools_to_a_llama_cpp_server(
    serve: Callable[..., str], llama_server: str
) -> None:
    """Sent ``tools`` directly, llama-cpp-python's server answers with text (no tool_calls, the
    client never sees a call); behind ``serve`` the same request gets a tool call."""
    direct = openai.OpenAI(base_url=llama_server, api_key="unused").chat.completions.create(
        model="any", messages=USER, tools=[WEATHER], temperature=0, max_tokens=60)
    assert not direct.choices[0].message.tool_calls
    url = serve(OpenAIChatModel(base_url=llama_server, timeout=600))  # a busy CPU is slow
    reply = openai.OpenAI(base_url=url, api_key="unused").chat.completions.create(
        model="any", messages=USER, tools=[WEATHER])
    (call,) = reply.choices[0].message.tool_calls
    assert call.function.name == "get_weather"
    assert json.loads(call.function.arguments)["city"] == "Paris"


@pytest.mark.real_model
def test_pydantic_ai_two_step_task_on_the_embedded_model(
    serve: Callable[..., str], embedded_model: ChatModel
) -> None:
    output, calls = pydantic_ai_run(serve(embedded_model),
                                    "What is the temperature where Bob lives?")
    assert calls[:2] == [("find_home_city", "Bob"), ("get_temperature", "Porto")]
    assert "17" in output


MULTIPLY = {"type": "function", "function": {
    "name": "multiply", "description": "Multiply two numbers.",
    "parameters": {"type": "object", "properties": {
        "a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]}}}


@pytest.mark.real_model
def test_the_simplest_tool_loop_ends_after_one_call_on_the_embedded_model(
    serve: Callable[..., str], embedded_model: ChatModel
) -> None:
    """Issue 29: the model asked for multiply(23, 19) again after the result came back, and
    serve passed the repeat on, so a client framework looped until its own turn limit."""
    client = openai.OpenAI(base_url=serve(embedded_model), api_key="unused")
    messages: list[Any] = [{"role": "user", "content": "What is 23 times 19? Use the tool."}]
    calls = 0
    for _ in range(4):  # a client's own turn limit
        reply = client.chat.completions.create(model="any", messages=messages,
                                               tools=[MULTIPLY]).choices[0]
        if not reply.message.tool_calls:
            break
        messages.append(reply.message.model_dump(exclude_none=True))
        for call in reply.message.tool_calls:
            calls += 1
            args = json.loads(call.function.arguments)
            messages.append({"role": "tool", "tool_call_id": call.id,
                             "content": str(args["a"] * args["b"])})
    assert calls == 1 and reply.finish_reason == "stop"
    assert "437" in (reply.message.content or "")


def test_tools_with_a_json_schema_response_format_get_the_typed_value(
    serve: Callable[..., str],
) -> None:
    schema = {"type": "object", "properties": {"celsius": {"type": "integer"}},
              "required": ["celsius"], "additionalProperties": False}
    typed = {"type": "json_schema", "json_schema": {"name": "t", "schema": schema}}
    final = json.dumps({"thought": "t", "action": {"final_answer": {"celsius": "22"}}})
    model = ScriptedModel([final, final], chunk_chars=4)
    client = openai.OpenAI(base_url=serve(model), api_key="unused")
    reply = client.chat.completions.create(model="any", messages=USER, tools=[WEATHER],
                                           response_format=typed)  # type: ignore[arg-type]
    assert json.loads(reply.choices[0].message.content or "") == {"celsius": 22}
    chunks = list(client.chat.completions.create(
        model="any", messages=USER, tools=[WEATHER], response_format=typed,  # type: ignore
        stream=True))
    pieces = [c.choices[0].delta.content for c in chunks
              if c.choices and c.choices[0].delta.content]
    assert pieces == ['{"celsius": 22}']  # announced once, when it validates
    bad = {"type": "json_schema", "json_schema": {"name": "t", "schema": {"type": "nope"}}}
    with pytest.raises(openai.BadRequestError) as info:
        client.chat.completions.create(model="any", messages=USER, tools=[WEATHER],
                                       response_format=bad)  # type: ignore[arg-type]
    assert "response_format.json_schema.schema" in str(info.value)


def test_a_typed_value_json_cannot_hold_is_sent_back_never_given_to_the_client(
    serve: Callable[..., str],
) -> None:
    schema = {"type": "object", "properties": {"amount": {"type": "number"}},
              "required": ["amount"]}
    typed = {"type": "json_schema", "json_schema": {"name": "t", "schema": schema}}
    replies = [json.dumps({"thought": "t", "action": {"final_answer": text}})
               for text in ('{"amount": NaN}', '{"amount": 1, "amount": 1000000}')]
    replies.append(json.dumps({"thought": "t", "action": {"final_answer": {"amount": 2.5}}}))
    model = ScriptedModel(replies)
    client = openai.OpenAI(base_url=serve(model), api_key="unused")
    reply = client.chat.completions.create(model="any", messages=USER, tools=[WEATHER],
                                           response_format=typed)  # type: ignore[arg-type]
    content = reply.choices[0].message.content or ""
    assert json.loads(content, parse_constant=lambda c: pytest.fail(c)) == {"amount": 2.5}
    assert len(model.calls) == 3
    assert "NaN is not a finite number" in model.calls[1][-1]["content"]
    assert '"amount" appears twice' in model.calls[2][-1]["content"]
