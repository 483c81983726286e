"""A final answer that announces an action instead of reporting one: asked again."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Any, ClassVar

from .. import prompts
from .._lexical import matches, terms
from ..engine import Policy, Query, Run
from ..errors import ConfigError
from ..parsing import parse_error
from ..tools import Toolbox
from ..types import Reply, Step

# "I will send", "I'll pay", "I am going to book", "let me check", "now I transfer": the agent
# saying what it is about to do. Not "let me know", "I'll be happy to", "I will need your ...",
# nor what it will not do ("I will not be able to update it because ...").
_ANNOUNCE = re.compile(
    r"(?:\b(?:I\s+will|I'll|I\s+shall|I\s+am\s+going\s+to|I'm\s+going\s+to|I\s+am\s+now|"
    r"I'm\s+now|let\s+me|now\s+I(?:'ll|\s+will)?)\s+(?:now\s+|also\s+|then\s+|go\s+ahead\s+and\s+|"
    r"proceed\s+to\s+|first\s+)?)"
    r"(?!not\b|never\b|no\b|know\b|be\b|need\b|have\b|keep\b|wait\b|try\s+my\b|"
    r"do\s+my\s+best\b|remember\b|assume\b|explain\b|summari[sz]e\b|clarify\b|note\b|help\b|answer\b|say\b|tell\s+you\b)"
    r"(?P<verb>[A-Za-z]+)(?P<rest>[^.!?\n]{0,80})",
    re.IGNORECASE,
)
_ANNOUNCE_ZH = re.compile(
    r"(?:我(?:会|将|这就|马上|现在就|来)|让我|接下来我)(?![不没无未])(?P<rest>[^。！？\n]{1,40})")
_OFFER = re.compile(r"\b(?:if\s+you|would\s+you|do\s+you\s+want|shall\s+I|once\s+you|when\s+you|"
                    r"as\s+soon\s+as\s+you)\b|如果您?|需要的话|是否", re.IGNORECASE)
MAX_TOOLS = 128
"""The most tools whose words an answer is compared with (the first ones)."""

MAX_DESCRIPTION_CHARS = 500
"""The start of a tool's description whose words name what it does."""

_SENTENCE = re.compile(r"[^.!?。！？\n]+[.!?。！？]?")
_KINDRED = (  # verbs of one kind of act: an announcement's verb matches a tool's by its kind
    frozenset({"send", "transfer", "pay", "wire", "remit"}),
    frozenset({"update", "adjust", "change", "modify", "edit", "set", "amend", "move"}),
    frozenset({"email", "mail", "message", "write", "notify", "text", "contact", "reply"}),
    frozenset({"book", "reserve", "schedule", "arrange"}),
    frozenset({"delete", "remove", "cancel", "drop", "erase"}),
    frozenset({"create", "add", "make", "open", "new", "post", "invite"}),
    frozenset({"check", "look", "find", "search", "get", "fetch", "read", "list", "query"}),
)


@dataclass(frozen=True)
class AnnouncedAction(Policy):
    """A final answer that says what the agent is about to do ("I will pay the bill for you.",
    "Let me transfer the money now.", "我这就给他发邮件。") where a tool of the run could do it is
    sent back to the model once per run as an unusable reply: a final answer reports what was
    done; if it is done, say so; to do it, call the tool now; if it cannot be done, say why. A
    run ends with an answer, not a promise.

    An announcement counts when a sentence of the answer says, in the first person, what the
    agent will do next ("I will", "I'll", "I'm going to", "let me", "我会", "我将", "让我", ...),
    that sentence is not an offer or a condition ("if you like, I will ...", "once you confirm,
    I'll ..."), the words after it are not the user's own words (the task's "I'll reach out
    myself" echoed back), and, for an English announcement, one of its words names a word of a
    tool's name or description, or a verb of the same kind ("pay" for a tool that sends money:
    ``wire_funds``). A Chinese announcement needs only a tool in the run. While the policy may
    still act, a final answer is not streamed as answer tokens (it may be taken back).

    The answer is sent back with ``prompts/policies/announced.md``; the reply to it is not
    given the answer floor (the floor may have taken the announcement in place of a call).

    Args:
        max_asks: how many final answers of one run are sent back (default 1; at least 0).

    Raises:
        ConfigError: ``max_asks`` is negative.

    Records ``step.records["announced"] = {"sentence": ...}`` on the step whose answer was
    sent back. The idea of holding an agent to act rather than describe comes from the
    AgentDojo runs where a final answer "I will pay the bill for you." ended the task.
    """

    name: ClassVar[str] = "announced"
    max_asks: int = 1

    def __post_init__(self) -> None:
        if self.max_asks < 0:
            raise ConfigError("AnnouncedAction's max_asks must be at least 0.")

    def for_run(self, run: Run) -> dict[str, Any]:
        asked = sum(1 for s in run.steps if self.name in s.records)
        return {"asked": asked, "again": False}

    def before_query(self, run: Run, query: Query) -> None:
        state = run.state(self)
        if state["asked"] < self.max_asks and len(run.setup.toolbox) > 0:
            query.answer_tokens = False  # an answer that may be sent back
        if not state["again"] or query.step.origin is not None:
            return
        state["again"] = False  # the loop's reply to the answer sent back
        query.answer_floor = None

    def after_reply(self, run: Run, step: Step, reply: Reply) -> Reply | None:
        state = run.state(self)
        if reply.final_answer is None or state["asked"] >= self.max_asks:
            return reply
        said = " ".join(run.facts.user)
        for earlier in run.steps:  # the feedback quoting an announcement is not the user's
            if self.name in earlier.records:
                said = said.replace(repr(earlier.records[self.name]["sentence"]), "")
        sentence = announcement(reply.final_answer, run.setup.toolbox, said)
        if sentence is None:
            return reply
        state["asked"] += 1
        state["again"] = True
        step.records[self.name] = {"sentence": sentence}
        run.note(step, self.name, "Announced", f"the final answer announces an action: "
                 f"{sentence!r}; asked to take it or to say why not")
        raise parse_error("announced", prompts.render("policies/announced",
                                                      sentence=repr(sentence)))


def announcement(answer: Any, toolbox: Toolbox, said: str) -> str | None:
    """The first sentence of ``answer`` that announces an action a tool of ``toolbox`` could
    take (see :class:`AnnouncedAction`), or ``None``. ``said``: the user's words; a phrase they
    wrote is theirs, not an announcement. At most its first 4,000 characters are read, against
    the words of the first :data:`MAX_TOOLS` tools' names and the first
    :data:`MAX_DESCRIPTION_CHARS` characters of their descriptions."""
    if not isinstance(answer, str) or len(toolbox) == 0:
        return None
    words = set().union(*(terms(f"{t.name} {t.description[:MAX_DESCRIPTION_CHARS]}")
                          for t in itertools.islice(toolbox.values(), MAX_TOOLS)))
    words |= {w for kind in _KINDRED if kind & words for w in kind}
    said_folded = " ".join(said.casefold().split())
    sentences: list[str] = _SENTENCE.findall(answer[:4000])
    for sentence in sentences:
        if _OFFER.search(sentence):
            continue
        for match in _ANNOUNCE.finditer(sentence):
            if " ".join(match[0].casefold().split()[:4]) in said_folded:
                continue  # the user's own words ("I'll reach out myself")
            if any(matches(w, words) for w in terms(f"{match['verb']}{match['rest']}")):
                return sentence.strip()
        zh = _ANNOUNCE_ZH.search(sentence)
        if zh and zh[0][:6] not in said:
            return sentence.strip()
    return None
