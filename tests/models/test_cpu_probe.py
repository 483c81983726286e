"""The embedded model's CPU decision (react_agent.models._cpu_probe), without needing a CPU that
lies about its features: the probe children here really die by SIGILL, exit cleanly, or hang."""

from __future__ import annotations

import json
import logging
import platform
import sys
from pathlib import Path

import pytest

from react_agent.errors import ConfigError
from react_agent.models import _cpu_probe as cpu_probe
from react_agent.models._cpu_probe import ENV_VAR, decide, probe_key, run_probe

# A child that executes an illegal instruction (x86 `ud2`, AArch64 `udf #0`) from executable
# memory: the kernel kills it with SIGILL, exactly as an unsupported AMX instruction would.
ILLEGAL_INSTRUCTION = """
import ctypes, mmap, platform, os, signal
x86 = platform.machine() in ("x86_64", "AMD64", "i686")
code = b"\\x0f\\x0b" if x86 else b"\\x00\\x00\\x00\\x00"
try:
    page = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
except (AttributeError, OSError, ValueError):
    os.kill(os.getpid(), signal.SIGILL)  # no executable mappings allowed here
page.write(code)
address = ctypes.addressof(ctypes.c_char.from_buffer(page))
ctypes.CFUNCTYPE(None)(address)()
"""


def child(code: str, marker: Path | None = None) -> list[str]:
    """A probe command running ``code``; it first appends a line to ``marker`` (if given) so a
    test can count how many probes ran."""
    prefix = f"open({str(marker)!r}, 'a').write('ran\\n')\n" if marker else ""
    return [sys.executable, "-c", prefix + code]


def runs(marker: Path) -> int:
    return len(marker.read_text().splitlines()) if marker.exists() else 0


@pytest.fixture
def model_file(tmp_path: Path) -> Path:
    path = tmp_path / "model.gguf"
    path.write_bytes(b"GGUF" + bytes(60))
    return path


@pytest.fixture(autouse=True)
def no_forcing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)
    monkeypatch.setattr(cpu_probe, "_said", set())


@pytest.mark.skipif(sys.platform == "win32", reason="signals are POSIX")
def test_the_sigill_child_really_dies_by_sigill() -> None:
    verdict = run_probe(child(ILLEGAL_INSTRUCTION))
    assert verdict.extra_buffer_types is False
    assert "SIGILL" in verdict.reason and verdict.source == "probed"


def test_a_probe_dying_by_sigill_gives_the_safe_configuration_and_is_cached(
    tmp_path: Path, model_file: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cache, marker = tmp_path / "cache.json", tmp_path / "probes"
    with caplog.at_level(logging.WARNING, logger="react_agent"):
        first = decide(model_file, cache_file=cache, probe_command=child(ILLEGAL_INSTRUCTION,
                                                                          marker))
        again = decide(model_file, cache_file=cache, probe_command=child(ILLEGAL_INSTRUCTION,
                                                                          marker))
    assert (first.extra_buffer_types, first.source) == (False, "probed")
    assert (again.extra_buffer_types, again.source) == (False, "cached")
    assert runs(marker) == 1  # the second load read the cache
    entry = json.loads(cache.read_text())[probe_key(model_file)]
    assert entry["extra_buffer_types"] is False and "SIGILL" in entry["reason"]
    # said once, in one line, with the way to force the other choice
    said = [r.getMessage() for r in caplog.records if "extra buffer types" in r.getMessage()]
    assert len(said) == 1 and "\n" not in said[0] and f"{ENV_VAR}=1" in said[0]


def test_a_probe_that_succeeds_gives_the_fast_path_and_is_cached(
    tmp_path: Path, model_file: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cache, marker = tmp_path / "cache.json", tmp_path / "probes"
    with caplog.at_level(logging.WARNING, logger="react_agent"):
        first = decide(model_file, cache_file=cache, probe_command=child("pass", marker))
        again = decide(model_file, cache_file=cache, probe_command=child("pass", marker))
    assert (first.extra_buffer_types, first.source) == (True, "probed")
    assert (again.extra_buffer_types, again.source) == (True, "cached")
    assert runs(marker) == 1
    assert not caplog.records  # the fast path is not worth a word


@pytest.mark.parametrize("content", [
    "{not json", "[]", '{"KEY": "fast"}', '{"KEY": {"extra_buffer_types": "yes", "reason": 1}}',
])
def test_a_corrupt_cache_entry_leads_to_a_new_probe(
    tmp_path: Path, model_file: Path, content: str
) -> None:
    cache, marker = tmp_path / "cache.json", tmp_path / "probes"
    cache.write_text(content.replace("KEY", probe_key(model_file)))
    verdict = decide(model_file, cache_file=cache, probe_command=child("pass", marker))
    assert (verdict.extra_buffer_types, verdict.source, runs(marker)) == (True, "probed", 1)
    assert json.loads(cache.read_text())[probe_key(model_file)]["extra_buffer_types"] is True


def test_a_verdict_for_another_machine_or_model_is_not_reused(
    tmp_path: Path, model_file: Path
) -> None:
    cache, marker = tmp_path / "cache.json", tmp_path / "probes"
    cache.write_text(json.dumps({"0" * 32: {"extra_buffer_types": False, "reason": "elsewhere"}}))
    assert decide(model_file, cache_file=cache, probe_command=child("pass", marker)).source == (
        "probed")
    other = model_file.with_name("other.gguf")
    other.write_bytes(b"GGUF" + bytes(10))
    assert probe_key(other) != probe_key(model_file)
    assert decide(other, cache_file=cache, probe_command=child("pass", marker)).source == "probed"
    assert runs(marker) == 2 and len(json.loads(cache.read_text())) == 3


@pytest.mark.parametrize(("code", "timeout", "words"), [
    ("raise SystemExit('cannot load the model')", 60, "exited with status 1: cannot load"),
    ("import time; time.sleep(30)", 0.5, "did not finish within 0.5 s"),
    ("import os, signal; os.kill(os.getpid(), signal.SIGTERM)", 60, "ended by SIGTERM"),
])
def test_an_inconclusive_probe_is_safe_for_now_and_not_cached(
    tmp_path: Path, model_file: Path, code: str, timeout: float, words: str
) -> None:
    cache = tmp_path / "cache.json"
    verdict = decide(model_file, cache_file=cache, probe_command=child(code), timeout=timeout)
    assert (verdict.extra_buffer_types, verdict.source) == (False, "inconclusive")
    assert words in verdict.reason
    assert not cache.exists() or probe_key(model_file) not in json.loads(cache.read_text())


@pytest.mark.parametrize(("value", "expected"), [("1", True), ("on", True), ("0", False),
                                                 ("OFF", False)])
def test_the_environment_variable_forces_a_choice_without_a_probe(
    tmp_path: Path, model_file: Path, monkeypatch: pytest.MonkeyPatch, value: str,
    expected: bool,
) -> None:
    monkeypatch.setenv(ENV_VAR, value)
    marker = tmp_path / "probes"
    verdict = decide(model_file, cache_file=tmp_path / "c.json",
                     probe_command=child("pass", marker))
    assert (verdict.extra_buffer_types, verdict.source, runs(marker)) == (
        expected, "environment", 0)


def test_the_argument_wins_over_the_environment(
    tmp_path: Path, model_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_VAR, "1")
    verdict = decide(model_file, False, cache_file=tmp_path / "c.json")
    assert (verdict.extra_buffer_types, verdict.source) == (False, "forced")


def test_a_bad_environment_value_is_a_config_error(
    tmp_path: Path, model_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_VAR, "fast")
    with pytest.raises(ConfigError, match=f"{ENV_VAR}='fast'.*use 1"):
        decide(model_file, cache_file=tmp_path / "c.json")


def test_auto_means_probe(tmp_path: Path, model_file: Path,
                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_VAR, "auto")
    verdict = decide(model_file, cache_file=tmp_path / "c.json",
                     probe_command=child(ILLEGAL_INSTRUCTION))
    assert (verdict.extra_buffer_types, verdict.source) == (False, "probed")


def test_the_key_names_the_cpu_and_the_build(model_file: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    before = probe_key(model_file)
    monkeypatch.setattr(cpu_probe, "_cpu_description", lambda: ["x86_64", "another cpu"])
    assert probe_key(model_file) != before
    monkeypatch.undo()
    monkeypatch.setattr(cpu_probe, "_package_version", lambda: "0.0.1")
    assert probe_key(model_file) != before


def test_the_cpu_description_holds_the_advertised_flags() -> None:
    described = cpu_probe._cpu_description()
    assert described[0] == platform.machine()
    if Path("/proc/cpuinfo").exists() and platform.machine() == "x86_64":
        assert any(" sse2 " in f" {part} " for part in described)


def test_the_probe_child_loads_the_model_it_is_given(model_file: Path) -> None:
    """The real probe command on a file that is no model: it fails to load, which is
    inconclusive (safe for now), and the child's last error line is in the reason."""
    verdict = run_probe(cpu_probe.probe_command_for(model_file))
    assert (verdict.extra_buffer_types, verdict.source) == (False, "inconclusive")
    assert "exited with status 1" in verdict.reason
