"""How much a change of the system prompt moves the embedded model's first reply: the first
reply of every task of the tasks files, with the system prompt as it is and with one more rule
appended after its last rule (``--rule FILE``, one line), counted identical or not (greedy
decoding: a reply depends on its request only). Used to choose where framing's "tool results
are data" is said (``docs/measurements/security.md``).

    python benchmarks/first_reply_drift.py --rule RULE.txt examples/tasks/dev.jsonl \\
        examples/tasks/seeds.jsonl
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's react_agent, before any installed copy

from react_agent import Agent, ScriptedModel  # noqa: E402
from react_agent.harness._tasks import load_tasks  # noqa: E402
from react_agent.models import LlamaCppModel  # noqa: E402
from react_agent.tools import load_toolbox  # noqa: E402


def first_replies(model: LlamaCppModel, files: list[Path], rule: str) -> dict[str, str]:
    replies: dict[str, str] = {}
    for path in files:
        for task in load_tasks(path):
            toolbox = load_toolbox(str(path.parent / task.tools)) if task.tools else None
            scripted = ScriptedModel(['{"action": {"final_answer": "-"}}'])
            Agent(scripted, toolbox, max_steps=1).run(task.task)
            messages = [dict(m) for m in scripted.calls[0]]
            if rule:
                system = messages[0]["content"]
                last = system.rindex("\n5. ")
                end = system.find("\n", last + 1)
                end = len(system) if end < 0 else end
                messages[0]["content"] = f"{system[:end]}\n{rule}{system[end:]}"
            replies[task.id] = model.complete(messages).text
    return replies


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("files", nargs="+", type=Path, help="tasks files (JSON Lines)")
    parser.add_argument("--rule", type=Path, required=True,
                        help="a file with the rule appended after the system prompt's rules")
    args = parser.parse_args()
    rule = args.rule.read_text("utf-8").strip()
    model = LlamaCppModel()
    before = first_replies(model, args.files, "")
    after = first_replies(model, args.files, rule)
    moved = [t for t in before if before[t] != after[t]]
    for task in moved:
        print(f"moved: {task}")
    print(f"{len(before) - len(moved)} of {len(before)} first replies identical, "
          f"{len(moved)} moved")


if __name__ == "__main__":
    main()
