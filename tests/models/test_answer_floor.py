"""The answer floor decides the action's branch by the final answer's probability (a toy
vocabulary stands in for the model's; the real model is in test_llama_cpp.py)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from react_agent.models._answer_floor import AnswerFloor, final_key_tokens

VOCAB = ['{"', "thought", '":', ' "', "Look", " it", " up", '."', ",", ' "', "action", ' {"',
         "name", "final", "_answer", "fi", "file", "final_answer", "get", '"}', ' [{"']
FINAL_IDS = final_key_tokens(enumerate(VOCAB))
PROMPT = [0, 1, 2]  # any tokens: the first call's ids count as the prompt
REPLY_TO_BRANCH = ['{"', "thought", '":', ' "', "Look", " it", " up", '."', ",", ' "',
                   "action", '":', ' {"']


def ids(tokens: Sequence[str]) -> list[int]:
    return [VOCAB.index(t) for t in tokens]


def text(token_ids: Sequence[int]) -> str:
    return "".join(VOCAB[i] for i in token_ids)


def scores(probabilities: dict[str, float]) -> np.ndarray:
    """Logits whose softmax gives ``probabilities`` (the rest shares what is left)."""
    rest = (1 - sum(probabilities.values())) / (len(VOCAB) - len(probabilities))
    p = np.full(len(VOCAB), rest)
    for token, value in probabilities.items():
        p[VOCAB.index(token)] = value
    return np.log(p).astype(np.single)


def run(floor: AnswerFloor, reply: list[str], last: np.ndarray) -> np.ndarray:
    """Feed the processor the prompt, then the reply token by token (flat scores), then
    ``last`` at the end of ``reply``; returns what it made of ``last``."""
    flat = np.zeros(len(VOCAB), dtype=np.single)
    floor(np.array(PROMPT), flat)
    for n in range(1, len(reply)):
        assert np.array_equal(floor(np.array(PROMPT + ids(reply[:n])), flat), flat)
    return floor(np.array(PROMPT + ids(reply)), last)


def test_the_tokens_that_begin_the_final_answer_key_are_found_in_the_vocabulary() -> None:
    assert {VOCAB[i] for i in FINAL_IDS} == {"final", "final_answer"}  # not "fi" or "file"


def test_a_final_answer_above_the_floor_is_taken_against_the_likelier_call() -> None:
    floor = AnswerFloor(0.05, text, FINAL_IDS)
    out = run(floor, REPLY_TO_BRANCH, scores({"name": 0.8, "final": 0.15}))
    assert VOCAB[int(np.argmax(out))] == "final"
    assert all(out[i] == -np.inf for i in range(len(VOCAB)) if i not in FINAL_IDS)
    assert floor.taken and floor.probability == pytest.approx(0.15, abs=0.01)


def test_below_the_floor_the_scores_are_left_alone() -> None:
    floor = AnswerFloor(0.05, text, FINAL_IDS)
    last = scores({"name": 0.9, "final": 0.01})
    assert np.array_equal(run(floor, REPLY_TO_BRANCH, last), last)
    assert not floor.taken and floor.probability == pytest.approx(0.01, abs=0.005)


def test_a_final_answer_that_is_already_the_likeliest_is_not_counted_as_taken() -> None:
    floor = AnswerFloor(0.05, text, FINAL_IDS)
    last = scores({"name": 0.2, "final": 0.7})
    assert np.array_equal(run(floor, REPLY_TO_BRANCH, last), last)
    assert not floor.taken and floor.probability == pytest.approx(0.7, abs=0.01)


def test_it_acts_only_at_the_branch_and_only_once() -> None:
    floor = AnswerFloor(0.05, text, FINAL_IDS)
    likely_final = scores({"name": 0.5, "final": 0.4})
    before = REPLY_TO_BRANCH[:-1]  # '"action":' written, the object not yet opened
    assert np.array_equal(run(floor, before, likely_final), likely_final)
    assert floor.probability is None
    after = [*REPLY_TO_BRANCH, "name", '":', ' "', "get", '"}']
    floor = AnswerFloor(0.05, text, FINAL_IDS)
    run(floor, REPLY_TO_BRANCH, scores({"name": 0.99}))  # decided once: a call
    assert np.array_equal(floor(np.array(PROMPT + ids(after)), likely_final), likely_final)


def test_a_list_of_calls_is_never_turned_into_a_final_answer() -> None:
    floor = AnswerFloor(0.05, text, FINAL_IDS)
    listed = [*REPLY_TO_BRANCH[:-1], ' [{"']  # "action": [{"
    last = scores({"final": 0.5})
    assert np.array_equal(run(floor, listed, last), last)
    assert floor.probability is None and not floor.taken
