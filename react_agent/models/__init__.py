"""Model backends: the :class:`ChatModel` protocol and its implementations.

``LlamaCppModel`` and ``OpenAIChatModel`` import their libraries only when used, so the scripted
model works with the core dependencies alone.
"""

from ..types import Message, ModelReply
from ._llama_cpp import LlamaCppModel
from ._openai_chat import OpenAIChatModel
from ._scripted import ScriptedModel
from .base import ChatModel, fresh_state

__all__ = [
    "ChatModel", "LlamaCppModel", "Message", "ModelReply", "OpenAIChatModel", "ScriptedModel",
    "fresh_state",
]
