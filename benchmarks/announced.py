"""How often :class:`~react_agent.policies.AnnouncedAction` acts on real final answers, and
where: it prints each answer it would send back, for a person to judge.

    python benchmarks/announced.py                      # benchmarks/data/recorded_answers.jsonl
    python benchmarks/announced.py RESULTS.jsonl ...    # also the final answers of run --tasks

Recorded answers are judged with the toolbox of their task in ``examples/tasks`` (every tool of
``examples/tasks/tools.py`` where the task is not one of the suites') and the user's words; a
results file's answers with their task's toolbox and task.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path.cwd()))
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples" / "tasks"))

import tools as suite  # noqa: E402

from react_agent.policies._announced import announcement  # noqa: E402


def toolboxes() -> dict[str, Any]:
    out = {}
    for name in ("dev", "test", "seeds"):
        for line in (ROOT / "examples" / "tasks" / f"{name}.jsonl").read_text("utf-8").splitlines():
            task = json.loads(line)
            make = getattr(suite, str(task.get("tools", ":")).split(":")[1], None)
            if make is not None:
                out[task["id"]] = make()
    return out


def main(files: list[str]) -> None:
    boxes, everything = toolboxes(), suite._toolbox(*suite.SPECS)
    seen = fired = 0
    for line in (ROOT / "benchmarks" / "data" / "recorded_answers.jsonl").read_text(
            "utf-8").splitlines():
        r = json.loads(line)
        parts = r["id"].split(":")
        box = boxes.get(parts[1] if len(parts) > 2 else parts[0], everything)
        sentence = announcement(r["answer"], box, " ".join(r["user"]))
        seen += 1
        if sentence:
            fired += 1
            print(f"acts  {r['id']}: {sentence!r}")
    print(f"recorded answers: {seen}, it acts on {fired}")
    for file in files:
        seen = fired = 0
        for line in Path(file).read_text("utf-8").splitlines():
            r = json.loads(line)
            box = boxes.get(r["id"])
            if box is None or not r.get("final_answer"):
                continue
            sentence = announcement(r["final_answer"], box, r["task"])
            seen += 1
            if sentence:
                fired += 1
                print(f"acts  {r['id']} (passed: {r.get('passed')}): {sentence!r}")
        print(f"{file}: {seen} final answers, it acts on {fired}")


if __name__ == "__main__":
    main(sys.argv[1:])
