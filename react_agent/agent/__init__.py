"""The agent: the sync and async edges of the loop core (:mod:`react_agent.engine`), model I/O
and conversations.

:class:`Agent` is the facade (``Agent(model, toolbox).run("task") -> RunResult``);
:class:`Conversation` keeps several turns in one history.
"""

from ._agent import Agent
from ._conversation import Conversation

__all__ = ["Agent", "Conversation"]
