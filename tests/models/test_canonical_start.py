"""The canonical start of a prompt (react_agent.models._canonical_start) on a fake context: the
prefix evaluated, saved and restored in the same order in a run, after a reset and in a new
process; a corrupt or refused saved state means a fresh evaluation (the real model is in
test_llama_cpp.py)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from react_agent.models import _canonical_start as cs
from react_agent.models._canonical_start import CanonicalStart
from react_agent.models._prompt_cache import PromptStateCache, read_entry, state_key, write_entry

LOGGERS = ("react_agent.models._prompt_cache", "react_agent.models._canonical_start")
DESCRIPTION = {"model": "test", "n_ctx": 64}


def cache(tmp_path: Path, cap: int = 1 << 20) -> PromptStateCache:
    return PromptStateCache(tmp_path / "prompt-cache", cap)


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.name in LOGGERS and r.levelno == logging.WARNING]


class FakeLlama:
    """What CanonicalStart reads of a Llama: its tokens (``input_ids[:n_tokens]``)."""

    chat_handler = None

    def __init__(self) -> None:
        self.metadata: dict[str, str] = {}
        self.input_ids = [0] * 64
        self.n_tokens = 0
        self.log: list[str] = []

    def tokens(self) -> list[int]:
        return self.input_ids[: self.n_tokens]

    def generate(self, tokens: list[int]) -> None:
        """llama-cpp-python's generate: keep the common prefix, evaluate the rest."""
        common = 0
        for a, b in zip(self.tokens(), tokens, strict=False):
            if a != b:
                break
            common += 1
        self.log.append(f"eval {len(tokens) - common}")
        self.input_ids[: len(tokens)] = tokens
        self.n_tokens = len(tokens)


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeLlama:
    llama = FakeLlama()

    def clear(target: FakeLlama) -> None:
        target.n_tokens = 0
        target.log.append("clear")

    def evaluate(target: FakeLlama, tokens: tuple[int, ...]) -> None:
        clear(target)
        target.input_ids[: len(tokens)] = tokens
        target.n_tokens = len(tokens)
        target.log.append(f"prefix {len(tokens)}")

    def save_state(target: FakeLlama) -> bytes:
        return b"state:" + bytes(t % 256 for t in target.tokens())

    def restore_state(target: FakeLlama, tokens: tuple[int, ...], state: bytes) -> bool:
        clear(target)
        if state != b"state:" + bytes(t % 256 for t in tokens):
            return False
        target.input_ids[: len(tokens)] = tokens
        target.n_tokens = len(tokens)
        target.log.append("restore")
        return True

    for name, function in [("clear", clear), ("evaluate", evaluate),
                           ("save_state", save_state), ("restore_state", restore_state)]:
        monkeypatch.setattr(cs, name, function)
    return llama


SYSTEM_A, SYSTEM_B = (1, 2, 3, 4), (1, 2, 5, 6, 7)


def request(start: CanonicalStart, llama: FakeLlama, prefix: tuple[int, ...] | None,
            tokens: list[int]) -> str | None:
    start.find_prefix = lambda messages: prefix  # type: ignore[assignment]
    start.expect([])
    start.before_generate(tokens)
    llama.generate(tokens)
    return start.source


def test_the_canonical_start_in_a_run_after_a_reset_and_in_a_new_process(
    fake: FakeLlama, tmp_path: Path
) -> None:
    start = CanonicalStart(fake, DESCRIPTION, cache(tmp_path))
    step1 = [*SYSTEM_A, 10, 11]
    assert request(start, fake, SYSTEM_A, step1) == "evaluated"
    assert fake.log == ["clear", "prefix 4", "eval 2"]  # the prefix alone, then the rest
    fake.log.clear()
    assert request(start, fake, SYSTEM_A, [*step1, 12, 13]) == "context"  # the next step
    assert fake.log == ["eval 2"]
    fake.log.clear()
    start.forget()  # reset: the next reply is a fresh model's
    assert request(start, fake, SYSTEM_A, [*SYSTEM_A, 10, 11]) == "memory"
    assert fake.log == ["clear", "restore", "eval 2"]  # not "eval 0": the rest again
    fake.log.clear()
    assert request(start, fake, SYSTEM_B, [*SYSTEM_B, 10]) == "evaluated"  # another prompt
    assert request(start, fake, SYSTEM_A, [*SYSTEM_A, 10, 11, 12]) == "memory"
    other = FakeLlama()  # a new process: from the disk
    assert request(CanonicalStart(other, DESCRIPTION, cache(tmp_path)), other, SYSTEM_B,
                   [*SYSTEM_B, 10]) == "disk"
    assert other.log == ["clear", "restore", "eval 1"]


def test_without_a_known_prefix_a_reset_still_starts_from_position_0(
    fake: FakeLlama, tmp_path: Path
) -> None:
    start = CanonicalStart(fake, DESCRIPTION, cache(tmp_path))
    assert request(start, fake, SYSTEM_A, [*SYSTEM_A, 10]) == "evaluated"
    fake.log.clear()
    assert request(start, fake, None, [*SYSTEM_A, 10, 11]) is None  # within a run: as before
    assert fake.log == ["eval 1"]
    fake.log.clear()
    start.forget()
    assert request(start, fake, (9, 9), [*SYSTEM_A, 10, 11]) is None  # the prompt lacks it
    assert fake.log == ["clear", "eval 6"]


def test_without_saved_states_the_order_is_the_same(fake: FakeLlama) -> None:
    start = CanonicalStart(fake, None, None)
    assert request(start, fake, SYSTEM_A, [*SYSTEM_A, 10]) == "evaluated"
    start.forget()
    assert request(start, fake, SYSTEM_A, [*SYSTEM_A, 10]) == "evaluated"
    assert fake.log == ["clear", "prefix 4", "eval 1", "clear", "clear", "prefix 4", "eval 1"]


def test_a_corrupt_file_or_a_refused_state_means_a_fresh_evaluation(
    fake: FakeLlama, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    key = state_key(DESCRIPTION, SYSTEM_A)
    store = cache(tmp_path)
    store.folder.mkdir(parents=True)
    store.path(key).write_bytes(b"garbage")
    start = CanonicalStart(fake, DESCRIPTION, store)
    with caplog.at_level(logging.WARNING, "react_agent.models"):
        assert request(start, fake, SYSTEM_A, [*SYSTEM_A, 10]) == "evaluated"
    assert len(warnings(caplog)) == 1
    assert read_entry(store.path(key), key, SYSTEM_A, 1 << 20)  # rewritten, valid
    # a state that passes the checksum but that llama.cpp refuses (another build, a bug)
    write_entry(store.path(key), key, SYSTEM_A, b"not a state")
    other = FakeLlama()
    caplog.clear()
    with caplog.at_level(logging.WARNING, "react_agent.models"):
        assert request(CanonicalStart(other, DESCRIPTION, cache(tmp_path)), other, SYSTEM_A,
                       [*SYSTEM_A, 10]) == "evaluated"
    assert ["refused" in m for m in warnings(caplog)] == [True]
    assert other.log[-3:] == ["clear", "prefix 4", "eval 1"]
