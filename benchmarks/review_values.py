"""How well the review finds a value a draft answer restates wrongly (a time, a date, a sign, a
unit), and how often it speaks where nothing is wrong.

    python benchmarks/review_values.py [--half dev|test|both] [--show]

Three sets, no model run:

1. The labelled drafts (``benchmarks/data/review_values.jsonl``, written with
   ``benchmarks/data/build_review_values.py``): precision and recall of "restates a value
   wrongly", per half (``dev``: tuned on; ``test``: left untouched while tuning), by kind and by
   language.
2. The reference answers of the task suites (``examples/tasks/dev.jsonl``, ``test.jsonl``: each
   task's right trajectory replayed through its tools) and of the seed scenarios
   (``tests/data/seed_scenarios.json``): right answers, on which the check should stay silent.
3. Recorded answers of real runs (``benchmarks/data/recorded_answers.jsonl``: drafts and final
   answers the embedded 1.5B model wrote, with the tool results they saw, each labelled by
   hand): how often the check fires on real output and whether each firing is right.

``--show`` prints every case the check gets wrong and every firing on sets 2 and 3.
``--extract RESULTS.jsonl`` prints, as lines for set 3 (``"label": null``, to be labelled by
hand), each answer of the runs of a results file of ``react-agent run --tasks``: the drafts,
the focused answers and the final answers written after a tool call, with the successful
results before them.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from react_agent import Agent, ScriptedModel, parse_reply
from react_agent.harness import load_tasks
from react_agent.policies._restated import Misstated, misstated, read_told
from react_agent.tools import load_toolbox
from react_agent.types import ToolCall, ToolResult

ROOT = Path(__file__).resolve().parent.parent
LABELLED = ROOT / "benchmarks/data/review_values.jsonl"
RECORDED = ROOT / "benchmarks/data/recorded_answers.jsonl"
SUITES = [ROOT / "examples/tasks/dev.jsonl", ROOT / "examples/tasks/test.jsonl"]
SEEDS = ROOT / "tests/data/seed_scenarios.json"


def results_of(rows: list[list[Any]]) -> list[ToolResult]:
    """``[tool, args, observation]`` rows as successful tool results."""
    return [ToolResult(ToolCall(tool, args), observation, ok=True)
            for tool, args, observation in rows]


def check(task: str | list[str], rows: list[list[Any]], answer: str) -> list[Misstated]:
    user = [task] if isinstance(task, str) else task
    return misstated(answer, read_told(results_of(rows), user))


def scores(pairs: list[tuple[bool, bool]]) -> str:
    """``precision  recall  (tp fp fn tn)`` of (predicted, labelled) pairs."""
    tp = sum(p and g for p, g in pairs)
    fp = sum(p and not g for p, g in pairs)
    fn = sum(g and not p for p, g in pairs)
    tn = len(pairs) - tp - fp - fn
    precision = f"{tp / (tp + fp):.2f}" if tp + fp else "  - "
    recall = f"{tp / (tp + fn):.2f}" if tp + fn else "  - "
    return f"{precision:>9}{recall:>8}   ({tp} tp, {fp} fp, {fn} fn, {tn} tn)"


def labelled(halves: list[str], show: bool) -> None:
    cases = [json.loads(line) for line in LABELLED.read_text(encoding="utf-8").splitlines()]
    print(f"1. Labelled drafts ({LABELLED.relative_to(ROOT)}): {len(cases)} cases")
    print(f"{'':<22}{'cases':>6}{'wrong':>6}{'precision':>11}{'recall':>8}")
    for half in halves:
        rows: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
        for c in (c for c in cases if c["half"] == half):
            found = check(c["task"], c["results"], c["draft"])
            pair = (bool(found), c["label"] == "wrong")
            for key in ("all", f"kind {c['kind']}", f"lang {c['lang']}"):
                rows[key].append(pair)
            if show and pair[0] != pair[1]:
                print(f"   {'false alarm' if pair[0] else 'missed':<12}{c['id']}: {c['draft']!r}"
                      f" {[m.reason for m in found]}")
        for key in sorted(rows, key=lambda k: (k != "all", k)):
            pairs = rows[key]
            print(f"  {half + ' ' + key:<20}{len(pairs):>6}{sum(g for _, g in pairs):>6}"
                  f"{scores(pairs)}")


def reference_answers() -> list[tuple[str, list[str], list[list[Any]], str]]:
    """(id, user messages, result rows, answer) of each reference answer of the suites
    (replayed through the tasks' tools) and of the seed scenarios."""
    found = []
    for path in SUITES:
        references = {}
        for line in path.read_text(encoding="utf-8").splitlines():
            data = json.loads(line)
            if data.get("reference"):
                references[data["id"]] = data["reference"]
        for task in load_tasks(path):
            if task.id not in references or not task.tools:
                continue
            replies = [json.dumps({"thought": "...", "action": {"final_answer": item}
                                   if isinstance(item, str) else item}, ensure_ascii=False)
                       for item in references[task.id]]
            result = Agent(ScriptedModel(replies), load_toolbox(task.tools), policies=[],
                           max_steps=len(replies) + 1).run(task.task)
            rows = [[r.call.name, r.call.args, r.observation] for s in result.steps
                    for r in s.results if r.ok]
            found.append((f"{path.stem}:{task.id}", [task.task], rows, result.final_answer or ""))
    for seed in json.loads(SEEDS.read_text(encoding="utf-8"))["seeds"]:
        for task in seed["tasks"]:
            user: list[str] = []
            rows = []
            for turn in task["turns"]:
                user.append(turn["user"])
                for step in turn.get("reference_trajectory", []):
                    reply = parse_reply(step["model_output"])
                    if reply.final_answer is not None:
                        found.append((f"seed:{task['id']}", list(user), list(rows),
                                      reply.final_answer))
                    calls = reply.tool_calls
                    observed = step.get("observation")
                    observations = observed if isinstance(observed, list) else [observed]
                    rows += [[c.name, c.args, o] for c, o in zip(calls, observations,
                                                                 strict=False) if o is not None]
    return found


def references(show: bool) -> None:
    answers = reference_answers()
    fired = [(i, a, found) for i, u, rows, a in answers if (found := check(u, rows, a))]
    print(f"\n2. Reference answers (right answers of the task suites and seed scenarios): "
          f"{len(answers)} answers, the check fires on {len(fired)}")
    for i, answer, found in fired if show else []:
        print(f"   {i}: {answer!r} {[m.reason for m in found]}")


def recorded(show: bool) -> None:
    if not RECORDED.exists():
        print(f"\n3. Recorded answers: {RECORDED.relative_to(ROOT)} not found")
        return
    rows = [json.loads(line) for line in RECORDED.read_text(encoding="utf-8").splitlines()]
    pairs = []
    fired = []
    for r in rows:
        found = check(r["user"], r["results"], r["answer"])
        pairs.append((bool(found), r["label"] == "wrong"))
        if found:
            fired.append((r, found))
    right = sum(r["label"] == "wrong" for r, _ in fired)
    print(f"\n3. Recorded answers of the embedded model ({RECORDED.relative_to(ROOT)}): "
          f"{len(rows)} answers after a tool call, {sum(g for _, g in pairs)} labelled "
          f"wrong; the check fires on {len(fired)}, rightly on {right}")
    print(f"{'':<22}{'':>12}{'precision':>11}{'recall':>8}\n  {'all':<32}{scores(pairs)}")
    for r, found in fired if show else []:
        print(f"   {r['label']:<6} {r['id']}: {r['answer']!r} {[m.reason for m in found]}")
    if show:
        for r in rows:
            if r["label"] == "wrong" and not check(r["user"], r["results"], r["answer"]):
                print(f"   missed {r['id']}: {r['answer']!r} ({r.get('note', '')})")


def extract(path: Path) -> None:
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        turns = record.get("turns") or [{"result": record["result"]}]
        user: list[str] = []
        for n, turn in enumerate(turns, 1):
            result = turn["result"]
            user.append(result["task"])
            rows: list[list[Any]] = []
            for step in result["steps"]:
                answer = step.get("final_answer")
                if answer and rows:
                    what = "focused" if step.get("origin") == "review" else "answer"
                    turn_id = f"{record['id']}" + (f"/{n}" if len(turns) > 1 else "")
                    print(json.dumps({"id": f"{path.stem}:{turn_id}:{step['index']}:{what}",
                                      "user": list(user), "results": list(rows),
                                      "answer": answer, "label": None, "note": ""},
                                     ensure_ascii=False))
                rows += [[r["name"], r["args"], r["observation"]] for r in step.get("results", [])
                         if r.get("ok")]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--half", choices=("dev", "test", "both"), default="both")
    parser.add_argument("--show", action="store_true", help="print each error and firing")
    parser.add_argument("--extract", type=Path, metavar="RESULTS.jsonl",
                        help="print the answers of a results file as lines to label")
    args = parser.parse_args()
    if args.extract:
        extract(args.extract)
        return 0
    labelled(["dev", "test"] if args.half == "both" else [args.half], args.show)
    references(args.show)
    recorded(args.show)
    return 0


if __name__ == "__main__":
    sys.exit(main())
