"""Take the final answer when the model itself gives it enough probability (embedded model).

A small model asked something no tool can answer (a translation, a poem, a question about
itself) often calls a tool anyway: greedy decoding follows the most likely branch, and a tool
call usually is, even when the final answer is far from unlikely. So at the token where a reply
chooses its action (``{"name"`` or ``{"final_answer"``), the branch is decided by a threshold
on the model's own probability instead of the argmax, the way Toolformer decides where to
insert an API call (Schick et al., 2023, "Toolformer: Language Models Can Teach Themselves to
Use Tools", section 2: a call is kept at positions where the model gives the ``<API>`` token a
probability above a threshold). The probabilities measured there, and how the default
threshold was chosen, are on the docs' measurements page.

:class:`AnswerFloor` is a llama.cpp logits processor (``logits_processor=`` of
``llama_cpp.Llama.create_completion``); it acts once per reply, at that token.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

import numpy as np
import numpy.typing as npt

ACTION_BRANCH = re.compile(r'"action"\s*:\s*\{\s*"$')
"""The reply so far ends where the action object's first key begins: the next token chooses
between a tool call (``name``) and the final answer (``final_answer``)."""

FINAL_KEY = "final_answer"


def final_key_tokens(vocabulary: Iterable[tuple[int, str]]) -> frozenset[int]:
    """The ids of the tokens that begin the key ``final_answer`` unambiguously: those whose
    text is a prefix of it at least 3 characters long (``fin``, ``final``, ``final_``...) or
    starts with it. ``vocabulary``: ``(token id, token text)`` pairs."""
    return frozenset(i for i, text in vocabulary if (len(text) >= 3 and FINAL_KEY.startswith(text))
                     or text.startswith(FINAL_KEY))


class AnswerFloor:
    """A logits processor: where the reply chooses its action (see :data:`ACTION_BRANCH`), if
    the tokens that begin ``final_answer`` have at least ``floor`` of the probability, only
    they stay possible, so the reply gives the final answer; below it, nothing changes.

    Args:
        floor: the least probability (0-1] of the final-answer branch that takes it.
        detokenize: token ids -> text (``Llama.detokenize`` decoded as UTF-8).
        final_ids: :func:`final_key_tokens` of the model's vocabulary.

    The first call's ``input_ids`` are taken to be the prompt; the reply is what follows them.

    After the reply, :attr:`probability` is the final answer's probability at that token
    (``None`` if the reply never reached it, e.g. a list of calls) and :attr:`taken` says
    whether the floor decided the branch against the argmax.
    """

    def __init__(
        self, floor: float, detokenize: Callable[[Sequence[int]], str], final_ids: frozenset[int],
    ) -> None:
        self.floor, self.detokenize = floor, detokenize
        self.final_ids = np.fromiter(sorted(final_ids), dtype=np.intp)
        self.prompt_tokens: int | None = None
        self.probability: float | None = None
        self.taken = False
        self._done = False

    def __call__(
        self, input_ids: npt.NDArray[np.intc], scores: npt.NDArray[np.single]
    ) -> npt.NDArray[np.single]:
        if self._done or not len(self.final_ids):
            return scores
        if self.prompt_tokens is None:
            self.prompt_tokens = len(input_ids)
        reply = self.detokenize(list(input_ids[self.prompt_tokens:]))
        _, action, after = reply.partition('"action"')
        if not action:
            return scores
        if not ACTION_BRANCH.search(reply):  # before that token, or past it (a list of calls)
            self._done = len("".join(after.split())) > len(':{"')
            return scores
        self._done = True
        logits = scores.astype(np.float64)
        p = np.exp(logits - logits.max())
        p /= p.sum()
        self.probability = float(p[self.final_ids].sum())
        if self.probability < self.floor or scores[self.final_ids].max() >= scores.max():
            return scores  # below the floor, or the final answer is the likeliest anyway
        self.taken = True
        forced = np.full_like(scores, -np.inf)
        forced[self.final_ids] = scores[self.final_ids]
        return forced
