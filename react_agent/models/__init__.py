"""Model backends: the :class:`ChatModel` protocol and its implementations.

``LlamaCppModel`` and ``OpenAIChatModel`` import their libraries only when used, so the scripted
model works with the core dependencies alone.
"""

from ..types import Message, ModelReply
from .base import ChatModel
from .llama_cpp import LlamaCppModel
from .openai_chat import OpenAIChatModel
from .scripted import ScriptedModel

__all__ = [
    "ChatModel", "LlamaCppModel", "Message", "ModelReply", "OpenAIChatModel", "ScriptedModel",
]
