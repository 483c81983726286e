"""How often :class:`~react_agent.policies.HoldDependentCalls` holds back a call of a *right*
reply: BFCL's own right answers (``possible_answer``, the first accepted value of each argument)
as the model's reply, the item's question as what the user said, and the policy's check.

    python benchmarks/held_calls_bfcl.py              # the untouched split: items 0-149
    python benchmarks/held_calls_bfcl.py --split tune # items 150 and up (tune on these)
    python benchmarks/held_calls_bfcl.py --show       # each item where a call is held

Every call of these replies is right, so every item where the policy holds a call back is a
misfire. Needs BFCL's data: the runner's environment that ``python benchmarks/bfcl.py
--setup-only`` builds (``--data DIR`` for another ``bfcl_eval/data``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path.cwd()))

from react_agent.engine import Facts
from react_agent.policies._grounding import unstated
from react_agent.policies._held_calls import Said
from react_agent.types import ToolCall

CATEGORIES = ("parallel_multiple", "live_parallel_multiple", "multiple", "parallel",
              "simple_python", "live_simple", "live_multiple")


def default_data() -> Path:
    from react_agent._paths import cache_dir

    found = sorted((cache_dir() / "bench").glob("bfcl-eval-*/lib/python*/site-packages/"
                                                  "bfcl_eval/data"))
    if not found:
        raise SystemExit("no BFCL data: run python benchmarks/bfcl.py --setup-only, or --data")
    return found[-1]


def first_value(values: list[Any]) -> Any:
    return values[0] if isinstance(values, list) and values else values


def right_calls(truth: list[dict[str, Any]]) -> list[ToolCall]:
    calls = []
    for answer in truth:
        [(name, params)] = answer.items()
        args = {k: first_value(v) for k, v in params.items() if first_value(v) != ""}
        calls.append(ToolCall(name.replace(".", "_"), args))
    return calls


def held(question: list[list[dict[str, str]]], functions: list[dict[str, Any]],
         calls: list[ToolCall]) -> list[ToolCall]:
    """The calls the policy would hold back of ``calls`` (as its after_reply decides)."""
    if len({c.name for c in calls}) < 2:
        return []
    facts = Facts()
    for turn in question:
        for message in turn:
            if message["role"] in ("user", "system"):
                facts.told({"role": message["role"], "content": message["content"]})
    said = Said(facts)
    schemas = {f["name"].replace(".", "_"): f.get("parameters") for f in functions}
    waiting = [c for c in calls if unstated(c, said.text, said.numbers, schemas.get(c.name))]
    return [] if len(waiting) == len(calls) else waiting


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=("test", "tune"), default="test")
    parser.add_argument("--data", type=Path)
    parser.add_argument("--show", action="store_true")
    args = parser.parse_args()
    data = args.data or default_data()
    for category in CATEGORIES:
        items = [json.loads(x) for x in
                 (data / f"BFCL_v4_{category}.json").read_text().splitlines()]
        truth = {json.loads(x)["id"]: json.loads(x)["ground_truth"] for x in
                 (data / "possible_answer" / f"BFCL_v4_{category}.json").read_text().splitlines()}
        seen = misfires = 0
        for item in items:
            number = int(item["id"][len(category) + 1:].split("-")[0])
            if (number >= 150) != (args.split == "tune"):
                continue
            seen += 1
            waiting = held(item["question"], item["function"], right_calls(truth[item["id"]]))
            if waiting:
                misfires += 1
                if args.show:
                    print(f"  {item['id']}: {[(c.name, c.args) for c in waiting]}")
        print(f"{category:24} {args.split}: {seen:4} right replies, a call held back in "
              f"{misfires}")


if __name__ == "__main__":
    main()
