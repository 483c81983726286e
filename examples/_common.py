"""Shared code of the seed examples: the scenario file, its checks, model choice and printing.

The checks follow ``tests/data/seed_scenarios.json`` ("how_to_use"):

- :func:`check_run` is the real-model tier: every required call happened (arguments matched by
  the ``args_match`` rules), ``call_order`` holds, no forbidden tool was called, and the final
  answer passes its checks. Extra calls are allowed.
- :func:`check_replay` is the scripted tier: the run made exactly the reference trajectory's calls,
  each got the listed observation, and the real-model checks hold too.

Both return a list of problems in words; an empty list is a pass.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from react_agent import (
    Agent,
    ChatModel,
    ConfigError,
    RunResult,
    ScriptedModel,
    Toolbox,
    ToolCall,
)
from react_agent.calculator import evaluate
from react_agent.display import Printer
from react_agent.models import LlamaCppModel, OpenAIChatModel

SCENARIOS = Path(__file__).resolve().parent.parent / "tests" / "data" / "seed_scenarios.json"
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
def check_run(result: RunResult, spec: Spec) -> list[str]:
    """Real-model tier: what is wrong with ``result`` for this turn (``[]`` = pass)."""
    problems = call_problems(result, spec)
    forbidden = spec.get("forbidden_tools", [])
    problems += [
        f"forbidden tool called: {_show(call.name, call.args)}"
        for call in result.tool_calls
        if "*" in forbidden or call.name in forbidden
    ]
    if result.status != "final_answer":
        problems.append(f"the run ended with status {result.status!r}: {result.error}")
    return problems + memory_problems(result, spec) + answer_problems(
        result.final_answer, spec["final_answer"]
    )


def memory_problems(result: RunResult, spec: Spec) -> list[str]:
    """A later turn of a conversation: the model's input must hold the earlier turns."""
    needed = spec.get("memory", {}).get("model_input_must_contain", [])
    asked = [i for i, m in enumerate(result.messages)
             if m["role"] == "user" and m["content"] == spec["user"]]
    earlier = result.messages[: asked[-1] + 1] if asked else []
    seen = "\n".join(m["content"] for m in earlier if m["role"] != "system")
    return [f"the model's input lacks {s!r} (the earlier turns)" for s in needed if s not in seen]


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


def call_problems(result: RunResult, spec: Spec) -> list[str]:
    """Missing required calls and ``call_order`` violations.

    Each expected call takes the first unused matching call made after the previous group's
    steps; calls of one group may share a step (a parallel action) only if ``parallel_allowed``.
    """
    expected = spec["expected_calls"]
    made = [(step.index, call) for step in result.steps for call in step.tool_calls]
    order = spec.get("call_order", [])
    in_order = {i for group in order for i in group}
    groups = [*order, *([i] for i in range(len(expected)) if i not in in_order)]
    problems: list[str] = []
    used: set[int] = set()
    after = 0  # the last step of the previous group
    for group in groups:
        steps = []
        for i in group:
            want = expected[i]
            found = [
                n for n, (_, call) in enumerate(made) if n not in used and call_matches(want, call)
            ]
            later = [n for n in found if made[n][0] > after]
            if not found:
                if want.get("required", True):
                    problems.append(f"missing call {_show(want['name'], want['args'])}")
                continue
            if not later:
                problems.append(f"call {_show(want['name'], want['args'])} came out of order")
            n = (later or found)[0]
            used.add(n)
            steps.append(made[n][0])
        if len(set(steps)) < len(steps) and not spec.get("parallel_allowed"):
            problems.append(f"expected calls {group} came as one parallel step; not allowed here")
        after = max(steps, default=after)
    return problems


def call_matches(want: Spec, call: ToolCall) -> bool:
    return want["name"] == call.name and args_match(want, call.args)


def args_match(want: Spec, args: dict[str, Any]) -> bool:
    """``args`` equal ``want["args"]``, except keys with an ``args_match`` rule."""
    rules: dict[str, Spec] = want.get("args_match", {})
    keys = set(want["args"]) | set(rules)
    if set(args) - keys:
        return False
    for key in keys:
        rule = rules.get(key, {})
        if key not in args:
            if rule.get("optional"):
                continue
            return False
        tests = [RULES[kind](args[key], arg) for kind, arg in rule.items() if kind != "optional"]
        if not (all(tests) if tests else args[key] == want["args"].get(key, args[key])):
            return False
    return True


def evaluates_to(value: Any, number: float) -> bool:
    """``value`` is plain arithmetic (or a number) equal to ``number`` within 1e-9."""
    if isinstance(value, str):
        value = arithmetic(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return abs(value - number) <= 1e-9


RULES: dict[str, Callable[[Any, Any], bool]] = {
    "evaluates_to": evaluates_to,
    "contains": lambda value, text: isinstance(value, str) and text in value,
    "icontains": lambda value, text: isinstance(value, str) and text.lower() in value.lower(),
    "one_of": lambda value, options: value in options,
}


def answer_problems(answer: str | None, rules: Spec) -> list[str]:
    """What the final answer lacks under ``non_empty``/``must_contain``/``must_contain_any``."""
    text = answer or ""
    problems = ["the final answer is empty"] if rules.get("non_empty") and not text.strip() else []
    problems += [
        f"the final answer lacks {s!r}" for s in rules.get("must_contain", []) if s not in text
    ]
    problems += [
        f"the final answer has none of {group}"
        for group in rules.get("must_contain_any", [])
        if not any(s in text for s in group)
    ]
    return problems


def arithmetic(text: str) -> float | None:
    """The value of plain arithmetic (the built-in calculator's rules), else ``None``."""
    try:
        return evaluate(text)
    except (ValueError, ArithmeticError):
        return None


def _show(name: str, args: dict[str, Any]) -> str:
    return f"{name} {json.dumps(args, ensure_ascii=False)}"


# -- running a seed from the command line ---------------------------------------------------------
def parse_args(description: str | None, argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=description, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--scripted", action="store_true",
        help="replay the reference trajectories with ScriptedModel (fast, no model needed)",
    )
    parser.add_argument("--base-url", help="an OpenAI-compatible server, e.g. http://127.0.0.1:8080/v1")
    parser.add_argument("--model", help="the model name on that server (with --base-url)")
    args = parser.parse_args(argv)
    if args.scripted and args.base_url:
        parser.error("--scripted and --base-url exclude each other")
    if args.model and not args.base_url:
        parser.error("--model needs --base-url")
    return args


def make_model(args: argparse.Namespace) -> ChatModel:
    """The embedded model by default, or a model on an OpenAI-compatible server."""
    if args.base_url:
        return OpenAIChatModel(model=args.model, base_url=args.base_url)
    return LlamaCppModel()


def run_task(turns: list[Turn], toolbox: Toolbox, model: ChatModel, scripted: bool) -> list[bool]:
    """Run the turns of one task as one conversation, printing the thought chain and checks."""
    agent = Agent(model, toolbox, max_steps=seed_max_steps(turns[0].seed), callbacks=[Printer()])
    chat = agent.chat()
    passed = []
    for turn in turns:
        print(f"\n=== {turn.label} ===")
        result = chat.ask(turn.spec["user"])
        problems = check_replay(result, turn.spec) if scripted else check_run(result, turn.spec)
        tier = "scripted" if scripted else "real-model"
        print(f"Checks ({tier} tier): {'FAIL' if problems else 'PASS'}")
        for problem in problems:
            print(f"  - {problem}")
        passed.append(not problems)
    return passed


def main(seed: str, toolbox: Toolbox, description: str | None = None) -> int:
    """Run every task of ``seed`` (the turns of a task as one conversation); exit code 0 when
    all turns pass, 1 when some fail, 2 on setup errors."""
    args = parse_args(description)
    tasks: dict[str, list[Turn]] = {}
    for turn in seed_turns(seed):
        tasks.setdefault(turn.task_id, []).append(turn)
    try:
        model = None if args.scripted else make_model(args)
        passed = [
            ok
            for turns in tasks.values()
            for ok in run_task(
                turns, toolbox, model or scripted_model(*(t.spec for t in turns)), args.scripted
            )
        ]
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"\n{sum(passed)}/{len(passed)} turns passed")
    return 0 if all(passed) else 1
