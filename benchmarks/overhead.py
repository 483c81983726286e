"""Framework time per step: everything the agent does around the model (prompt bookkeeping,
parsing, argument cleaning and validation, running the tool in its timeout thread, formatting
the observation, events), with a ScriptedModel and a 10-tool toolbox. Goal: < 1 ms per step.

    python benchmarks/overhead.py [--runs 200] [--steps 8]

Each run is ``--steps`` tool steps (cycling through the 10 tools with arguments that need
cleaning: strings for numbers, spaces, enum case) and a final answer. Framework time of a run =
wall time - model time (``Step.model_seconds``) - time inside the tool functions (measured by
wrapping them); per step = that / model calls. Printed: median and 90th percentile in µs, and
the median with parallel calls (3 per step).
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
import time
from collections.abc import Callable
from typing import Any, Literal

from react_agent import Agent, ScriptedModel, Toolbox

INSIDE_TOOLS = [0.0]


def timed(func: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(func)
    def wrapper(**args: Any) -> Any:
        started = time.perf_counter()
        try:
            return func(**args)
        finally:
            INSIDE_TOOLS[0] += time.perf_counter() - started

    return wrapper


def ten_tools() -> tuple[Toolbox, list[tuple[str, dict[str, Any]]]]:
    def get_weather(city: str, unit: Literal["celsius", "fahrenheit"] = "celsius") -> str:
        """Current weather of a city."""
        return f"sunny in {city}"

    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    def average(numbers: list[float]) -> float:
        """Average of numbers."""
        return sum(numbers) / len(numbers)

    def lookup(key: str, default: str = "") -> str:
        """Look a key up."""
        return key.upper()

    def stock(symbol: str) -> dict[str, Any]:
        """Stock price."""
        return {"symbol": symbol, "price": 187.3}

    def convert(amount: float, currency: str) -> str:
        """Convert money."""
        return f"{amount * 1.1:.2f} {currency}"

    def search(query: str, limit: int = 5) -> list[str]:
        """Search."""
        return [f"{query} {i}" for i in range(limit)]

    def flag(name: str, on: bool) -> str:
        """Set a flag."""
        return f"{name}={on}"

    def clock(zone: str = "UTC") -> str:
        """Time in a zone."""
        return f"12:00 {zone}"

    def note(text: str, tags: list[str] | None = None) -> str:
        """Write a note."""
        return f"noted ({len(text)} chars)"

    toolbox = Toolbox()
    for f in (get_weather, add, average, lookup, stock, convert, search, flag, clock, note):
        toolbox.add(timed(f))
    calls = [
        ("get_weather", {"city": " Paris ", "unit": "Celsius"}),
        ("add", {"a": "2", "b": 3}),
        ("average", {"numbers": ["1.5", 2, 3]}),
        ("lookup", {"key": "abc"}),
        ("stock", {"symbol": "AAPL"}),
        ("convert", {"amount": "12.5", "currency": "EUR"}),
        ("search", {"query": "react agents", "limit": "3"}),
        ("flag", {"name": "x", "on": "true"}),
        ("clock", {}),
        ("note", {"text": "remember the milk", "tags": "shopping"}),
    ]
    return toolbox, calls


def reply(calls: list[tuple[str, dict[str, Any]]]) -> str:
    actions = [{"name": n, "args": a} for n, a in calls]
    action: Any = actions[0] if len(actions) == 1 else actions
    return json.dumps({"thought": "Next I call a tool.", "action": action})


def per_step_us(steps: int, parallel: int, runs: int) -> list[float]:
    toolbox, calls = ten_tools()
    script = [
        reply([calls[(s * parallel + i) % 10] for i in range(parallel)]) for s in range(steps)
    ]
    script.append(json.dumps({"thought": "Done.", "action": {"final_answer": "ok"}}))
    samples = []
    for _ in range(runs):
        agent = Agent(ScriptedModel(script), toolbox, max_steps=steps + 1)
        INSIDE_TOOLS[0] = 0.0
        started = time.perf_counter()
        result = agent.run("Do the ten things.")
        wall = time.perf_counter() - started
        assert result.status == "final_answer", result.error
        assert all(r.ok for s in result.steps for r in s.results), "a tool call failed"
        model = sum(s.model_seconds for s in result.steps)
        samples.append((wall - model - INSIDE_TOOLS[0]) / len(result.steps) * 1e6)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--steps", type=int, default=8)
    args = parser.parse_args()
    per_step_us(args.steps, 1, 10)  # warm up
    one = sorted(per_step_us(args.steps, 1, args.runs))
    three = per_step_us(args.steps, 3, args.runs)
    p90 = one[int(0.9 * (len(one) - 1))]
    print(f"framework time per step, 10 tools, {args.runs} runs of {args.steps} tool steps + "
          "a final answer:")
    print(f"  one call per step:    median {statistics.median(one):7.0f} µs   p90 {p90:7.0f} µs")
    print(f"  three parallel calls: median {statistics.median(three):7.0f} µs")
    goal = "met" if statistics.median(one) < 1000 else "NOT met"
    print(f"  goal < 1000 µs per step: {goal}")


if __name__ == "__main__":
    main()
