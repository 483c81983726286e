"""A saved prompt state for the embedded model: the system prompt is evaluated once, then restored.

Every run starts by evaluating its system prompt (about 1,000 tokens with the built-in tools,
~10 s on 2 cores) before the model writes a token. This module keeps llama.cpp's state (the KV
cache of sequence 0) for that *prefix* in memory for the life of the model and on disk in
``<cache dir>/prompt-cache/``, so that a reset before a task, a new run, a new process or a new
chat restores it in milliseconds instead.

How a prompt is evaluated so that a restored state replies exactly as a fresh evaluation (the
canonical order, and which prefix of a prompt is saved) is
:mod:`react_agent.models._canonical_start`'s; this module keeps the states.

**The key** of a saved state (:func:`state_key`) names everything that changes it: the model
file, llama-cpp-python's version and llama.cpp build, the CPU, the context parameters (context
size, batch sizes, threads, KV types), whether llama.cpp's extra buffer types are used (the CPU
probe's verdict) and the exact prefix tokens.

**The model file** is identified by its content: the verified SHA-256 of the bundled model,
else the SHA-256 of the whole file, computed once per version of the file (device, inode, size,
modification time) and remembered in the folder's ``model-hashes.json``.

**Files** (``<key>.kv``) hold a header (magic, format version, key, token count, state size,
SHA-256 of all of it), the prefix tokens and the state. They are written atomically (temporary
file, ``os.replace``) and verified before use: a truncated, corrupt, foreign or mismatched file
gives a warning on the ``react_agent`` logger and a fresh evaluation, never a wrong reply; a
full disk gives a warning. The folder is capped (least recently used files removed first).

**Trust.** Anyone who can write to the folder can compute a key and plant a state that passes
every check, so the folder must be private: it is created with mode 0700, and on POSIX systems
nothing is read or written there (one warning says why and how to fix it) unless the folder is
owned by this user and writable by no one else. A file is read only if it is a regular file
(opened without following a symbolic link and without blocking on a FIFO) owned by this user
and writable by no one else. A secret key (an HMAC) would add nothing: whoever can write to the
folder could read a key kept there.

Settings: ``LlamaCppModel(prompt_cache=False)`` turns it off; the disk cap is
``$REACT_AGENT_PROMPT_CACHE_MB`` megabytes (default 512, at most 1 TiB; 0 = nothing on disk, the
state is then kept in memory only); ``$REACT_AGENT_PROMPT_CACHE_DIR`` moves the folder.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import logging
import os
import re
import stat
import struct
import tempfile
import time
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from .._paths import cache_dir
from .._persist import loads
from ..errors import ConfigError

log = logging.getLogger(__name__)

SIZE_ENV_VAR = "REACT_AGENT_PROMPT_CACHE_MB"
DIR_ENV_VAR = "REACT_AGENT_PROMPT_CACHE_DIR"
DEFAULT_DISK_MB = 512.0
MAX_DISK_MB = 1024.0 * 1024  # 1 TiB
MEMORY_ENTRIES = 4  # prefixes kept in memory per model (a run uses one or two)
FORMAT_VERSION = 1
MAGIC = b"RAKVSTAT"
SUFFIX = ".kv"
HEADER = struct.Struct("<8sHH32sIQ32s")  # magic, version, 0, key, n_tokens, state size, digest
STALE_TMP_SECONDS = 3600.0  # a temporary file this old was left by a writer that died
HASHES_FILE = "model-hashes.json"  # the SHA-256 of model files, by file version
HASHES_KEPT = 64
HASHES_MAX_BYTES = 1 << 20
HASH_CHUNK = 1 << 20

Tokens = tuple[int, ...]
_NAME = re.compile(r"^[0-9a-f]{64}\.kv$")
_TMP = re.compile(r"^\.(?:[0-9a-f]{64}\.kv|model-hashes\.json)\..*\.tmp$")  # temporary files
_VERSION = re.compile(r"^\d{1,20}:\d{1,20}:\d{1,20}:\d{1,20}$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


class BadEntry(ValueError):
    """A cache file that cannot be used (the message says why)."""


def cache_folder(folder: str | os.PathLike[str] | None = None) -> Path:
    """Where saved prompt states live: ``folder``, else ``$REACT_AGENT_PROMPT_CACHE_DIR``, else
    ``<cache dir>/prompt-cache`` (see :func:`react_agent._paths.cache_dir`)."""
    if folder is not None:
        return Path(folder)
    if os.environ.get(DIR_ENV_VAR):
        return Path(os.environ[DIR_ENV_VAR])
    return cache_dir() / "prompt-cache"


def disk_cap(megabytes: float | None = None) -> int:
    """The disk cap in bytes: ``megabytes``, else ``$REACT_AGENT_PROMPT_CACHE_MB``, else 512 MB.

    Raises:
        ConfigError: the value is not a number from 0 to 1048576 (1 TiB).
    """
    source = "prompt_cache_mb"
    value: object = megabytes
    if value is None and os.environ.get(SIZE_ENV_VAR, "").strip():
        source, value = SIZE_ENV_VAR, os.environ[SIZE_ENV_VAR].strip()
    if value is None:
        value = DEFAULT_DISK_MB
    try:
        number = -1.0 if isinstance(value, bool) else float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        number = -1.0
    if not 0 <= number <= MAX_DISK_MB:  # also NaN and infinities
        raise ConfigError(f"{source}={value!r} is not understood: give the prompt cache's size "
                          f"on disk in megabytes, from 0 (keep it in memory only) to "
                          f"{MAX_DISK_MB:.0f} (1 TiB).")
    return int(number * 1024 * 1024)


# ---------------------------------------------------------------------------------------------
# Trust


def ownership_problem(st: os.stat_result) -> str | None:
    """Why a file or folder with this status cannot be trusted: not owned by this process's
    user, or writable by its group or others; ``None`` when it can (and where there are no
    POSIX owners: Windows)."""
    geteuid = getattr(os, "geteuid", None)
    if geteuid is None:
        return None
    if st.st_uid != geteuid():
        return f"owned by user {st.st_uid}, not by you (user {geteuid()})"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"writable by {'others' if st.st_mode & stat.S_IWOTH else 'its group'}"
    return None


def open_trusted(path: Path) -> int:
    """A descriptor of ``path`` open for reading, if it is a regular file that this user owns and
    nobody else can write: a symbolic link is not followed and a FIFO or device is not opened
    (and the file is opened without following links or blocking, should it change meanwhile).

    Raises:
        FileNotFoundError: there is no such file.
        BadEntry: it is not such a file (the message says what it is).
        OSError: it cannot be opened.
    """
    _check_file(os.lstat(path))
    flags = os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise BadEntry("a symbolic link") from exc
        raise
    try:
        _check_file(os.fstat(fd))
    except BaseException:
        os.close(fd)
        raise
    return fd


def _check_file(st: os.stat_result) -> None:
    if not stat.S_ISREG(st.st_mode):
        kinds = [(stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a FIFO"),
                 (stat.S_ISDIR, "a folder"), (stat.S_ISSOCK, "a socket")]
        kind = next((name for test, name in kinds if test(st.st_mode)), "a device")
        raise BadEntry(f"{kind}, not a regular file")
    problem = ownership_problem(st)
    if problem:
        raise BadEntry(problem)


# ---------------------------------------------------------------------------------------------
# The key


def model_fingerprint(path: Path, folder: Path | None = None) -> str:
    """What identifies the model file's content: ``sha256:<hex>``, the verified SHA-256 of the
    bundled model, else the SHA-256 of the whole file, computed once per version of the file
    (device, inode, size, modification time) and remembered in ``folder`` (see
    :func:`read_hashes`). Without ``folder`` (states kept in this process's memory only), the
    file's version alone: ``file:<device>:<inode>:<size>:<mtime_ns>``.

    ``folder`` must have been found private (:meth:`PromptStateCache.disk`).

    Raises:
        OSError: the file cannot be read.
    """
    from ._weights import DEFAULT_MODEL_FILE, DEFAULT_MODEL_SHA256, DEFAULT_MODEL_SIZE, is_verified

    if path.name == DEFAULT_MODEL_FILE and is_verified(path, DEFAULT_MODEL_SHA256,
                                                       DEFAULT_MODEL_SIZE):
        return f"sha256:{DEFAULT_MODEL_SHA256}"
    if folder is None:
        return f"file:{_file_version(os.stat(path))}"
    with open(path, "rb") as f:
        version = _file_version(os.fstat(f.fileno()))
        known = read_hashes(folder).get(version)
        if known:
            return f"sha256:{known}"
        digest = hashlib.sha256()
        while chunk := f.read(HASH_CHUNK):
            digest.update(chunk)
        unchanged = _file_version(os.fstat(f.fileno())) == version
    if unchanged:  # not changed while it was read
        remember_hash(folder, version, digest.hexdigest())
    return f"sha256:{digest.hexdigest()}"


def _file_version(st: os.stat_result) -> str:
    return f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}"


def read_hashes(folder: Path) -> dict[str, str]:
    """The remembered SHA-256 of model files in ``folder``'s ``model-hashes.json``:
    ``{"device:inode:size:mtime_ns": "<64 hex digits>"}``. The file is read as :func:`read_entry`
    reads (a trusted regular file), at most 1 MiB, and only well-formed pairs are taken; a file
    that cannot be read or is not such a record is a warning and gives ``{}``."""
    path = folder / HASHES_FILE
    try:
        fd = open_trusted(path)
        with os.fdopen(fd, "rb") as f:
            raw = f.read(HASHES_MAX_BYTES + 1)
    except FileNotFoundError:
        return {}
    except (BadEntry, OSError) as exc:
        log.warning("Ignoring %s (%s); the model file is hashed again.", path, exc)
        return {}
    try:
        if len(raw) > HASHES_MAX_BYTES:
            raise ValueError(f"over {HASHES_MAX_BYTES} bytes")
        record = loads(raw)
        if not isinstance(record, dict) or record.get("format") != FORMAT_VERSION \
                or not isinstance(record.get("files"), dict):
            raise ValueError("not a record of model hashes")
        files = record["files"]
    except ValueError as exc:  # not JSON, or nested too deep
        log.warning("Ignoring %s (%s); the model file is hashed again.", path, exc)
        return {}
    return {version: digest for version, digest in files.items()
            if isinstance(version, str) and _VERSION.match(version)
            and isinstance(digest, str) and _SHA256.match(digest)}


def remember_hash(folder: Path, version: str, digest: str) -> None:
    """Add a model file's SHA-256 to ``folder``'s ``model-hashes.json`` (written atomically; the
    last :data:`HASHES_KEPT` kept). A failed write is logged at debug level: the file is then
    hashed again next time."""
    files = {v: d for v, d in read_hashes(folder).items() if v != version}
    files[version] = digest
    kept = dict(list(files.items())[-HASHES_KEPT:])
    data = json.dumps({"format": FORMAT_VERSION, "files": kept}, indent=1).encode()
    try:
        _write_atomically(folder / HASHES_FILE, [data])
    except OSError as exc:
        log.debug("Cannot remember the model's hash in %s (%s).", folder, exc)


def build_description(llama: Any, extra_buffer_types: bool | None,
                      folder: Path | None = None) -> dict[str, Any]:
    """Everything about this llama.cpp build, machine and context that changes a saved state,
    except the prefix tokens (see :func:`state_key`); ``folder``: where the model file's hash is
    remembered (see :func:`model_fingerprint`).

    Raises:
        OSError: the model file cannot be read.
    """
    import llama_cpp

    from ._cpu_probe import _cpu_description, _library_fingerprint

    params = llama.context_params
    return {
        "format": FORMAT_VERSION,
        "model": model_fingerprint(Path(llama.model_path), folder),
        "llama-cpp-python": getattr(llama_cpp, "__version__", "?"),
        "system": llama_cpp.llama_print_system_info().decode("utf-8", "replace"),
        "build": _library_fingerprint(),
        "cpu": _cpu_description(),
        "extra_buffer_types": extra_buffer_types,
        "context": {name: _plain(getattr(params, name, None)) for name in (
            "n_ctx", "n_batch", "n_ubatch", "n_seq_max", "n_threads", "n_threads_batch",
            "type_k", "type_v", "flash_attn_type", "swa_full", "kv_unified", "offload_kqv",
            "rope_freq_base", "rope_freq_scale", "yarn_ext_factor")},
        "llama_n_batch": llama.n_batch,
    }


def _plain(value: Any) -> Any:
    return value if isinstance(value, (int, float, str, bool, type(None))) else repr(value)


def state_key(description: dict[str, Any], tokens: Sequence[int]) -> bytes:
    """The 32-byte key of the state after ``tokens`` under ``description``."""
    digest = hashlib.sha256(json.dumps(description, sort_keys=True).encode())
    digest.update(_pack_tokens(tokens))
    return digest.digest()


def _pack_tokens(tokens: Sequence[int]) -> bytes:
    return struct.pack(f"<{len(tokens)}i", *tokens)


# ---------------------------------------------------------------------------------------------
# Files


def write_entry(path: Path, key: bytes, tokens: Sequence[int], state: bytes) -> None:
    """Write one saved state to ``path`` atomically (temporary file, flushed, ``os.replace``).

    Raises:
        OSError: the folder is not writable or the disk is full; ``path`` is then unchanged.
    """
    packed = _pack_tokens(tokens)
    fields = (MAGIC, FORMAT_VERSION, 0, key, len(tokens), len(state))
    digest = _digest(HEADER.pack(*fields, b"\0" * 32), packed, state)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    _write_atomically(path, [HEADER.pack(*fields, digest), packed, state])


def _write_atomically(path: Path, parts: Sequence[bytes]) -> None:
    """Write ``parts`` to ``path`` through a temporary file (mode 0600) and ``os.replace``,
    which replaces whatever ``path`` was (a symbolic link is replaced, not followed).

    Raises:
        OSError: ``path`` is then unchanged.
    """
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        try:
            for part in parts:
                _write_all(fd, part)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written <= 0:  # pragma: no cover - os.write raises instead
            raise OSError(errno.EIO, "nothing written")
        view = view[written:]


def _digest(header: bytes, packed: bytes, state: bytes) -> bytes:
    digest = hashlib.sha256(header)
    digest.update(packed)
    digest.update(state)
    return digest.digest()


def read_entry(path: Path, key: bytes, tokens: Sequence[int], max_state: int) -> bytes:
    """The state saved in ``path`` for ``key`` and ``tokens``, verified: a regular file this user
    owns that nobody else can write (:func:`open_trusted`), header, sizes (the file must be
    exactly as long as its header says, the state at most ``max_state`` bytes), key, tokens and
    SHA-256. Reads at most the expected number of bytes.

    Raises:
        FileNotFoundError: there is no such file.
        BadEntry: the file is not a trusted regular file, or truncated, corrupt, foreign or for
            another key or prefix.
        OSError: it cannot be read.
    """
    with os.fdopen(open_trusted(path), "rb") as f:
        size = os.fstat(f.fileno()).st_size
        raw = f.read(HEADER.size)
        if len(raw) < HEADER.size:
            raise BadEntry(f"{size} bytes, shorter than a header")
        magic, version, _, found_key, n_tokens, n_state, digest = HEADER.unpack(raw)
        if magic != MAGIC:
            raise BadEntry("not a react-agent prompt state")
        if version != FORMAT_VERSION:
            raise BadEntry(f"format version {version}, expected {FORMAT_VERSION}")
        if found_key != key:
            raise BadEntry("saved for another model, build, configuration or prompt")
        if n_tokens != len(tokens):
            raise BadEntry(f"{n_tokens} tokens, expected {len(tokens)}")
        if n_state == 0:
            raise BadEntry("an empty state")
        if n_state > max_state:
            raise BadEntry(f"a state of {n_state} bytes, over the limit of {max_state}")
        expected = HEADER.size + 4 * n_tokens + n_state
        if size != expected:
            raise BadEntry(f"{size} bytes, expected {expected} (truncated or extended)")
        packed = f.read(4 * n_tokens)
        state = f.read(n_state)
    if len(packed) != 4 * n_tokens or len(state) != n_state:
        raise BadEntry("shorter than its header says")
    if packed != _pack_tokens(tokens):
        raise BadEntry("saved for other prefix tokens")
    header = HEADER.pack(MAGIC, version, 0, found_key, n_tokens, n_state, b"\0" * 32)
    if _digest(header, packed, state) != digest:
        raise BadEntry("its checksum does not match (corrupt)")
    return state


class PromptStateCache:
    """Saved states: the last few in memory, and files in ``folder`` up to ``cap`` bytes
    (``cap`` 0: memory only); least recently used files are removed first. The folder is used
    only while it is private (:meth:`disk`)."""

    def __init__(self, folder: Path, cap: int, memory_entries: int = MEMORY_ENTRIES) -> None:
        self.folder, self.cap, self.memory_entries = folder, cap, memory_entries
        self._memory: OrderedDict[bytes, tuple[Tokens, bytes]] = OrderedDict()
        self._warned: set[str] = set()

    def path(self, key: bytes) -> Path:
        return self.folder / (key.hex() + SUFFIX)

    def disk(self) -> bool:
        """Whether states are read from and written to the folder: ``cap`` > 0 and the folder
        (created with mode 0700 when missing) is owned by this user and writable by nobody
        else. Otherwise a warning, once, names the folder and the fix."""
        if self.cap <= 0:
            return False
        try:
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            st = os.stat(self.folder)
        except OSError as exc:
            self._warn_once(
                "folder", "Cannot use the prompt cache folder %s (%s); prompt states are kept "
                "in memory only, and a new process evaluates the system prompt again.",
                self.folder, exc.strerror or exc)
            return False
        problem = "not a folder" if not stat.S_ISDIR(st.st_mode) else ownership_problem(st)
        if problem:
            self._warn_once(
                "folder", "The prompt cache folder %s is %s, so anyone who can write there "
                "could plant a saved state: none is read or written there, they are kept in "
                "memory only. Make it a folder of yours that only you can write (chmod 700 %s), "
                "or set %s to one.", self.folder, problem, self.folder, DIR_ENV_VAR)
            return False
        return True

    def get(self, key: bytes, tokens: Sequence[int]) -> tuple[bytes, str] | None:
        """``(state, "memory" | "disk")`` for ``key`` and ``tokens``, or ``None``. A file that
        cannot be used is reported (a warning) and ignored."""
        found = self._memory.get(key)
        if found is not None and found[0] == tuple(tokens):
            self._memory.move_to_end(key)
            return found[1], "memory"
        if not self.disk():
            return None
        path = self.path(key)
        try:
            state = read_entry(path, key, tokens, self.cap)
        except FileNotFoundError:
            return None
        except BadEntry as exc:
            log.warning("Ignoring the saved prompt state %s: %s; the prompt is evaluated again.",
                        path, exc)
            return None
        except OSError as exc:
            log.warning("Cannot read the saved prompt state %s (%s); the prompt is evaluated "
                        "again.", path, exc.strerror or exc)
            return None
        with contextlib.suppress(OSError):
            os.utime(path)  # least recently used = oldest modification time
        self.remember(key, tokens, state)
        return state, "disk"

    def remember(self, key: bytes, tokens: Sequence[int], state: bytes) -> None:
        """Keep a state in memory (the oldest is forgotten beyond ``memory_entries``)."""
        self._memory[key] = (tuple(tokens), state)
        self._memory.move_to_end(key)
        while len(self._memory) > self.memory_entries:
            self._memory.popitem(last=False)

    def put(self, key: bytes, tokens: Sequence[int], state: bytes) -> None:
        """Keep a state in memory and on disk (when it fits the cap), then trim the folder to
        the cap. A failed write (a full disk, a read-only folder) is a warning, once."""
        self.remember(key, tokens, state)
        size = HEADER.size + 4 * len(tokens) + len(state)
        if size > self.cap:
            if self.cap > 0:
                log.debug("A prompt state of %d bytes is over the cache's cap (%d bytes): kept "
                          "in memory only.", size, self.cap)
            return
        if not self.disk():
            return
        try:
            write_entry(self.path(key), key, tokens, state)
        except OSError as exc:
            self._warn_once(
                "write", "Cannot save the prompt state in %s (%s); it is kept in memory only, "
                "and a new process evaluates the system prompt again.", self.folder,
                exc.strerror or exc)
            return
        self.trim()

    def trim(self) -> None:
        """Remove the least recently used files until the folder holds at most ``cap`` bytes,
        and temporary files left by writers that died."""
        files = []
        now = time.time()
        for path in self._entries():
            try:
                st = path.lstat()  # a symbolic link is the link, not what it names
            except OSError:  # removed by another process meanwhile
                continue
            if path.name.endswith(".tmp"):
                if now - st.st_mtime > STALE_TMP_SECONDS:
                    with contextlib.suppress(OSError):
                        path.unlink(missing_ok=True)
                continue
            files.append((st.st_mtime_ns, path.name, st.st_size, path))
        total = sum(size for _, _, size, _ in files)
        for _, _, size, path in sorted(files):
            if total <= self.cap:
                break
            try:
                path.unlink(missing_ok=True)
            except OSError as exc:
                self._warn_once("trim", "Cannot remove %s from the prompt cache (%s).", path,
                                exc.strerror or exc)
                return
            total -= size

    def _entries(self) -> Iterator[Path]:
        try:
            children = list(self.folder.iterdir())
        except OSError:
            return
        for path in children:
            if _NAME.match(path.name) or _TMP.match(path.name):
                yield path

    def _warn_once(self, what: str, message: str, *args: object) -> None:
        if what not in self._warned:
            self._warned.add(what)
            log.warning(message, *args)
