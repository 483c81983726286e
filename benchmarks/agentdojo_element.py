"""An AgentDojo pipeline element that runs :class:`react_agent.Agent` in-process on the tools
of an AgentDojo suite (the ``library-*`` rows of ``benchmarks/agentdojo.py``).

Importable in AgentDojo's environment (``agentdojo`` 0.1.35 and react-agent installed there):

    from agentdojo.agent_pipeline import AgentPipeline, InitQuery, SystemMessage
    from agentdojo_element import ReactAgentElement

    element = ReactAgentElement(LlamaCppModel(), frame_observations=True, provenance=False)
    pipeline = AgentPipeline([SystemMessage(system_message), InitQuery(), element])
    pipeline.name = element.name

Each AgentDojo :class:`~agentdojo.functions_runtime.Function` of the runtime becomes a
react-agent tool with the function's description and the JSON Schema of its parameters (the
schema AgentDojo's own OpenAI pipeline sends). A call runs through
:meth:`FunctionsRuntime.run_function` on the task's environment, so AgentDojo's checks see its
effects; its result is formatted as AgentDojo's ``ToolsExecutor`` formats it (YAML) and an
error AgentDojo reports fails the call. A tool whose name starts with a verb that acts on the
world (:data:`ACTING_VERBS`: ``send_``, ``update_``, ``delete_``, ``schedule_``, ...) is
declared ``acts=True``; the others declare nothing (react-agent's ``Provenance`` policy then
guesses from the name, as ``serve`` does for every tool). Tool calls run one at a time, as in
AgentDojo's own loop.

The run's calls that reached AgentDojo go into the conversation AgentDojo checks: per step, an
assistant message with those calls (its ``content`` the step's thought) and one tool message
per call; the final answer is the last assistant message (the empty text when the run ended
without one, so that AgentDojo does not run the task again). A run that failed (the model's
backend, react-agent itself: :data:`FAILED`) has its error in the run's log, as AgentDojo logs
an API error.
"""

from __future__ import annotations

import dataclasses
import json
from ast import literal_eval
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from agentdojo.agent_pipeline.base_pipeline_element import BasePipelineElement
from agentdojo.agent_pipeline.tool_execution import is_string_list, tool_result_to_str
from agentdojo.functions_runtime import EmptyEnv, Env, FunctionCall, FunctionsRuntime
from agentdojo.logging import Logger
from agentdojo.types import (
    ChatAssistantMessage,
    ChatMessage,
    ChatToolResultMessage,
    get_text_content_as_str,
    text_content_block_from_string,
)

from react_agent import Agent, AgentConfig, Toolbox
from react_agent.policies import BUILT_IN, Provenance, default_policies
from react_agent.types import RunResult

ACTING_VERBS = frozenset({
    "send", "pay", "transfer", "update", "delete", "remove", "schedule", "reschedule",
    "create", "add", "append", "cancel", "reserve", "book", "invite", "post", "share", "write",
})
"""A tool whose name's first word (before ``_``) is one of these acts on the world."""

MAX_STEPS = 16
"""AgentDojo's own loop asks the model at most 16 times (one request, then up to 15 rounds
of tool calls and a request): the same budget of usable replies for the library."""

FAILED = frozenset({"model_error", "internal_error", "interrupted"})
"""Statuses of a run that failed (the model or react-agent), not of the model's choices: the
run's log gets the error (``max_steps``, ``parse_errors``, ... are the model's doing)."""

NAME = "react-agent-library-local"
"""The pipeline's name. AgentDojo's ``important_instructions`` attack addresses the model by
the name of the first known model id inside it: ``local`` makes it "Local model", as for the
serve rows (``vllm_parsed``)."""


_NO_ENV = EmptyEnv()


def acts_by_name(name: str) -> bool | None:
    """``True`` for a tool named like one that acts (``send_money``, ``update_password``),
    else ``None`` (not declared)."""
    return True if name.split("_", 1)[0].lower() in ACTING_VERBS else None


class ToolFailed(Exception):
    """AgentDojo reported an error for a call (its message, e.g. ``ValueError: ...``)."""


@dataclasses.dataclass
class _Ran:
    """A call that reached AgentDojo's runtime."""

    name: str
    args: dict[str, Any]
    text: str
    error: str | None
    matched: bool = False


class ReactAgentElement(BasePipelineElement):  # type: ignore[misc]
    """Runs :class:`react_agent.Agent` on the query with the runtime's functions as tools.

    Args:
        model: the react-agent chat model (the embedded ``LlamaCppModel``, a scripted one).
        frame_observations: react-agent's framing of tool results as data (``AgentConfig``).
        provenance: add the opt-in ``Provenance`` policy to the default policies.
        max_steps: the run's budget of usable replies.
        use: names of more opt-in policies (``react_agent.policies.BUILT_IN``) to add.
        runs_log: where each run's summary is appended, one JSON line (AgentDojo's own log
            keeps only the messages it checks): ``query``, ``status``, ``steps``, ``calls``
            (the tools called, in order) and ``notes`` (``[policy, label, text]`` of every
            policy note); ``None``: not kept.
    """

    def __init__(self, model: Any, *, frame_observations: bool = True, provenance: bool = False,
                 max_steps: int = MAX_STEPS, use: Sequence[str] = (),
                 runs_log: Path | None = None) -> None:
        self.model = model
        self.frame_observations = frame_observations
        self.provenance = provenance
        self.use = tuple(use)
        self.max_steps = max_steps
        self.runs_log = runs_log
        self.name = NAME
        self.last_result: RunResult | None = None
        """The react-agent run of the latest query (its status, steps, notes)."""

    def config(self, instructions: str) -> AgentConfig:
        use = [Provenance()] if self.provenance else []
        use += [BUILT_IN[name]() for name in self.use]
        return AgentConfig(instructions=instructions, frame_observations=self.frame_observations,
                           policies=default_policies(self.model, use=use),
                           max_steps=self.max_steps, max_parallel_calls=1)

    def query(self, query: str, runtime: FunctionsRuntime, env: Env = _NO_ENV,
              messages: Sequence[ChatMessage] = (), extra_args: dict[str, Any] | None = None,
              ) -> tuple[str, FunctionsRuntime, Env, Sequence[ChatMessage], dict[str, Any]]:
        ran: list[_Ran] = []
        toolbox = toolbox_of(runtime, env, ran)
        system = "\n\n".join(get_text_content_as_str(m["content"] or []) for m in messages
                             if m["role"] == "system")
        agent = Agent(self.model, toolbox, config=self.config(system))
        result = agent.run(query)
        self.last_result = result
        if self.runs_log is not None:
            summary = {"query": query, "status": result.status, "steps": len(result.steps),
                       "calls": [c.name for step in result.steps for c in step.tool_calls],
                       "notes": [note for step in result.steps for note in step.notes]}
            with self.runs_log.open("a", encoding="utf-8") as file:
                file.write(json.dumps(summary, ensure_ascii=False) + "\n")
        if result.status in FAILED:  # in the run's log, as AgentDojo logs a failing API
            Logger.get().log_error(f"react-agent: {result.status}: {result.error}")
        return query, runtime, env, [*messages, *conversation(result, ran)], extra_args or {}


def toolbox_of(runtime: FunctionsRuntime, env: Env, ran: list[_Ran]) -> Toolbox:
    """The runtime's functions as react-agent tools that run on ``env``; each call that
    reaches the runtime is appended to ``ran``."""
    specs, functions = [], {}
    for function in runtime.functions.values():
        specs.append({"type": "function", "function": {
            "name": function.name, "description": function.description,
            "parameters": function.parameters.model_json_schema()}})
        functions[function.name] = _runner(runtime, env, function.name, ran)
    declared = Toolbox.from_openai_specs(specs, functions)
    return Toolbox([dataclasses.replace(tool, acts=acts_by_name(tool.name))
                    for tool in declared.values()])


def _runner(runtime: FunctionsRuntime, env: Env, name: str, ran: list[_Ran],
            ) -> Callable[..., str]:
    def run(**args: Any) -> str:
        # AgentDojo's ToolsExecutor reads a list written as a string ("['a', 'b']") as a list
        given = {k: literal_eval(v) if isinstance(v, str) and is_string_list(v) else v
                 for k, v in args.items()}
        output, error = runtime.run_function(env, name, given)
        text = str(tool_result_to_str(output))
        ran.append(_Ran(name, args, text, error))
        if error:
            raise ToolFailed(error)
        return text

    return run


def conversation(result: RunResult, ran: list[_Ran]) -> list[ChatMessage]:
    """The messages AgentDojo checks: per step, the calls of it that reached the runtime and
    their results; then the final answer."""
    messages: list[ChatMessage] = []
    number = 0
    for step in result.steps:
        calls: list[tuple[FunctionCall, _Ran]] = []
        for done in step.results:
            entry = next((r for r in ran if not r.matched and r.name == done.call.name
                          and r.args == done.args), None)
            if entry is None:  # refused, set aside, invalid: it never reached AgentDojo
                continue
            entry.matched = True
            calls.append((FunctionCall(function=entry.name, args=dict(entry.args),
                                       id=f"call_{number}"), entry))
            number += 1
        if calls:
            messages.append(_assistant(step.thought, [c for c, _ in calls]))
            messages.extend(_tool_message(c, r) for c, r in calls)
    for entry in ran:  # not found in the steps (should not happen): kept, in order
        if not entry.matched:
            call = FunctionCall(function=entry.name, args=dict(entry.args), id=f"call_{number}")
            number += 1
            messages.extend([_assistant(None, [call]), _tool_message(call, entry)])
    messages.append(_assistant(result.final_answer or "", None))
    return messages


def _assistant(text: str | None, calls: list[FunctionCall] | None) -> ChatAssistantMessage:
    content = None if text is None else [text_content_block_from_string(text)]
    return ChatAssistantMessage(role="assistant", content=content, tool_calls=calls)


def _tool_message(call: FunctionCall, entry: _Ran) -> ChatToolResultMessage:
    return ChatToolResultMessage(role="tool", content=[text_content_block_from_string(entry.text)],
                                 tool_call_id=call.id, tool_call=call, error=entry.error)
