"""Reading model replies: the tolerant parser and the streamed final-answer reader.

:func:`parse_reply` gets the action out of what models really write (fences, prose, repairs of
broken JSON, aliases, invented observations after the step) or raises
:class:`~react_agent.errors.OutputParseError` with a message written for the model.
:class:`FinalAnswerStream` reads the final answer out of a reply while it streams in.
:func:`load_json` and :func:`load_or_repair` read one JSON value the way the parser does
(strict, then with its repairs; :data:`FAIL` when nothing usable), for a typed final answer;
:func:`decode_at` reads one JSON value among prose, and :class:`DuplicateKey` is the error of an
object that gives one key twice with different values.
"""

from ._load import FAIL, DuplicateKey, decode_at, load_json, load_or_repair, loads_lenient
from ._reply import ValueNamer, parse_error, parse_reply, strip_reasoning
from ._stream import FinalAnswerStream

__all__ = ["FAIL", "DuplicateKey", "FinalAnswerStream", "ValueNamer", "decode_at", "load_json",
           "load_or_repair", "loads_lenient", "parse_error", "parse_reply", "strip_reasoning"]
