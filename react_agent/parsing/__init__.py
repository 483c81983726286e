"""Reading model replies: the tolerant parser and the streamed final-answer reader.

:func:`parse_reply` gets the action out of what models really write (fences, prose, repairs of
broken JSON, aliases, invented observations after the step) or raises
:class:`~react_agent.errors.OutputParseError` with a message written for the model.
:class:`FinalAnswerStream` reads the final answer out of a reply while it streams in.
"""

from ._reply import ValueNamer, parse_error, parse_reply, strip_reasoning
from ._stream import FinalAnswerStream

__all__ = ["FinalAnswerStream", "ValueNamer", "parse_error", "parse_reply", "strip_reasoning"]
