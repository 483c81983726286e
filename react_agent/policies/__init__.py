"""Small-model policies: heuristics that plug into the loop core at named hook points.

The loop core knows the protocol (ask, read, act, observe), its budgets and its statuses;
everything a small model needs beyond that is a policy (:class:`Policy`), with its own options,
its records on the step (``Step.records[policy.name]``) and its notes (``Step.notes``,
:class:`~react_agent.events.PolicyNote` events). ``AgentConfig.policies`` (or
``Agent(policies=...)``) chooses them; :func:`default_policies` gives today's set.

In the order their hooks are called:

============================  ===============================================================
:class:`Routing`              shows only the tools that match the task (not by default)
:class:`Constrained`          holds replies to the reply schema where the backend can
:class:`AnswerFloor`          takes the final answer the embedded model finds likely enough
:class:`DropUnknownArgs`      runs a call without arguments its tool does not take (not by
                              default)
:class:`RepeatSetAside`       sets aside a reply that repeats calls whose results the run has
:class:`CopiedAction`         sends back a reply whose action a tool result wrote
:class:`HoldDependentCalls`   holds a call whose values wait for another call's result
:class:`Relevance`            asks whether the tools a first reply calls fit the task (by
                              default where the backend gives likelihoods)
:class:`StatedValues`         asks whether the request gives each value of a first call
                              (not by default)
:class:`MissedCall`           asks whether a tool fits when a first reply answers without one
                              (by default where the backend gives likelihoods)
:class:`GroundContacts`       refuses an email address or phone number from nowhere
:class:`GroundValues`         refuses a required free-text value from nowhere (by default
                              for small models only a description's example copied)
:class:`Provenance`           does not run silently an acting call with values only a tool
                              result named (not by default)
:class:`AnnouncedAction`      sends back a final answer that announces an action (not by
                              default)
:class:`Review`               asks again, in a focused call, for a draft answer with a fault
:class:`BestEffortAnswer`     asks for a final answer when the steps are used up
============================  ===============================================================
"""

from __future__ import annotations

from collections.abc import Iterable

from ..engine import Policy
from ..errors import ConfigError
from ._announced import AnnouncedAction
from ._answer_floor import AnswerFloor
from ._best_effort import BestEffortAnswer
from ._constrained import CONSTRAINED_MODES, Constrained
from ._grounding import GroundContacts
from ._held_calls import HoldDependentCalls
from ._made_up import GroundValues
from ._missed_call import MissedCall
from ._provenance import KINDS, CopiedAction, Provenance
from ._relevance import Relevance
from ._repeat import RepeatSetAside
from ._review import REVIEW_MODES, Review
from ._routing import ROUTING_MODES, Routing
from ._stated_values import StatedValues
from ._unknown_args import DropUnknownArgs

BUILT_IN: dict[str, type[Policy]] = {policy.name: policy for policy in (
    Routing, Constrained, AnswerFloor, DropUnknownArgs, CopiedAction, RepeatSetAside,
    HoldDependentCalls, Relevance, StatedValues, MissedCall, GroundContacts, GroundValues,
    Provenance, AnnouncedAction, Review, BestEffortAnswer,
)}
"""The built-in policies by name, in the order their hooks are called."""

ORDER = tuple(BUILT_IN)
"""The built-in policies' names, in the order their hooks are called."""


def default_policies(
    model: object | None = None, *, use: Iterable[Policy] = (), off: Iterable[str] = (),
) -> list[Policy]:
    """The policies a run has by default, in :data:`ORDER`, with changes.

    Which policies a backend gets by default (measured in the docs' measurements page):
    every one for a backend that declares ``small_model = True`` (the embedded model, a local
    GGUF file, the scripted model that replays them) and when no model is given; the same
    without :class:`HoldDependentCalls` for any other (a server whose model is unknown): it
    holds back calls of a right reply whose values the model inferred, and its gain was
    measured on the embedded model only. Add it with ``use=[HoldDependentCalls()]`` for a
    small model behind a server; the same for ``GroundValues(examples_only=True)`` (a
    schema's example copied as a value; the whole check, ``GroundValues()``, is opt-in).
    :class:`Relevance` and :class:`MissedCall` are added for a
    small model that also declares ``accepts_choices = True`` (the embedded model, a local GGUF
    file): their thresholds were tuned on the yes-or-no probabilities only such a backend
    gives (a backend that answers in words would be asked a question whose answer is read as
    all or nothing), and each costs a model call where it asks.

    Args:
        model: the backend the policies are for.
        use: policies that replace the default of the same name (``Review(mode="always")``),
            or are added at their place in :data:`ORDER` (``Routing()``); a policy of your own
            (a name not in :data:`ORDER`) is added at the end.
        off: names of policies to leave out (``"review"``, ``"held_calls"``, ...).

    Raises:
        ConfigError: a name in ``off`` or two policies in ``use`` that no policy has / share.
    """
    chosen: dict[str, Policy] = {p.name: p for p in (
        Constrained(), AnswerFloor(), CopiedAction(), RepeatSetAside(), HoldDependentCalls(),
        GroundContacts(), GroundValues(examples_only=True), Review(), BestEffortAnswer(),
    )}
    small = model is None or getattr(model, "small_model", False)
    if not small:
        del chosen[HoldDependentCalls.name], chosen[GroundValues.name]
    if small and getattr(model, "accepts_choices", False):
        chosen.update((p.name, p) for p in (Relevance(), MissedCall()))
    extra = list(use)
    names = [p.name for p in extra]
    if len(set(names)) < len(names):
        raise ConfigError(f"Two policies share a name in use=: {sorted(names)}.")
    unknown = set(off) - set(ORDER) - set(names)
    if unknown:
        raise ConfigError(f"No policy is named {', '.join(sorted(unknown))}; the built-in "
                          f"ones: {', '.join(ORDER)}.")
    chosen.update((p.name, p) for p in extra)
    for name in off:
        chosen.pop(name, None)
    rank = {name: n for n, name in enumerate(ORDER)}
    return sorted(chosen.values(), key=lambda p: rank.get(p.name, len(ORDER)))


__all__ = [
    "BUILT_IN",
    "CONSTRAINED_MODES",
    "KINDS",
    "ORDER",
    "REVIEW_MODES",
    "ROUTING_MODES",
    "AnnouncedAction",
    "AnswerFloor",
    "BestEffortAnswer",
    "Constrained",
    "CopiedAction",
    "DropUnknownArgs",
    "GroundContacts",
    "GroundValues",
    "HoldDependentCalls",
    "MissedCall",
    "Policy",
    "Provenance",
    "Relevance",
    "RepeatSetAside",
    "Review",
    "Routing",
    "StatedValues",
    "default_policies",
]
