"""``react-agent serve`` under load, on a scripted backend: many clients at once, then a full
queue.

    python benchmarks/serve_load.py [--clients 50] [--requests 20]

1. Load: ``--clients`` concurrent clients each send ``--requests`` requests with tools, one after
   the other, to one endpoint whose backend answers one request at a time (like the embedded
   model) with a 2 ms delay. Printed: errors (must be 0), latency p50/p99, requests/s.
2. Full queue: the same clients against a queue of 8 and a backend that takes 20 ms. Printed:
   answered (200) and refused (503 with ``Retry-After``), and the checks that nothing was lost
   or answered twice: every request got exactly one response; every answer is the one to its
   own request; the backend answered exactly as many requests as got 200.

Each request carries a unique id in its user message, and the scripted backend calls a tool with
that id, so a mixed-up or doubled answer shows. The server runs in a thread of this process; the
clients are asyncio tasks with one ``httpx2.AsyncClient``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import threading
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

import httpx2

from react_agent.models import ModelReply
from react_agent.serve import ServeConfig, create_app, running

TOOL = {"type": "function", "function": {
    "name": "lookup", "description": "Look an id up.",
    "parameters": {"type": "object", "properties": {"id": {"type": "string"}},
                   "required": ["id"]}}}


class EchoModel:
    """Calls ``lookup`` with the id in the last user message after ``delay`` seconds; counts
    the ids it answered."""

    name = "echo"

    def __init__(self, delay: float) -> None:
        self.delay, self.answered, self._lock = delay, Counter[str](), threading.Lock()

    def complete(self, messages: Sequence[dict[str, str]]) -> ModelReply:
        time.sleep(self.delay)
        request_id = messages[-1]["content"].split()[-1]
        with self._lock:
            self.answered[request_id] += 1
        text = json.dumps({"thought": "Look it up.",
                           "action": {"name": "lookup", "args": {"id": request_id}}})
        return ModelReply(text, 100, 20, "stop")


async def client(http: httpx2.AsyncClient, number: int, requests: int,
                 outcomes: list[dict[str, Any]]) -> None:
    for n in range(requests):
        request_id = f"c{number}r{n}"
        body = {"model": "any", "tools": [TOOL],
                "messages": [{"role": "user", "content": f"Look up {request_id}"}]}
        started = time.perf_counter()
        try:
            response = await http.post("/chat/completions", json=body)
        except httpx2.HTTPError as exc:
            outcomes.append({"id": request_id, "status": None, "error": repr(exc)})
            continue
        outcome: dict[str, Any] = {"id": request_id, "status": response.status_code,
                                   "seconds": time.perf_counter() - started,
                                   "retry_after": response.headers.get("retry-after")}
        if response.status_code == 200:
            call = response.json()["choices"][0]["message"]["tool_calls"][0]
            outcome["answer"] = json.loads(call["function"]["arguments"])["id"]
        outcomes.append(outcome)


def run(clients: int, requests: int, delay: float, queue: int) -> tuple[list[Any], EchoModel,
                                                                         float]:
    model = EchoModel(delay)
    outcomes: list[dict[str, Any]] = []
    with running(create_app(model, ServeConfig(queue=queue))) as url:

        async def everyone() -> None:
            limits = httpx2.Limits(max_connections=clients + 10)
            async with httpx2.AsyncClient(base_url=url, timeout=120, limits=limits) as http:
                await asyncio.gather(*(client(http, c, requests, outcomes)
                                       for c in range(clients)))

        started = time.perf_counter()
        asyncio.run(everyone())
        wall = time.perf_counter() - started
    return outcomes, model, wall


def checks(outcomes: list[dict[str, Any]], model: EchoModel, clients: int,
           requests: int) -> list[str]:
    """What went wrong, in words (empty when nothing was lost or doubled)."""
    problems = []
    sent = {f"c{c}r{n}" for c in range(clients) for n in range(requests)}
    responses = Counter(o["id"] for o in outcomes)
    if set(responses) != sent or any(v != 1 for v in responses.values()):
        problems.append("not exactly one response per request")
    ok = [o for o in outcomes if o["status"] == 200]
    if any(o["answer"] != o["id"] for o in ok):
        problems.append("an answer went to another request")
    if any(v != 1 for v in model.answered.values()) or set(model.answered) != {
        o["id"] for o in ok
    }:
        problems.append("the backend's answers do not match the 200s")
    if any(o["status"] not in (200, 503) for o in outcomes):
        problems.append("a status other than 200 or 503")
    if any(o["status"] == 503 and not o["retry_after"] for o in outcomes):
        problems.append("a 503 without Retry-After")
    return problems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--requests", type=int, default=20)
    args = parser.parse_args()
    total = args.clients * args.requests

    outcomes, model, wall = run(args.clients, args.requests, delay=0.002, queue=64)
    seconds = [o["seconds"] * 1000 for o in outcomes if o["status"] == 200]
    errors = sum(o["status"] != 200 for o in outcomes)
    problems = checks(outcomes, model, args.clients, args.requests)
    ordered = sorted(seconds)
    print(f"load: {args.clients} clients x {args.requests} requests = {total}, backend 1 at a "
          "time, 2 ms each, queue 64")
    print(f"  errors {errors}   p50 {statistics.median(seconds):.1f} ms   "
          f"p99 {ordered[round(0.99 * (len(ordered) - 1))]:.1f} ms   "
          f"{total / wall:.0f} requests/s   checks: {'; '.join(problems) or 'all passed'}")

    outcomes, model, wall = run(args.clients, args.requests, delay=0.02, queue=8)
    statuses = Counter(o["status"] for o in outcomes)
    problems = checks(outcomes, model, args.clients, args.requests)
    print(f"full queue: the same {total} requests, backend 20 ms each, queue 8")
    other = total - statuses[200] - statuses[503]
    print(f"  answered {statuses[200]}   refused 503 {statuses[503]}   other {other}   backend "
          f"answered {sum(model.answered.values())}   checks: "
          f"{'; '.join(problems) or 'all passed (none lost, none doubled)'}")


if __name__ == "__main__":
    main()
