"""Run every seed scenario turn on a real model and report pass/fail, tool calls and step times.

    python benchmarks/seeds.py                       # the embedded model
    python benchmarks/seeds.py --base-url URL        # an OpenAI-compatible server
    python benchmarks/seeds.py --only seed003        # turns whose label contains this text
    python benchmarks/seeds.py --constrained off     # plain prompting (default: auto)
    python benchmarks/seeds.py --gguf FILE.gguf      # another local model, e.g. SmolLM2-135M

The turns of one task run as one conversation (seed 004: three turns sharing their history).
Prints one line per turn and, at the end, the pass count, the format-error rate (model replies
the parser could not use, over all replies) and the median wall time per step.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "data" / "seeds"))

from scenarios import all_turns, check_run, seed_max_steps
from tools import TOOLBOXES

from react_agent import Agent, Conversation
from react_agent.models import LlamaCppModel, OpenAIChatModel
from react_agent.policies import Constrained, default_policies


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url")
    parser.add_argument("--model")
    parser.add_argument("--only", default="")
    parser.add_argument("--json", help="also write per-turn results to this JSON Lines file")
    parser.add_argument("--constrained", choices=("auto", "on", "off"), default="auto")
    parser.add_argument("--gguf", help="a GGUF file to run instead of the embedded model")
    args = parser.parse_args()
    model = (OpenAIChatModel(args.model, args.base_url) if args.base_url
             else LlamaCppModel(args.gguf))
    if hasattr(model, "load"):
        model.load()
    step_seconds: list[float] = []
    passed = total = replies = unusable = 0
    records = []
    chats: dict[str, Conversation] = {}
    for turn in all_turns():
        if args.only not in turn.label:
            continue
        started = time.perf_counter()
        if turn.task_id not in chats:
            agent = Agent(model, TOOLBOXES[turn.seed], max_steps=seed_max_steps(turn.seed),
                          policies=default_policies(use=[Constrained(mode=args.constrained)]))
            chats[turn.task_id] = agent.chat()
        result = chats[turn.task_id].ask(turn.spec["user"])
        wall = time.perf_counter() - started
        problems = check_run(result, turn.spec)
        total += 1
        passed += not problems
        step_seconds += [s.model_seconds + sum(r.seconds for r in s.results) for s in result.steps]
        replies += len(result.steps)
        unusable += sum(1 for s in result.steps if s.stage is None)
        calls = "; ".join(f"{c.name} {json.dumps(c.args, ensure_ascii=False)}"
                          for c in result.tool_calls) or "(none)"
        print(f"{'PASS' if not problems else 'FAIL'} {turn.label}: {result.status}, "
              f"{len(result.steps)} steps, {wall:.1f} s | calls: {calls} | "
              f"answer: {result.final_answer!r}", flush=True)
        for problem in problems:
            print(f"     - {problem}", flush=True)
        records.append({"turn": turn.label, "passed": not problems, "problems": problems,
                        "seconds": wall, "result": result.to_dict()})
    if args.json:
        Path(args.json).write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), "utf-8"
        )
    median = statistics.median(step_seconds) if step_seconds else 0.0
    print(f"\n{passed}/{total} turns passed; format errors {unusable}/{replies} replies; median "
          f"wall time per step {median:.1f} s over {len(step_seconds)} steps ({model.name}, "
          f"constrained {args.constrained})")
    return 0 if passed == total else 1


if __name__ == "__main__":
    raise SystemExit(main())
