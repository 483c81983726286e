"""Run one seed's scenarios, printing the thought chain and the checks of every turn.

    python tests/data/seeds/run.py 003                  # the embedded local model
    python tests/data/seeds/run.py 003 --base-url http://127.0.0.1:8080/v1 [--model NAME]
    python tests/data/seeds/run.py 003 --scripted       # replay the reference trajectories

The seeds (the tutorials whose fixtures became ``tests/data/seed_scenarios.json``):

- 000 (从零手写一个 Agent 框架): weather, a calculator and a knowledge base, four tasks.
- 002 (从零手写AI Agent：不依赖LangChain): which city is hotter, a walkthrough, and a retry after
  a district name the weather tool does not know.
- 003 (百行代码从零手搓Agent): check the weather, remind me of an umbrella if it rains
  (reminders sent with send_message are collected in ``tools.SENT_MESSAGES``).
- 004 (手搓一个属于你自己的 Agentic AI 框架): Tokyo's weather, then AAPL's price, then "which city
  did I ask about at the start?". The seed runs its turns on one agent with one shared memory:
  here the three turns are one Conversation (``agent.chat()``), so turn 2's input holds turn 1
  and turn 3 can be answered from the history alone.

The turns of a task run as one conversation. Exit code 0 when every turn passes its checks (the
scripted tier with ``--scripted``, the real-model tier otherwise), 1 when some fail, 2 on setup
errors. ``benchmarks/seeds.py`` runs every seed on a real model and reports timings.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from scenarios import Turn, check_replay, check_run, scripted_model, seed_max_steps, seed_turns
from tools import SENT_MESSAGES, TOOLBOXES

from react_agent import Agent, ChatModel, ConfigError, Toolbox
from react_agent.harness import Printer
from react_agent.models import LlamaCppModel, OpenAIChatModel
from react_agent.policies import default_policies


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("seed", choices=sorted(TOOLBOXES), help="the seed to run")
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
    policies = default_policies(off=["review"] if scripted else [])  # references: no review
    agent = Agent(model, toolbox, max_steps=seed_max_steps(turns[0].seed), callbacks=[Printer()],
                  policies=policies)
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


def main(argv: Sequence[str] | None = None) -> int:
    """Run every task of the seed (the turns of a task as one conversation)."""
    args = parse_args(argv)
    tasks: dict[str, list[Turn]] = {}
    for turn in seed_turns(args.seed):
        tasks.setdefault(turn.task_id, []).append(turn)
    toolbox = TOOLBOXES[args.seed]
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
    if args.seed == "003":
        print(f"Messages sent: {SENT_MESSAGES}")
    return 0 if all(passed) else 1


if __name__ == "__main__":
    raise SystemExit(main())
