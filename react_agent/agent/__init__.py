"""The agent: the sync and async edges of the loop core (:mod:`react_agent.engine`), model I/O
and conversations.

:class:`Agent` is the facade (``Agent(model, toolbox).run("task") -> RunResult``);
:class:`Conversation` keeps several turns in one history. :func:`query`, :func:`aquery` and
:func:`advance` are the model I/O of one step, for other drivers of the loop core (``serve``).
"""

from ._agent import Agent
from ._conversation import Conversation
from ._model_io import advance, aquery, query

__all__ = ["Agent", "Conversation", "advance", "aquery", "query"]
