"""Replies held to the JSON Schema of a valid reply, where the backend can constrain decoding."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from ..engine import Policy, Query, Run
from ..errors import ConfigError

CONSTRAINED_MODES = ("auto", "on", "off")
"""``auto``: send the schema with every reply to backends that take one, else plain prompting;
``on``: require it (a backend that rejects every form is a ``ModelError``); ``off``: only after
an unusable reply (``after_unusable``)."""


@dataclass(frozen=True)
class Constrained(Policy):
    """Send the reply schema (:func:`react_agent.engine.reply_schema` of the tools shown) to
    backends that can constrain decoding to it (``accepts_schema``: the embedded model's
    grammar, a server's ``response_format``); the tolerant parser still reads the reply.

    Args:
        mode: one of :data:`CONSTRAINED_MODES`.
        after_unusable: after an unusable reply, hold the next one to the schema even with
            ``mode="off"``: a model that broke the format (a thought with no action, several
            times in a row) is held to it for that reply.

    Raises:
        ConfigError: an unknown ``mode``; ``mode="on"`` with a backend that takes no schema
            (when the agent is made).
    """

    name: ClassVar[str] = "constrained"
    mode: str = "off"
    after_unusable: bool = True

    def __post_init__(self) -> None:
        if self.mode not in CONSTRAINED_MODES:
            raise ConfigError(f"Constrained mode must be one of {', '.join(CONSTRAINED_MODES)}.")

    def check_model(self, model: Any) -> None:
        if self.mode == "on" and not getattr(model, "accepts_schema", False):
            name = getattr(model, "name", type(model).__name__)
            raise ConfigError(f"Constrained(mode='on') needs a backend that takes a reply "
                              f"schema; {name} does not (use 'auto' or 'off').")

    def before_query(self, run: Run, query: Query) -> None:
        retry = self.after_unusable and run.failures > 0 and query.step.origin is None
        if query.schema is None and (self.mode != "off" or retry):
            query.schema = run.reply_schema
        query.strict = self.mode == "on"
