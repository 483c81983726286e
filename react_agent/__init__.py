"""react-agent: a prompt-driven JSON ReAct agent for models without native function calling.

Quick start::

    from react_agent import Agent, Toolbox
    from react_agent.models import LlamaCppModel

    toolbox = Toolbox()

    @toolbox.tool
    def get_weather(city: str) -> str:
        '''Get the current weather for a city.'''
        return "sunny, 22 °C"

    result = Agent(LlamaCppModel(), toolbox).run("Weather in Lisbon?")
    print(result.status, result.final_answer)
"""

from .agent import Agent
from .config import AgentConfig
from .conversation import Conversation
from .errors import (
    ConfigError,
    ModelError,
    OutputParseError,
    ReactAgentError,
    ToolDefinitionError,
)
from .models import ChatModel, ScriptedModel
from .parser import parse_reply
from .toolbox import Tool, Toolbox
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

__version__ = "0.1.0"

__all__ = [
    "STATUSES", "Agent", "AgentConfig", "ChatModel", "ConfigError", "Conversation", "Message",
    "ModelError", "ModelReply", "OutputParseError", "ReactAgentError", "Reply", "RunResult",
    "ScriptedModel", "Status", "Step", "Tool", "ToolCall", "ToolDefinitionError", "ToolResult",
    "Toolbox", "__version__", "parse_reply",
]
