"""``react-agent eval``: the model's first action scored on a JSON Lines suite."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..agent import Agent
from ..config import AgentConfig
from ..errors import ConfigError
from ..harness import load_suite, report, run_eval, scored
from ._session import approve_all, cli_policies, make_model, show_progress


def evaluate(args: argparse.Namespace) -> int:
    items = [i for i in load_suite(args.file) if args.category in (None, i.category)]
    if not items:
        raise ConfigError(f"{args.file} has no items of category {args.category!r}.")
    items = items[: args.limit]
    out = args.out or str(Path(args.file).with_suffix("")) + ".results.jsonl"
    model = make_model(args.model, args.base_url, args.api_key, args.max_tokens)
    config = AgentConfig(
        max_steps=1, max_parse_retries=0,
        policies=cli_policies(model, args, off=("best_effort",)),
    )
    settings = {"model": model.name, "base_url": args.base_url,
                "constrained": args.constrained, "routing": args.routing}
    done = len(scored(items, out, settings))
    records = run_eval(
        items, out, lambda toolbox: Agent(model, toolbox, config=config, approver=approve_all),
        progress=show_progress, settings=settings,
    )
    print(file=sys.stderr)
    if done:
        print(f"{done} item(s) already scored with these settings in {out} were skipped.")
    for line in report(records):
        print(line)
    print(f"Results: {out}")
    return 0
