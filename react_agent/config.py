"""The options of a run: one typed config object, each field documented where it is declared.

:class:`AgentConfig` holds the budgets of a run and its policies; it checks its values when it
is made, so a bad budget raises :class:`~react_agent.errors.ConfigError` before any run starts.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

from .errors import ConfigError
from .policies import Policy
from .tools import DEFAULT_MAX_OBSERVATION_CHARS


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
    max_calls_per_step: int = 16
    """Tool calls one reply may make: the calls after the first ``max_calls_per_step`` are not
    run, and the observation says so (a reply can list any number of calls)."""
    max_tool_calls: int = 100
    """Tool calls a run may make in all (counting those a policy answered without running
    them); later calls are not run, and the model is told to give its final answer."""
    max_repeats: int = 3
    """The same calls this many steps in a row (or an A-B-A-B cycle) are not run again: the model
    is told it is repeating itself; if it goes on, the run ends with ``loop_detected`` (unless a
    policy answers instead)."""
    instructions: str = ""
    """Extra instructions appended to the system prompt."""
    system_prompt: str | os.PathLike[str] | None = None
    """A system prompt template of your own instead of ``prompts/agent/system.md``: a path to a
    file (``pathlib.Path``) or the template text (a ``str``), with ``$tools`` where the tool
    descriptions go and ``$instructions`` where ``instructions`` go (``$$`` for a dollar sign);
    see :func:`react_agent.prompts.render_system_prompt`. ``None``: the built-in one."""
    stream: bool = False
    """Ask the backend to stream its replies (when it has ``stream``/``astream``): the run then
    yields ``ModelToken`` and ``AnswerToken`` events as the text arrives."""
    output_type: Any = None
    """The type of the final answer's value (``RunResult.output``): a pydantic model, a
    dataclass, a ``TypedDict``, a plain type (``int``, ``list[str]``, ``bool``,
    ``Literal[...]``) or a JSON Schema ``dict``. The system prompt shows its schema; the final
    answer is read, cleaned and validated into it, and one that does not fit is sent back with
    per-field errors. ``None``: the final answer is text. See ``docs/typed-results.md``."""
    output_retries: int = 2
    """Final answers that do not fit ``output_type`` sent back to the model for another try;
    one more ends the run with status ``output_invalid`` (the answer's text kept). These do
    not consume ``max_steps``."""
    frame_observations: bool = True
    """Each tool result goes to the model between ``<data ID>`` and ``</data ID>`` lines, with
    anything inside that could pass for the frame, a chat role or a protocol line made
    harmless, and the system prompt says text inside a frame is data, never instructions
    (see ``docs/security.md``). ``False``: results go as they are."""
    policies: Sequence[Policy] | None = None
    """The small-model policies of a run, in the order their hooks are called
    (:mod:`react_agent.policies`); ``None``: :func:`~react_agent.policies.default_policies`
    for the agent's model."""

    def __post_init__(self) -> None:
        for field in fields(self):
            value = getattr(self, field.name)
            if field.type == "int" and (isinstance(value, bool) or not isinstance(value, int)):
                raise ConfigError(f"{field.name} must be an integer, got {type(value).__name__} "
                                  f"{value!r:.50}.")
        if self.max_steps < 1:
            raise ConfigError("max_steps must be at least 1.")
        if self.max_parse_retries < 0:
            raise ConfigError("max_parse_retries must be 0 or more.")
        if self.max_observation_chars < 100:
            raise ConfigError("max_observation_chars must be at least 100.")
        if self.max_calls_per_step < 1 or self.max_tool_calls < 1:
            raise ConfigError("max_calls_per_step and max_tool_calls must be at least 1.")
        if self.output_retries < 0:
            raise ConfigError("output_retries must be 0 or more.")
        if self.max_repeats < 2:
            raise ConfigError("max_repeats must be at least 2.")
        if self.policies is not None:
            if not all(isinstance(p, Policy) for p in self.policies):
                raise ConfigError("policies must be Policy objects (see react_agent.policies).")
            names = [p.name for p in self.policies]
            if len(set(names)) < len(names):
                raise ConfigError(f"Two policies share a name: {sorted(names)}; give a policy "
                                  "of your own a name of its own (name: ClassVar[str]).")
