"""The saved prompt state (react_agent.models._prompt_cache) without the model: the file format
and its faults (truncated, corrupt, foreign, another key, a full disk, concurrent writers), the
folder's cap, the settings, and the canonical-start logic on a fake llama context. The real
model's replies (fresh vs restored) are compared in tests/models/test_llama_cpp.py."""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import multiprocessing
import os
import stat
import struct
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from react_agent.errors import ConfigError
from react_agent.models import _prompt_cache as pc
from react_agent.models._prompt_cache import (
    HEADER,
    BadEntry,
    PromptStateCache,
    read_entry,
    state_key,
    write_entry,
)

LOGGER = "react_agent.models._prompt_cache"
posix = pytest.mark.skipif(not hasattr(os, "mkfifo") or not hasattr(os, "geteuid"),
                           reason="POSIX owners, modes and FIFOs")
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
    monkeypatch.setenv(pc.SIZE_ENV_VAR, "1048576")
    assert pc.disk_cap() == 1 << 40  # 1 TiB: the most
    for bad in ("lots", "-1", "nan", "inf", "-inf", "1e303", "1e400", "1048577", "0x10"):
        monkeypatch.setenv(pc.SIZE_ENV_VAR, bad)
        with pytest.raises(ConfigError, match=pc.SIZE_ENV_VAR):
            pc.disk_cap()
    for wrong in (-3, 1e303, float("inf"), True):
        with pytest.raises(ConfigError, match="prompt_cache_mb"):
            pc.disk_cap(wrong)


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


def test_the_model_fingerprint_is_the_hash_of_the_whole_file(tmp_path: Path) -> None:
    """Two files alike but for one byte in the middle (same size, same first and last 4 MiB)
    are two models; a copy elsewhere is the same model."""
    body = os.urandom(9 << 20)
    a, b, c = tmp_path / "a.gguf", tmp_path / "b.gguf", tmp_path / "c.gguf"
    a.write_bytes(body)
    b.write_bytes(body)
    middle = len(body) // 2
    c.write_bytes(body[:middle] + bytes([body[middle] ^ 1]) + body[middle + 1:])
    folder = tmp_path / "states"
    folder.mkdir(mode=0o700)
    fingerprints = [pc.model_fingerprint(path, folder) for path in (a, b, c)]
    assert fingerprints[0] == fingerprints[1] == f"sha256:{hashlib.sha256(body).hexdigest()}"
    assert fingerprints[2] != fingerprints[0]
    assert pc.model_fingerprint(a).startswith("file:")  # memory only: the file's version


def test_a_files_hash_is_computed_once_per_version_of_the_file(tmp_path: Path) -> None:
    model, folder = tmp_path / "model.gguf", tmp_path / "states"
    model.write_bytes(b"weights" * 1000)
    folder.mkdir(mode=0o700)
    digest = hashlib.sha256(model.read_bytes()).hexdigest()
    assert pc.model_fingerprint(model, folder) == f"sha256:{digest}"
    [(version, remembered)] = pc.read_hashes(folder).items()
    assert remembered == digest and version.endswith(f":{model.stat().st_size}:"
                                                     f"{model.stat().st_mtime_ns}")
    pc.remember_hash(folder, version, "0" * 64)  # the record is what is used, not the file
    assert pc.model_fingerprint(model, folder) == f"sha256:{'0' * 64}"
    os.utime(model, ns=(model.stat().st_atime_ns, model.stat().st_mtime_ns + 1000))
    assert pc.model_fingerprint(model, folder) == f"sha256:{digest}"  # a new version: hashed
    assert len(pc.read_hashes(folder)) == 2


@pytest.mark.parametrize(("record", "why"), [
    (b"not json", "Expecting value"),
    (b"[" * 100_000, "nested deeper"),
    (b"[1, 2]", "not a record"),
    (b'{"format": 1, "files": [1]}', "not a record"),
    (b'{"format": 99, "files": {}}', "not a record"),
    (b'{"format": 1, "files": {}, "pad": "' + b"x" * (1 << 20) + b'"}', "over 1048576 bytes"),
    (b'{"format": 1, "files": {"1:2:3:4": "short", "x": "' + b"0" * 64 + b'"}}', None),
])
def test_a_hostile_hash_record_is_ignored(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, record: bytes, why: str | None,
) -> None:
    """Malformed records are a warning; ill-formed pairs are dropped; the file is hashed."""
    model, folder = tmp_path / "model.gguf", tmp_path / "states"
    model.write_bytes(b"weights")
    folder.mkdir(mode=0o700)
    (folder / pc.HASHES_FILE).write_bytes(record)
    with caplog.at_level(logging.WARNING, LOGGER):
        assert pc.read_hashes(folder) == {}
    assert [why in said for said in warnings(caplog)] == ([True] if why else [])
    digest = hashlib.sha256(b"weights").hexdigest()
    assert pc.model_fingerprint(model, folder) == f"sha256:{digest}"
    assert list(pc.read_hashes(folder).values()) == [digest]  # a valid record again


@posix
def test_a_hash_record_through_a_link_or_a_fifo_is_not_read(tmp_path: Path) -> None:
    model, folder = tmp_path / "model.gguf", tmp_path / "states"
    model.write_bytes(b"weights")
    folder.mkdir(mode=0o700)
    version = f"{model.stat().st_dev}:{model.stat().st_ino}:7:{model.stat().st_mtime_ns}"
    planted = tmp_path / "planted.json"
    planted.write_text(json.dumps({"format": 1, "files": {version: "0" * 64}}))
    (folder / pc.HASHES_FILE).symlink_to(planted)
    assert pc.read_hashes(folder) == {}
    (folder / pc.HASHES_FILE).unlink()
    os.mkfifo(folder / pc.HASHES_FILE)
    assert pc.read_hashes(folder) == {}  # without waiting for a writer


# --- the folder and its files must be private ---------------------------------------------------


def planted(tmp_path: Path) -> PromptStateCache:
    """A cache whose folder holds a valid entry (as one planted by another user would be)."""
    store = cache(tmp_path)
    store.folder.mkdir(mode=0o700)
    write_entry(store.path(KEY), KEY, PREFIX, STATE)
    return store


@posix
def test_a_new_folder_is_private(tmp_path: Path) -> None:
    store = cache(tmp_path)
    store.put(KEY, PREFIX, STATE)
    assert store.folder.stat().st_mode & 0o777 == 0o700
    assert store.path(KEY).stat().st_mode & 0o777 == 0o600


@posix
@pytest.mark.parametrize("fault", ["world-writable", "group-writable", "another owner"])
def test_a_folder_others_can_write_is_not_used(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch,
    fault: str,
) -> None:
    """Whoever can write to the folder can compute a key and plant a state: nothing there is
    read, nothing written, one warning names the folder and the fix."""
    store = planted(tmp_path)
    if fault == "another owner":  # as root, test the check: "this user" is someone else
        monkeypatch.setattr(pc.os, "geteuid", lambda: os.getuid() + 4242, raising=False)
    else:
        store.folder.chmod(0o777 if fault == "world-writable" else 0o770)
    other = state_key(DESCRIPTION, (1, 2))
    with caplog.at_level(logging.WARNING, LOGGER):
        assert store.get(KEY, PREFIX) is None
        store.put(other, (1, 2), STATE)
    assert not store.path(other).exists()
    assert store.get(other, (1, 2)) == (STATE, "memory")
    [said] = warnings(caplog)
    assert str(store.folder) in said and "chmod 700" in said and pc.DIR_ENV_VAR in said
    assert ("owned by user" if fault == "another owner" else "writable by") in said


@posix
@pytest.mark.parametrize("fault", ["group-writable", "another owner", "symlink", "fifo"])
def test_an_entry_that_is_not_a_private_regular_file_is_refused(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch,
    fault: str,
) -> None:
    store = planted(tmp_path)
    path = store.path(KEY)
    elsewhere = tmp_path / "elsewhere.kv"
    if fault == "group-writable":
        path.chmod(0o660)
    elif fault == "another owner":
        real = os.stat
        folder = os.stat(store.folder)

        def owned_by_another(target: Any, *args: Any, **kwargs: Any) -> os.stat_result:
            found = real(target, *args, **kwargs)
            if found.st_ino == folder.st_ino:
                return found
            fields = list(found)
            fields[4] = found.st_uid + 4242
            return os.stat_result(fields)

        for name in ("lstat", "fstat"):  # the entry only: the folder stays ours
            monkeypatch.setattr(pc.os, name, owned_by_another)
    elif fault == "symlink":
        path.rename(elsewhere)  # a valid entry, named through a link
        path.symlink_to(elsewhere)
    else:
        path.unlink()
        os.mkfifo(path)  # opening it for reading would wait for a writer forever
    outcome: list[Any] = []
    reader = threading.Thread(target=lambda: outcome.append(store.get(KEY, PREFIX)),
                              daemon=True)
    with caplog.at_level(logging.WARNING, LOGGER):
        reader.start()
        reader.join(timeout=120)  # a generous guard: the read must not block
    assert not reader.is_alive() and outcome == [None]
    [said] = warnings(caplog)
    reason = {"group-writable": "writable by its group", "another owner": "owned by user",
              "symlink": "a symbolic link", "fifo": "a FIFO"}[fault]
    assert reason in said and "Ignoring the saved prompt state" in said
    monkeypatch.undo()
    store.put(KEY, PREFIX, STATE)  # writing replaces it by a private regular file
    assert path.is_file() and not path.is_symlink()
    assert read_entry(path, KEY, PREFIX, 1 << 20) == STATE
    if fault == "symlink":
        assert read_entry(elsewhere, KEY, PREFIX, 1 << 20) == STATE  # not written through


@posix
def test_the_trust_checks_on_a_file_status() -> None:
    me = os.geteuid()
    status = os.stat_result((stat.S_IFREG | 0o644, 1, 1, 1, me, 0, 10, 0, 0, 0))
    assert pc.ownership_problem(status) is None
    assert pc.ownership_problem(os.stat_result((stat.S_IFREG | 0o646, 1, 1, 1, me, 0, 10, 0,
                                                0, 0))) == "writable by others"
    assert pc.ownership_problem(os.stat_result((stat.S_IFREG | 0o644, 1, 1, 1, me + 1, 0, 10,
                                                0, 0, 0))) == (
        f"owned by user {me + 1}, not by you (user {me})")
