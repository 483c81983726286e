"""react-agent: a prompt-driven JSON ReAct agent for models without native function calling.

Quick start::

    from react_agent import Agent, Toolbox
    from react_agent.models import LlamaCppModel

    toolbox = Toolbox()

    @toolbox.tool
    def word_count(text: str) -> int:
        '''Count the words in a text.'''
        return len(text.split())

    result = Agent(LlamaCppModel(), toolbox).run("How many words are in 'to be or not to be'?")
    print(result.status, result.final_answer)
"""

from ._version import __version__
from .agent import Agent, Conversation
from .config import AgentConfig
from .errors import (
    ConfigError,
    ModelError,
    OutputParseError,
    ReactAgentError,
    ToolDefinitionError,
)
from .models import ChatModel, ScriptedModel
from .parsing import parse_reply
from .tools import Tool, Toolbox
from .types import (
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

__all__ = [
    "STATUSES", "Agent", "AgentConfig", "ChatModel", "ConfigError", "Conversation", "Message",
    "ModelError", "ModelReply", "OutputParseError", "ReactAgentError", "Reply", "RunResult",
    "ScriptedModel", "Status", "Step", "Tool", "ToolCall", "ToolDefinitionError", "ToolResult",
    "Toolbox", "__version__", "parse_reply",
]
