"""The test suite's own guard (tests/conftest.py): under ``REACT_AGENT_REQUIRE_REAL_MODEL=1``
(set by .ci/run) a session in which a real-model test did not run fails, whatever skipped it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

CONFTEST = Path(__file__).with_name("conftest.py")
SUITE = '''
import pytest

@pytest.mark.real_model
def test_runs():
    assert True

@pytest.mark.real_model
def test_skips():
    pytest.skip("no model here")

def test_fast():
    assert True
'''


def run_suite(tmp_path: Path, *args: str, require: bool) -> subprocess.CompletedProcess[str]:
    (tmp_path / "conftest.py").write_text(CONFTEST.read_text())
    (tmp_path / "test_suite.py").write_text(SUITE)
    (tmp_path / "pytest.ini").write_text(
        "[pytest]\nmarkers =\n    real_model: needs the model\naddopts = --strict-markers -ra\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "REACT_AGENT_REQUIRE_REAL_MODEL"}
    if require:
        env["REACT_AGENT_REQUIRE_REAL_MODEL"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args], cwd=tmp_path,
        env=env, capture_output=True, text=True, check=False,
    )


def test_a_skipped_real_model_test_fails_the_session_under_ci(tmp_path: Path) -> None:
    done = run_suite(tmp_path, require=True)
    assert done.returncode == pytest.ExitCode.TESTS_FAILED
    assert "1 of 2 real-model tests did not run" in done.stdout
    assert "test_suite.py::test_skips" in done.stdout


def test_outside_ci_a_skip_is_reported_not_failed(tmp_path: Path) -> None:
    done = run_suite(tmp_path, require=False)
    assert done.returncode == pytest.ExitCode.OK
    assert "SKIPPED" in done.stdout and "no model here" in done.stdout  # -ra lists the reason


def test_deselecting_the_real_model_tier_is_allowed_under_ci(tmp_path: Path) -> None:
    done = run_suite(tmp_path, "-m", "not real_model", require=True)
    assert done.returncode == pytest.ExitCode.OK
    assert "1 passed, 2 deselected" in done.stdout
