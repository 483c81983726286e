"""Framework time per step: everything the agent does around the model (prompt bookkeeping,
parsing, argument cleaning and validation, running the tool in its timeout thread, formatting
the observation, events, the default policies), with a ScriptedModel and a 10-tool toolbox.
Goals: < 300 µs per step, and a step costs the same however long the run is.

    python benchmarks/overhead.py [--runs 200] [--steps 10,30]
    python benchmarks/overhead.py --against CHECKOUT [--runs 200] [--steps 10,30]

Each run is ``--steps`` tool steps (cycling through the 10 tools with arguments that need
cleaning: strings for numbers, spaces, enum case; the task states every value, so no policy
holds a call back) and a final answer. Framework time of a run = wall time - model time
(``Step.model_seconds``) - time inside the tool functions (measured by wrapping them); per step
= that / model calls. The run lengths (and one and three calls a step) take turns, run by run,
so that each sees the same machine. Printed, per run length: median and 90th percentile in µs,
and the median with parallel calls (3 per step); then the marginal cost of a step between the
shortest and the longest runs (the difference of the median framework time per run, over the
difference of steps) and how much more a step of the longest runs costs than one of the
shortest, twice: from the medians, and as the median of the ratios of the runs made turn by
turn.

``--against CHECKOUT`` compares this checkout with another (the root folder of a ``git
worktree`` of an older commit, say): two worker processes, one importing each (each says which
``react_agent`` it imported; a folder without one is refused), take turns run by run (one call
per step), so that both see the same machine; printed per run length: each one's median and
the median of the paired ratios (this / other). On a machine whose speed drifts, the ratio is
the steadier figure.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import react_agent
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


def ten_tools() -> tuple[Toolbox, list[Callable[[int], tuple[str, dict[str, Any]]]]]:
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
    calls = [  # a call of each tool at step s, with arguments that need cleaning
        lambda s: ("get_weather", {"city": f" Paris {s} ", "unit": "Celsius"}),
        lambda s: ("add", {"a": str(2 + s), "b": 3}),
        lambda s: ("average", {"numbers": ["1.5", 2, s]}),
        lambda s: ("lookup", {"key": f"abc{s}"}),
        lambda s: ("stock", {"symbol": f"AAPL{s}"}),
        lambda s: ("convert", {"amount": f"{12.5 + s}", "currency": "EUR"}),
        lambda s: ("search", {"query": f"react agents {s}", "limit": "3"}),
        lambda s: ("flag", {"name": f"x{s}", "on": "true"}),
        lambda s: ("clock", {"zone": f"UTC{s}"}),
        lambda s: ("note", {"text": f"remember the milk {s}", "tags": "shopping"}),
    ]
    return toolbox, calls


def reply(calls: list[tuple[str, dict[str, Any]]]) -> str:
    actions = [{"name": n, "args": a} for n, a in calls]
    action: Any = actions[0] if len(actions) == 1 else actions
    return json.dumps({"thought": "Next I call a tool.", "action": action})


def script_for(steps: int, parallel: int) -> tuple[list[str], str]:
    """The replies of a run (each step's calls differ from every earlier step's, so that no
    policy takes them for a repeat) and a task that states every value they send."""
    _, calls = ten_tools()
    replies, values = [], []
    for s in range(steps):
        chosen = [calls[(s * parallel + i) % 10](s) for i in range(parallel)]
        values += [json.dumps(v) for _, args in chosen for v in args.values()]
        replies.append(reply(chosen))
    replies.append(json.dumps({"thought": "Done.", "action": {"final_answer": "ok"}}))
    return replies, "Do these things: " + ", ".join(values)


def per_step_us(steps: int, parallel: int, runs: int) -> list[float]:
    toolbox, _ = ten_tools()
    script, task = script_for(steps, parallel)
    samples = []
    for _ in range(runs):
        agent = Agent(ScriptedModel(script), toolbox, max_steps=steps + 1)
        INSIDE_TOOLS[0] = 0.0
        started = time.perf_counter()
        result = agent.run(task)
        wall = time.perf_counter() - started
        assert result.status == "final_answer", result.error
        assert all(r.ok for s in result.steps for r in s.results), "a tool call failed"
        model = sum(s.model_seconds for s in result.steps)
        samples.append((wall - model - INSIDE_TOOLS[0]) / len(result.steps) * 1e6)
    return samples


def worker() -> None:
    """Say which react_agent this process imported, then answer each line ``STEPS`` on stdin
    with the framework µs per step of one such run."""
    print(Path(react_agent.__file__).resolve().parent, flush=True)
    per_step_us(10, 1, 10)  # warm up
    for line in sys.stdin:
        print(per_step_us(int(line), 1, 1)[0], flush=True)


def paired(other: Path, lengths: list[int], runs: int) -> None:
    if not (other / "react_agent" / "__init__.py").is_file():
        raise SystemExit(f"--against {other}: no react_agent package there (a checkout's root "
                         "folder is expected)")
    here = Path(react_agent.__file__).resolve().parents[1]
    workers = [subprocess.Popen([sys.executable, __file__, "--worker"], text=True,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                env={**os.environ, "PYTHONPATH": str(root)})
               for root in (here, other)]
    imported = [w.stdout.readline().strip() if w.stdout else "" for w in workers]
    if imported[0] == imported[1] or Path(imported[1]) != other / "react_agent":
        raise SystemExit(f"--against {other}: the second worker imported {imported[1]}, not "
                         "that checkout's react_agent")
    print(f"framework time per step (one call a step), {runs} runs each, alternating: "
          f"this checkout ({imported[0]}) and {imported[1]}")
    for steps in lengths:
        samples: list[list[float]] = [[], []]
        for n in range(runs):
            for k in (0, 1) if n % 2 == 0 else (1, 0):
                assert workers[k].stdin is not None and workers[k].stdout is not None
                workers[k].stdin.write(f"{steps}\n")
                workers[k].stdin.flush()
                samples[k].append(float(workers[k].stdout.readline()))
        ratio = statistics.median(a / b for a, b in zip(*samples, strict=True))
        print(f"  N={steps:<3} this: median {statistics.median(samples[0]):5.0f} µs   other: "
              f"median {statistics.median(samples[1]):5.0f} µs   this/other (paired): "
              f"{ratio:.3f}")
    for w in workers:
        assert w.stdin is not None
        w.stdin.close()
        w.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--steps", default="10,30", help="run lengths, comma-separated")
    parser.add_argument("--against", type=Path, metavar="CHECKOUT",
                        help="compare with another checkout, run by run")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    lengths = [int(n) for n in args.steps.split(",")]
    if args.worker:
        worker()
        return
    if args.against:
        paired(args.against.resolve(), lengths, args.runs)
        return
    per_step_us(lengths[0], 1, 10)  # warm up
    configs = [(steps, parallel) for steps in lengths for parallel in (1, 3)]
    samples: dict[tuple[int, int], list[float]] = {c: [] for c in configs}
    for _ in range(args.runs):  # the configurations take turns: each sees the same machine
        for steps, parallel in configs:
            samples[steps, parallel] += per_step_us(steps, parallel, 1)
    medians = {steps: statistics.median(samples[steps, 1]) for steps in lengths}
    print(f"framework time per step, 10 tools, {args.runs} runs of N tool steps + a final "
          "answer:")
    for steps in lengths:
        one = sorted(samples[steps, 1])
        p90 = one[int(0.9 * (len(one) - 1))]
        print(f"  N={steps:<3} one call per step:    median {medians[steps]:7.0f} µs   "
              f"p90 {p90:7.0f} µs")
        print(f"        three parallel calls: median {statistics.median(samples[steps, 3]):7.0f}"
              " µs")
    if len(lengths) > 1:
        short, long = min(lengths), max(lengths)
        marginal = (medians[long] * (long + 1) - medians[short] * (short + 1)) / (long - short)
        paired_ratio = statistics.median(
            b / a for a, b in zip(samples[short, 1], samples[long, 1], strict=True))
        print(f"  marginal cost of a step from N={short} to N={long}: {marginal:.0f} µs; "
              f"N={long} vs N={short}: {medians[long] / medians[short] - 1:+.0%} (medians), "
              f"{paired_ratio - 1:+.0%} (median of the runs' ratios, turn by turn)")


if __name__ == "__main__":
    main()
