"""One run as the loop core and its policies see it (:class:`Run`), and the contract of a
policy (:class:`Policy`): its hook points and its state for one run.

A :class:`Run` holds the :class:`Setup` (tools, prompt, policies, budgets), the
:class:`~react_agent.RunResult` being built, what the run knows so far
(:class:`~react_agent.engine.Facts`, kept up to date as messages and results come in, so that
no step rescans the history), each policy's state for the run and the events the policies
queued. Its :meth:`Run.ask` is the one way to make a model call (the loop's own steps and a
policy's extra calls alike): a generator that yields the request and returns the reply.
:class:`StopRun` ends a run with a status from anywhere in the loop or a policy.

A policy is a small object with options (a frozen dataclass, usually) whose methods the loop
calls at fixed points of a run. Every hook has a default that does nothing, so a policy
overrides only the ones it needs. Hooks get the :class:`Run` and act through it:
``run.note(...)`` records what the policy did on the step and shows it (a
:class:`~react_agent.events.PolicyNote`), ``run.ask(...)`` makes an extra model call, raising
:class:`StopRun` ends the run, ``run.state(self)`` is what the policy keeps for this run (made
by its ``for_run`` when the run starts: the policy object itself stays the same for every run).

In the order the loop calls them::

    for_run          when a run starts (or resumes): the policy's state for this run
    tools            at the start of a run: the tools the system prompt shows
    before_query     before each of the loop's model calls: change the Query
    after_query      the model replied (before the reply is read)
    after_reply      the reply was read: change it, or handle it (return None: nothing runs)
    on_action        the reply is usable: ask the model a focused question first  (a generator)
    before_call      before each tool call: answer it without running it
    after_observation  the step's observations, as sent: add to them
    on_final_answer  the model gave its final answer: check it, ask again   (a generator)
    on_loop          the model repeats itself after being warned           (a generator)
    on_out_of_steps  max_steps used up without a final answer               (a generator)
    on_resume        a saved run is about to be continued

The idea of optional behaviour as small hook classes the run calls at fixed points, with a
state made per run by ``for_run``, is pydantic-ai's capabilities; the before/after names
follow simonw/llm's tool hooks.

Example: a policy that refuses a tool's fourth call in a run::

    @dataclass(frozen=True)
    class AtMostThree(Policy):
        name: ClassVar[str] = "at_most_three"

        def for_run(self, run):
            return Counter()  # calls per tool, in this run

        def before_call(self, run, step, call):
            calls = run.state(self)
            if calls[call.name] >= 3:
                return ToolResult(call, f"Error: {call.name} may be called three times.",
                                  ok=False, error="refused")
            calls[call.name] += 1
            return None
"""

from __future__ import annotations

import dataclasses
import functools
import operator
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from ..errors import ConfigError, OutputParseError
from ..events import Event, ModelCallFinished, ModelCallStarted, PolicyNote
from ..parsing import parse_error, parse_reply, strip_reasoning
from ..tools import Toolbox, argument_for_bare_value
from ..types import (
    STATUSES,
    Message,
    ModelReply,
    Reply,
    RunResult,
    Status,
    Step,
    ToolCall,
    ToolResult,
)
from ._facts import Facts
from ._output import Output
from ._protocol import (
    Invoke,
    Query,
    is_observation_message,
    observation_message,
    reply_schema,
    signature,
)

Request = Event | Query | Invoke
"""What the loop yields: an event for the caller, or a request for its edges to answer."""

CUT_BY_TOKEN_LIMIT = "Your reply was cut off by the token limit (finish_reason \"length\") " \
    "before it was complete: write a shorter reply."
"""Put before the problem of an unusable reply that the backend cut at its token limit."""


class StopRun(Exception):
    """The run ends here with ``status`` and ``error`` (raised where that is decided, by the
    loop or a policy, and caught once by the loop). A policy that ends a run for a budget of
    its own uses ``"max_steps"`` and says which budget in ``error``.

    Raises:
        ConfigError: ``status`` is not one of :data:`~react_agent.types.STATUSES` (a saved run
            with it could not be loaded again).
    """

    def __init__(self, status: Status, error: str | None = None) -> None:
        if status not in STATUSES:
            raise ConfigError(f"StopRun status {status!r} is not a run status; use one of "
                              f"{', '.join(STATUSES)} (and say why in error=).")
        super().__init__(status, error)
        self.status, self.error = status, error


@dataclass(frozen=True)
class Setup:
    """What a run is given.

    Attributes:
        toolbox: every tool (for reading replies and hints).
        shown: the tools the system prompt shows (fewer when a policy routes them).
        system: the system prompt.
        policies: the policies, in the order their hooks are called.
        max_parse_retries: unusable replies in a row that are sent back for another try.
        max_repeats: the same calls this many steps in a row (or an A-B-A-B cycle) are a loop.
        max_calls_per_step: the calls of one reply that are acted on (the rest are dropped).
        max_tool_calls: the calls a run may make in all; later ones are refused.
        output: the run's output type (:func:`~react_agent.engine.output_spec`): the final
            answer is read into a typed value; ``None``: the answer is text.
        output_retries: final answers that do not fit ``output`` sent back for another try;
            one more ends the run with status ``output_invalid``.
        framed: observations are framed as data (:func:`observation_message`).
        can_approve: the run has an approver that a policy can send a call to
            (:meth:`Run.approve`); ``False`` (``serve``, or no approver given): a policy that
            wants a call approved refuses it instead.
    """

    toolbox: Toolbox
    shown: Toolbox
    system: str
    policies: tuple[Policy, ...] = ()
    max_parse_retries: int = 3
    max_repeats: int = 3
    max_calls_per_step: int = 16
    max_tool_calls: int = 100
    output: Output | None = None
    output_retries: int = 2
    framed: bool = True
    can_approve: bool = False


_CONTENT = operator.itemgetter("content")


class Run:
    """One run: its :class:`Setup`, the :class:`RunResult` being built, its
    :class:`~react_agent.engine.Facts` and each policy's state.

    The loop creates it; policies read it and act through it (:meth:`ask`, :meth:`note`,
    :meth:`state`). Each policy's ``for_run`` is called last, when the facts hold the history
    the run starts from.
    """

    def __init__(self, setup: Setup, result: RunResult) -> None:
        self.setup, self.result = setup, result
        self.facts = Facts()
        self.failures = 0
        """Unusable replies in a row so far."""
        self.output_failures = 0
        """Final answers so far that did not fit the output type."""
        self._queued: list[Event] = []
        self.to_approve: list[ToolCall] = []
        """The calls of the current step that go to the approver before they run."""
        echoed = {observation_message(s.results, result.task, framed)  # either way: a history
                  for s in result.steps if s.results for framed in (True, False)}  # may be old
        for message in result.messages:
            if message["role"] == "assistant":
                continue
            if not is_observation_message(message):
                self.facts.told(message)
            elif not message["content"].startswith(tuple(echoed)):
                self.facts.earlier.append(message["content"])
        for step in result.steps:
            self.facts.calling(step)
            self.facts.stepped(step)
        self._states: dict[str, Any] = {}
        for policy in setup.policies:
            self._states[policy.name] = policy.for_run(self)

    def state(self, policy: Policy) -> Any:
        """What ``policy`` keeps for this run: the value its ``for_run`` returned.

        Raises:
            ConfigError: ``policy`` is not one of this run's policies.
        """
        try:
            return self._states[policy.name]
        except KeyError:
            raise ConfigError(f"{policy!r} is not a policy of this run: ask run.state() only "
                              "for a policy in the run's setup.") from None

    # -- what the run is ---------------------------------------------------------------------
    @property
    def task(self) -> str:
        return self.result.task

    @property
    def steps(self) -> list[Step]:
        return self.result.steps

    @property
    def messages(self) -> list[Message]:
        return self.result.messages

    @property
    def called_tools(self) -> bool:
        """Whether any step of the run has called a tool (or asked for calls set aside)."""
        return bool(self.facts.results)

    @functools.cached_property
    def reply_schema(self) -> dict[str, Any]:
        """The JSON Schema of a valid reply with the tools shown (built on first use)."""
        output = self.setup.output
        return reply_schema(self.setup.shown, output.schema if output else None)

    # -- asking the model --------------------------------------------------------------------
    def ask(self, messages: list[Message], step: Step, **options: Any
            ) -> Generator[Request, Any, ModelReply]:
        """One model call on ``messages``, recorded on ``step``: :meth:`request` of a
        :class:`Query` with ``options`` (its fields)."""
        return (yield from self.request(Query(messages, step, **options)))

    def request(self, query: Query) -> Generator[Request, Any, ModelReply]:
        """Ask the model: each policy's ``before_query`` may change ``query``; then the call is
        announced (:class:`ModelCallStarted`) and requested. Returns the reply; a backend
        failure is thrown in as a ``ModelError``."""
        for policy in self.setup.policies:
            policy.before_query(self, query)
        messages = query.messages
        yield ModelCallStarted(query.step.index, len(messages),
                               sum(map(len, map(_CONTENT, messages))))
        reply: ModelReply = yield query
        return reply

    def answered(self, step: Step, reply: ModelReply, keep: bool = True) -> ModelCallFinished:
        """Record that the model answered ``step``: the step joins the run and (``keep``) the
        reply the history; each policy's ``after_query`` sees it. Returns the event to yield."""
        self.steps.append(step)
        if keep:
            self.messages.append({"role": "assistant", "content": strip_reasoning(reply.text)})
        for policy in self.setup.policies:
            policy.after_query(self, step, reply)
        return ModelCallFinished(step)

    def read(self, step: Step, reply: ModelReply) -> Reply:
        """The parsed reply of ``step``, recorded on it, with at most ``max_calls_per_step``
        calls (a cut is noted); the history keeps only the part of the reply the step acts on
        (``reply.source``): prose around it and steps the model invented after it would
        contradict the real observation (the raw reply stays in ``step.raw_output``).

        Raises:
            OutputParseError: the reply holds no usable action (the model's mistake).
            StopRun: the parser failed (a bug of ours): status ``internal_error``.
        """
        name_value = functools.partial(argument_for_bare_value, self.setup.toolbox)
        try:
            output = self.setup.output
            parsed = parse_reply(reply.text, name_value=name_value,
                                 null_answer=output is not None and output.nullable)
        except OutputParseError as exc:
            if reply.finish_reason == "length":  # the token limit cut the reply: say so
                exc = parse_error(exc.kind, f"{CUT_BY_TOKEN_LIMIT} {exc.problem}", exc.position,
                                  exc.tool)
            step.error = exc.problem
            raise exc from None
        except Exception as exc:
            step.error = f"react-agent failed to read this reply ({type(exc).__name__}: {exc})"
            raise StopRun("internal_error", (
                f"{step.error}. This is a bug in react-agent, not in the model: please report "
                f"it with the reply (steps[{len(self.steps) - 1}].raw_output).")) from exc
        step.reply = parsed = self._within_a_step(step, parsed)
        if parsed.source and self.messages and self.messages[-1]["role"] == "assistant":
            self.messages[-1] = {"role": "assistant", "content": parsed.source}
        return parsed

    def _within_a_step(self, step: Step, reply: Reply) -> Reply:
        """``reply`` with at most ``max_calls_per_step`` calls (the first ones), before anything
        looks at them; the cut is noted on ``step`` (``records["budget"]``)."""
        limit, asked = self.setup.max_calls_per_step, len(reply.tool_calls)
        if asked <= limit:
            return reply
        step.records["budget"] = {"calls_asked": asked, "calls_kept": limit}
        self.note(step, "budget", "Cut", f"the reply made {asked} tool calls; only the first "
                  f"{limit} were acted on")
        return dataclasses.replace(reply, tool_calls=reply.tool_calls[:limit])

    # -- telling ----------------------------------------------------------------------------

    def send(self, content: str, observation: bool = False, feedback: bool = False) -> None:
        """Append a user message to the history (``observation``: it carries observations;
        ``feedback``: the run's own word on a reply, kept in ``facts.feedback`` too)."""
        message = {"role": "user", "content": content}
        self.messages.append(message)
        if not observation:
            self.facts.told(message)
        if feedback:
            self.facts.feedback.append(content)

    def approve(self, call: ToolCall) -> None:
        """Send ``call`` (a call of the current step, as ``before_call`` got it) to the run's
        approver before it runs, whatever its tool says (only when ``setup.can_approve``);
        declined, its result says so, as for a tool that requires approval."""
        self.to_approve.append(call)

    def note(self, step: Step, policy: str, label: str, text: str) -> None:
        """Record what ``policy`` did at ``step`` in words, and queue its
        :class:`PolicyNote` event (the loop yields it at its next event).

        ``label`` is a short fixed name of what was done (``"Held"``), never a value of the run:
        telemetry without content capture records it and leaves ``text`` out, which may quote
        the run (a call's arguments)."""
        step.notes.append([policy, label, text])
        self.emit(PolicyNote(step, policy, label, text))

    def emit(self, event: Event) -> None:
        """Queue ``event``: the loop yields queued events in order at its next event."""
        self._queued.append(event)

    def flush(self) -> Iterator[Event]:
        """The queued events, in order (and the queue emptied)."""
        while self._queued:
            yield self._queued.pop(0)

    def succeeded(self, call: ToolCall) -> ToolResult | None:
        """The latest successful result of exactly ``call`` so far, or ``None``."""
        return self.facts.succeeded.get(signature(call))


class Policy:
    """A small-model heuristic that plugs into the loop (see the module docs for the hooks).

    Attributes:
        name: the policy's name: its key in ``Step.records`` and in the run's states, the
            ``policy`` of its notes, the ``origin`` of the results it gives, and what
            ``default_policies(off=...)`` and the CLI call it. Two policies of one run never
            share a name.
        runs_in_serve: whether ``react-agent serve`` uses this policy by default in its turns
            (one model turn up to the first usable action, whose final answer the client may
            stream): ``False`` for a policy that needs a step budget or replaces a final
            answer.
        sets_calls_aside: whether this policy may set a reply's calls aside (comparing them
            with the calls the run made) and ask for the final answer instead: ``serve``
            cleans the calls before such a policy sees them, and leaves it out of a turn whose
            request requires a tool call.
        gives_calls: whether this policy may replace a final answer with calls: ``serve``
            leaves it out of a turn whose request lets no tool be called.
    """

    name: ClassVar[str] = "policy"
    runs_in_serve: ClassVar[bool] = True
    sets_calls_aside: ClassVar[bool] = False
    gives_calls: ClassVar[bool] = False

    def for_run(self, run: Run) -> Any:
        """The state this policy keeps for ``run`` (``run.state(self)`` hands it back), made
        when the run starts or resumes (``run.steps`` and ``run.facts`` then hold the history
        it starts from). The default keeps none (``None``). Keep it incremental: a hook that
        rescans the whole history at each step makes a long run slow."""
        return None

    def check_model(self, model: Any) -> None:
        """Called when an :class:`~react_agent.Agent` is made; raise
        :class:`~react_agent.ConfigError` if this policy cannot work with ``model``."""

    def tools(self, task: str, toolbox: Toolbox) -> Toolbox:
        """The tools the system prompt shows for ``task`` (not called when a run resumes)."""
        return toolbox

    def before_query(self, run: Run, query: Query) -> None:
        """Change ``query`` (its schema, answer floor, ...) before one of the loop's model
        calls (``query.step`` is the step being asked for)."""

    def after_query(self, run: Run, step: Step, reply: ModelReply) -> None:
        """The model replied to ``step`` (recorded on it); the reply is read next."""

    def after_reply(self, run: Run, step: Step, reply: Reply) -> Reply | None:
        """The reply of ``step`` was read into ``reply``. Return the reply to act on: this one,
        or a changed one (it becomes ``step.reply``; to change what the history keeps of it,
        set ``run.messages[-1]`` too). Return ``None`` when this policy handled it: then no
        later policy sees it and nothing runs (set ``step.tool_calls``, ``step.results`` and
        ``step.in_history`` to what happened). Raise :class:`~react_agent.OutputParseError`
        (``parse_error(...)``) when the reply cannot be used: the model is told why, as for a
        reply that does not parse."""
        return reply

    def on_action(self, run: Run, step: Step, reply: Reply) -> Generator[Request, Any, Reply]:
        """The reply of ``step`` is usable: it calls tools or gives the final answer (after
        every ``after_reply``). A policy may ask the model a focused question first
        (``yield from run.ask(...)``, recorded on a step of its own) and return the reply to
        act on: this one, or another that the model gave at the last step the policy asked
        (``run.steps[-1]``, a step in the history): a final answer instead of the calls, or
        calls instead of the final answer. Keep the history to what the model should see of
        it (``run.messages``; ``step.in_history = False`` for the reply it replaced)."""
        return reply
        yield  # a generator

    def before_call(self, run: Run, step: Step, call: ToolCall) -> ToolResult | None:
        """A result that answers ``call`` without running it, or ``None`` to let it run."""
        return None

    def after_observation(self, run: Run, step: Step, text: str) -> str:
        """The user message that carries the step's observations; return it, changed or not."""
        return text

    def on_final_answer(self, run: Run, step: Step) -> Generator[Request, Any, Step]:
        """``step`` gave the final answer (``run.result.final_answer``). A policy may ask the
        model again (``yield from run.ask(...)``) and replace the answer; it returns the step
        the final answer now comes from."""
        return step
        yield  # a generator

    def on_loop(self, run: Run, step: Step) -> Generator[Request, Any, Step | None]:
        """The model repeats calls at ``step`` after being warned; the run ends with
        ``loop_detected`` unless a policy sets ``run.result.final_answer`` and returns the
        step it came from."""
        return None
        yield  # a generator

    def on_out_of_steps(self, run: Run) -> Generator[Request, Any, None]:
        """``max_steps`` were used up without a final answer (the status stays
        ``max_steps``)."""
        return None
        yield  # a generator

    def on_resume(self, task: str, messages: list[Message], steps: list[Step]) -> None:
        """A saved run of ``task`` is about to be continued from ``messages`` and ``steps``:
        take out what this policy added at its end that a continued run must not see."""

    def __repr__(self) -> str:
        fields = getattr(self, "__dataclass_fields__", {})
        options = ", ".join(f"{k}={getattr(self, k)!r}" for k in fields)
        return f"{type(self).__name__}({options})"
