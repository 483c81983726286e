"""Accuracy through ``react-agent serve`` against the library, on the eval suite: the same items,
the same model, scored by the same checker (:func:`react_agent.harness._evaluation.score`).

    python benchmarks/serve_accuracy.py                         # all 50 items, embedded model
    python benchmarks/serve_accuracy.py --category single --limit 4
    python benchmarks/serve_accuracy.py --skip 4                # all but the first 4 per category
    python benchmarks/serve_accuracy.py --only none-07 --separate
    python benchmarks/serve_accuracy.py --retries 0             # no internal retries

For each item the library scores the model's first reply (``react-agent eval``'s settings: no
retry, routing off); then the item goes to the endpoint as an OpenAI request (``tools`` = the
item's specs, one user message, no system message) and the reply's ``tool_calls`` (or content)
is scored the same way. With ``--retries 0`` the endpoint sends the model exactly the library's
messages, so the two must agree item by item; with the server's default (3) an unusable reply is
asked again, which can only add right answers. Prints accuracy per category for both, the items
where they differ, and seconds per item.

By default one model serves both, so the endpoint's call finds the library's prompt in llama.cpp's
cache: faster, but a prompt taken from the cache is not computed in the same batches as a fresh
one, and at temperature 0 a near-tie can then go the other way. ``--separate`` gives the endpoint
its own model instance, which sees the same sequence of prompts as the library's.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx2

from react_agent import Agent, AgentConfig, Reply, Step
from react_agent.harness._evaluation import first_turn, load_suite, score, toolbox_from_specs
from react_agent.models import LlamaCppModel
from react_agent.policies import default_policies
from react_agent.serve import ServeConfig, create_app, running

SUITE = Path(__file__).resolve().parent.parent / "examples" / "eval" / "suite.jsonl"


def endpoint_calls(url: str, item: Any) -> tuple[Step, list[dict[str, Any]], int]:
    """``(step, calls, attempts)`` of the endpoint's reply to one item, in the scorer's terms."""
    body = {"model": "any", "tools": list(item.tools),
            "messages": [{"role": "user", "content": item.question}]}
    reply = httpx2.post(f"{url}/chat/completions", json=body, timeout=600).json()
    message = reply["choices"][0]["message"]
    info = reply["react_agent"]
    calls = [{"name": c["function"]["name"], "args": json.loads(c["function"]["arguments"])}
             for c in message.get("tool_calls") or []]
    reply = Reply(None, [], None, info["stage"]) if info["stage"] else None
    step = Step(index=1, raw_output=message.get("content") or "", reply=reply,
                error=info["parse_error"])
    return step, calls, info["attempts"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default=str(SUITE))
    parser.add_argument("--category")
    parser.add_argument("--limit", type=int, help="the first N items of each category")
    parser.add_argument("--skip", type=int, default=0,
                        help="leave out the first N items of each category")
    parser.add_argument("--retries", type=int, default=ServeConfig.max_parse_retries,
                        help="the endpoint's max_parse_retries (default: the server's, 3)")
    parser.add_argument("--gguf", help="another GGUF file instead of the embedded model")
    parser.add_argument("--only", help="only these item ids (comma-separated)")
    parser.add_argument("--separate", action="store_true",
                        help="a second model instance for the endpoint (no shared prompt cache)")
    args = parser.parse_args()
    only = set(args.only.split(",")) if args.only else None
    items = [i for i in load_suite(args.suite) if args.category in (None, i.category)
             and (only is None or i.id in only)]
    seen: Counter[str] = Counter()
    for item in list(items):
        seen[item.category] += 1
        if not args.skip < seen[item.category] <= args.skip + (args.limit or len(items)):
            items.remove(item)
    model = LlamaCppModel(args.gguf)
    model.load()
    served = model
    if args.separate:
        served = LlamaCppModel(args.gguf)
        served.load()
    config = AgentConfig(max_steps=1, max_parse_retries=0,
                         policies=default_policies(off=["best_effort"]))
    rows = []
    with running(create_app(served, ServeConfig(max_parse_retries=args.retries))) as url:
        for number, item in enumerate(items, 1):
            toolbox = toolbox_from_specs(item.tools)
            started = time.perf_counter()
            turn = first_turn(Agent(model, toolbox, config=config), item.question)
            library, _ = score(turn.step, item.expected, toolbox, turn.calls)
            middle = time.perf_counter()
            step, calls, attempts = endpoint_calls(url, item)
            endpoint, reason = score(step, item.expected, toolbox, calls)
            done = time.perf_counter()
            rows.append({"id": item.id, "category": item.category, "library": library,
                         "endpoint": endpoint, "reason": reason, "attempts": attempts,
                         "library_s": middle - started, "endpoint_s": done - middle})
            print(f"[{number}/{len(items)}] {item.id}: library {'ok' if library else 'wrong'}, "
                  f"endpoint {'ok' if endpoint else 'wrong'} ({reason}; {attempts} attempt(s))",
                  flush=True)
    print(f"\nretries at the endpoint: {args.retries}")
    print(f"{'category':<10}{'items':>6}{'library':>9}{'endpoint':>10}{'same':>6}")
    for name in [*sorted({r['category'] for r in rows}), "all"]:
        group = [r for r in rows if name in ("all", r["category"])]
        same = sum(r["library"] == r["endpoint"] for r in group)
        print(f"{name:<10}{len(group):>6}{sum(r['library'] for r in group):>9}"
              f"{sum(r['endpoint'] for r in group):>10}{same:>6}")
    for r in rows:
        if r["library"] != r["endpoint"]:
            print(f"  differs: {r['id']} library {r['library']} endpoint {r['endpoint']} "
                  f"({r['reason']}, {r['attempts']} attempts)")
    n = len(rows) or 1
    cache = "its own model" if args.separate else "the library's prompt cached"
    print(f"seconds per item: library {sum(r['library_s'] for r in rows) / n:.1f}, endpoint "
          f"{sum(r['endpoint_s'] for r in rows) / n:.1f} ({cache})")


if __name__ == "__main__":
    main()
