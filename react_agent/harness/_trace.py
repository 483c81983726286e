"""Trace files: a run written as JSON Lines while it happens, and read back for replay.

:class:`TraceWriter` is an event callback (``Agent(model, toolbox, callbacks=[TraceWriter(path)])``
or ``react-agent run --trace FILE``). Each record is one line, flushed at once, so a trace
survives a crash or Ctrl-C up to the last finished record. Records (all have ``type`` and
``time``, an ISO 8601 UTC timestamp):

- ``run_start``: ``task``, ``system_prompt``, ``tools`` (names), ``model``.
- ``model_call``: ``step`` (1-based), ``messages`` and ``message_chars`` (how many messages,
  of how many characters in all, were sent),
  ``raw_output``, ``seconds``, ``prompt_tokens``, ``completion_tokens``, then what the parser
  made of it: ``stage`` and ``repairs``, ``thought``, ``tool_calls`` (``[{name, args}]``),
  ``final_answer``, or ``parse_error`` (the problem) when the reply was unusable;
  ``assistant_message`` (what the history kept of the reply) and ``feedback`` (the message
  sent back for an unusable reply); ``best_effort`` for the extra call after ``max_steps``,
  ``review`` for the call that checked the draft final answer, with ``review_reasons`` (why),
  ``repeat`` for a reply set aside as a repeat (not run, not in the history), ``held_calls``
  for calls of the reply that waited for results (not run; ``tool_calls`` holds the others).
- ``tool_call``: ``step``, ``name``, ``args`` (as written), ``cleaned_args``, ``cleaning``,
  ``observation``, ``ok``, ``error`` (``None`` or the failure kind), ``seconds``.
- ``observation``: ``step``, ``message`` (the user message that carried the step's
  observations).
- ``run_end``: ``status``, ``final_answer``, ``best_effort``, ``error``, ``usage`` and
  ``result`` (the whole :class:`RunResult` as ``to_dict()``).

A conversation writes one ``run_start`` ... ``run_end`` group per turn. :func:`read_trace` turns
a trace back into :class:`RunResult` objects, also when the last run never ended (then its
messages, the history a resume continues, are rebuilt from the records).
"""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from .. import prompts
from .._persist import read_json_lines
from ..agent._loop import LOOP_REASON, observation_message
from ..errors import ConfigError
from ..events import (
    Event,
    FinalAnswer,
    LoopBroken,
    ModelCallStarted,
    ObservationSent,
    ParseFailed,
    RepeatSetAside,
    ReplyParsed,
    RunFinished,
    RunStarted,
    ToolFinished,
    ToolStarted,
)
from ..parsing._reply import strip_reasoning
from ..types import Message, RunResult, Step, ToolResult


class TraceWriter:
    """Writes a run's events to ``path`` as JSON Lines (see the module docs for the records).

    Args:
        path: the trace file; created (with its folder) or overwritten.
        model: the model's name, recorded in ``run_start``.

    Raises:
        ConfigError: the file cannot be opened for writing.
    """

    def __init__(self, path: str | os.PathLike[str], model: str | None = None) -> None:
        self.path, self.model = Path(path), model
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file: IO[str] = self.path.open(
                "w", encoding="utf-8", errors="backslashreplace"  # see persist.write_atomically
            )
        except OSError as exc:
            raise ConfigError(f"Cannot write the trace {self.path}: {exc.strerror or exc}") from exc
        self._sent: tuple[int, int] = (0, 0)

    def __call__(self, event: Event) -> None:
        if isinstance(event, RunStarted):
            self._write("run_start", task=event.task, system_prompt=event.system_prompt,
                        tools=list(event.tools), model=self.model)
        elif isinstance(event, ModelCallStarted):
            self._sent = (event.message_count, event.message_chars)
        elif isinstance(event, (ReplyParsed, ParseFailed)):
            step = event.step
            reply = event.reply if isinstance(event, ReplyParsed) else None
            parsed = {
                "stage": step.stage, "repairs": step.repairs, "thought": step.thought,
                "tool_calls": [c.to_dict() for c in reply.tool_calls] if reply else [],
                "final_answer": step.final_answer, "parse_error": step.error,
                "assistant_message": (reply and reply.source) or strip_reasoning(step.raw_output),
                "feedback": event.message if isinstance(event, ParseFailed) else None,
            }
            self._write(
                "model_call", step=step.index, messages=self._sent[0],
                message_chars=self._sent[1], raw_output=step.raw_output,
                seconds=round(step.model_seconds, 6), prompt_tokens=step.prompt_tokens,
                completion_tokens=step.completion_tokens, finish_reason=step.finish_reason,
                best_effort=step.best_effort, review=step.review,
                review_reasons=step.review_reasons, repeat=step.repeat,
                held_calls=[c.to_dict() for c in step.held_calls], **parsed,
            )
        elif isinstance(event, ToolFinished):
            self._write("tool_call", step=event.step.index, **event.result.to_dict())
        elif isinstance(event, ObservationSent):
            self._write("observation", step=event.step.index, message=event.message)
        elif isinstance(event, RunFinished):
            r = event.result
            self._write("run_end", status=r.status, final_answer=r.final_answer,
                        best_effort=r.best_effort, error=r.error, usage=r.usage,
                        result=r.to_dict())

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> TraceWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _write(self, kind: str, **fields: Any) -> None:
        now = dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds")
        record = {"type": kind, "time": now, **fields}
        self._file.write(json.dumps(record, ensure_ascii=False, default=repr) + "\n")
        self._file.flush()


def read_trace(path: str | os.PathLike[str]) -> list[RunResult]:
    """The runs recorded in a trace file, in order.

    A run without its ``run_end`` record (the process was killed) is rebuilt from its
    ``model_call`` and ``tool_call`` records, with status ``interrupted`` and an error that
    says so. A cut-off last line is ignored.

    Raises:
        ConfigError: the file cannot be read, or holds no ``run_start`` record.
    """
    runs: list[RunResult] = []
    current: list[dict[str, Any]] | None = None
    for _, record in read_json_lines(path, "trace", skip_broken="last"):
        kind = record.get("type") if isinstance(record, dict) else None
        if kind == "run_start":
            if current is not None:
                runs.append(_rebuild(current))
            current = [record]
        elif current is not None and kind == "run_end":
            runs.append(RunResult.from_dict(record["result"]))
            current = None
        elif current is not None:
            current.append(record)
    if current is not None:
        runs.append(_rebuild(current))
    if not runs:
        raise ConfigError(f"{path} holds no run (no run_start record); is it a trace?")
    return runs


def _rebuild(records: list[dict[str, Any]]) -> RunResult:
    """A RunResult from the records of a run that did not end: its steps, and the messages the
    model was sent (the history to resume from), rebuilt step by step."""
    start = records[0]
    steps: dict[int, Step] = {}
    calls: dict[int, dict[str, Any]] = {}
    observations: dict[int, str] = {}
    for r in records[1:]:
        if r["type"] == "model_call":
            calls[r["step"]] = r
            steps[r["step"]] = Step.from_dict({
                **r, "index": r["step"], "error": r.get("parse_error"),
                "model_seconds": r.get("seconds"), "results": [],
            })
        elif r["type"] == "tool_call" and r["step"] in steps:
            steps[r["step"]].results.append(ToolResult.from_dict(r))
        elif r["type"] == "observation":
            observations[r["step"]] = r["message"]
    ordered = [steps[i] for i in sorted(steps)]
    messages: list[Message] = [
        {"role": "system", "content": start.get("system_prompt", "")},
        {"role": "user", "content": start["task"]},
    ]
    for step in ordered:
        if step.best_effort or step.review or step.repeat:
            continue  # not in the history
        record = calls[step.index]
        kept = record.get("assistant_message") or strip_reasoning(step.raw_output)
        messages.append({"role": "assistant", "content": kept})
        answer = _answer_sent(step, record, observations.get(step.index), start["task"])
        if answer is None:
            break  # the run stopped during this step: a resume asks it again
        messages.append({"role": "user", "content": answer})
    return RunResult(
        start["task"], "interrupted", None, ordered,
        error="The trace ends before the run did: the process stopped mid-run.",
        messages=messages,
    )


def _answer_sent(
    step: Step, record: dict[str, Any], observation: str | None, task: str
) -> str | None:
    """The user message that followed ``step`` (the observations, or what was wrong with an
    unusable reply), from the trace; rebuilt for traces written before it was recorded."""
    if step.stage is None:
        return record.get("feedback") or prompts.render("parse_error", problem=step.error or "")
    if not step.tool_calls:
        return None
    if observation is None and step.results and len(step.results) == len(step.tool_calls):
        observation = observation_message(step.results, task)
    return observation


def replay_events(result: RunResult, system_prompt: str = "") -> Iterator[Event]:
    """The events a live run would have given for ``result``, for printing a saved run."""
    system = system_prompt or next(
        (m["content"] for m in result.messages if m["role"] == "system"), ""
    )
    yield RunStarted(result.task, system)
    for n, step in enumerate(result.steps, 1):
        if step.review and step.review_reasons == [LOOP_REASON]:
            yield LoopBroken(result.steps[n - 2])
        yield ModelCallStarted(step.index)
        if step.reply is None:
            yield ParseFailed(step, step.error or "")
        else:
            yield ReplyParsed(step, step.reply)
            if step.repeat:
                yield RepeatSetAside(step)
                continue
            for call in step.tool_calls:
                yield ToolStarted(step, call)
            for tool_result in step.results:
                yield ToolFinished(step, tool_result)
            if step.final_answer is not None and not step.review:
                review = result.steps[n] if n < len(result.steps) and result.steps[n].review \
                    else None
                yield FinalAnswer(step, step.final_answer, best_effort=step.best_effort,
                                  draft=review is not None,
                                  reasons=tuple(review.review_reasons) if review else ())
        if step.review and result.final_answer is not None:
            yield FinalAnswer(step, result.final_answer)
    yield RunFinished(result)
