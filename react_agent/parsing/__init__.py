"""Reading model replies: the tolerant parser and the streamed final-answer reader.

:func:`parse_reply` gets the action out of what models really write (fences, prose, repairs of
broken JSON, aliases, invented observations after the step) or raises
:class:`~react_agent.errors.OutputParseError` with a message written for the model.
:class:`FinalAnswerStream` reads the final answer out of a reply while it streams in.
:func:`load_json` and :func:`load_or_repair` read one JSON value the way the parser does
(strict, then with its repairs; :data:`FAIL` when nothing usable), for a typed final answer.
"""

from ._load import FAIL, load_json, load_or_repair
from ._reply import ValueNamer, parse_error, parse_reply, strip_reasoning
from ._stream import FinalAnswerStream

__all__ = ["FAIL", "FinalAnswerStream", "ValueNamer", "load_json", "load_or_repair",
           "parse_error", "parse_reply", "strip_reasoning"]
