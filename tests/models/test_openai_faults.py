"""Model server faults through a real HTTP server on 127.0.0.1 (``tests/fault_server.py``): each
ends the run with ``model_error``, a message naming the cause, the URL and what to do, and the
trajectory up to the fault intact. Sync (``OpenAI``) and async (``AsyncOpenAI``) paths."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from helpers import assert_streamed, observed

from react_agent import Agent, RunResult, Toolbox
from react_agent.models import OpenAIChatModel
from react_agent.policies import default_policies

FIRST = json.dumps({"thought": "add first", "action": {"name": "add", "args": {"a": 2, "b": 3}}})
FINAL = json.dumps({"thought": "done", "action": {"final_answer": "5"}})


def adder() -> Toolbox:
    tb = Toolbox()

    @tb.tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    return tb


def run_against(server: Any, fault: str, *, use_async: bool = False, **options: Any) -> RunResult:
    server.script = [f"reply:{FIRST}", fault]
    model = OpenAIChatModel(base_url=server.url, **{"max_retries": 0, "timeout": 5, **options})
    agent = Agent(model, adder(), policies=default_policies(off=["review"]))
    return asyncio.run(agent.arun("2 + 3?")) if use_async else agent.run("2 + 3?")


def assert_trajectory_kept(result: RunResult) -> None:
    assert result.status == "model_error"
    assert result.final_answer is None
    assert len(result.steps) == 1, "the step before the fault is kept"
    assert result.steps[0].observations == ["5"]
    assert observed(result.messages[-1]["content"]) == ["5"]


CASES = [
    pytest.param("status:500:upstream exploded", ["HTTP 500", "upstream exploded", "server's log"],
                 id="500"),
    pytest.param("status:503", ["HTTP 503"], id="503"),
    pytest.param("status:401:invalid api key", ["refused the API key (401)", "--api-key"],
                 id="401"),
    pytest.param("status:403:forbidden", ["refused the API key (403)"], id="403"),
    pytest.param("status:404:The model `gpt-9` does not exist",
                 ["Not found", "does not exist", "/models lists them"], id="unknown-model"),
    pytest.param("status:400:This model's maximum context length is 4096 tokens",
                 ["context window", "fewer steps"], id="context-length"),
    pytest.param("garbage", ["not an OpenAI-style JSON reply", "/v1"], id="garbage"),
    pytest.param("close", ["broke before the reply was complete", "RemoteProtocolError"],
                 id="closed-mid-reply"),
    pytest.param("no_choices", ["answered with no choices"], id="no-choices"),
]


@pytest.mark.parametrize(("fault", "words"), CASES)
@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_fault_ends_the_run_with_a_clear_error(
    fault_server: Any, fault: str, words: list[str], use_async: bool
) -> None:
    result = run_against(fault_server, fault, use_async=use_async)
    assert_trajectory_kept(result)
    assert fault_server.url in (result.error or "")
    for word in words:
        assert word in (result.error or "")


def test_stalled_server_times_out(fault_server: Any) -> None:
    result = run_against(fault_server, "stall", timeout=0.5)
    assert_trajectory_kept(result)
    assert "did not answer in time" in (result.error or "")
    assert fault_server.url in (result.error or "")


def test_refused_connection(fault_server: Any) -> None:
    url = fault_server.url
    fault_server.close()  # nothing listens on the port any more
    model = OpenAIChatModel("m", base_url=url, max_retries=0, timeout=5)
    result = Agent(model, adder(), policies=default_policies(off=["review"])).run("2 + 3?")
    assert result.status == "model_error" and result.steps == []
    assert f"Could not connect to the model server at {url}" in (result.error or "")


@pytest.mark.parametrize("fault", ["status:500", "close"])
def test_retries_ride_out_a_passing_fault(fault_server: Any, fault: str) -> None:
    fault_server.script = [f"reply:{FIRST}", fault, f"reply:{FINAL}"]
    model = OpenAIChatModel(base_url=fault_server.url, max_retries=2, timeout=5)
    result = Agent(model, adder(), policies=default_policies(off=["review"])).run("2 + 3?")
    assert result.status == "final_answer" and result.final_answer == "5"
    assert len(fault_server.requests) == 3  # the failed request was retried once by the SDK


def test_retries_are_bounded(fault_server: Any) -> None:
    fault_server.script = ["status:500"]
    model = OpenAIChatModel(base_url=fault_server.url, max_retries=2, timeout=5)
    result = Agent(model, adder()).run("2 + 3?")
    assert result.status == "model_error" and "HTTP 500" in (result.error or "")
    assert len(fault_server.requests) == 3  # one try and two retries, then the run ends


def test_requests_carry_stop_sequences_and_no_tools(fault_server: Any) -> None:
    run_against(fault_server, f"reply:{FINAL}")
    body = fault_server.requests[0]
    assert "tools" not in body and "functions" not in body
    assert "\nObservation" in body["stop"]
    assert body["model"] == "fault-model"  # taken from GET /models
    assert [m["role"] for m in body["messages"]] == ["system", "user"]


def test_usage_comes_back(fault_server: Any) -> None:
    result = run_against(fault_server, f"reply:{FINAL}", use_async=True)
    assert result.status == "final_answer"
    assert (result.usage["prompt_tokens"], result.usage["completion_tokens"]) == (22, 14)


# -- streaming ----------------------------------------------------------------------------------
@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_streamed_run_over_http(fault_server: Any, use_async: bool) -> None:
    fault_server.script = [f"reply:{FIRST}", f"reply:{FINAL}"]
    model = OpenAIChatModel(base_url=fault_server.url, max_retries=0, timeout=5)
    agent = Agent(model, adder(), stream=True, policies=default_policies(off=["review"]))

    async def collect() -> list[Any]:
        return [e async for e in agent.aiter("2 + 3?")]

    events = asyncio.run(collect()) if use_async else list(agent.iter("2 + 3?"))
    result = events[-1].result
    assert result.status == "final_answer" and result.final_answer == "5"
    assert_streamed(events, result)
    assert all(r["stream"] is True for r in fault_server.requests)


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_a_stream_cut_off_keeps_the_trajectory(fault_server: Any, use_async: bool) -> None:
    fault_server.script = [f"reply:{FIRST}", 'cut:{"thought": "now the ans']
    model = OpenAIChatModel(base_url=fault_server.url, max_retries=0, timeout=5)
    agent = Agent(model, adder(), stream=True)
    result = asyncio.run(agent.arun("2 + 3?")) if use_async else agent.run("2 + 3?")
    assert_trajectory_kept(result)
    assert "broke" in (result.error or "") and fault_server.url in (result.error or "")
