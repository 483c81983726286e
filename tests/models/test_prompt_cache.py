"""The saved prompt state (react_agent.models._prompt_cache) without the model: the file format
and its faults (truncated, corrupt, foreign, another key, a full disk, concurrent writers), the
folder's cap, the settings, and the canonical-start logic on a fake llama context. The real
model's replies (fresh vs restored) are compared in tests/models/test_llama_cpp.py."""

from __future__ import annotations

import errno
import logging
import multiprocessing
import os
import struct
import time
from pathlib import Path
from typing import Any

import pytest

from react_agent.errors import ConfigError
from react_agent.models import _prompt_cache as pc
from react_agent.models._prompt_cache import (
    HEADER,
    BadEntry,
    CanonicalStart,
    PromptStateCache,
    read_entry,
    state_key,
    write_entry,
)

LOGGER = "react_agent.models._prompt_cache"
DESCRIPTION = {"model": "test", "n_ctx": 64}
PREFIX = (151644, 8948, 198, 2610, 525, 151645, 198, 151644)
STATE = bytes(range(256)) * 40  # 10 KiB of "KV cache"
KEY = state_key(DESCRIPTION, PREFIX)


def cache(tmp_path: Path, cap: int = 1 << 20) -> PromptStateCache:
    return PromptStateCache(tmp_path / "prompt-cache", cap)


def entry_path(tmp_path: Path) -> Path:
    return cache(tmp_path).path(KEY)


def written(tmp_path: Path) -> Path:
    path = entry_path(tmp_path)
    write_entry(path, KEY, PREFIX, STATE)
    return path


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.name == LOGGER and r.levelno == logging.WARNING]


# --- the file format ---------------------------------------------------------------------------


def test_an_entry_reads_back_as_written(tmp_path: Path) -> None:
    path = written(tmp_path)
    assert path.name == KEY.hex() + ".kv"
    assert path.stat().st_size == HEADER.size + 4 * len(PREFIX) + len(STATE)
    assert read_entry(path, KEY, PREFIX, 1 << 20) == STATE
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary file left


def test_the_key_names_the_description_and_every_token() -> None:
    assert state_key(DESCRIPTION, PREFIX) == KEY
    assert state_key({**DESCRIPTION, "n_ctx": 65}, PREFIX) != KEY
    assert state_key(DESCRIPTION, PREFIX[:-1]) != KEY
    assert state_key(DESCRIPTION, (*PREFIX[:-1], 7)) != KEY


@pytest.mark.parametrize("cut", [0, 10, HEADER.size, HEADER.size + 5, -1])
def test_a_truncated_file_is_refused(tmp_path: Path, cut: int) -> None:
    path = written(tmp_path)
    data = path.read_bytes()
    path.write_bytes(data[:cut] if cut >= 0 else data[:-1])
    with pytest.raises(BadEntry):
        read_entry(path, KEY, PREFIX, 1 << 20)


def test_a_longer_file_is_refused(tmp_path: Path) -> None:
    path = written(tmp_path)
    path.write_bytes(path.read_bytes() + b"\0")
    with pytest.raises(BadEntry, match="truncated or extended"):
        read_entry(path, KEY, PREFIX, 1 << 20)


@pytest.mark.parametrize("offset", [HEADER.size + 3, HEADER.size + 4 * len(PREFIX) + 5000, -1])
def test_a_flipped_byte_fails_the_checksum(tmp_path: Path, offset: int) -> None:
    path = written(tmp_path)
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x01
    path.write_bytes(bytes(data))
    with pytest.raises(BadEntry, match=r"checksum|other prefix tokens"):
        read_entry(path, KEY, PREFIX, 1 << 20)


def test_a_foreign_file_is_refused(tmp_path: Path) -> None:
    path = entry_path(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_bytes(os.urandom(HEADER.size + 4 * len(PREFIX) + len(STATE)))
    with pytest.raises(BadEntry, match="not a react-agent prompt state"):
        read_entry(path, KEY, PREFIX, 1 << 20)


def test_another_format_version_is_refused(tmp_path: Path) -> None:
    path = written(tmp_path)
    data = bytearray(path.read_bytes())
    struct.pack_into("<H", data, 8, pc.FORMAT_VERSION + 1)
    path.write_bytes(bytes(data))
    with pytest.raises(BadEntry, match="format version"):
        read_entry(path, KEY, PREFIX, 1 << 20)


def test_a_file_for_another_key_or_prefix_is_refused(tmp_path: Path) -> None:
    """A valid file of another build, model or prompt put under this key's name (copied by
    hand, or a hash collision): its own key, or its tokens, do not match."""
    path = entry_path(tmp_path)
    other = state_key({**DESCRIPTION, "model": "another"}, PREFIX)
    write_entry(path, other, PREFIX, STATE)
    with pytest.raises(BadEntry, match="another model"):
        read_entry(path, KEY, PREFIX, 1 << 20)
    write_entry(path, KEY, (*PREFIX[:-1], 5), STATE)
    with pytest.raises(BadEntry, match="other prefix tokens"):
        read_entry(path, KEY, PREFIX, 1 << 20)
    with pytest.raises(BadEntry, match="tokens, expected"):
        read_entry(path, KEY, PREFIX[:-1], 1 << 20)


def test_an_empty_state_is_refused(tmp_path: Path) -> None:
    path = entry_path(tmp_path)
    write_entry(path, KEY, PREFIX, b"")
    with pytest.raises(BadEntry, match="empty"):
        read_entry(path, KEY, PREFIX, 1 << 20)


def test_a_header_claiming_a_huge_state_is_refused_before_reading(tmp_path: Path) -> None:
    path = entry_path(tmp_path)
    path.parent.mkdir(parents=True)
    header = HEADER.pack(pc.MAGIC, pc.FORMAT_VERSION, 0, KEY, len(PREFIX), 1 << 40, b"\0" * 32)
    path.write_bytes(header + pc._pack_tokens(PREFIX))
    with pytest.raises(BadEntry, match="over the limit"):
        read_entry(path, KEY, PREFIX, 1 << 20)


# --- the cache: faults are warnings and misses ---------------------------------------------------


@pytest.mark.parametrize("damage", ["truncate", "flip", "foreign", "empty"])
def test_a_bad_file_is_a_warning_and_a_miss(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, damage: str
) -> None:
    path = written(tmp_path)
    data = path.read_bytes()
    path.write_bytes({
        "truncate": data[: len(data) // 2],
        "flip": data[:-1] + bytes([data[-1] ^ 0xFF]),
        "foreign": b"GGUF" + os.urandom(len(data) - 4),
        "empty": b"",
    }[damage])
    with caplog.at_level(logging.WARNING, LOGGER):
        assert cache(tmp_path).get(KEY, PREFIX) is None
    [said] = warnings(caplog)
    assert "Ignoring the saved prompt state" in said and "evaluated again" in said


def test_a_missing_file_is_a_silent_miss(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, LOGGER):
        assert cache(tmp_path).get(KEY, PREFIX) is None
    assert warnings(caplog) == []


def test_put_then_get_from_memory_and_from_disk(tmp_path: Path) -> None:
    first = cache(tmp_path)
    first.put(KEY, PREFIX, STATE)
    assert first.get(KEY, PREFIX) == (STATE, "memory")
    second = cache(tmp_path)  # another process
    assert second.get(KEY, PREFIX) == (STATE, "disk")
    assert second.get(KEY, PREFIX) == (STATE, "memory")


@pytest.mark.parametrize("failing", ["write", "replace", "fsync"])
def test_a_full_disk_is_a_warning_and_leaves_nothing_behind(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch,
    failing: str,
) -> None:
    store = cache(tmp_path)
    store.folder.mkdir(parents=True)
    old = store.path(KEY)
    old.write_bytes(b"the previous version")

    def full(*args: Any, **kwargs: Any) -> Any:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(pc.os, failing, full)
    with caplog.at_level(logging.WARNING, LOGGER):
        store.put(KEY, PREFIX, STATE)
        store.put(KEY, PREFIX, STATE)
    monkeypatch.undo()
    [said] = warnings(caplog)  # once
    assert "No space left on device" in said and "kept in memory only" in said
    assert [p.name for p in store.folder.iterdir()] == [old.name]  # no temporary file
    assert old.read_bytes() == b"the previous version"
    assert store.get(KEY, PREFIX) == (STATE, "memory")


def test_an_unwritable_folder_is_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    store = PromptStateCache(blocker / "prompt-cache", 1 << 20)
    with caplog.at_level(logging.WARNING, LOGGER):
        store.put(KEY, PREFIX, STATE)
    assert len(warnings(caplog)) == 1
    assert store.get(KEY, PREFIX) == (STATE, "memory")


def _write_many(folder: str, rounds: int) -> None:
    store = PromptStateCache(Path(folder), 1 << 20)
    for _ in range(rounds):
        write_entry(store.path(KEY), KEY, PREFIX, STATE)


def test_two_processes_writing_the_same_entry_leave_a_valid_file(tmp_path: Path) -> None:
    """Writers race on one entry while this process reads it: every read sees a whole file
    (one writer's or the other's), never a mixture."""
    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("needs fork")
    store = cache(tmp_path)
    store.folder.mkdir(parents=True)
    context = multiprocessing.get_context("fork")
    writers = [context.Process(target=_write_many, args=(str(store.folder), 60))
               for _ in range(2)]
    for writer in writers:
        writer.start()
    reads = 0
    while any(w.is_alive() for w in writers) or reads == 0:
        try:
            assert read_entry(store.path(KEY), KEY, PREFIX, 1 << 20) == STATE
            reads += 1
        except FileNotFoundError:
            time.sleep(0.001)
    for writer in writers:
        writer.join()
        assert writer.exitcode == 0
    assert [p.name for p in store.folder.iterdir()] == [store.path(KEY).name]


def test_the_folder_is_trimmed_least_recently_used_first(tmp_path: Path) -> None:
    size = HEADER.size + 4 * len(PREFIX) + len(STATE)
    store = cache(tmp_path, cap=3 * size)
    keys = [state_key({**DESCRIPTION, "n": n}, PREFIX) for n in range(4)]
    for age, key in zip((40, 30, 20), keys, strict=False):
        store.put(key, PREFIX, STATE)
        os.utime(store.path(key), (time.time() - age, time.time() - age))
    reader = cache(tmp_path, cap=3 * size)  # no memory copies
    assert reader.get(keys[0], PREFIX) == (STATE, "disk")  # used: now the most recent
    store.put(keys[3], PREFIX, STATE)  # over the cap: the least recently used goes
    names = {p.name for p in store.folder.iterdir()}
    assert names == {store.path(k).name for k in (keys[0], keys[2], keys[3])}


def test_stale_temporary_files_are_removed_and_other_files_left(tmp_path: Path) -> None:
    store = cache(tmp_path)
    store.folder.mkdir(parents=True)
    stale = store.folder / f".{KEY.hex()}.kv.abc123.tmp"
    fresh = store.folder / f".{KEY.hex()}.kv.def456.tmp"
    other = store.folder / "notes.txt"
    for path in (stale, fresh, other):
        path.write_bytes(b"x")
    os.utime(stale, (time.time() - 2 * pc.STALE_TMP_SECONDS,) * 2)
    store.put(state_key(DESCRIPTION, (1,)), (1,), STATE)
    assert not stale.exists() and fresh.exists() and other.exists()


def test_a_cap_of_zero_writes_nothing(tmp_path: Path) -> None:
    store = cache(tmp_path, cap=0)
    store.put(KEY, PREFIX, STATE)
    assert not store.folder.exists()
    assert store.get(KEY, PREFIX) == (STATE, "memory")


def test_an_entry_over_the_cap_stays_in_memory(tmp_path: Path) -> None:
    store = cache(tmp_path, cap=len(STATE) // 2)
    store.put(KEY, PREFIX, STATE)
    assert not store.path(KEY).exists()
    assert store.get(KEY, PREFIX) == (STATE, "memory")


def test_memory_keeps_the_last_few_states(tmp_path: Path) -> None:
    store = PromptStateCache(tmp_path, cap=0, memory_entries=2)
    keys = [state_key({"n": n}, PREFIX) for n in range(3)]
    for key in keys:
        store.put(key, PREFIX, STATE)
    assert store.get(keys[0], PREFIX) is None
    assert store.get(keys[2], PREFIX) == (STATE, "memory")


# --- settings ------------------------------------------------------------------------------------


def test_the_disk_cap_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(pc.SIZE_ENV_VAR, raising=False)
    assert pc.disk_cap() == 512 * 1024 * 1024
    assert pc.disk_cap(1.5) == 1536 * 1024
    monkeypatch.setenv(pc.SIZE_ENV_VAR, "0")
    assert pc.disk_cap() == 0
    assert pc.disk_cap(2) == 2 * 1024 * 1024  # the argument wins
    for bad in ("lots", "-1", "nan", "inf"):
        monkeypatch.setenv(pc.SIZE_ENV_VAR, bad)
        with pytest.raises(ConfigError, match=pc.SIZE_ENV_VAR):
            pc.disk_cap()
    with pytest.raises(ConfigError, match="prompt_cache_mb"):
        pc.disk_cap(-3)


def test_the_folder_setting(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("REACT_AGENT_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv(pc.DIR_ENV_VAR, raising=False)
    assert pc.cache_folder() == tmp_path / "cache" / "prompt-cache"
    monkeypatch.setenv(pc.DIR_ENV_VAR, str(tmp_path / "elsewhere"))
    assert pc.cache_folder() == tmp_path / "elsewhere"
    assert pc.cache_folder(tmp_path / "given") == tmp_path / "given"


def test_the_model_settings_without_loading(monkeypatch: pytest.MonkeyPatch,
                                            tmp_path: Path) -> None:
    from react_agent.models import LlamaCppModel

    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"GGUF")
    monkeypatch.setenv(pc.DIR_ENV_VAR, str(tmp_path / "states"))
    monkeypatch.setenv(pc.SIZE_ENV_VAR, "64")
    model = LlamaCppModel(gguf)
    assert model.prompt_cache and model._cache_folder == tmp_path / "states"
    assert model._cache_cap == 64 << 20
    assert LlamaCppModel(gguf, prompt_cache_mb=0)._cache_cap == 0
    assert LlamaCppModel(gguf, prompt_cache=False)._cache_folder is None
    monkeypatch.setenv(pc.SIZE_ENV_VAR, "much")
    with pytest.raises(ConfigError):
        LlamaCppModel(gguf)
    assert LlamaCppModel(gguf, prompt_cache=False).prefix_source is None  # not read when off


def test_the_model_fingerprint_reads_the_ends_of_the_file(tmp_path: Path) -> None:
    body = os.urandom(9 << 20)
    a, b, c = tmp_path / "a.gguf", tmp_path / "b.gguf", tmp_path / "c.gguf"
    a.write_bytes(body)
    b.write_bytes(body)  # a copy elsewhere: the same model
    c.write_bytes(body[:-1] + bytes([body[-1] ^ 1]))  # other last tensors
    assert pc.model_fingerprint(a) == pc.model_fingerprint(b) != pc.model_fingerprint(c)
    assert pc.model_fingerprint(a).startswith(f"size:{9 << 20}:")


# --- the canonical start, on a fake context -------------------------------------------------------


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
        monkeypatch.setattr(pc, name, function)
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
    with caplog.at_level(logging.WARNING, LOGGER):
        assert request(start, fake, SYSTEM_A, [*SYSTEM_A, 10]) == "evaluated"
    assert len(warnings(caplog)) == 1
    assert read_entry(store.path(key), key, SYSTEM_A, 1 << 20)  # rewritten, valid
    # a state that passes the checksum but that llama.cpp refuses (another build, a bug)
    write_entry(store.path(key), key, SYSTEM_A, b"not a state")
    other = FakeLlama()
    caplog.clear()
    with caplog.at_level(logging.WARNING, LOGGER):
        assert request(CanonicalStart(other, DESCRIPTION, cache(tmp_path)), other, SYSTEM_A,
                       [*SYSTEM_A, 10]) == "evaluated"
    assert ["refused" in m for m in warnings(caplog)] == [True]
    assert other.log[-3:] == ["clear", "prefix 4", "eval 1"]
