"""OpenAIChatModel over real HTTP: a llama.cpp server on 127.0.0.1 with the embedded GGUF, and a
refused connection for the error path."""

from __future__ import annotations

import json

import pytest
from helpers import assert_streamed
from jsonschema import Draft202012Validator
from scenarios import check_run, seed_turns
from tools import seed000, seed002

from react_agent import Agent
from react_agent.engine import reply_schema
from react_agent.errors import ModelError
from react_agent.models import OpenAIChatModel
from react_agent.policies import Constrained, default_policies


@pytest.mark.real_model
def test_seed000_arithmetic_over_http_streamed(llama_server: str) -> None:
    spec = next(t.spec for t in seed_turns("000") if t.label == "seed000-calculate-round")
    model = OpenAIChatModel(base_url=llama_server)  # the model name comes from /models
    events = list(Agent(model, seed000, max_steps=10, stream=True).iter(spec["user"]))
    result = events[-1].result
    assert [c.name for c in result.tool_calls][:1] == ["calculate"]
    assert check_run(result, spec) == []
    # llama_cpp.server ignores stream_options: no token usage while streaming
    assert_streamed(events, result, usage=False)


def test_refused_connection_is_a_model_error_naming_the_url() -> None:
    model = OpenAIChatModel("any", base_url="http://127.0.0.1:9/v1", max_retries=0, timeout=5)
    with pytest.raises(ModelError) as info:
        model.complete([{"role": "user", "content": "hi"}])
    assert info.value.cause == "connection"
    assert "http://127.0.0.1:9/v1" in str(info.value)
    result = Agent(model).run("hi")
    assert result.status == "model_error"
    assert "Could not connect" in (result.error or "")


@pytest.mark.real_model
def test_constrained_auto_finds_the_servers_response_format(llama_server: str) -> None:
    """llama-cpp-python's server refuses the OpenAI json_schema form (HTTP 500) and takes
    {"type": "json_object", "schema": ...}; the replies then fit the schema."""
    spec = next(t.spec for t in seed_turns("002") if t.label == "seed002-walkthrough-beijing")
    model = OpenAIChatModel(base_url=llama_server, max_retries=0)
    policies = default_policies(use=[Constrained(mode="auto")])
    result = Agent(model, seed002, max_steps=5, policies=policies).run(spec["user"])
    assert model.constrained_form == "json_object+schema"
    validator = Draft202012Validator(reply_schema(seed002))
    assert all(validator.is_valid(json.loads(s.raw_output)) for s in result.steps)
    assert check_run(result, spec) == []
