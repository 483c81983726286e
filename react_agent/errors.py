"""Errors, typed by audience (after pydantic-ai's ``exceptions.py`` and mini-swe-agent's
control-flow exceptions).

- The **model's** mistakes are :class:`OutputParseError` (and invalid tool calls, which the invoker
  turns into observations): their message is written for the model and goes back to it.
- The **developer's** mistakes are :class:`ToolDefinitionError` and :class:`ConfigError`: raised at
  once, with a message that names the fix.
- The **run's** end is never an exception: it is ``RunResult.status``. :class:`ModelError` is how a
  backend reports a failure; the agent turns it into ``status="model_error"``.
"""

from __future__ import annotations


def install_hint(extra: str) -> str:
    """How to install an optional extra of this package, the one form every message uses:
    ``pip install '.[serve]' (in a clone of react-agent; see docs/getting-started.md)``. The
    package is installed from a clone of its repository (there is no ``react-agent`` on the
    package index to name); ``extra`` may name several (``"local,serve"``)."""
    return f"pip install '.[{extra}]' (in a clone of react-agent; see docs/getting-started.md)"


class ReactAgentError(Exception):
    """Base class of every error this package raises."""


class OutputParseError(ReactAgentError, ValueError):
    """The model's reply holds no usable action. ``str(err)`` is the full text for the model.

    Attributes:
        kind: short machine-readable defect name, e.g. ``"empty"``, ``"no_json"``,
            ``"truncated"``, ``"invalid_json"``, ``"unknown_shape"`` (valid JSON that is not an
            action), ``"no_action"``, ``"bad_call"``, ``"bad_args"``, ``"ambiguous"``,
            ``"too_deep"``.
        problem: one sentence saying what was wrong (without the instructions around it).
        position: character offset in the reply where the problem was seen, if known.
        tool: the tool the unusable action names, if it names one.
    """

    def __init__(
        self, message: str, *, kind: str, problem: str, position: int | None = None,
        tool: str | None = None,
    ):
        super().__init__(message)
        self.kind = kind
        self.problem = problem
        self.position = position
        self.tool = tool


class ToolDefinitionError(ReactAgentError, ValueError):
    """A tool definition is unusable (bad name, no description, bad schema, duplicate)."""


class ConfigError(ReactAgentError, ValueError):
    """The agent, a model backend or the CLI was configured wrongly; the message names the fix."""


class ModelError(ReactAgentError):
    """A model backend failed after its own retries (server down, HTTP error, bad reply).

    Attributes:
        cause: short category: ``"connection"``, ``"timeout"``, ``"auth"``, ``"not_found"``,
            ``"context_length"``, ``"server"``, ``"bad_request"``, ``"bad_response"`` (not
            OpenAI-style JSON), ``"empty_reply"``,
            ``"exhausted"`` (a ScriptedModel ran out of replies) or ``"other"``.
    """

    def __init__(self, message: str, *, cause: str = "other"):
        super().__init__(message)
        self.cause = cause
