"""How ``react-agent serve`` answers the hostile requests of issues 30 (items 1 and 4) and 38
(item 1), and whether ``/health`` keeps answering meanwhile.

    python benchmarks/hostile_serve.py [--requests 50]

Each case sends ``--requests`` requests, two at a time, from a client thread while another
thread polls ``/health`` without pause; the server runs in a thread of this process on the
scripted backend. Prints, per case: the statuses seen, the median and the slowest request (ms),
and the slowest ``/health`` answer (ms) while the case ran.

Cases: a tool schema nested 30 levels of ``properties`` deep (~1.4 KB, issue 30 item 1), a
``$ref`` to a URL (item 2), 2,000 tools (item 4), a plain request with one tool for comparison;
and (issue 38, item 1) a model that calls a tool whose ``pattern`` backtracks with an argument
that makes it (refused at the validation budget, then answered), and one that sends 3,000
objects to a ``uniqueItems`` array.
"""

from __future__ import annotations

import argparse
import json
import statistics
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx2

from react_agent.models import ScriptedModel
from react_agent.serve import create_app, running

USER = [{"role": "user", "content": "What's the weather in Paris?"}]


def tool(name: str, parameters: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function",
            "function": {"name": name, "description": "A tool.", "parameters": parameters}}


def nested(levels: int) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        node = {"type": "object", "properties": {"a": node}}
    return node


def call(args: dict[str, Any]) -> str:
    return json.dumps({"thought": "I look.", "action": {"name": "f", "args": args}})


PLAIN = tool("get_weather", {"type": "object", "properties": {"city": {"type": "string"}}})
REPLY = '{"thought": "I know.", "action": {"final_answer": "Sunny."}}'
CASES: dict[str, tuple[list[dict[str, Any]], list[str]]] = {
    "one plain tool": ([PLAIN], [REPLY]),
    "schema 30 levels deep": ([tool("deep", nested(30))], [REPLY]),
    "$ref to a URL": ([tool("ref", {"type": "object", "properties": {
        "a": {"$ref": "http://127.0.0.1:9/schema.json"}}})], [REPLY]),
    "2,000 tools": ([tool(f"t{i}", PLAIN["function"]["parameters"]) for i in range(2000)],
                    [REPLY]),
    "backtracking pattern": ([tool("f", {"type": "object", "properties": {
        "a": {"type": "string", "pattern": "^(a|a)*$"}}})], [call({"a": "a" * 40 + "!"}), REPLY]),
    "uniqueItems, 3,000 objects": ([tool("f", {"type": "object", "properties": {
        "a": {"type": "array", "uniqueItems": True}}})],
        [call({"a": [{"k": i} for i in range(3000)]})]),
}
"""Per case: the tools, and what the model answers to each request (in order)."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=50)
    args = parser.parse_args()
    print(f"{'case':<28}{'statuses':<14}{'median ms':>10}{'max ms':>9}{'health max ms':>15}")
    for name, (tools, script) in CASES.items():
        model = ScriptedModel(script * (args.requests + 1))
        with running(create_app(model)) as url:
            health_url = url.removesuffix("/v1") + "/health"
            body = {"model": "any", "messages": USER, "tools": tools}
            stop, health = threading.Event(), []

            def poll(stop: threading.Event = stop, health: list[float] = health,
                     health_url: str = health_url) -> None:
                with httpx2.Client(timeout=60) as client:
                    while not stop.is_set():
                        started = time.perf_counter()
                        client.get(health_url)
                        health.append(time.perf_counter() - started)

            def post(_: int, body: dict[str, Any] = body, url: str = url) -> tuple[int, float]:
                started = time.perf_counter()
                status = httpx2.post(f"{url}/chat/completions", json=body,
                                     timeout=120).status_code
                return status, time.perf_counter() - started

            poller = threading.Thread(target=poll)
            poller.start()
            with ThreadPoolExecutor(2) as pool:
                answers = list(pool.map(post, range(args.requests)))
            stop.set()
            poller.join()
        statuses = ",".join(sorted({str(s) for s, _ in answers}))
        seconds = [t for _, t in answers]
        print(f"{name:<28}{statuses:<14}{statistics.median(seconds) * 1000:>10.1f}"
              f"{max(seconds) * 1000:>9.1f}{max(health) * 1000:>15.1f}")


if __name__ == "__main__":
    main()
