"""Write seeds.jsonl: the seed acceptance scenarios (tests/data/seed_scenarios.json) as a tasks
file for ``react-agent run --tasks``, the real-model tier's checks on every turn::

    python examples/tasks/build_seeds.py           # rewrite examples/tasks/seeds.jsonl
    react-agent run --tasks examples/tasks/seeds.jsonl

A task of several turns (seed 004) becomes one conversation (``turns``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SCENARIOS = HERE.parent.parent / "tests" / "data" / "seed_scenarios.json"
SEED_TOOLS = "../../tests/data/seeds/tools.py"  # the seeds' toolboxes, relative to this folder
CHECKS = ("expected_calls", "call_order", "parallel_allowed", "forbidden_tools", "final_answer",
          "memory")


def seed_tasks() -> list[dict[str, Any]]:
    """One tasks-file line per seed task."""
    lines = []
    for seed in json.loads(SCENARIOS.read_text(encoding="utf-8"))["seeds"]:
        key = seed["seed_file"][:3]
        setup = seed["source_setup"]
        for task in seed["tasks"]:
            turns = [{"task": t["user"], **{k: t[k] for k in CHECKS if k in t}}
                     for t in task["turns"]]
            steps = setup.get("max_steps") or setup.get("max_iterations") or 10
            line: dict[str, Any] = {"id": task["id"], "shape": f"seed{key}",
                                    "tools": f"{SEED_TOOLS}:seed{key}", "max_steps": steps}
            lines.append({**line, "turns": turns} if len(turns) > 1 else {**line, **turns[0]})
    return lines


def render() -> str:
    return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in seed_tasks())


if __name__ == "__main__":
    (HERE / "seeds.jsonl").write_text(render(), encoding="utf-8")
