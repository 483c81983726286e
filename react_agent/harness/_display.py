"""Printing a run's thought chain (Thought / Action / Observation / Final answer).

The library never prints; the CLI subscribes a :class:`Printer` to the run's events.
"""

from __future__ import annotations

import json
import os
import sys
from typing import TextIO

from ..events import (
    Event,
    FinalAnswer,
    HistoryCompressed,
    LoopBroken,
    ModelCallFinished,
    ModelToken,
    ParseFailed,
    RepeatSetAside,
    ReplyParsed,
    RunFinished,
    RunStarted,
    ToolFinished,
)
from ..types import RunResult

_STYLES = {
    "task": "1", "thought": "36", "action": "33", "observation": "32", "error": "31",
    "final": "1;35", "status": "2", "tokens": "2",
}


class Printer:
    """Prints events as a readable thought chain.

    Args:
        stream: where to print (default ``sys.stdout``).
        color: ANSI colours; ``None`` = when ``stream`` is a terminal and ``NO_COLOR`` is unset.
        max_observation_chars: longer observations are shortened on screen (not in the run).
        tokens: print the model's raw reply as it streams in (``ModelToken`` events), dimmed.
        usage: print a usage table (per step and in all) before the status line.
        show_task: print the task line (a chat leaves it out: the user just typed it).
    """

    def __init__(
        self, stream: TextIO | None = None, color: bool | None = None,
        max_observation_chars: int = 1500, tokens: bool = False, usage: bool = False,
        show_task: bool = True,
    ) -> None:
        self.stream = stream or sys.stdout
        if color is None:
            color = self.stream.isatty() and "NO_COLOR" not in os.environ
        self.color, self.max_observation_chars = color, max_observation_chars
        self.tokens, self.usage, self.show_task = tokens, usage, show_task
        self._streaming = False

    def __call__(self, event: Event) -> None:
        if isinstance(event, ModelToken):
            if self.tokens:
                self._token(event.text)
        elif isinstance(event, ModelCallFinished):
            if self._streaming:
                print(file=self.stream, flush=True)
                self._streaming = False
        elif isinstance(event, RunStarted):
            if self.show_task:
                self._line("task", "Task", event.task)
            if event.resumed_steps:
                self._line("status", "Resuming", f"after {_count(event.resumed_steps, 'step')}"
                           " of the saved run")
        elif isinstance(event, HistoryCompressed):
            if event.error:
                self._line("error", "History", f"not summarised ({event.error})")
            else:
                self._line("status", "History", f"{event.turns} older turn(s) summarised: "
                           f"{event.tokens_before} -> {event.tokens_after} tokens")
        elif isinstance(event, ReplyParsed):
            if event.reply.thought:
                self._line("thought", "Thought", event.reply.thought)
            if event.step.answer_taken:
                self._line("thought", "Answer floor", "the model gave the final answer "
                           f"{event.step.answer_probability or 0:.0%} of the probability where "
                           "it chose its action; taking it instead of a tool call")
            for call in event.reply.tool_calls:
                args = json.dumps(call.args, ensure_ascii=False)
                self._line("action", "Action", f"{call.name} {args}")
            for call in event.step.held_calls:
                args = json.dumps(call.args, ensure_ascii=False)
                self._line("thought", "Held", f"{call.name} {args} (values stated neither by the "
                           "user nor by a result yet; not run)")
        elif isinstance(event, ToolFinished):
            text = event.result.observation
            if len(text) > self.max_observation_chars:
                text = text[: self.max_observation_chars] + f" [... {len(text)} chars in all]"
            self._line("error" if not event.result.ok else "observation", "Observation", text)
        elif isinstance(event, ParseFailed):
            self._line("error", "Unusable reply", f"{event.step.error} (asking again)")
        elif isinstance(event, FinalAnswer):
            label = ("Draft answer" if event.draft else
                     "Final answer (best effort)" if event.best_effort else "Final answer")
            self._line("final", label, event.text)
            if event.draft:
                self._line("thought", "Review", "the draft answer " +
                           " and ".join(event.reasons) + "; asking again in a focused call")
        elif isinstance(event, RepeatSetAside):
            self._line("thought", "Repeat", "the run already has the results of "
                       f"{_count(len(event.step.tool_calls), 'call')}; not run again, asking for "
                       "the final answer instead")
        elif isinstance(event, LoopBroken):
            self._line("thought", "Loop", "the model repeats calls whose results it already has;"
                       " asking for the final answer in a focused call")
        elif isinstance(event, RunFinished):
            if self._streaming:  # interrupted mid-reply
                print(file=self.stream)
                self._streaming = False
            if self.usage:
                for line in usage_lines(event.result):
                    self._line("status", "Usage", line)
            self._line("status", "Status", summary(event.result))

    def _token(self, text: str) -> None:
        if not self._streaming:
            self._streaming = True
            text = "Model: " + text
        if self.color:
            text = f"\033[{_STYLES['tokens']}m{text}\033[0m"
        print(text, end="", file=self.stream, flush=True)

    def _line(self, style: str, label: str, text: str) -> None:
        head = f"{label}:"
        if self.color:
            head = f"\033[{_STYLES[style]}m{head}\033[0m"
        print(f"{head} {text}", file=self.stream, flush=True)


def summary(result: RunResult) -> str:
    """One line: status, steps, tokens and time, then the error if any."""
    u = result.usage
    parts = [
        result.status,
        _count(u["model_calls"], "model call"),
        _count(u["tool_calls"], "tool call"),
        _count(u["prompt_tokens"] + u["completion_tokens"], "token"),
        f"{u['model_seconds'] + u['tool_seconds']:.1f} s",
    ]
    line = ", ".join(parts)
    return f"{line}\n{result.error}" if result.error else line


def usage_lines(result: RunResult) -> list[str]:
    """Per model call and in all: model seconds, prompt + completion tokens, tool seconds."""
    lines = []
    for step in result.steps:
        tools = sum(r.seconds for r in step.results)
        lines.append(
            f"step {step.index:>2}: model {step.model_seconds:6.2f} s, "
            f"{_tokens(step.prompt_tokens)} prompt + {_tokens(step.completion_tokens)} "
            f"completion tokens; tools {tools:.2f} s"
        )
    u = result.usage
    lines.append(
        f"in all:  model {u['model_seconds']:6.2f} s, {u['prompt_tokens']} prompt + "
        f"{u['completion_tokens']} completion tokens; tools {u['tool_seconds']:.2f} s"
    )
    return lines


def progress_bar(done: int, total: int, width: int = 24) -> str:
    """``[#########---------]  3/8`` for a batch of tasks."""
    filled = width * done // total if total else width
    return f"[{'#' * filled}{'-' * (width - filled)}] {done:>{len(str(total))}}/{total}"


def _tokens(n: int | None) -> str:
    return "?" if n is None else str(n)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"
