"""Does the request give each value of a first call? A question per argument, on BFCL.

    python benchmarks/relevance.py --split tune --categories irrelevance --stride 2 \
        --out first.jsonl
    python benchmarks/given_values.py --records first.jsonl \
        --variants benchmarks/data/stated_values_variants --out given.jsonl
    python benchmarks/given_values.py --report given.jsonl --variant a --threshold 0.58

Runs in BFCL's runner environment, as ``benchmarks/relevance.py`` (whose records of first
actions it reads: ``call_json`` and the Relevance question's ``p_yes``). For each recorded call,
each argument it sets that the tool's schema lists as required, of type string, number or
integer and with no ``enum``, is asked about in each variant of ``--variants DIR`` (a folder
per variant holding ``system.md`` and ``user.md``, or ``followup.md`` alone: a question
asked after Relevance's own, answered "yes", in the same conversation; templates of ``$tool``
(the called tool's description), ``$task``, ``$arg``, ``$description`` and ``$value``): the
probability of "yes".
The questions of one call share their prefix (system, tool, request), so llama.cpp evaluates
only each question's tail after the first.

``--report`` prints, per category, the first action right without the question and with it
(a call refused when the mean "yes" of its values is below ``--threshold``, as the policy
decides), among the calls Relevance lets run at ``--relevance`` (its default threshold 0.7).
"""

from __future__ import annotations

import argparse
import json
import string
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from relevance import NO_TOOL_FITS, items

MAX_ARGS = 6
"""Arguments asked about per call, at most."""


def asked_args(schema: dict[str, Any], args: dict[str, Any]) -> list[str]:
    """The arguments of ``args`` worth a question: required in ``schema``, a string, number or
    integer value, no ``enum``."""
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    names = []
    for name, value in args.items():
        spec = properties.get(name)
        if name not in required or not isinstance(spec, dict) or "enum" in spec:
            continue
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            continue
        names.append(name)
    return names[:MAX_ARGS]


def ask(args: argparse.Namespace) -> None:
    from react_agent import prompts
    from react_agent.harness import toolbox_from_specs
    from react_agent.models import LlamaCppModel
    from react_agent.policies._relevance import CHOICES, question_messages
    from react_agent.tools import Toolbox

    folders = sorted(p for p in Path(args.variants).iterdir() if p.is_dir())
    if args.only:
        folders = [f for f in folders if f.name in args.only.split(",")]
    forms = {f.name: tuple(string.Template((f / part).read_text().strip())
                           for part in ("system.md", "user.md", "followup.md")
                           if (f / part).exists()) for f in folders}
    records = [json.loads(line) for line in Path(args.records).read_text().splitlines()
               if line.strip()]
    out = Path(args.out)
    done = set()
    if out.exists():
        done = {json.loads(line)["id"] for line in out.read_text().splitlines() if line.strip()}
    found: dict[str, dict[str, Any]] = {}
    for category in sorted({r["category"] for r in records}):
        for item in items(category, args.split, 1, None):
            found[item["id"]] = item
    model = LlamaCppModel(max_tokens=16)
    model.load()
    with out.open("a") as sink:
        for record in records:
            if record["id"] in done:
                continue
            record["given"] = []
            item = found[record["id"]]
            toolbox = toolbox_from_specs(item["tools"])
            task = next(m["content"] for m in reversed(item["messages"]) if m["role"] == "user")
            for call in record.get("call_json") or []:
                name, values = call.get("name"), call.get("args") or {}
                if name not in toolbox.names or not isinstance(values, dict):
                    continue
                tool = toolbox[name]
                schema = tool.parameters
                entry: dict[str, Any] = {"name": name, "p": {}}
                for variant, form in forms.items():
                    model.reset()
                    for arg in asked_args(schema, values):
                        spec = schema["properties"][arg]
                        fill = {"tool": prompts.tools_text(Toolbox([tool])),
                                "task": prompts.defang(task), "arg": arg,
                                "description": prompts.defang(str(spec.get("description", ""))),
                                "value": prompts.defang(json.dumps(values[arg],
                                                                   ensure_ascii=False))}
                        if len(form) == 1:  # a follow-up of Relevance's own question
                            messages = [*question_messages(Toolbox([tool]), task),
                                        {"role": "assistant", "content": "yes"},
                                        {"role": "user", "content": form[0].substitute(fill)}]
                        else:
                            messages = [{"role": "system", "content": form[0].substitute(fill)},
                                        {"role": "user", "content": form[1].substitute(fill)}]
                        reply = model.choose(messages, CHOICES)
                        entry["p"].setdefault(variant, {})[arg] = (
                            reply.choices["yes"] if reply.choices else None)
                record["given"].append(entry)
            sink.write(json.dumps(record, ensure_ascii=False) + "\n")
            sink.flush()
            print(record["id"], record.get("calls"), json.dumps(record["given"])[:300],
                  flush=True)


def report(paths: list[str], variant: str, threshold: float, relevance: float) -> None:
    """Per category: the first action right without the question and with it (a call refused
    when the mean "yes" of its values is below ``threshold``, as
    :class:`~react_agent.policies.StatedValues` decides; values it does not ask about, a
    composed string such as a command or a date in a format, are left out; a reply of several
    calls is not asked about), among the calls
    Relevance lets run at ``relevance``; then the separation of right and wrong calls."""
    from react_agent.policies._made_up import COMPOSED

    rows: dict[str, list[dict[str, Any]]] = {}
    for path in paths:
        for line in Path(path).read_text().splitlines():
            if line.strip():
                record = json.loads(line)
                rows.setdefault(record["category"], []).append(record)
    print(f"variant {variant}, threshold {threshold}, relevance {relevance}")
    print(f"{'category':18} {'n':>4} {'now':>6} {'with':>6} {'acted':>6} {'wrong':>6}")
    right_calls, wrong_calls = [], []
    for category, records in rows.items():
        now = both = acted = wrong = 0
        for r in records:
            called = bool(r["calls"]) and (r.get("p_yes") is None or r["p_yes"] >= relevance)
            values = {c["name"]: c["args"] for c in r.get("call_json") or []}
            yes = [p for e in r.get("given", [])
                   for arg, p in (e["p"].get(variant) or {}).items()
                   if p is not None and not (isinstance(values.get(e["name"], {}).get(arg), str)
                                             and COMPOSED.search(values[e["name"]][arg]))]
            if len(r.get("call_json") or []) != 1:
                yes = []  # a reply of several calls is not asked about
            mean = sum(yes) / len(yes) if yes else None
            kept = called and (mean is None or mean >= threshold)
            fits = category not in NO_TOOL_FITS
            if called and mean is not None:
                (right_calls if fits else wrong_calls).append(mean)
            now += called == fits
            both += kept == fits
            acted += called and not kept
            wrong += called and not kept and fits
        n = len(records)
        print(f"{category:18} {n:>4} {now / n:>6.2f} {both / n:>6.2f} {acted:>6} {wrong:>6}")
    pairs = [(p, q) for p in right_calls for q in wrong_calls]
    if pairs:
        auc = sum((p > q) + 0.5 * (p == q) for p, q in pairs) / len(pairs)
        print(f"calls asked about: {len(right_calls)} right, {len(wrong_calls)} where no tool "
              f"fits; AUC of the mean 'yes' {auc:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", help="benchmarks/relevance.py's records of first actions")
    parser.add_argument("--variants", metavar="DIR")
    parser.add_argument("--only", help="variant names to ask, comma-separated")
    parser.add_argument("--split", choices=("tune", "test"), default="tune")
    parser.add_argument("--out", default="given.jsonl")
    parser.add_argument("--report", nargs="+", metavar="JSONL")
    parser.add_argument("--variant", default="a")
    parser.add_argument("--threshold", type=float, default=0.58)
    parser.add_argument("--relevance", type=float, default=0.7)
    args = parser.parse_args()
    if args.report:
        report(args.report, args.variant, args.threshold, args.relevance)
        return
    ask(args)


if __name__ == "__main__":
    sys.exit(main())
