"""OpenAIChatModel over real HTTP: a llama.cpp server on 127.0.0.1 with the embedded GGUF, and a
refused connection for the error path."""

from __future__ import annotations

import pytest
from _common import check_run, seed_turns
from helpers import assert_streamed
from tools import seed000

from react_agent import Agent
from react_agent.errors import ModelError
from react_agent.models import OpenAIChatModel


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
