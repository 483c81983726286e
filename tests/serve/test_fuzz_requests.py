"""Fuzzing ``react-agent serve`` with hostile requests, in-process (the ASGI app through httpx's
ASGI transport, no socket): whatever the body and its tool schemas, the answer is a 2xx, or a
4xx in OpenAI's error shape, never a 5xx. The same property runs longer in
``benchmarks/fuzz_serve.py``."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx2
from hypothesis import HealthCheck, given, settings
from request_strategies import bodies

from react_agent.models import ScriptedModel
from react_agent.serve import create_app

ANSWER = json.dumps({"thought": "ok", "action": {"final_answer": "done"}})


def post(body: Any) -> httpx2.Response:
    app = create_app(ScriptedModel([ANSWER] * 8))

    async def send() -> httpx2.Response:
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            return await client.post(  # NaN and Infinity literals included, as Python writes
                "/v1/chat/completions", content=json.dumps(body),
                headers={"content-type": "application/json"}, timeout=30)

    return asyncio.run(send())


def check(response: httpx2.Response) -> None:
    assert response.status_code < 500, response.text
    if response.status_code >= 400:
        error = response.json()["error"]
        assert set(error) == {"message", "type", "param", "code"}
        assert isinstance(error["message"], str) and error["message"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(bodies)
def test_any_request_gets_a_2xx_or_a_4xx_in_openais_shape(body: dict[str, Any]) -> None:
    check(post(body))
