"""The options of a run: one typed config object, each field documented where it is declared.

:class:`AgentConfig` checks its values when it is made, so a bad budget or mode raises
:class:`~react_agent.errors.ConfigError` before any run starts.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ._protocol import CONSTRAINED_MODES
from .errors import ConfigError
from .policies._review import REVIEW_MODES
from .policies._routing import ROUTING_MODES, select_tools
from .tools._invoker import DEFAULT_MAX_OBSERVATION_CHARS
from .tools._toolbox import Toolbox


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
    system_prompt: str | os.PathLike[str] | None = None
    """A system prompt template of your own instead of ``prompts/system.md``: a path to a file
    (``pathlib.Path``) or the template text (a ``str``), with ``$tools`` where the tool
    descriptions go and ``$instructions`` where ``instructions`` go (``$$`` for a dollar sign);
    see :func:`react_agent.prompts.render_system_prompt`. ``None``: the built-in one."""
    constrained: str = "off"
    """Schema-constrained replies (:mod:`react_agent._protocol`): ``"auto"`` sends the reply
    schema to backends that accept one (falling back to plain prompting where the server rejects
    it), ``"on"`` requires it, ``"off"`` (the default) never sends it. Measured on the seed
    scenarios: it removes most format errors of very small models (SmolLM2-135M), but the
    embedded 1.5B model makes none either way, succeeds as often and runs ~25% slower per step
    under the grammar, so it is opt-in."""
    routing: str = "off"
    """Tool routing for big toolboxes (routing): ``"auto"`` shows only the
    ``routing_top_k`` tools that best match the task when there are more than
    ``routing_threshold``; ``"lexical"`` always does; ``"off"`` (the default) shows every tool.
    Measured on a 20-tool toolbox: half the prompt tokens, the same tool-selection accuracy for
    the embedded model, and slower locally (a prompt that changes per task defeats llama.cpp's
    prefix cache), so it is opt-in."""
    routing_threshold: int = 7
    """With ``routing="auto"``, toolboxes of more tools than this are routed."""
    routing_top_k: int = 5
    """The most tools routing shows."""
    stream: bool = False
    """Ask the backend to stream its replies (when it has ``stream``/``astream``): the run then
    yields ``ModelToken`` and ``AnswerToken`` events as the text arrives."""
    review_answer: str = "auto"
    """A focused second call for the final answer (the system prompt, then the tools' results
    and the task: ``prompts/review.md``; not the history, not the draft), whose usable answer
    replaces the draft. ``"auto"`` (the default): only in a run that called tools, when a cheap
    check finds the draft written in another script than the task or stating none of the
    values the tools returned (:func:`react_agent.policies._review.gaps`); ``"always"``: after every
    draft in a run that called tools; ``"off"``: never. Measured on the embedded 1.5B model in
    the README, "Finishing multi-step tasks"."""
    ground_contacts: bool = True
    """Do not run a call whose arguments hold an email address or phone number found in neither
    the task, the system prompt nor any tool result so far; the model is told to look it up
    (:func:`react_agent.policies._grounding.ungrounded`)."""
    answer_floor: float | None = 0.035
    """Until the run has called a tool, a reply gives the final answer when the model gives
    that branch at least this probability (0-1] where the reply chooses its action, even if a
    tool call is more likely (:mod:`react_agent.models._answer_floor`; the idea is Toolformer's
    threshold on the probability of a call). For small models that call a tool where none fits
    or none is needed. Only backends with ``accepts_answer_floor`` (the embedded model) use
    it; ``None`` turns it off. 0.035 lies between the probabilities measured on the development
    half of ``examples/tasks``: at most 0.016 in tasks that need a tool, at least 0.08 in those
    that need none (README, "Finishing multi-step tasks")."""
    answer_on_repeat: bool = True
    """A reply that only asks again for calls whose results the run already has (a small model
    copies its previous reply) is set aside, not run; the model is asked again in the same
    context for the final answer, under the final-answer schema where the backend constrains
    decoding. Once per run; without it (``False``), or when the next reply is no final answer,
    repeats are answered with a warning, then ``loop_detected`` (``max_repeats``). Measured in
    the README, "Finishing multi-step tasks"."""
    hold_dependent_calls: bool = True
    """In a reply that calls several different tools at once, a call with an argument value
    that neither the user's messages nor any result so far states (``unstated``: an amount
    made up before the lookup that gives it, an address written as a
    description, a message's text) is not run yet: the other calls run, the reply is kept in
    the history without it (``Step.held_calls`` keeps it) and the observation says it was not
    run. If every call would wait, all run. Measured in the README, "Finishing multi-step
    tasks"."""
    best_effort_answer: bool = True
    """When ``max_steps`` is used up, ask the model once more for a final answer only (from
    ``prompts/final_answer.md``); the status stays ``max_steps`` and ``best_effort`` is set."""

    def __post_init__(self) -> None:
        if self.max_steps < 1:
            raise ConfigError("max_steps must be at least 1.")
        if self.max_parse_retries < 0:
            raise ConfigError("max_parse_retries must be 0 or more.")
        if self.max_observation_chars < 100:
            raise ConfigError("max_observation_chars must be at least 100.")
        if self.constrained not in CONSTRAINED_MODES:
            raise ConfigError(f"constrained must be one of {', '.join(CONSTRAINED_MODES)}.")
        if self.review_answer not in REVIEW_MODES:
            raise ConfigError(f"review_answer must be one of {', '.join(REVIEW_MODES)}.")
        if self.routing not in ROUTING_MODES:
            raise ConfigError(f"routing must be one of {', '.join(ROUTING_MODES)}.")
        if self.routing_top_k < 1:
            raise ConfigError("routing_top_k must be at least 1.")
        if self.answer_floor is not None and not 0 < self.answer_floor <= 1:
            raise ConfigError("answer_floor must be a probability in (0, 1], or None.")


def routed_tools(toolbox: Toolbox, task: str, config: AgentConfig) -> Toolbox:
    """The tools to show for ``task`` under ``config``'s routing options (see
    :func:`react_agent.policies._routing.select_tools`)."""
    return select_tools(
        toolbox, task, mode=config.routing, threshold=config.routing_threshold,
        top_k=config.routing_top_k,
    )
