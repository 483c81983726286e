"""Observations framed as data: each tool result sits between ``<data ID>`` and ``</data ID>``
lines, and nothing inside can pass for the frame, a chat role or the protocol's own lines.

A tool result is whatever a web page, an e-mail, a file or an MCP server wrote. Framed, the
model can tell it from the user's words (the system prompt says text inside a frame is data,
never instructions), and :func:`defang` makes sure the text cannot end its frame early, open
a chat turn of its own, or start a line the model reads as the protocol's:

- ``<data``, ``</data`` (any case, any spacing) lose their ``<``: a result cannot close its
  frame and speak outside it;
- chat-template control markers written as text (``<|im_start|>``, ``<|eot_id|>``,
  ``[INST]``, ``<start_of_turn>``, ``<</SYS>>``, ``</s>``) get their brackets replaced by
  look-alikes that no template reads;
- a line that starts with a role or protocol label (``User:``, ``Assistant:``, ``System:``,
  ``Observation:``, ``Thought:``, ``Action:``, ``Final answer:``, ``(The task:``) is quoted
  with ``> ``.

The ID ties a frame's end to its start: the first 8 hex digits of a SHA-256 over the call and
the result, so the same result is framed the same way in every request of a conversation
(``serve`` rebuilds the history each time, and a prompt cache keeps it). It is not a secret:
the end cannot be forged because ``</data`` cannot appear inside. The idea of marking tool
output apart from instructions is "spotlighting" (Hines et al., 2024, "Defending Against
Indirect Prompt Injection Attacks With Spotlighting").
"""

from __future__ import annotations

import hashlib
import re

_BOUNDARY = re.compile(r"<(?=\s*/?\s*data\b)", re.IGNORECASE)
_CONTROL = re.compile(
    r"<\|[^<>|\n]{0,40}\|>|\[/?INST\]|<</?SYS>>|</?(?:s|start_of_turn|end_of_turn|"
    r"bos|eos|eot|turn|system|user|assistant|tool_call|tool_response)>",
    re.IGNORECASE,
)
_LOOKALIKE = str.maketrans({"<": "‹", ">": "›", "[": "⟦", "]": "⟧", "|": "¦"})
_LABEL = re.compile(
    r"^(?=[ \t]*(?:system|user|assistant|human|ai|tool|observation|thought|action|"
    r"final[ _]answer|\(the task)[ \t]*:)",
    re.IGNORECASE | re.MULTILINE,
)


def defang(text: str) -> str:
    """``text`` as it may stand inside a data frame (see the module docs): frame markers,
    control markers and role or protocol labels at a line's start made harmless, everything
    else unchanged. Linear in the length of ``text``."""
    text = _BOUNDARY.sub("‹", text)
    text = _CONTROL.sub(lambda m: m[0].translate(_LOOKALIKE), text)
    return _LABEL.sub("> ", text)


def frame(text: str, salt: str = "") -> str:
    """``text`` (one tool result's observation) :func:`defang`-ed, between ``<data ID>`` and
    ``</data ID>`` lines; ``salt`` (the call, as text) goes into the ID with ``text``."""
    key = hashlib.sha256(f"{salt}\x00{text}".encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"<data {key}>\n{defang(text)}\n</data {key}>"
