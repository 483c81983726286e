"""Whether llama.cpp's fast CPU path runs on this machine, decided before it can kill the process.

llama.cpp repacks weights into *extra buffer types* (its ``use_extra_bufts`` model parameter) to
use its fastest CPU kernels: AMX tiles, AVX-512 and AVX2 repacked layouts. Some virtual machines
advertise instructions that they do not actually run (an AMX flag in ``/proc/cpuinfo``, for
example); the first prompt longer than a few tokens then ends the whole process with
``SIGILL``, which Python cannot catch. So the question is asked of a child process:
it loads the model, evaluates a prompt of a few hundred tokens, generates a few, and exits
(:func:`run_probe`, about 5-15 s). The verdict is cached per llama-cpp-python version, llama.cpp
build, CPU and model file (:func:`probe_key`); later loads read it in microseconds.

Forcing a choice (no probe): ``LlamaCppModel(extra_buffer_types=True | False)`` or the
environment variable ``REACT_AGENT_EXTRA_BUFFER_TYPES`` = ``1`` / ``0`` (``auto`` or unset: probe).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
import logging
import os
import platform
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

from filelock import FileLock

from .._paths import cache_dir
from .._persist import write_atomically
from ..errors import ConfigError

log = logging.getLogger(__name__)

ENV_VAR = "REACT_AGENT_EXTRA_BUFFER_TYPES"
CACHE_FILE = "cpu-probe.json"
PROBE_TIMEOUT = 600.0  # seconds; a probe on 2 busy cores takes 5-30 s
# Deaths that mean "this CPU does not run the code it was given": cached as a verdict.
CPU_FAULT_SIGNALS = (signal.SIGILL, signal.SIGSEGV, signal.SIGBUS, signal.SIGFPE)

Source = Literal["forced", "environment", "cached", "probed", "inconclusive"]


@dataclass(frozen=True)
class Verdict:
    """The configuration to load llama.cpp with, and why.

    Attributes:
        extra_buffer_types: ``True`` = llama.cpp's default fast path (weight repacking);
            ``False`` = the safe configuration (``use_extra_bufts = False``).
        reason: one sentence for a user ("a probe ... died by SIGILL ...").
        source: how it was decided: forced by the caller, the environment variable, a cached
            probe, a new probe, or an inconclusive probe (safe for this process, not cached).
    """

    extra_buffer_types: bool
    reason: str
    source: Source


_said: set[str] = set()  # reasons already logged in this process ("say it once")


def decide(
    model_path: Path,
    forced: bool | None = None,
    *,
    cache_file: Path | None = None,
    probe_command: Sequence[str] | None = None,
    timeout: float = PROBE_TIMEOUT,
) -> Verdict:
    """Decide whether to load ``model_path`` with llama.cpp's extra buffer types.

    Order: ``forced``, then ``$REACT_AGENT_EXTRA_BUFFER_TYPES``, then the cached verdict for
    :func:`probe_key`, then a new probe in a child process (its verdict cached when the child
    exited cleanly or died by a CPU fault: SIGILL, SIGSEGV, SIGBUS, SIGFPE). A probe that fails
    otherwise (time-out, exit status, another signal) gives the safe configuration for this
    process only. A safe verdict is logged once per process as a WARNING on this module's logger.
    Concurrent processes probe once: the cache is read and written under a file lock.

    Args:
        model_path: the GGUF file to be loaded.
        forced: ``True``/``False`` skips the probe; ``None`` decides as above.
        cache_file: where verdicts are kept; default ``<cache dir>/cpu-probe.json`` (see
            :func:`react_agent._paths.cache_dir`).
        probe_command: the child to run instead of :func:`probe_command_for` (tests).
        timeout: seconds the probe may take.

    Raises:
        ConfigError: the environment variable holds something other than 1/0/on/off/auto.
    """
    if forced is not None:
        return Verdict(forced, f"extra_buffer_types={forced} was passed to LlamaCppModel",
                       "forced")
    from_env = _from_environment()
    if from_env is not None:
        return _said_once(Verdict(from_env, f"{ENV_VAR}={os.environ[ENV_VAR]} is set",
                                  "environment"))
    cache_file = cache_file or cache_dir() / CACHE_FILE
    key = probe_key(model_path)
    cache_file.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(cache_file) + ".lock"):
        cached = _cached_verdict(_read_cache(cache_file).get(key))
        if cached is not None:
            return _said_once(cached)
        log.info("Checking once whether llama.cpp's fast CPU path runs on this machine ...")
        verdict = run_probe(probe_command or probe_command_for(model_path), timeout)
        if verdict.source == "probed":
            entries = _read_cache(cache_file)
            entries[key] = {**asdict(verdict), "probed_at": time.strftime("%Y-%m-%dT%H:%M:%S")}
            write_atomically(cache_file, json.dumps(entries, indent=1, sort_keys=True) + "\n")
    return _said_once(verdict)


def run_probe(command: Sequence[str], timeout: float = PROBE_TIMEOUT) -> Verdict:
    """Run the probe child ``command`` and turn its end into a :class:`Verdict`.

    Exit 0 → fast path (``source="probed"``); death by a CPU-fault signal → safe configuration
    (``"probed"``, to be cached); anything else → safe configuration, ``"inconclusive"``.
    """
    try:
        done = subprocess.run(
            list(command), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, timeout=timeout, check=False,
        )
    except subprocess.TimeoutExpired:
        return Verdict(False, f"the CPU probe did not finish within {timeout:g} s, so the safe "
                       "configuration is used for now", "inconclusive")
    except OSError as exc:
        return Verdict(False, f"the CPU probe could not start ({exc})", "inconclusive")
    if done.returncode == 0:
        return Verdict(True, "a probe ran llama.cpp's fast CPU path here without fault", "probed")
    if done.returncode < 0:
        number = -done.returncode
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        if number in CPU_FAULT_SIGNALS:
            why = ("this CPU advertises instructions it does not run" if name == "SIGILL"
                   else "that path faults on this CPU")
            return Verdict(False, f"a probe of llama.cpp's fast CPU path died by {name} ({why})",
                           "probed")
        return Verdict(False, f"the CPU probe was ended by {name}", "inconclusive")
    last = (done.stderr or b"").decode(errors="replace").strip().splitlines()[-1:] or [""]
    return Verdict(False, f"the CPU probe exited with status {done.returncode}: {last[0][:200]}",
                   "inconclusive")


def probe_command_for(model_path: Path) -> list[str]:
    """The child process that probes ``model_path`` (runs :func:`probe_child`)."""
    code = f"import sys; from {__name__} import probe_child; probe_child(sys.argv[1])"
    return [sys.executable, "-c", code, str(model_path)]


def probe_key(model_path: Path) -> str:
    """A hash naming what the verdict depends on: llama-cpp-python's version, its llama.cpp
    build (the shared libraries' names, sizes and modification times), the CPU (model name and
    advertised flags) and the model file (name and size). Reads files only: no llama.cpp code
    runs here."""
    parts = {
        "llama-cpp-python": _package_version(),
        "build": _library_fingerprint(),
        "cpu": _cpu_description(),
        "model": [Path(model_path).name, _size(Path(model_path))],
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:32]


def _from_environment() -> bool | None:
    value = os.environ.get(ENV_VAR, "").strip().lower()
    if value in ("", "auto"):
        return None
    if value in ("1", "on", "true", "yes"):
        return True
    if value in ("0", "off", "false", "no"):
        return False
    raise ConfigError(f"{ENV_VAR}={os.environ[ENV_VAR]!r} is not understood: use 1 (llama.cpp's "
                      "fast path), 0 (the safe configuration) or auto (probe once).")


def _said_once(verdict: Verdict) -> Verdict:
    if not verdict.extra_buffer_types and verdict.reason not in _said:
        _said.add(verdict.reason)
        log.warning("llama.cpp runs without extra buffer types (no weight repacking) because "
                    "%s; %s=1 turns them on.", verdict.reason, ENV_VAR)
    return verdict


def _read_cache(path: Path) -> dict[str, dict[str, object]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}  # missing or corrupt: probe again, then rewrite it whole
    return data if isinstance(data, dict) else {}


def _cached_verdict(entry: object) -> Verdict | None:
    """The verdict a cache entry holds, or ``None`` if it holds none (a damaged entry)."""
    if not isinstance(entry, dict):
        return None
    enabled, reason = entry.get("extra_buffer_types"), entry.get("reason")
    if isinstance(enabled, bool) and isinstance(reason, str):
        return Verdict(enabled, reason, "cached")
    return None


def _package_version() -> str:
    try:
        return importlib.metadata.version("llama-cpp-python")
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def _library_fingerprint() -> list[list[object]]:
    spec = importlib.util.find_spec("llama_cpp")
    if spec is None or not spec.submodule_search_locations:
        return []
    found = []
    for folder in spec.submodule_search_locations:
        for path in sorted(Path(folder).rglob("*")):
            if path.suffix in (".so", ".dylib", ".dll") or ".so." in path.name:
                stat = path.stat()
                found.append([path.name, stat.st_size, stat.st_mtime_ns])
    return found


def _cpu_description() -> list[str]:
    described = [platform.machine(), platform.processor()]
    try:
        cpuinfo = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        return described
    for field in ("model name", "flags", "Features"):  # Features: the ARM name for flags
        for line in cpuinfo.splitlines():
            if line.split(":")[0].strip() == field:
                described.append(line.split(":", 1)[1].strip())
                break
    return described


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return -1


def probe_child(model_path: str) -> None:
    """The probe child's work: load with llama.cpp's defaults (extra buffer types on), evaluate a
    prompt of a few hundred tokens (the batched kernels that use repacked weights), generate a
    few tokens (the single-token kernels). A fault here kills only this child."""
    from llama_cpp import Llama

    llm = Llama(model_path=model_path, n_ctx=1024, n_threads=os.cpu_count() or 1, verbose=False)
    words = "The quick brown fox jumps over the lazy dog while counting 1, 2, 3 and 4. "
    prompt = words * 12  # about 200 tokens
    llm.create_completion(prompt, max_tokens=4, temperature=0.0)
