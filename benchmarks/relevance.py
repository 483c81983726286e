"""How well the embedded model judges whether the tools it calls fit the request, on BFCL.

    python benchmarks/relevance.py --split tune --categories irrelevance --stride 3 \
        --variants benchmarks/data/relevance_variants --out var.jsonl
    python benchmarks/relevance.py --split tune --categories irrelevance --out tune.jsonl
    python benchmarks/relevance.py --report var.jsonl --variant v2 --threshold 0.6

Runs in BFCL's runner environment (``python benchmarks/bfcl.py --setup-only`` builds it and
prints its Python; run with ``PYTHONPATH`` set to this checkout), which gives the items and the
tools as the runner sends them in FC mode. ``--split tune`` takes items 150 and above of each
category, ``test`` items 0-149 (the untouched split); ``--stride`` and ``--limit`` sample them.
An item of ``irrelevance`` or ``live_irrelevance`` is one where no tool fits; every other
category's items need a call. Each item starts on a freshly reset model.

- default: the first action of :class:`react_agent.Agent` with its default policies and
  :class:`react_agent.policies.Relevance` at the least threshold (it asks and never acts), and
  the question's "yes" for the tools that action called: ``{"calls", "call_json", "p_yes"}``;
  ``--report`` then prints, per category, the right decisions without the question and with
  it at ``--threshold`` (a call kept when its "yes" is at least that), and how often it acted
  and wrongly.
- ``--variants DIR``: the same first action without the question, then each question variant
  of ``DIR`` (a folder per variant with ``system.md`` and ``user.md``) about its calls:
  ``{"p": {variant: yes}}``.
- ``--variants DIR --eval-results RESULTS.jsonl``: each variant about the first calls of a
  ``react-agent eval`` results file (the first-action suite; needs only the embedded model).
- ``--rejudge JSONL``: the question as the templates are now, for recorded calls.

Every record is appended to ``--out`` as it is made; a run given the same ``--out`` goes on
where it stopped.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

NO_TOOL_FITS = ("irrelevance", "live_irrelevance")
CATEGORIES = ("irrelevance", "live_irrelevance", "simple_python", "multiple", "parallel",
              "live_simple", "live_multiple")


def items(category: str, split: str, stride: int, limit: int | None) -> list[dict[str, Any]]:
    """BFCL's items of ``category`` in ``split``, every ``stride``-th, with tools as the runner
    sends them in FC mode."""
    from bfcl_eval.constants.enums import ModelStyle
    from bfcl_eval.constants.eval_config import PROMPT_PATH
    from bfcl_eval.constants.type_mappings import GORILLA_TO_OPENAPI
    from bfcl_eval.model_handler.utils import convert_to_tool
    from bfcl_eval.utils import add_language_specific_hint_to_function_doc, load_file

    path = Path(PROMPT_PATH) / f"BFCL_v4_{category}.json"
    answers = Path(PROMPT_PATH) / "possible_answer" / path.name
    expected = {a["id"]: a["ground_truth"] for a in load_file(answers)} if answers.exists() else {}
    chosen = []
    for number, item in enumerate(load_file(path)):
        if (split == "tune") != (number >= 150):
            continue
        if number % stride:
            continue
        add_language_specific_hint_to_function_doc([item])
        tools = convert_to_tool(item["function"], GORILLA_TO_OPENAPI,
                                ModelStyle.OPENAI_COMPLETIONS)
        turns = item["question"][0]
        truth = expected.get(item["id"])
        chosen.append({"id": item["id"], "category": category, "number": number,
                       "messages": turns, "tools": tools,
                       "expected": None if truth is None else len(truth)})
        if limit and len(chosen) >= limit:
            break
    return chosen


def measure(args: argparse.Namespace) -> None:
    from react_agent.models import LlamaCppModel
    from react_agent.policies._relevance import CHOICES, question_messages

    model = LlamaCppModel(max_tokens=512)
    model.load()
    with Path(args.out).open("a") as sink:
        for item, toolbox, task, record in todo(args):
            if args.all_tools:
                model.reset()
                begun = time.perf_counter()
                reply = model.choose(question_messages(toolbox, task), CHOICES)
                record["p_yes_all"] = reply.choices["yes"] if reply.choices else None
                record["all_s"] = round(time.perf_counter() - begun, 2)
            model.reset()
            begun = time.perf_counter()
            record.update(first_action(model, toolbox, item["messages"], floor=args.floor))
            record["agent_s"] = round(time.perf_counter() - begun, 2)
            write(sink, record)


def todo(args: argparse.Namespace) -> Iterator[tuple[dict[str, Any], Any, str, dict[str, Any]]]:
    """The sampled items not yet in ``--out``: the item, its toolbox, its task (the last user
    message) and the start of its record."""
    from react_agent.harness import toolbox_from_specs

    out = Path(args.out)
    done = set()
    if out.exists():
        done = {json.loads(line)["id"] for line in out.read_text().splitlines() if line.strip()}
    for category in args.categories.split(","):
        for item in items(category, args.split, args.stride, args.limit):
            if item["id"] in done:
                continue
            task = next(m["content"] for m in reversed(item["messages"]) if m["role"] == "user")
            yield item, toolbox_from_specs(item["tools"]), task, {
                "id": item["id"], "category": category, "fits": category not in NO_TOOL_FITS,
                "expected_calls": item["expected"]}


def write(sink: Any, record: dict[str, Any]) -> None:
    """Append ``record`` to ``sink`` at once (a run stopped later keeps it) and show it."""
    sink.write(json.dumps(record, ensure_ascii=False) + "\n")
    sink.flush()
    print(json.dumps(record, ensure_ascii=False)[:300], flush=True)


def variants(args: argparse.Namespace) -> None:
    """For each sampled item: the agent's first action (default policies, no question), then
    the question asked in each variant of ``--variants DIR`` (a folder per variant holding
    ``system.md`` and ``user.md``, templates of ``$tools``, ``$task`` and ``$calls``, the
    called tools' descriptions, the task and the calls as JSON lines) about the tools it
    called: ``{"calls": [...], "call_json": [...], "p": {variant: yes}}``."""
    import string

    from react_agent import prompts
    from react_agent.models import LlamaCppModel
    from react_agent.policies._relevance import CHOICES
    from react_agent.tools import Toolbox

    folders = sorted(p for p in Path(args.variants).iterdir() if p.is_dir())
    forms = {f.name: (string.Template((f / "system.md").read_text().strip()),
                      string.Template((f / "user.md").read_text().strip())) for f in folders}
    model = LlamaCppModel(max_tokens=512)
    model.load()
    with Path(args.out).open("a") as sink:
        for item, toolbox, task, record in todo(args):
            model.reset()
            begun = time.perf_counter()
            first = first_action(model, toolbox, item["messages"], ask=False)
            record.update(first, agent_s=round(time.perf_counter() - begun, 2), p={})
            chosen = Toolbox([toolbox[n] for n in dict.fromkeys(first["calls"] or [])
                              if n in toolbox.names])
            if len(chosen):
                values = {"tools": prompts.defang(chosen.describe()),
                          "task": prompts.defang(task),
                          "calls": "\n".join(json.dumps(c, ensure_ascii=False)
                                             for c in first["call_json"])}
                for name, (system, user) in forms.items():
                    messages = [{"role": "system", "content": system.substitute(values)},
                                {"role": "user", "content": user.substitute(values)}]
                    reply = model.choose(messages, CHOICES)
                    record["p"][name] = reply.choices["yes"] if reply.choices else None
            write(sink, record)


def suite_variants(args: argparse.Namespace) -> None:
    """Each question variant of ``--variants`` about the first calls recorded in
    ``--eval-results`` (a ``react-agent eval`` results file of ``--eval-suite``), one line per
    item that called a tool: ``{"id", "category", "correct", "p": {variant: yes}}``; the
    first called tool is asked about."""
    import string

    from react_agent import prompts
    from react_agent.harness._evaluation import load_suite, toolbox_from_specs
    from react_agent.models import LlamaCppModel
    from react_agent.policies._relevance import CHOICES
    from react_agent.tools import Toolbox

    folders = sorted(p for p in Path(args.variants).iterdir() if p.is_dir())
    forms = {f.name: (string.Template((f / "system.md").read_text().strip()),
                      string.Template((f / "user.md").read_text().strip())) for f in folders}
    suite = {item.id: item for item in load_suite(args.eval_suite)}
    model = LlamaCppModel()
    model.load()
    with Path(args.out).open("w") as sink:
        for line in Path(args.eval_results).read_text().splitlines():
            record = json.loads(line)
            item = suite[record["id"]]
            toolbox = toolbox_from_specs(item.tools)
            names = [c["name"] for c in record["calls"] if c["name"] in toolbox.names][:1]
            if not names:
                continue
            values = {"tools": prompts.defang(Toolbox([toolbox[names[0]]]).describe()),
                      "task": prompts.defang(item.question),
                      "calls": "\n".join(json.dumps(c, ensure_ascii=False)
                                         for c in record["calls"])}
            out = {"id": item.id, "category": item.category, "correct": record["correct"],
                   "p": {}}
            for name, (system, user) in forms.items():
                model.reset()
                reply = model.choose([{"role": "system", "content": system.substitute(values)},
                                      {"role": "user", "content": user.substitute(values)}],
                                     CHOICES)
                out["p"][name] = reply.choices["yes"] if reply.choices else None
            sink.write(json.dumps(out, ensure_ascii=False) + "\n")
            sink.flush()


def rejudge(args: argparse.Namespace) -> None:
    """Ask the question again (with the prompt templates as they are now) for the records of
    ``--rejudge`` whose first action called tools, keeping those calls: a change to the
    question measured without running the agent again."""
    from react_agent.harness import toolbox_from_specs
    from react_agent.models import LlamaCppModel
    from react_agent.policies._relevance import CHOICES, question_messages
    from react_agent.tools import Toolbox

    model = LlamaCppModel(max_tokens=512)
    model.load()
    records = [json.loads(line) for line in Path(args.rejudge).read_text().splitlines()
               if line.strip()]
    wanted = {r["id"] for r in records}
    found = {}
    for category in sorted({r["category"] for r in records}):
        for item in items(category, args.split, 1, None):
            if item["id"] in wanted:
                found[item["id"]] = item
    with Path(args.out).open("w") as sink:
        for record in records:
            if record.get("calls"):
                item = found[record["id"]]
                toolbox = toolbox_from_specs(item["tools"])
                chosen = Toolbox([toolbox[n] for n in dict.fromkeys(record["calls"])
                                  if n in toolbox.names])
                task = next(m["content"] for m in reversed(item["messages"])
                            if m["role"] == "user")
                if len(chosen):
                    model.reset()
                    reply = model.choose(question_messages(chosen, task), CHOICES)
                    record["p_yes"] = reply.choices["yes"] if reply.choices else None
            sink.write(json.dumps(record) + "\n")
            sink.flush()


def first_action(model: Any, toolbox: Any, messages: list[dict[str, Any]], ask: bool = True,
                 floor: float | None = None) -> dict[str, Any]:
    """The agent's first reply (default policies, as ``serve`` runs them) and, where it calls
    tools, the relevance question's "yes" for them: ``{"calls": [names] | [] (a final answer)
    | None (no usable reply), "p_yes": p | None, "p_answer": p | None, "floor_taken": bool}``.
    :class:`Relevance` runs with the least threshold, so it asks and never acts: what a
    threshold would do is computed from ``p_yes`` afterwards. ``p_answer`` is the probability
    the model gave the final answer where its first reply chose its action (the answer
    floor's record); ``floor``: the answer floor's, instead of its default (1.0: it only
    measures, so what another floor would do is computed from ``p_answer``)."""
    from react_agent import Agent, AgentConfig
    from react_agent.events import (
        FinalAnswer,
        ModelCallFinished,
        ObservationSent,
        ReplyParsed,
        RunFinished,
        ToolStarted,
    )
    from react_agent.policies import AnswerFloor, Relevance, default_policies

    system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
    rest = [m for m in messages if m["role"] != "system"]
    use: list[Any] = [Relevance(threshold=1e-9)] if ask else []
    if floor is not None:
        use.append(AnswerFloor(floor=floor))
    policies = default_policies(model, use=use)
    agent = Agent(model, toolbox, config=AgentConfig(instructions=system, policies=policies))
    events = agent.iter(rest[-1]["content"], history=rest[:-1])
    calls: list[str] | None = None
    call_json: list[dict[str, Any]] = []
    steps = []
    try:
        for event in events:
            if isinstance(event, ModelCallFinished):
                steps.append(event.step)
            elif isinstance(event, ReplyParsed) and event.step.origin is None and calls is None:
                held = event.step.records.get("held_calls", [])
                calls = [c.name for c in event.reply.tool_calls] + [c["name"] for c in held]
                call_json = [c.to_dict() for c in event.reply.tool_calls] + list(held)
            elif isinstance(event, (ToolStarted, ObservationSent, FinalAnswer, RunFinished)):
                break
    finally:
        events.close()
    asked = [s.records["relevance"]["yes"] for s in steps if "relevance" in s.records]
    floors = [s.records["answer_floor"] for s in steps if "answer_floor" in s.records]
    return {"calls": calls, "call_json": call_json, "p_yes": asked[0] if asked else None,
            "p_answer": floors[0]["probability"] if floors else None,
            "floor_taken": bool(floors and floors[0]["taken"])}


def report(paths: list[str], threshold: float, variant: str | None = None,
           floor: float | None = None) -> None:
    """Per category: right decisions of the agent alone and with the question at
    ``threshold`` (a call kept when its "yes" is at least that), and how often the question
    acted, rightly or not. ``variant``: read the "yes" of that variant of a ``--variants``
    record. ``floor``: the answer floor to compute from records made with ``--floor 1``
    (a first reply gives the final answer where ``p_answer`` is at least that)."""
    rows: dict[str, list[dict[str, Any]]] = {}
    for path in paths:
        for line in Path(path).read_text().splitlines():
            if line.strip():
                record = json.loads(line)
                rows.setdefault(record["category"], []).append(record)
    print(f"threshold {threshold}" + ("" if floor is None else f", answer floor {floor}"))
    print(f"{'category':18} {'n':>4} {'agent':>6} {'with':>6} {'acted':>6} {'wrong':>6}")
    for category, records in rows.items():
        agent = both = acted = wrong = 0
        for r in records:
            called = bool(r["calls"]) and not (
                floor is not None and (r.get("p_answer") or 0.0) >= floor)
            yes = r["p"].get(variant) if variant else r["p_yes"]
            kept = called and (yes is None or yes >= threshold)
            agent += called == r["fits"]
            both += kept == r["fits"]
            acted += called and not kept
            wrong += called and not kept and r["fits"]
        n = len(records)
        print(f"{category:18} {n:>4} {agent / n:>6.2f} {both / n:>6.2f} {acted:>6} {wrong:>6}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=("tune", "test"), default="tune")
    parser.add_argument("--categories", default=",".join(CATEGORIES))
    parser.add_argument("--stride", type=int, default=1)
    parser.add_argument("--limit", type=int, default=None, help="items per category")
    parser.add_argument("--all-tools", action="store_true",
                        help="also the question with every tool of the item")
    parser.add_argument("--out", default="relevance.jsonl")
    parser.add_argument("--report", nargs="+", metavar="JSONL")
    parser.add_argument("--threshold", type=float, default=0.6)
    parser.add_argument("--floor", type=float, default=None,
                        help="the answer floor of the first action (default: its default; "
                             "1.0 only measures); with --report: the floor to compute")
    parser.add_argument("--variant", help="with --report: the variant whose 'yes' to read")
    parser.add_argument("--variants", metavar="DIR",
                        help="the first action, then each question variant in DIR")
    parser.add_argument("--eval-suite", default="examples/eval/suite.jsonl",
                        help="with --variants and --eval-results: the first-action suite")
    parser.add_argument("--eval-results", metavar="JSONL",
                        help="with --variants: ask about the first calls of these eval results")
    parser.add_argument("--rejudge", metavar="JSONL",
                        help="ask the question again for these records' calls (to --out)")
    args = parser.parse_args()
    if args.report:
        report(args.report, args.threshold, args.variant, args.floor)
        return
    if args.rejudge:
        rejudge(args)
        return
    if args.variants and args.eval_results:
        suite_variants(args)
        return
    if args.variants:
        variants(args)
        return
    measure(args)


if __name__ == "__main__":
    sys.exit(main())
