"""The ReAct loop: ask the model, parse its reply, run the tools, feed back observations.

The loop shape (run -> step -> query -> execute, format errors fed back and bounded) follows
mini-swe-agent's ``DefaultAgent``; the JSON ``{thought, action}`` protocol follows the seed
tutorial "百行代码从零手搓Agent".
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

from . import prompts
from .errors import ConfigError, ModelError, OutputParseError
from .events import (
    Event,
    FinalAnswer,
    ModelCallStarted,
    ParseFailed,
    ReplyParsed,
    RunFinished,
    RunStarted,
    ToolFinished,
    ToolStarted,
)
from .invoker import DEFAULT_MAX_OBSERVATION_CHARS, ToolResult, invoke_all
from .models.base import ChatModel, Message, ModelReply
from .parser import ToolCall, parse_reply, strip_reasoning
from .toolbox import Toolbox

STATUSES = (
    "final_answer", "max_steps", "parse_errors", "model_error", "loop_detected", "interrupted",
)
"""How a run can end (``RunResult.status``)."""


@dataclass
class AgentConfig:
    """Budgets and options of a run."""

    max_steps: int = 10
    """Steps with a usable action (tool calls or the final answer) before the run stops."""
    max_parse_retries: int = 3
    """Unusable replies in a row that are sent back to the model for another try; one more
    ends the run with status ``parse_errors``. These do not consume ``max_steps``."""
    max_observation_chars: int = DEFAULT_MAX_OBSERVATION_CHARS
    """Longer observations are cut, with a marker saying how much."""
    max_parallel_calls: int = 4
    """Threads for a list of independent tool calls."""
    max_repeats: int = 3
    """The same calls this many steps in a row (or an A-B-A-B cycle) are not run again: the model
    is told it is repeating itself; if it goes on, the run ends with ``loop_detected``."""
    instructions: str = ""
    """Extra instructions appended to the system prompt."""

    def __post_init__(self) -> None:
        if self.max_steps < 1:
            raise ConfigError("max_steps must be at least 1.")
        if self.max_parse_retries < 0:
            raise ConfigError("max_parse_retries must be 0 or more.")
        if self.max_observation_chars < 100:
            raise ConfigError("max_observation_chars must be at least 100.")


@dataclass
class Step:
    """One model call and what came of it.

    Attributes:
        index: 1-based number of the model call in the run.
        raw_output: the model's reply exactly as returned.
        thought: the parsed thought, or ``None``.
        tool_calls: the calls the model asked for (empty for a final answer or a parse error).
        results: one :class:`ToolResult` per call, in the same order.
        final_answer: the final answer given in this step, or ``None``.
        stage: parser stage that succeeded (``direct``/``fenced``/``fallback``/``repaired``).
        repairs: what the parser cleaned or repaired.
        error: the parse error (what was wrong) when the reply was unusable, else ``None``.
        model_seconds: wall time of the model call.
        prompt_tokens, completion_tokens: token usage reported by the model backend.
    """

    index: int
    raw_output: str = ""
    thought: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    results: list[ToolResult] = field(default_factory=list)
    final_answer: str | None = None
    stage: str | None = None
    repairs: list[str] = field(default_factory=list)
    error: str | None = None
    model_seconds: float = 0.0
    prompt_tokens: int | None = None
    completion_tokens: int | None = None

    @property
    def observations(self) -> list[str]:
        """The observation text of each tool call, in order."""
        return [r.observation for r in self.results]

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index, "raw_output": self.raw_output, "thought": self.thought,
            "tool_calls": [c.to_dict() for c in self.tool_calls],
            "results": [r.to_dict() for r in self.results],
            "observations": self.observations, "final_answer": self.final_answer,
            "stage": self.stage, "repairs": self.repairs, "error": self.error,
            "model_seconds": round(self.model_seconds, 6),
            "prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
        }


@dataclass
class RunResult:
    """The outcome and the whole trajectory of one run (JSON-serialisable via :meth:`to_dict`).

    Attributes:
        task: the user's task.
        status: one of :data:`STATUSES`.
        final_answer: the answer, or ``None`` if the run ended otherwise.
        steps: every model call, in order, including unusable replies.
        error: what went wrong, in words a user can act on (``None`` for a final answer).
        messages: the conversation as sent to the model (system, user, assistant, ...).
    """

    task: str
    status: str
    final_answer: str | None
    steps: list[Step]
    error: str | None = None
    messages: list[Message] = field(default_factory=list)

    @property
    def usage(self) -> dict[str, Any]:
        """Totals: ``prompt_tokens``, ``completion_tokens``, ``model_seconds``,
        ``tool_seconds``, ``model_calls``, ``tool_calls``."""
        return {
            "prompt_tokens": sum(s.prompt_tokens or 0 for s in self.steps),
            "completion_tokens": sum(s.completion_tokens or 0 for s in self.steps),
            "model_seconds": round(sum(s.model_seconds for s in self.steps), 6),
            "tool_seconds": round(sum(r.seconds for s in self.steps for r in s.results), 6),
            "model_calls": len(self.steps),
            "tool_calls": sum(len(s.results) for s in self.steps),
        }

    @property
    def stage_counts(self) -> dict[str, int]:
        """How many replies each parser stage recovered (``"error"`` for unusable ones)."""
        return dict(Counter(s.stage or "error" for s in self.steps))

    @property
    def tool_calls(self) -> list[ToolCall]:
        """Every tool call of the run, in order."""
        return [c for s in self.steps for c in s.tool_calls]

    def to_dict(self) -> dict[str, Any]:
        return {
            "task": self.task, "status": self.status, "final_answer": self.final_answer,
            "error": self.error, "usage": self.usage, "stage_counts": self.stage_counts,
            "steps": [s.to_dict() for s in self.steps], "messages": self.messages,
        }

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=indent)


class Agent:
    """A JSON ReAct agent: ``Agent(model, toolbox).run("task") -> RunResult``.

    Args:
        model: any :class:`ChatModel` (``ScriptedModel``, ``OpenAIChatModel``, ``LlamaCppModel``).
        toolbox: the tools the model may call.
        max_steps: shortcut for ``config.max_steps``.
        config: budgets and options; see :class:`AgentConfig`.
    """

    def __init__(
        self,
        model: ChatModel,
        toolbox: Toolbox | None = None,
        max_steps: int | None = None,
        config: AgentConfig | None = None,
        **options: Any,
    ) -> None:
        if max_steps is not None:
            options["max_steps"] = max_steps
        try:
            config = AgentConfig(**{**asdict(config or AgentConfig()), **options})
        except TypeError as exc:
            raise ConfigError(f"Unknown Agent option: {exc}; see AgentConfig.") from exc
        self.model, self.toolbox, self.config = model, toolbox or Toolbox(), config
        self.system_prompt = prompts.render_system_prompt(self.toolbox, config.instructions)

    def run(self, task: str) -> RunResult:
        """Run ``task`` to the end and return the result (see :meth:`iter` for the events)."""
        for event in self.iter(task):
            if isinstance(event, RunFinished):
                return event.result
        raise AssertionError("unreachable: iter() always ends with RunFinished")

    def iter(self, task: str) -> Iterator[Event]:
        """Run ``task``, yielding an :mod:`~react_agent.events` event as each thing happens.

        The last event is always :class:`RunFinished` carrying the :class:`RunResult`.
        """
        messages: list[Message] = [
            {"role": "system", "content": self.system_prompt},
            {"role": "user", "content": task},
        ]
        steps: list[Step] = []
        status, answer, error = "max_steps", None, None
        actions = failures_in_a_row = 0
        warned_of_loop = False
        yield RunStarted(task, self.system_prompt)
        try:
            while actions < self.config.max_steps:
                step = Step(index=len(steps) + 1)
                yield ModelCallStarted(step.index)
                try:
                    reply = self._query(messages, step)
                except ModelError as exc:
                    status, error = "model_error", str(exc)
                    break
                steps.append(step)
                messages.append({"role": "assistant", "content": strip_reasoning(reply.text)})
                try:
                    parsed = parse_reply(reply.text)
                except OutputParseError as exc:
                    step.error = exc.problem
                    failures_in_a_row += 1
                    yield ParseFailed(step, str(exc))
                    if failures_in_a_row > self.config.max_parse_retries:
                        status = "parse_errors"
                        error = f"The model's last {failures_in_a_row} replies held no usable " \
                            f"action; the last problem: {exc.problem}"
                        break
                    messages.append({"role": "user", "content": str(exc)})
                    continue
                failures_in_a_row = 0
                actions += 1
                step.thought, step.stage = parsed.thought, parsed.stage
                step.repairs = list(parsed.repairs)
                yield ReplyParsed(step, parsed)
                if parsed.final_answer is not None:
                    status = "final_answer"
                    answer = step.final_answer = parsed.final_answer
                    yield FinalAnswer(step, answer)
                    break
                step.tool_calls = list(parsed.tool_calls)
                earlier = repeated_results(steps, self.config.max_repeats)
                if earlier is not None and warned_of_loop:
                    status = "loop_detected"
                    error = "The model kept repeating the same tool calls after being told so."
                    break
                for call in step.tool_calls:
                    yield ToolStarted(step, call)
                if earlier is not None:
                    warned_of_loop = True
                    step.results = [_repeat_warning(r) for r in earlier]
                else:
                    step.results = invoke_all(
                        self.toolbox, step.tool_calls,
                        max_chars=self.config.max_observation_chars,
                        max_workers=self.config.max_parallel_calls,
                    )
                for result in step.results:
                    yield ToolFinished(step, result)
                messages.append(
                    {"role": "user", "content": observation_message(step.results, task)}
                )
            else:
                error = f"The run used all {self.config.max_steps} steps without a final answer."
        except KeyboardInterrupt:
            status, answer, error = "interrupted", None, "The run was interrupted (Ctrl-C)."
        result = RunResult(task, status, answer, steps, error, messages)
        yield RunFinished(result)

    def _query(self, messages: list[Message], step: Step) -> ModelReply:
        started = time.perf_counter()
        try:
            reply = self.model.complete(messages)
        except (ModelError, KeyboardInterrupt):
            raise
        except Exception as exc:  # a backend bug must not lose the trajectory
            raise ModelError(
                f"The model backend {getattr(self.model, 'name', '?')} failed: "
                f"{type(exc).__name__}: {exc}",
                cause="other",
            ) from exc
        finally:
            step.model_seconds = time.perf_counter() - started
        step.raw_output = reply.text
        step.prompt_tokens, step.completion_tokens = reply.prompt_tokens, reply.completion_tokens
        return reply


def repeated_results(steps: list[Step], max_repeats: int) -> list[ToolResult] | None:
    """The earlier results of the last step's calls if the steps so far end in a loop: the same
    calls ``max_repeats`` times in a row, or an A-B-A-B cycle. ``None`` otherwise."""
    calls = [_signature(s) for s in steps if s.tool_calls]
    if not calls or len(calls) < 2:
        return None
    last = calls[-1]
    same_in_a_row = len(calls) >= max_repeats and all(c == last for c in calls[-max_repeats:])
    cycle = len(calls) >= 4 and calls[-1] == calls[-3] and calls[-2] == calls[-4] != last
    if not (same_in_a_row or cycle):
        return None
    previous = [s for s in steps if s.tool_calls and s.results and _signature(s) == last]
    return previous[-1].results if previous else None


def _signature(step: Step) -> tuple[tuple[str, str], ...]:
    return tuple((c.name, json.dumps(c.args, sort_keys=True)) for c in step.tool_calls)


def _repeat_warning(earlier: ToolResult) -> ToolResult:
    text = prompts.render("repeated", call=earlier.call.name, observation=earlier.observation)
    return ToolResult(earlier.call, text, ok=False, error="repeated", args=earlier.args)


def observation_message(results: list[ToolResult], task: str) -> str:
    """The user message carrying the observations of one step (numbered when several), with a
    reminder of the task: small models lose track of a task that is far up the context."""
    if len(results) == 1:
        text = results[0].observation
    else:
        text = "\n".join(
            f"[{i}] {r.call.name} {json.dumps(r.call.args, ensure_ascii=False)}: {r.observation}"
            for i, r in enumerate(results, 1)
        )
    return prompts.render("observation", observation=text, task=task)
