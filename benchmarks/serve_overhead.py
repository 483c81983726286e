"""What ``react-agent serve`` adds per request over calling the backend directly, on the scripted
backend (so that only the endpoint is measured): HTTP on 127.0.0.1, reading the request and the
tools, rendering the system prompt, parsing the reply, cleaning and checking the arguments,
building the response.

    python benchmarks/serve_overhead.py [--requests 500]

Each round times the backend's own call (``complete`` on the request's messages, the model's
part of a request) and one request with 3 tools through the endpoint (a keep-alive ``httpx2``
client, whole and streamed); overhead = endpoint time - direct time. Prints median and p99 in ms.
The server runs in a thread of this process, so the client's work shares the interpreter.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any

import httpx2

from react_agent.models import ScriptedModel
from react_agent.serve import create_app, running
from react_agent.serve._openai import read_request


def tool(name: str, **props: str) -> dict[str, Any]:
    return {"type": "function", "function": {
        "name": name, "description": f"The {name.replace('_', ' ')} tool.",
        "parameters": {"type": "object", "required": [next(iter(props))],
                       "properties": {k: {"type": v} for k, v in props.items()}}}}


TOOLS = [tool("get_weather", city="string", days="integer"),
         tool("convert_currency", amount="number", to="string"),
         tool("search_notes", query="string", limit="integer")]
REPLY = json.dumps({"thought": "I look it up.",
                    "action": {"name": "get_weather", "args": {"city": " Paris ", "days": "3"}}})
BODY = {"model": "any", "tools": TOOLS,
        "messages": [{"role": "system", "content": "Be brief."},
                     {"role": "user", "content": "What is the weather in Paris for 3 days?"}]}


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=500)
    args = parser.parse_args()
    model = ScriptedModel([REPLY] * (3 * args.requests + 60), chunk_chars=8)
    messages = read_request(BODY).messages
    results: dict[str, list[float]] = {"whole": [], "streamed": []}
    with running(create_app(model)) as url, httpx2.Client(base_url=url, timeout=30) as client:
        for n in range(args.requests + 20):
            started = time.perf_counter()
            model.complete(messages)
            direct = time.perf_counter() - started
            started = time.perf_counter()
            whole = client.post("/chat/completions", json=BODY)
            middle = time.perf_counter()
            with client.stream("POST", "/chat/completions", json={**BODY, "stream": True}) as s:
                data = b"".join(s.iter_bytes())
            done = time.perf_counter()
            assert whole.json()["choices"][0]["finish_reason"] == "tool_calls"
            assert data.rstrip().endswith(b"data: [DONE]")
            if n >= 20:  # the first requests warm up the connection and caches
                results["whole"].append((middle - started - direct) * 1000)
                results["streamed"].append((done - middle - direct) * 1000)
    print(f"endpoint overhead per request over the backend's own call (scripted backend, "
          f"{args.requests} requests, 3 tools):")
    for name, samples in results.items():
        print(f"  {name:<9} median {statistics.median(samples):6.2f} ms   "
              f"p99 {percentile(samples, 0.99):6.2f} ms")


if __name__ == "__main__":
    main()
