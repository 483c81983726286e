"""The seed acceptance scenarios (``tests/data/seed_scenarios.json``): their turns, the
reference trajectories as a scripted model, and the checks of a run.

The scenarios come from four tutorials' fixtures (seeds 000, 002, 003 and 004); their tools are
in ``tools.py`` next to this file, and ``run.py`` runs a seed from the command line. The checks
follow the scenario file ("how_to_use"):

- :func:`check_run` is the real-model tier: every required call happened (arguments matched by
  the ``args_match`` rules), ``call_order`` holds, no forbidden tool was called, and the final
  answer passes its checks. Extra calls are allowed.
- :func:`check_replay` is the scripted tier: the run made exactly the reference trajectory's calls,
  each got the listed observation, and the real-model checks hold too.

Both return a list of problems in words; an empty list is a pass.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from react_agent import RunResult, ScriptedModel
from react_agent.harness import check_run

SCENARIOS = Path(__file__).resolve().parent.parent / "seed_scenarios.json"
Spec = dict[str, Any]


# -- the scenario file ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Turn:
    """One user turn of a seed task: ``spec`` is its ``turns[i]`` entry in the scenario file."""

    seed: str
    task_id: str
    number: int
    count: int
    spec: Spec

    @property
    def label(self) -> str:
        return self.task_id if self.count == 1 else f"{self.task_id}#{self.number}"


@functools.cache
def load_seeds() -> dict[str, Spec]:
    """The seeds of the scenario file by key: ``"000"``, ``"002"``, ``"003"``, ``"004"``."""
    data = json.loads(SCENARIOS.read_text(encoding="utf-8"))
    return {seed["seed_file"][:3]: seed for seed in data["seeds"]}


def seed_turns(seed: str) -> list[Turn]:
    """Every turn of every task of one seed, in file order."""
    return [
        Turn(seed, task["id"], n, len(task["turns"]), spec)
        for task in load_seeds()[seed]["tasks"]
        for n, spec in enumerate(task["turns"], 1)
    ]


def all_turns() -> list[Turn]:
    return [turn for seed in load_seeds() for turn in seed_turns(seed)]


def seed_max_steps(seed: str) -> int:
    """The seed's own step limit (seed 004 has none: the library default of 10)."""
    setup = load_seeds()[seed]["source_setup"]
    return setup.get("max_steps") or setup.get("max_iterations") or 10


def reference_calls(step: Spec) -> list[dict[str, Any]]:
    """The tool calls (``{"name", "args"}``) of one reference step; ``[]`` for a final answer."""
    action = json.loads(step["model_output"])["action"]
    if isinstance(action, dict) and "final_answer" in action:
        return []
    actions = action if isinstance(action, list) else [action]
    return [{"name": a["name"], "args": a["args"]} for a in actions]


def reference_observations(step: Spec) -> list[str]:
    """The observations of one reference step, one per call (``[]`` for a final answer)."""
    observation = step.get("observation", [])
    return observation if isinstance(observation, list) else [observation]


def scripted_model(*specs: Spec) -> ScriptedModel:
    """A model that replays the reference trajectories of these turns, in order."""
    return ScriptedModel(
        [step["model_output"] for spec in specs for step in spec["reference_trajectory"]]
    )


def task_turns(turn: Turn) -> list[Turn]:
    """The turns of ``turn``'s task up to and including it (a conversation's history)."""
    return [t for t in seed_turns(turn.seed) if t.task_id == turn.task_id
            and t.number <= turn.number]


# -- checks ---------------------------------------------------------------------------------------
def check_replay(result: RunResult, spec: Spec) -> list[str]:
    """Scripted tier: exactly the reference calls and observations, plus :func:`check_run`."""
    reference = spec["reference_trajectory"]
    problems = []
    if len(result.steps) != len(reference):
        problems.append(f"{len(result.steps)} steps; the reference has {len(reference)}")
    for step, ref in zip(result.steps, reference, strict=False):
        calls = [call.to_dict() for call in step.tool_calls]
        if calls != reference_calls(ref):
            problems.append(f"step {step.index}: calls {calls}, reference {reference_calls(ref)}")
        if step.observations != reference_observations(ref):
            problems.append(
                f"step {step.index}: observations {step.observations}, "
                f"reference {reference_observations(ref)}"
            )
    return problems + check_run(result, spec)
