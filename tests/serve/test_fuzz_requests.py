"""Fuzzing ``react-agent serve`` with hostile requests, in-process (the ASGI app through httpx's
ASGI transport, no socket): whatever the body, its tool schemas and the model's arguments, the
answer is a 2xx, or a 4xx in OpenAI's error shape, never a 5xx, and it comes within a time
bound. The same property runs longer in ``benchmarks/fuzz_serve.py``. A field of the wrong
type, anywhere in a valid body, is a 400 naming that field."""

from __future__ import annotations

import asyncio
import copy
import json
import time
from collections.abc import Iterator, Sequence
from typing import Any

import httpx2
import pytest
from hypothesis import HealthCheck, given, settings
from request_strategies import replies, requests

from react_agent.models import ScriptedModel
from react_agent.serve import create_app
from react_agent.tools.schema import _validation as _schema

ANSWER = json.dumps({"thought": "ok", "action": {"final_answer": "done"}})
REQUEST_SECONDS = 10.0
"""The most one request may take here (generous: the machine is shared). A request asks the
model up to 4 times (3 retries), and each reply's check has a budget of VALIDATION_SECONDS."""
FUZZ_VALIDATION_SECONDS = 0.25
"""The validation budget while fuzzing (the default, 1 s, made short to keep the suite fast)."""


def post(body: Any, script: Sequence[str] = ()) -> httpx2.Response:
    """``body`` sent to a fresh app whose scripted model answers ``script``, then the final
    answer."""
    app = create_app(ScriptedModel([*script, *[ANSWER] * 8]))

    async def send() -> httpx2.Response:
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            return await client.post(  # NaN and Infinity literals included, as Python writes
                "/v1/chat/completions", content=json.dumps(body),
                headers={"content-type": "application/json"}, timeout=60)

    return asyncio.run(send())


def check(response: httpx2.Response, seconds: float, bound: float = REQUEST_SECONDS) -> None:
    assert response.status_code < 500, response.text
    if response.status_code >= 400:
        error = response.json()["error"]
        assert set(error) == {"message", "type", "param", "code"}
        assert isinstance(error["message"], str) and error["message"]
    assert seconds < bound, f"the request took {seconds:.1f} s (bound: {bound} s)"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(requests, replies)
def test_any_request_gets_a_2xx_or_a_4xx_in_openais_shape_in_bounded_time(
    body: dict[str, Any], script: list[str]
) -> None:
    """Hostile input (issue 38, items 1 and 10): tool schemas whose check the model's
    arguments made unbounded froze the server; a non-string description was a 500."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_schema, "VALIDATION_SECONDS", FUZZ_VALIDATION_SECONDS)
        started = time.monotonic()
        response = post(body, script)
        check(response, time.monotonic() - started)


# -- a field of the wrong type, anywhere -------------------------------------------------------
VALID = {
    "model": "any",
    "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "What is the weather?"},
        {"role": "assistant", "content": None, "tool_calls": [{
            "id": "c1", "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
    ],
    "tools": [{"type": "function", "function": {
        "name": "get_weather", "description": "Get the weather.", "strict": False,
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}],
    "tool_choice": "auto", "parallel_tool_calls": True, "stream": False, "n": 1,
    "stream_options": {"include_usage": True},
}
WRONG = (None, 5, 1.5, True, "s", [], {}, [1], {"a": 1})


def fields(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """The path of every field of ``value``, at any depth (a tool's parameters schema is one
    field: what is inside it is the fuzz's)."""
    items = value.items() if isinstance(value, dict) else \
        enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        yield (*path, key)
        if key != "parameters":
            yield from fields(item, (*path, key))


def name(path: tuple[Any, ...]) -> str:
    """``("tools", 0, "function", "name")`` -> ``tools[0].function.name``."""
    return "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in path).lstrip(".")


def replaced(path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    body = copy.deepcopy(VALID)
    node: Any = body
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return body


def json_type(value: Any) -> str:
    return "number" if type(value) in (int, float) else type(value).__name__


def value_at(path: tuple[Any, ...]) -> Any:
    node: Any = VALID
    for key in path:
        node = node[key]
    return node


def test_the_valid_body_is_answered() -> None:
    response = post(VALID)
    assert response.status_code == 200, response.text


@pytest.mark.parametrize("path", list(fields(VALID)), ids=name)
def test_a_field_of_the_wrong_type_is_a_400_naming_it_never_a_500(path: tuple[Any, ...]) -> None:
    """Hostile input (issue 38, item 10): a non-string ``tools[].function.description`` was
    a 500 (the only one in 884 requests with a malformed field). Each field of a valid body
    gets a value of every other JSON type: the answer is a 200 (a value the field may hold:
    text parts for a content, null for what may be left out) or a 400 whose ``param`` names
    the field or a part of it; a null may also make another field wrong (a tool result
    answering no call)."""
    original = value_at(path)
    for wrong in WRONG:
        if wrong is not None and json_type(wrong) == json_type(original):
            continue
        response = post(replaced(path, wrong))
        check(response, 0.0)
        if response.status_code == 400 and wrong is not None:
            param = response.json()["error"]["param"]
            field = name(path)
            assert param == field or param.startswith((f"{field}.", f"{field}[")), \
                (field, wrong, param)
        elif wrong is not None and response.status_code == 200:
            assert (path[-1], json_type(wrong)) in ACCEPTED, (name(path), wrong)


ACCEPTED = {("content", "list"), ("content", "str")}
"""Fields that hold another JSON type than the valid body's rightly: a message's content as a
list of text parts (an empty one too), an assistant's content as text."""
