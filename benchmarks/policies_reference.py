"""What each small-model policy does to a model that gets every step right.

    python benchmarks/policies_reference.py [examples/tasks/dev.jsonl ...]

Each task of the task files (default: the development and test halves) carries a reference
trajectory: the replies a correct model gives (a call, a list of parallel calls, the final
answer). A scripted model replays it, once with the default policies, once with each default
policy left out and once with none. A policy that lowers the pass count of this perfect model,
or makes it pay extra model calls, changes what a correct reply does: a sign to keep it off
for capable models. Prints, per variant: tasks passed, tasks whose outcome differs from the
run without any policy, extra model calls (beyond the reference replies) and the tasks that
changed.

A second table replays the right first replies of the first-action suite (``examples/eval``:
each expected call with its first accepted value, parallel calls as a list) and counts, per
policy, the suite items whose right reply a policy changed: calls held back or refused, another
action taken.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from react_agent import Agent, ScriptedModel
from react_agent.harness import BatchTask, load_suite, load_tasks, toolbox_from_specs
from react_agent.harness._batch import task_record
from react_agent.harness._evaluation import EvalItem
from react_agent.policies import ORDER, Policy, default_policies
from react_agent.tools import load_toolbox

ROOT = Path(__file__).resolve().parent.parent


def reference_replies(path: Path) -> dict[str, list[str]]:
    """The reference replies of each task of a tasks file, by task id."""
    replies = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        data = json.loads(line)
        steps = []
        for item in data.get("reference") or []:
            if isinstance(item, str):
                action: Any = {"final_answer": item}
            elif isinstance(item, list):
                action = item
            else:
                action = item
            steps.append(json.dumps({"thought": "...", "action": action}, ensure_ascii=False))
        if steps:
            replies[data["id"]] = steps
    return replies


def run(task: BatchTask, replies: list[str], policies: list[Policy]) -> dict[str, Any]:
    model = ScriptedModel(list(replies))
    toolbox = load_toolbox(task.tools) if task.tools else None
    agent = Agent(model, toolbox, max_steps=task.max_steps or 10, policies=policies)
    result = agent.run(task.task)
    record = task_record(task, [result], 0.0)
    record["extra_calls"] = max(0, len(model.calls) - len(replies))
    return record


def right_reply(item: EvalItem) -> str | None:
    """The reply a correct model gives to a suite item (``None`` when no tool fits)."""
    if item.expected is None:
        return None
    calls = [{"name": c["name"], "args": {k: v[0] for k, v in c["args"].items() if v[0] != ""}}
             for c in item.expected]
    action: Any = calls[0] if len(calls) == 1 else calls
    return json.dumps({"thought": "...", "action": action}, ensure_ascii=False)


def first_action(item: EvalItem, reply: str, policies: list[Policy]) -> list[Any]:
    """What the loop does with ``reply`` as the first step: the calls it runs (with what ran
    or answered them), or the final answer."""
    model = ScriptedModel([reply, json.dumps({"thought": ".", "action": {"final_answer": "."}})])
    toolbox = toolbox_from_specs(item.tools)
    for tool in toolbox.values():  # run nothing: each call answers with its name
        object.__setattr__(tool, "func", lambda tool=tool.name, **_: f"ran {tool}")
    step = Agent(model, toolbox, max_steps=2, policies=policies).run(item.question).steps[0]
    return [(r.call.name, r.error) for r in step.results] or [step.final_answer]


def eval_table(suite: Path) -> None:
    items = [(i, r) for i in load_suite(suite) if (r := right_reply(i)) is not None]
    plain = {i.id: first_action(i, r, []) for i, r in items}
    print(f"\n{len(items)} items of {suite.name} with a right first reply")
    print(f"{'policy alone':<28}{'changed':>9}  items changed")
    for policy in default_policies():
        changed = [i.id for i, r in items if first_action(i, r, [policy]) != plain[i.id]]
        print(f"{policy.name:<28}{len(changed):>9}  {', '.join(changed)}")


def notes_toolbox() -> Any:
    from react_agent import Toolbox

    toolbox = Toolbox()

    @toolbox.tool
    def read_note(name: str) -> str:
        """Read one of the user's notes by its name."""
        return f"(the note {name})"

    @toolbox.tool
    def get_weather(city: str) -> str:
        """The current weather of a city."""
        return f"{city}: 18 degrees, clear"

    return toolbox


CAPABLE = [  # a right reply that infers a value the task does not state
    ("What do my notes on the Q3 plan and on hiring say, and is it warm in Lisbon?",
     [{"name": "read_note", "args": {"name": "q3-plan"}},
      {"name": "read_note", "args": {"name": "hiring"}},
      {"name": "get_weather", "args": {"city": "Lisbon"}}]),
]


def capable_table() -> None:
    print(f"\n{len(CAPABLE)} constructed right reply of three independent calls, two of them "
          "with a note name the task implies but does not write")
    for task, calls in CAPABLE:
        reply = json.dumps({"thought": "...", "action": calls})
        for policies in ([], default_policies()):
            model = ScriptedModel([reply, json.dumps({"thought": ".",
                                                       "action": {"final_answer": "."}})])
            step = Agent(model, notes_toolbox(), policies=policies).run(task).steps[0]
            held = step.records.get("held_calls", [])
            label = "defaults" if policies else "none"
            print(f"  {label:<10} ran {len(step.results)} of {len(calls)} calls, held "
                  f"{len(held)}: {', '.join(c['args'].get('name', '') for c in held)}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path,
                        default=[ROOT / "examples/tasks/dev.jsonl",
                                 ROOT / "examples/tasks/test.jsonl"])
    args = parser.parse_args()
    tasks: list[tuple[BatchTask, list[str]]] = []
    for path in args.files:
        replies = reference_replies(path)
        tasks += [(t, replies[t.id]) for t in load_tasks(path) if t.id in replies]
    defaults = [p.name for p in default_policies()]
    variants: dict[str, list[Policy]] = {"none": [], "defaults": default_policies()}
    variants.update({f"without {name}": default_policies(off=[name]) for name in defaults})
    baseline = {t.id: run(t, r, [])["passed"] for t, r in tasks}
    print(f"{len(tasks)} tasks with a reference trajectory; policies in order: {', '.join(ORDER)}")
    print(f"{'variant':<28}{'passed':>8}{'changed':>9}{'extra calls':>13}  tasks changed")
    for name, policies in variants.items():
        records = [run(t, r, policies) for t, r in tasks]
        passed = sum(bool(r["passed"]) for r in records)
        changed = [r["id"] for r in records if r["passed"] != baseline[r["id"]]]
        extra = sum(r["extra_calls"] for r in records)
        print(f"{name:<28}{passed:>8}{len(changed):>9}{extra:>13}  {', '.join(changed)}")
    eval_table(ROOT / "examples/eval/suite.jsonl")
    capable_table()
    return 0


if __name__ == "__main__":
    sys.exit(main())
