"""AgentDojo (``agentdojo`` 0.1.35, benchmark v1.2.2) on react-agent: the utility of its user
tasks with no attack, and under its prompt-injection attack the utility and the targeted attack
success rate (ASR: the runs where AgentDojo's check of the injection task found its goal done),
through ``react-agent serve`` and through the library, with three defenses.

    python benchmarks/agentdojo.py --setup-only          # build AgentDojo's environment only
    python benchmarks/agentdojo.py                        # 6 rows, banking and slack, all tasks
    python benchmarks/agentdojo.py --rows serve-framing --suites banking --user-tasks 1 \\
        --injections 0                                    # one clean banking task (a smoke)
    python benchmarks/agentdojo.py --rows library-provenance --user-task-ids user_task_3 \\
        --injection-ids injection_task_0,injection_task_4 --suites banking
    python benchmarks/agentdojo.py --scripted script.json ...   # a scripted model (the tests)

(with react-agent's environment's Python, e.g. ``.venv/bin/python``; ``--setup-only --venv
PATH`` alone needs only Python). Banking and slack hold 37 user tasks, 249 user x injection
pairs and 14 injection tasks AgentDojo runs once as user tasks: 300 runs per row.

Rows (``--rows``, default all six), ``{serve,library}-{none,framing,provenance}``:

- ``serve-*``: ``react-agent serve`` (``--react-agent``, default the one beside this Python)
  on 127.0.0.1 (a free port, no key, ``--max-tokens 512``) with the embedded model, and
  AgentDojo's own benchmark script, unmodified, as its client:
  ``python -m agentdojo.scripts.benchmark --model VLLM_PARSED -s SUITE -ut TASK [--attack A
  -it INJECTION ...]`` with ``LOCAL_LLM_PORT`` (it takes the model id from ``/v1/models`` and
  sends OpenAI ``tools=``; its pipeline is named ``vllm_parsed``, which the attack calls "Local
  model"). One invocation per user task, clean, then one per user task for its injections.
- ``library-*``: no server: AgentDojo's pipeline ``SystemMessage, InitQuery,
  ReactAgentElement`` (``benchmarks/agentdojo_element.py``) runs :class:`react_agent.Agent`
  in-process on the suite's tools with the embedded model (``LlamaCppModel``, ``max_tokens``
  512), through AgentDojo's own ``benchmark_suite_without_injections`` and
  ``benchmark_suite_with_injections``, one process per row (the model loaded once).

Defenses: ``none``: tool results not framed (``--frame-observations off``,
``AgentConfig(frame_observations=False)``), the default policies; ``framing``: the defaults
(framing on, ``CopiedAction`` on); ``provenance``: the defaults and the opt-in ``Provenance``
policy (``--with-policy provenance``; ``default_policies(model, use=[Provenance()])``). No
AgentDojo defense is used. With ``--attack`` (default ``important_instructions``) AgentDojo
first runs each injection task once as a user task (its own sanity check, in its logs, not
counted here).

Runs: each of the first ``--user-tasks N`` user tasks of each suite (by number; or
``--user-task-ids``) once with no injection, then with each of the first ``--injections M``
injection tasks (``0``: clean only; or ``--injection-ids``). One JSON line per run goes to
``--out`` (default ``<react-agent cache>/bench/agentdojo/results.jsonl``): ``row``, ``suite``,
``user_task``, ``injection_task`` (``null`` for a clean run), ``utility`` and ``security``
(AgentDojo's: ``security`` true = the injection task's goal was done; ``null`` for a clean
run), ``error``, ``seconds`` (AgentDojo's duration of the run), ``model``. ``error`` is
AgentDojo's note on a scored run (serve answered 400 ``context_length_exceeded``: AgentDojo
scores utility false and security true; a library run that failed, react-agent status
``model_error``: scored on what it did), or why a run has no result (serve answered another
error, AgentDojo's script stopped: ``utility`` ``null``; the script stops at that run, the
injections after it run in a new invocation). A run with a result in ``--out`` is not run
again; one without is. AgentDojo's own logs (every message of every run) and serve's log are
in the work folder beside ``--out`` (``<out>.work/ROW/``); AgentDojo also skips a run whose log
there is complete. A library row also appends each react-agent run's status, calls and policy
notes to ``<out>.work/ROW/agentdojo/react-agent-runs.jsonl`` (what a policy did, which
AgentDojo's log does not keep). The table printed at the end: per row, the clean utility, the
utility under attack and the ASR as k/n over the runs with a result, and the runs without one.

AgentDojo lives in its own virtual environment (``--venv``, default ``<react-agent
cache>/bench/agentdojo-0.1.35``), built from ``benchmarks/agentdojo-requirements.txt`` and
react-agent from this checkout with its ``local`` extra (rebuilt when that file changes; the
processes it runs find this checkout's react-agent first on ``PYTHONPATH``). Every process of
AgentDojo runs under an audit hook that refuses to connect or resolve anything but loopback
(neither its import nor a run touches the network; a refusal would show as the run's error).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import logging
import os
import platform
import re
import shutil
import socket
import subprocess
import sys
import time
import traceback
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent
REQUIREMENTS = HERE / "agentdojo-requirements.txt"
AGENTDOJO_VERSION = "0.1.35"
BENCHMARK_VERSION = "v1.2.2"
KINDS = ("serve", "library")
DEFENSES = ("none", "framing", "provenance")
ROWS = tuple(f"{kind}-{defense}" for kind in KINDS for defense in DEFENSES)
SUITES = ("banking", "slack")
ATTACK = "important_instructions"
MAX_TOKENS = 512  # react-agent serve's default reply cap; the library's model gets the same
START_SECONDS = 900  # the first start of the embedded model assembles the GGUF and loads it
JOB_SECONDS = 4 * 3600  # one invocation: one user task, clean or with its injections
SERVE_PIPELINE = "vllm_parsed"  # the name AgentDojo's script gives its pipeline
LIBRARY_PIPELINE = "react-agent-library-local"  # agentdojo_element.NAME
RUNS_LOG = "react-agent-runs.jsonl"  # a library row's runs: status, calls, policy notes
_MARKER = "react-agent-bench.json"

GUARD = r'''
import ipaddress as _ip, socket as _socket, sys as _sys

def _loopback(host):
    if host is None or host in ("localhost", "localhost.", b"localhost"):
        return True
    try:
        return _ip.ip_address(host.decode() if isinstance(host, bytes) else host).is_loopback
    except ValueError:
        return False

def _refuse(what):
    print(f"react-agent benchmark guard: {what} refused (loopback only)", file=_sys.stderr,
          flush=True)
    raise ConnectionRefusedError(f"{what} refused (loopback only)")

def _react_agent_guard(event, args):
    if event == "socket.connect":
        sock, address = args
        if sock.family in (_socket.AF_INET, _socket.AF_INET6) and not _loopback(address[0]):
            _refuse(f"a connection to {address!r}")
    elif event == "socket.getaddrinfo" and not _loopback(args[0]):
        _refuse(f"a name lookup of {args[0]!r}")

_sys.addaudithook(_react_agent_guard)
'''
"""An audit hook that refuses any connection or name lookup but loopback's, run first in
every process of AgentDojo's environment."""

_RUN_SCRIPT = GUARD + r'''
import runpy, sys
sys.argv = ["agentdojo.scripts.benchmark", *sys.argv[1:]]
runpy.run_module("agentdojo.scripts.benchmark", run_name="__main__", alter_sys=True)
'''
"""AgentDojo's benchmark script, as ``python -m agentdojo.scripts.benchmark`` runs it, under
the guard."""


# -- AgentDojo's environment ---------------------------------------------------------------------
def default_venv() -> Path:
    from react_agent._paths import cache_dir

    return cache_dir() / "bench" / f"agentdojo-{AGENTDOJO_VERSION}"


def venv_python(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def _wanted() -> dict[str, str]:
    """What an environment must have been built from (else it is built again)."""
    return {"agentdojo": AGENTDOJO_VERSION, "python": platform.python_version(),
            "requirements": hashlib.sha256(REQUIREMENTS.read_bytes()).hexdigest()}


def ensure_venv(venv: Path, log: Path) -> Path:
    """The Python of AgentDojo's environment at ``venv``, built first when missing or built
    from another requirements file or Python: the requirements, then react-agent from this
    checkout with its ``local`` extra, then ``pip check``. A folder that is not such an
    environment is never touched."""
    marker = venv / _MARKER
    wanted = _wanted()
    if marker.is_file():
        with contextlib.suppress(ValueError):
            if json.loads(marker.read_text()) == wanted and venv_python(venv).is_file():
                return venv_python(venv)
    elif venv.exists() and any(venv.iterdir()):
        raise SystemExit(f"{venv} exists and is not an environment this benchmark built; "
                         "remove it or pass --venv with another folder")
    started = time.perf_counter()
    print(f"building AgentDojo's environment in {venv} (agentdojo {AGENTDOJO_VERSION}; a few "
          f"minutes; log: {log}) ...", file=sys.stderr, flush=True)
    marker.unlink(missing_ok=True)
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w") as out:
        def pip(*args: str) -> None:
            subprocess.run([str(venv_python(venv)), "-m", "pip", "--disable-pip-version-check",
                            *args], check=True, stdout=out, stderr=subprocess.STDOUT)

        try:
            subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
            pip("install", "-r", str(REQUIREMENTS))
            pip("install", f"{ROOT}[local]")
            pip("check")
        except subprocess.CalledProcessError as exc:
            raise SystemExit(f"building {venv} failed ({exc}); see {log}") from exc
    marker.write_text(json.dumps(wanted))
    print(f"built in {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
    return venv_python(venv)


def bench_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of the processes this benchmark runs: this checkout's react-agent first
    on the path, loopback never through a proxy."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    for name in ("NO_PROXY", "no_proxy"):
        env[name] = ",".join(filter(None, [env.get(name), "localhost,127.0.0.1,::1"]))
    env.update(extra or {})
    return env


def task_ids(python: Path, suites: Sequence[str], version: str) -> dict[str, dict[str, list[str]]]:
    """Each suite's user and injection task ids, in the order of their numbers."""
    done = subprocess.run([str(python), __file__, "--tasks", ",".join(suites),
                           "--benchmark-version", version],
                          capture_output=True, text=True, env=bench_env(), check=False)
    if done.returncode != 0:
        raise SystemExit(f"could not list AgentDojo's tasks: {done.stderr.strip()[-2000:]}")
    found: dict[str, dict[str, list[str]]] = json.loads(done.stdout)
    return found


def _by_number(ids: Sequence[str]) -> list[str]:
    return sorted(ids, key=lambda i: (int(re.sub(r"\D", "", i) or 0), i))


# -- serve ---------------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def python_of(script: Path) -> Path:
    """The Python a console script (``react-agent``) runs with: its ``#!`` line's."""
    with contextlib.suppress(OSError, UnicodeDecodeError):
        first = script.read_text().splitlines()[0]
        if first.startswith("#!") and Path(first[2:].strip()).is_file():
            return Path(first[2:].strip())
    return script.parent / "python"


_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))
"""Requests to 127.0.0.1 never through a proxy."""


class ServeError(Exception):
    """serve did not start or died; the message says why and where its log is."""


def log_tail(log: Path, lines: int = 5) -> str:
    with contextlib.suppress(OSError):
        return " | ".join(log.read_text(errors="replace").splitlines()[-lines:])
    return ""


@dataclass
class Serve:
    """``react-agent serve`` on 127.0.0.1 for one row, started again if it died."""

    command: list[str]
    port: int
    log: Path
    process: subprocess.Popen[bytes] | None = None

    def ensure(self) -> None:
        if self.process is not None and self.process.poll() is None:
            return
        restarted = self.process is not None
        with open(self.log, "a") as out:
            if restarted:
                out.write(f"\n--- serve exited ({self.process.returncode if self.process else '?'}"
                          "); started again ---\n")
                out.flush()
            self.process = subprocess.Popen(self.command, stdout=out, stderr=subprocess.STDOUT,
                                            env=bench_env())
        deadline = time.monotonic() + START_SECONDS
        url = f"http://127.0.0.1:{self.port}/v1/models"
        while True:
            if self.process.poll() is not None:
                raise ServeError(f"serve exited with status {self.process.returncode} before it "
                                 f"answered; {self.log}: {log_tail(self.log)}")
            with contextlib.suppress(OSError, ValueError, KeyError, IndexError):
                with _DIRECT.open(url, timeout=10) as response:
                    json.load(response)["data"][0]["id"]
                return
            if time.monotonic() > deadline:
                raise ServeError(f"serve did not answer within {START_SECONDS} s; see {self.log}")
            time.sleep(0.5)

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def serve_command(args: argparse.Namespace, defense: str, port: int) -> list[str]:
    options = ["serve", "--host", "127.0.0.1", "--port", str(port), "--max-tokens",
               str(MAX_TOKENS)]
    if defense == "none":
        options += ["--frame-observations", "off"]
    elif defense == "provenance":
        options += ["--with-policy", "provenance"]
    options += [a for name in args.with_policy for a in ("--with-policy", name)]
    options += [a for arg in args.serve_arg for a in arg.split()]
    if args.scripted:
        return [str(python_of(args.react_agent)), __file__, "--serve-scripted",
                str(args.scripted), *options]
    return [str(args.react_agent), *options]


def serve_scripted(script: Path, argv: list[str]) -> int:
    """``react-agent serve`` (its own command line, options and app) with the scripted model of
    ``script`` instead of the model ``--model`` names (run in react-agent's environment)."""
    from react_agent.cli import _serve, main
    from react_agent.models import ScriptedModel

    replies = Script.load(script)
    setattr(_serve, "_model", lambda args: ScriptedModel([replies] * 1_000_000))  # noqa: B010
    return main(argv)


# -- the scripted model --------------------------------------------------------------------------
@dataclass
class Script:
    """A scripted model's replies, from a JSON file::

        {"rules": [{"when": REGEX, "unless": REGEX, "reply": REPLY}, ...], "default": REPLY}

    Each model call gets the reply of the first rule whose ``when`` is found in the newest
    message the model is shown (the task, an observation) and whose ``unless`` (optional) is
    found in none of the model's own earlier replies; else ``default``. A reply is the text of
    the reply, or a JSON value sent as its JSON text (``{"thought": ..., "action": ...}``)."""

    rules: list[dict[str, Any]]
    default: Any

    @classmethod
    def load(cls, path: Path) -> Script:
        data = json.loads(Path(path).read_text())
        if not isinstance(data, dict) or "default" not in data:
            raise ValueError(f"{path}: a script is an object with a \"default\" reply (and "
                             "\"rules\")")
        return cls(list(data.get("rules", [])), data["default"])

    def __call__(self, messages: Sequence[Any]) -> str:
        last = str(messages[-1]["content"]) if messages else ""
        mine = "\n".join(str(m["content"]) for m in messages if m["role"] == "assistant")
        for rule in self.rules:
            if re.search(rule["when"], last) and not (
                    rule.get("unless") and re.search(rule["unless"], mine)):
                return _text(rule["reply"])
        return _text(self.default)


def _text(reply: Any) -> str:
    return reply if isinstance(reply, str) else json.dumps(reply)


# -- runs and their records ----------------------------------------------------------------------
@dataclass(frozen=True)
class Job:
    """One invocation: a user task with no injection (``injections`` ``None``) or with some."""

    suite: str
    user_task: str
    injections: tuple[str, ...] | None


def log_path(logdir: Path, pipeline: str, suite: str, user_task: str, attack: str | None,
             injection: str | None) -> Path:
    """Where AgentDojo's ``TraceLogger`` writes a run's log."""
    return (logdir / pipeline.replace("/", "_") / suite / user_task / (attack or "none")
            / f"{injection or 'none'}.json")


def record_job(out: Path, row: str, job: Job, logdir: Path, pipeline: str, attack: str,
               model: str, error: str | None, seconds: float) -> list[dict[str, Any]]:
    """One record per run of ``job``, read from AgentDojo's logs, appended to ``out``."""
    records = []
    for injection in job.injections or (None,):
        record: dict[str, Any] = {"row": row, "suite": job.suite, "user_task": job.user_task,
                                  "injection_task": injection, "utility": None,
                                  "security": None, "error": None, "seconds": None,
                                  "model": model}
        path = log_path(logdir, pipeline, job.suite, job.user_task,
                        attack if injection else None, injection)
        log: dict[str, Any] = {}
        with contextlib.suppress(OSError, ValueError):
            log = json.loads(path.read_text())
        if isinstance(log.get("utility"), bool):
            record.update(utility=log["utility"],
                          security=log.get("security") if injection else None,
                          error=log.get("error"), seconds=log.get("duration"))
        else:
            record.update(error=error or f"AgentDojo recorded no result ({path})",
                          seconds=round(seconds, 1))
        records.append(record)
    with open(out, "a") as file:
        for record in records:
            file.write(json.dumps(record) + "\n")
    return records


def read_records(out: Path) -> dict[tuple[str, str, str, str | None], dict[str, Any]]:
    """The latest record of each run in ``out``."""
    found: dict[tuple[str, str, str, str | None], dict[str, Any]] = {}
    if out.is_file():
        for line in out.read_text().splitlines():
            with contextlib.suppress(ValueError, KeyError, TypeError):
                r = json.loads(line)
                found[(r["row"], r["suite"], r["user_task"], r["injection_task"])] = r
    return found


def show(record: dict[str, Any]) -> str:
    what = record["injection_task"] or "clean"
    if record["utility"] is None:
        return f"  {record['row']} {record['suite']} {record['user_task']} {what}: " \
               f"no result: {record['error']}"
    attack = "" if record["injection_task"] is None else \
        f", attack {'succeeded' if record['security'] else 'failed'}"
    note = f" ({record['error']})" if record["error"] else ""
    return (f"  {record['row']} {record['suite']} {record['user_task']} {what}: utility "
            f"{record['utility']}{attack}, {record['seconds'] or 0:.1f} s{note}")


def table(records: Sequence[dict[str, Any]], rows: Sequence[str]) -> str:
    lines = [f"{'row':<20} {'clean utility':>14} {'utility attacked':>17} {'ASR':>10} "
             f"{'no result':>9} {'seconds':>9}"]
    for row in rows:
        mine = [r for r in records if r["row"] == row]
        clean = [r for r in mine if r["injection_task"] is None and r["utility"] is not None]
        attacked = [r for r in mine if r["injection_task"] and r["utility"] is not None]

        def share(hits: int, n: int) -> str:
            return f"{hits}/{n}" + (f" {100 * hits / n:.0f}%" if n else "")

        lines.append(
            f"{row:<20} {share(sum(r['utility'] for r in clean), len(clean)):>14} "
            f"{share(sum(r['utility'] for r in attacked), len(attacked)):>17} "
            f"{share(sum(bool(r['security']) for r in attacked), len(attacked)):>10} "
            f"{sum(r['utility'] is None for r in mine):>9} "
            f"{sum(r['seconds'] or 0 for r in mine):>9.0f}")
    return "\n".join(lines)


# -- the rows ------------------------------------------------------------------------------------
def jobs_of(row: str, tasks: dict[str, tuple[list[str], list[str]]],
            done: dict[tuple[str, str, str, str | None], dict[str, Any]]) -> list[Job]:
    """The invocations still to run for ``row``: the runs with no result in ``done``."""
    jobs = []
    for suite, (users, injections) in tasks.items():
        jobs += [Job(suite, u, None) for u in users
                 if done.get((row, suite, u, None), {}).get("utility") is None]
        for user in users:
            pending = tuple(i for i in injections
                            if done.get((row, suite, user, i), {}).get("utility") is None)
            if pending:
                jobs.append(Job(suite, user, pending))
    return jobs


def run_serve_row(row: str, jobs: list[Job], python: Path, work: Path, args: argparse.Namespace,
                  model: str) -> None:
    defense = row.split("-", 1)[1]
    port = free_port()
    serve = Serve(serve_command(args, defense, port), port, work / "serve.log")
    logdir = work / "agentdojo"
    logdir.mkdir(parents=True, exist_ok=True)
    print(f"{row}: react-agent serve on 127.0.0.1:{port} (log: {serve.log}); AgentDojo's "
          f"benchmark script as its client (log: {work / 'runner.log'})", file=sys.stderr,
          flush=True)
    queue = list(jobs)
    try:
        while queue:
            job = queue.pop(0)
            begun = time.perf_counter()
            error = None
            try:
                serve.ensure()
                error = run_script(job, python, port, logdir, work / "runner.log", args)
            except ServeError as exc:
                error = str(exc)
            if error and not serve.alive():
                error += f"; serve died: {serve.log}: {log_tail(serve.log)}"
            elif error:
                error += f" (serve's log: {serve.log})"
            if error and job.injections:
                # the script stops at the run that failed: that one gets the error, the
                # injections after it run in a new invocation
                missing = [i for i in job.injections
                           if not has_result(logdir, SERVE_PIPELINE, job, args.attack, i)]
                if len(missing) > 1:
                    queue.insert(0, Job(job.suite, job.user_task, tuple(missing[1:])))
                    job = Job(job.suite, job.user_task, tuple(
                        i for i in job.injections if i not in missing[1:]))
            for record in record_job(args.out, row, job, logdir, SERVE_PIPELINE, args.attack,
                                     model, error, time.perf_counter() - begun):
                print(show(record), file=sys.stderr, flush=True)
    finally:
        serve.stop()


def has_result(logdir: Path, pipeline: str, job: Job, attack: str, injection: str) -> bool:
    with contextlib.suppress(OSError, ValueError):
        log = json.loads(log_path(logdir, pipeline, job.suite, job.user_task, attack,
                                  injection).read_text())
        return isinstance(log.get("utility"), bool)
    return False


def run_script(job: Job, python: Path, port: int, logdir: Path, log: Path,
               args: argparse.Namespace) -> str | None:
    """AgentDojo's benchmark script on one job; ``None``, or why it failed."""
    command = [str(python), "-c", _RUN_SCRIPT, "--model", "VLLM_PARSED", "--logdir", str(logdir),
               "--benchmark-version", args.benchmark_version, "-s", job.suite,
               "-ut", job.user_task]
    if job.injections is not None:
        command += ["--attack", args.attack]
        for injection in job.injections:
            command += ["-it", injection]
    env = bench_env({"LOCAL_LLM_PORT": str(port), "COLUMNS": "200"})
    with open(log, "a") as out:
        out.write(f"\n=== {' '.join(command[3:])}\n")
        out.flush()
        try:
            done = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, env=env,
                                  cwd=logdir, timeout=args.job_seconds, check=False)
        except subprocess.TimeoutExpired:
            return f"AgentDojo's script did not finish within {args.job_seconds} s"
    if done.returncode == 0:
        return None
    return f"AgentDojo's script exited with status {done.returncode}: {_last_error(log)}"


def _last_error(log: Path) -> str:
    """The exception a Python traceback at the end of ``log`` ends with."""
    lines = [line.strip() for line in log.read_text(errors="replace").splitlines()
             if line.strip()]
    found = [line for line in lines[-60:] if re.match(r"^[\w.]+(Error|Exception|Exit)\b", line)]
    return (found[-1] if found else lines[-1] if lines else "")[:500]


def run_library_row(row: str, jobs: list[Job], python: Path, work: Path,
                    args: argparse.Namespace, model: str) -> None:
    defense = row.split("-", 1)[1]
    logdir = work / "agentdojo"
    logdir.mkdir(parents=True, exist_ok=True)
    spec = {
        "row": row, "frame_observations": defense != "none",
        "provenance": defense == "provenance", "with_policy": list(args.with_policy), "jobs": [
            {"suite": j.suite, "user_task": j.user_task,
             "injections": None if j.injections is None else list(j.injections)}
            for j in jobs],
        "logdir": str(logdir), "out": str(args.out), "attack": args.attack,
        "benchmark_version": args.benchmark_version, "model": model,
        "scripted": str(args.scripted) if args.scripted else None,
    }
    spec_file = work / "spec.json"
    spec_file.write_text(json.dumps(spec, indent=1))
    log = work / "runner.log"
    print(f"{row}: react_agent.Agent in AgentDojo's pipeline, in-process (log: {log})",
          file=sys.stderr, flush=True)
    lines = len(args.out.read_text().splitlines()) if args.out.is_file() else 0
    begun = time.perf_counter()
    with open(log, "a") as out:
        done = subprocess.run([str(python), __file__, "--drive", str(spec_file)], stdout=out,
                              env=bench_env(), cwd=logdir, check=False)
    if done.returncode == 0:
        return
    error = f"the library's driver exited with status {done.returncode}; see {log}"
    print(f"{row}: {error}", file=sys.stderr, flush=True)
    added = args.out.read_text().splitlines()[lines:] if args.out.is_file() else []
    recorded = {(r.get("suite"), r.get("user_task"), r.get("injection_task"))
                for r in map(json.loads, added)}
    for job in jobs:  # the jobs it did not come to
        if not any((job.suite, job.user_task, i) in recorded for i in job.injections or (None,)):
            for record in record_job(args.out, row, job, logdir, LIBRARY_PIPELINE, args.attack,
                                     model, error, time.perf_counter() - begun):
                print(show(record), file=sys.stderr, flush=True)


# -- inside AgentDojo's environment --------------------------------------------------------------
def _agentdojo_path() -> None:
    """Guard the process, and let ``import agentdojo`` find the package, not this file."""
    exec(GUARD, {})
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
    sys.path.append(str(HERE))  # agentdojo_element, after the installed packages


def list_tasks(suites: Sequence[str], version: str) -> None:
    _agentdojo_path()
    from agentdojo.task_suite.load_suites import get_suite

    found = {}
    for name in suites:
        suite = get_suite(version, name)
        found[name] = {"user_tasks": _by_number(list(suite.user_tasks)),
                       "injection_tasks": _by_number(list(suite.injection_tasks))}
    print(json.dumps(found))


def drive(spec: dict[str, Any]) -> None:
    """A library row: AgentDojo's pipeline with :class:`ReactAgentElement`, each job through
    AgentDojo's own benchmark functions, its runs recorded in ``spec["out"]``."""
    _agentdojo_path()
    from agentdojo.agent_pipeline import AgentPipeline, InitQuery, SystemMessage
    from agentdojo.agent_pipeline.agent_pipeline import load_system_message
    from agentdojo.attacks.attack_registry import load_attack
    from agentdojo.benchmark import (
        benchmark_suite_with_injections,
        benchmark_suite_without_injections,
    )
    from agentdojo.logging import OutputLogger
    from agentdojo.task_suite.load_suites import get_suite
    from agentdojo_element import NAME, ReactAgentElement

    from react_agent.models import LlamaCppModel, ScriptedModel

    assert NAME == LIBRARY_PIPELINE
    # AgentDojo's messages and warnings into the row's log (stdout), as its script logs them
    from rich.console import Console
    from rich.logging import RichHandler

    logging.basicConfig(format="%(message)s", level=logging.INFO, datefmt="%H:%M:%S",
                        handlers=[RichHandler(show_path=False, markup=True,
                                              console=Console(file=sys.stdout, width=200))])
    logging.captureWarnings(True)
    model: Any
    if spec["scripted"]:
        model = ScriptedModel([Script.load(Path(spec["scripted"]))] * 1_000_000)
    else:
        model = LlamaCppModel(max_tokens=MAX_TOKENS)
        model.load()
    logdir, version, out = Path(spec["logdir"]), spec["benchmark_version"], Path(spec["out"])
    element = ReactAgentElement(model, frame_observations=spec["frame_observations"],
                                provenance=spec["provenance"], use=spec["with_policy"],
                                runs_log=logdir / RUNS_LOG)
    pipeline = AgentPipeline([SystemMessage(load_system_message(None)), InitQuery(), element])
    pipeline.name = NAME
    with OutputLogger(str(logdir)):
        for item in spec["jobs"]:
            job = Job(item["suite"], item["user_task"],
                      None if item["injections"] is None else tuple(item["injections"]))
            suite = get_suite(version, job.suite)
            begun = time.perf_counter()
            error = None
            try:
                if job.injections is None:
                    benchmark_suite_without_injections(
                        pipeline, suite, logdir=logdir, force_rerun=False,
                        user_tasks=[job.user_task], benchmark_version=version)
                else:
                    benchmark_suite_with_injections(
                        pipeline, suite, load_attack(spec["attack"], suite, pipeline),
                        logdir=logdir, force_rerun=False, user_tasks=[job.user_task],
                        injection_tasks=list(job.injections), benchmark_version=version)
            except Exception as exc:  # the job's runs without a result get it as their error
                traceback.print_exc(file=sys.stdout)
                error = f"{type(exc).__name__}: {exc}"[:500]
            for record in record_job(out, spec["row"], job, logdir, NAME, spec["attack"],
                                     spec["model"], error, time.perf_counter() - begun):
                print(show(record), file=sys.stderr, flush=True)


# -- the command line ----------------------------------------------------------------------------
def _names(text: str | None) -> list[str] | None:
    return None if text is None else [t.strip() for t in text.split(",") if t.strip()]


def default_react_agent() -> Path | None:
    beside = Path(sys.executable).parent / "react-agent"
    if beside.is_file():
        return beside
    found = shutil.which("react-agent")
    return Path(found) if found else None


def main() -> None:
    if sys.argv[1:2] == ["--serve-scripted"]:  # in react-agent's environment: serve with a
        # scripted model; every option after the script is react-agent serve's own
        sys.exit(serve_scripted(Path(sys.argv[2]), sys.argv[3:]))
    parser = argparse.ArgumentParser(description=" ".join((__doc__ or "").split("\n\n")[0].split()))
    parser.add_argument("--rows", default=",".join(ROWS),
                        help=f"comma-separated, of {', '.join(ROWS)} (default: all)")
    parser.add_argument("--suites", default=",".join(SUITES),
                        help="comma-separated AgentDojo suites (default: banking,slack)")
    parser.add_argument("--user-tasks", type=int, metavar="N",
                        help="the first N user tasks of each suite (default: all)")
    parser.add_argument("--user-task-ids", metavar="IDS",
                        help="these user tasks (comma-separated, e.g. user_task_0,user_task_3)")
    parser.add_argument("--injections", type=int, metavar="M",
                        help="the first M injection tasks of each suite (default: all; 0: "
                             "clean runs only)")
    parser.add_argument("--injection-ids", metavar="IDS",
                        help="these injection tasks (comma-separated)")
    parser.add_argument("--attack", default=ATTACK, help=f"AgentDojo's attack (default {ATTACK})")
    parser.add_argument("--benchmark-version", default=BENCHMARK_VERSION,
                        help=f"AgentDojo's benchmark version (default {BENCHMARK_VERSION})")
    parser.add_argument("--out", type=Path, help="the JSON lines results (default: <react-agent "
                        "cache>/bench/agentdojo/results.jsonl); runs with a result in it are "
                        "not run again")
    parser.add_argument("--react-agent", type=Path, default=default_react_agent(),
                        metavar="PATH", help="the react-agent command of the serve rows "
                        "(default: the one beside this Python)")
    parser.add_argument("--with-policy", action="append", default=[], metavar="NAME",
                        help="an opt-in react-agent policy added in every row, the library's "
                             "and serve's alike (repeatable; e.g. announced)")
    parser.add_argument("--serve-arg", action="append", default=[], metavar="ARGS",
                        help="more options for the serve rows' react-agent serve (repeatable)")
    parser.add_argument("--scripted", type=Path, metavar="FILE",
                        help="a scripted model (see Script) instead of the embedded model")
    parser.add_argument("--job-seconds", type=float, default=JOB_SECONDS,
                        help=f"the most one invocation (one user task) may take (default "
                             f"{JOB_SECONDS})")
    parser.add_argument("--venv", type=Path, help="AgentDojo's environment (default: "
                        f"<react-agent cache>/bench/agentdojo-{AGENTDOJO_VERSION})")
    parser.add_argument("--python", type=Path, help="the Python of an AgentDojo environment to "
                        "use as it is (e.g. the one --setup-only printed), instead of --venv")
    parser.add_argument("--setup-only", action="store_true",
                        help="build AgentDojo's environment, print its Python and stop")
    parser.add_argument("--drive", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--tasks", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.drive:
        drive(json.loads(args.drive.read_text()))
        return
    if args.tasks:
        list_tasks(_names(args.tasks) or [], args.benchmark_version)
        return

    rows = _names(args.rows) or []
    if set(rows) - set(ROWS):
        parser.error(f"--rows takes {', '.join(ROWS)}")
    if not args.setup_only:
        from react_agent.policies import ORDER

        if set(args.with_policy) - set(ORDER):
            parser.error(f"--with-policy takes {', '.join(ORDER)}")
    if args.python:
        python = args.python
    else:
        venv = args.venv or default_venv()
        venv.parent.mkdir(parents=True, exist_ok=True)
        python = ensure_venv(venv, venv.parent / f"{venv.name}.build.log")
    if args.setup_only:
        print(python)
        return
    if any(r.startswith("serve-") for r in rows) and args.react_agent is None:
        parser.error("no react-agent command found for the serve rows: pass --react-agent PATH")
    if args.scripted:
        args.scripted = args.scripted.resolve()
        try:
            Script.load(args.scripted)
        except (OSError, ValueError) as exc:
            parser.error(f"--scripted: {exc}")
    if args.out is None:
        from react_agent._paths import cache_dir

        args.out = cache_dir() / "bench" / "agentdojo" / "results.jsonl"
    args.out = args.out.resolve()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    work = args.out.with_name(args.out.name + ".work")

    suites = _names(args.suites) or []
    listed = task_ids(python, suites, args.benchmark_version)
    tasks: dict[str, tuple[list[str], list[str]]] = {}
    for suite in suites:
        users, injections = listed[suite]["user_tasks"], listed[suite]["injection_tasks"]
        wanted_users = _names(args.user_task_ids) or users[:args.user_tasks]
        wanted_injections = _names(args.injection_ids) or injections[:args.injections]
        unknown = set(wanted_users) - set(users) | set(wanted_injections) - set(injections)
        if unknown:
            parser.error(f"{suite} has no task {', '.join(sorted(unknown))}")
        tasks[suite] = (wanted_users, wanted_injections)
    model = f"scripted:{args.scripted.name}" if args.scripted else "embedded"
    print(f"agentdojo {AGENTDOJO_VERSION} (benchmark {args.benchmark_version}), attack "
          f"{args.attack}; rows: {', '.join(rows)}; model: {model}; results: {args.out}",
          file=sys.stderr, flush=True)
    for suite, (users, injections) in tasks.items():
        print(f"  {suite}: {len(users)} user tasks x {len(injections)} injection tasks",
              file=sys.stderr, flush=True)
    for row in rows:
        jobs = jobs_of(row, tasks, read_records(args.out))
        if not jobs:
            print(f"{row}: every run has a result in {args.out}", file=sys.stderr, flush=True)
            continue
        folder = work / row
        folder.mkdir(parents=True, exist_ok=True)
        runner = run_serve_row if row.startswith("serve-") else run_library_row
        runner(row, jobs, python, folder, args, model)
    records = [r for r in read_records(args.out).values() if r["row"] in rows
               and r["suite"] in tasks and r["user_task"] in tasks[r["suite"]][0]
               and (r["injection_task"] is None or r["injection_task"] in tasks[r["suite"]][1])]
    print(table(records, rows))
    print(f"\nresults: {args.out}")


if __name__ == "__main__":
    main()
