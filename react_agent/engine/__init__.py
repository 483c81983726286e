"""The engine: the protocol with the model, the run state, the loop core and the policy
contract, below the policies, the agent and ``serve`` (which all run it) and knowing none of
them.

- :class:`Query`, :class:`Invoke`, :func:`reply_schema`, :func:`observation_message`,
  :func:`is_observation_message`, :func:`observation_framing`: the protocol, as data
  (``_protocol``); :func:`frame` and :func:`defang`: tool results framed as data
  (``_framing``).
- :class:`Output`, :func:`output_spec`: a run's output type, and a final answer read into a
  typed value (``_output``).
- :class:`Facts`: what a run knows so far, kept incrementally (``_facts``); :class:`Each` and
  :class:`Gathered` derive values from its growing lists, each item once.
- :class:`Run`, :class:`Setup`, :class:`StopRun` and :class:`Policy`: one run as the loop and its
  policies see it, and the hook points and per-run state of a policy (``_run``).
- :func:`react`: the I/O-free loop core, and :func:`resumable` (``_loop``).
"""

from ._facts import Each, Facts, Gathered
from ._framing import defang, frame
from ._loop import LOOP, react, resumable
from ._output import MAX_OUTPUT_CHARS, Output, output_spec
from ._protocol import (
    FINAL_ANSWER_SCHEMA,
    Invoke,
    Query,
    is_observation_message,
    observation_framing,
    observation_message,
    reply_schema,
    signature,
)
from ._run import CUT_BY_TOKEN_LIMIT, Policy, Request, Run, Setup, StopRun

__all__ = [
    "CUT_BY_TOKEN_LIMIT", "FINAL_ANSWER_SCHEMA", "LOOP", "MAX_OUTPUT_CHARS", "Each", "Facts",
    "Gathered", "Invoke", "Output", "Policy", "Query", "Request", "Run", "Setup", "StopRun",
    "defang", "frame", "is_observation_message", "observation_framing",
    "observation_message", "output_spec",
    "react", "reply_schema", "resumable", "signature",
]
