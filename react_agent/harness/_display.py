"""Printing a run's thought chain (Thought / Action / Observation / Final answer).

The library never prints; the CLI subscribes a :class:`Printer` to the run's events. Every text
that comes from a model, a tool or a file goes through :func:`safe` first, so that it cannot
drive the terminal (clear the screen, set the title, write the clipboard, hide text).
"""

from __future__ import annotations

import json
import os
import re
import sys
from typing import TextIO

from ..events import (
    Event,
    FinalAnswer,
    HistoryCompressed,
    ModelCallFinished,
    ModelToken,
    OutputRejected,
    ParseFailed,
    PolicyNote,
    ReplyParsed,
    RunFinished,
    RunStarted,
    ToolFinished,
)
from ..types import RunResult, Step

_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""Characters a terminal may act on: C0 and C1 controls but tab and newline (ESC starts the
sequences that move the cursor, set the title or write the clipboard; CR rewrites a line), and
the bidirectional formatting characters that reorder what is shown."""


def safe(text: str) -> str:
    """``text`` with every character a terminal would act on written as a visible escape
    (``\x1b``, ``\u202e``); tabs and line breaks stay."""
    return _UNSAFE.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100
                       else f"\\u{ord(m.group()):04x}", text)


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
            for call in event.reply.tool_calls:
                args = json.dumps(call.args, ensure_ascii=False)
                self._line("action", "Action", f"{call.name} {args}")
        elif isinstance(event, ToolFinished):
            text = event.result.observation
            if len(text) > self.max_observation_chars:
                text = text[: self.max_observation_chars] + f" [... {len(text)} chars in all]"
            self._line("error" if not event.result.ok else "observation", "Observation", text)
        elif isinstance(event, ParseFailed):
            self._line("error", "Unusable reply", f"{event.step.error} (asking again)")
        elif isinstance(event, OutputRejected):
            self._line("error", "Output does not fit", "; ".join(event.problems))
        elif isinstance(event, FinalAnswer):
            label = ("Draft answer" if event.draft else
                     "Final answer (best effort)" if event.best_effort else "Final answer")
            self._line("final", label, event.text)
        elif isinstance(event, PolicyNote):
            self._line("thought", event.label, event.text)
        elif isinstance(event, RunFinished):
            if self._streaming:  # interrupted mid-reply
                print(file=self.stream)
                self._streaming = False
            if event.result.has_output:
                self._line("final", "Output", output_json(event.result))
            if self.usage:
                for line in usage_lines(event.result):
                    self._line("status", "Usage", line)
            self._line("status", "Status", summary(event.result))

    def _token(self, text: str) -> None:
        text = safe(text)
        if not self._streaming:
            self._streaming = True
            text = "Model: " + text
        if self.color:
            text = f"\033[{_STYLES['tokens']}m{text}\033[0m"
        print(text, end="", file=self.stream, flush=True)

    def _line(self, style: str, label: str, text: str) -> None:
        head, text = f"{safe(label)}:", safe(text)
        if self.color:
            head = f"\033[{_STYLES[style]}m{head}\033[0m"
        print(f"{head} {text}", file=self.stream, flush=True)


def output_json(result: RunResult) -> str:
    """The run's typed value (``result.output``) as one line of JSON, every character a
    terminal would act on written as a JSON escape (``\\u009b``): still JSON a script reads, and
    :func:`safe` leaves it as it is."""
    text = json.dumps(result.to_dict()["output"], ensure_ascii=False)
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)  # only inside strings


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


def is_question(step: Step) -> bool:
    """Whether ``step`` is a policy's question to the model (its answer is a word, never read
    as a reply)."""
    return step.reply is None and step.error is None and step.origin is not None \
        and not step.in_history


def usage_lines(result: RunResult) -> list[str]:
    """Per model call and in all: model seconds, prompt + completion tokens, tool seconds; a
    policy's extra call names the policy ("relevance's question", "review's call"), and a
    question whose answer was read from the probabilities of its choices says it decoded
    nothing (0 completion tokens)."""
    lines = []
    for step in result.steps:
        tools = sum(r.seconds for r in step.results)
        line = (f"step {step.index:>2}: model {step.model_seconds:6.2f} s, "
                f"{_tokens(step.prompt_tokens)} prompt + {_tokens(step.completion_tokens)} "
                f"completion tokens; tools {tools:.2f} s")
        if is_question(step):
            scored = " (its choices scored, nothing decoded)" if step.completion_tokens == 0 else ""
            line += f"; {step.origin}'s question{scored}"
        elif step.origin is not None:
            line += f"; {step.origin}'s call"
        lines.append(line)
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
