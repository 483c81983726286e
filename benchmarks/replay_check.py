"""Check that a change of the code keeps the embedded model's runs the same, without running the
model twice.

``record`` runs any ``react-agent`` command line (``run --tasks FILE --out RESULTS``) on the
embedded model and writes every request the code made of it (the messages, the schema, the
answer floor, exactly) with the reply it got. ``replay`` runs the same command line on another
checkout with the embedded model's ``complete``/``stream`` answered from that recording: a
request the recording does not hold (the new code asked the model something else, in bytes) is
counted and answered with an empty reply, so the results differ where the code's behaviour did.
With greedy decoding a model's reply depends on nothing but its request (``--fresh-model``, the
default, resets it between tasks), so equal requests and equal results mean the real run would
be the same.

    # from the checkout before the change
    python benchmarks/replay_check.py record REC.jsonl \
        run --tasks examples/tasks/dev.jsonl --out before.jsonl
    # from the checkout after it
    python benchmarks/replay_check.py replay REC.jsonl \
        run --tasks examples/tasks/dev.jsonl --out after.jsonl

The last line of ``replay`` says how many requests were found and missed; compare the two results
files (passed, status, answer, steps and tool calls per task) with
``python benchmarks/replay_check.py compare before.jsonl after.jsonl``.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections import defaultdict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path.cwd()))  # the checkout this is run from, before any installed copy

from react_agent.cli import main as cli_main
from react_agent.models._llama_cpp import LlamaCppModel
from react_agent.types import ModelReply

_FIELDS = ("text", "prompt_tokens", "completion_tokens", "finish_reason", "answer_probability",
           "answer_taken")


def _key(messages: Sequence[Any], schema: Any, answer_floor: Any) -> str:
    blob = json.dumps([list(messages), schema, answer_floor], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()


def record(path: Path, argv: list[str]) -> int:
    out = path.open("w", encoding="utf-8")
    real = LlamaCppModel.complete

    def complete(self: LlamaCppModel, messages: Sequence[Any], schema: Any = None,
                 strict: bool = False, answer_floor: Any = None) -> ModelReply:
        reply = real(self, messages, schema, strict, answer_floor)
        out.write(json.dumps({"key": _key(messages, schema, answer_floor),
                              **{f: getattr(reply, f) for f in _FIELDS}}) + "\n")
        out.flush()
        return reply

    def stream(self: LlamaCppModel, messages: Sequence[Any], schema: Any = None,
               strict: bool = False, answer_floor: Any = None) -> Iterator[str | ModelReply]:
        reply = complete(self, messages, schema, strict, answer_floor)
        yield reply.text
        yield reply

    LlamaCppModel.complete = complete  # type: ignore[method-assign]
    LlamaCppModel.stream = stream  # type: ignore[method-assign]
    try:
        return cli_main(argv)
    finally:
        out.close()


def replay(path: Path, argv: list[str]) -> int:
    recorded: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for line in path.read_text("utf-8").splitlines():
        item = json.loads(line)
        recorded[item.pop("key")].append(item)
    counts = {"found": 0, "missed": 0}

    def complete(self: LlamaCppModel, messages: Sequence[Any], schema: Any = None,
                 strict: bool = False, answer_floor: Any = None) -> ModelReply:
        replies = recorded.get(_key(messages, schema, answer_floor))
        if not replies:
            counts["missed"] += 1
            print(f"replay: a request the recording does not hold ({len(messages)} messages, "
                  f"last: {str(messages[-1].get('content'))[:120]!r})", file=sys.stderr)
            return ModelReply("")
        counts["found"] += 1
        item = replies.pop(0) if len(replies) > 1 else replies[0]
        return ModelReply(**item)

    def stream(self: LlamaCppModel, messages: Sequence[Any], schema: Any = None,
               strict: bool = False, answer_floor: Any = None) -> Iterator[str | ModelReply]:
        reply = complete(self, messages, schema, strict, answer_floor)
        yield reply.text
        yield reply

    LlamaCppModel.complete = complete  # type: ignore[method-assign]
    LlamaCppModel.stream = stream  # type: ignore[method-assign]
    try:
        return cli_main(argv)
    finally:
        print(f"replay: {counts['found']} requests found in the recording, "
              f"{counts['missed']} not", file=sys.stderr)


def compare(before: Path, after: Path) -> int:
    def rows(path: Path) -> dict[str, tuple[Any, ...]]:
        out = {}
        for line in path.read_text("utf-8").splitlines():
            r = json.loads(line)
            out[str(r.get("id"))] = (r.get("passed"), r.get("status"), r.get("final_answer"),
                                     r.get("steps"), r.get("tool_calls"))
        return out
    a, b = rows(before), rows(after)
    differ = [k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
    for k in differ:
        print(f"{k}: {a.get(k)} -> {b.get(k)}")
    print(f"{len(a)} tasks before, {len(b)} after, {len(differ)} differ "
          f"(passed, status, final answer, steps, tool calls); passed "
          f"{sum(bool(v[0]) for v in a.values())} -> {sum(bool(v[0]) for v in b.values())}")
    return 1 if differ else 0


if __name__ == "__main__":
    command, rest = sys.argv[1], sys.argv[2:]
    if command == "compare":
        sys.exit(compare(Path(rest[0]), Path(rest[1])))
    sys.exit({"record": record, "replay": replay}[command](Path(rest[0]), rest[1:]))
