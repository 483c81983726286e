"""Running a batch on a Ray cluster (``react-agent run --tasks FILE --ray [ADDRESS]``).

A pool of Ray actors (workers) runs the tasks: each worker calls ``setup()`` once when it starts
(the model client, the policies: whatever is costly) and then runs many tasks, each with a
fresh ``make_agent(task)`` (fresh tools, as in a local batch). The driver (the process that
calls :func:`run_batch_ray`) reads the tasks file, hands one task at a time to each idle worker,
and writes each record to the results file as it comes back: the file has the same format as a
local batch's and resumes the same way.

Faults:

- A worker whose process dies while it runs a task (killed, out of memory, a crash in native
  code) is restarted by Ray; the task goes back to the queue and runs on the next idle worker,
  up to ``max_attempts`` times in all, then it is recorded with status ``worker_lost`` (run
  again when the batch is run again). A task's record is written once, when a worker returns
  it, so it appears once in the results (its tools may have run twice).
- Before any task starts, every worker must build its agents and import every tools module the
  tasks name: a worker that cannot (a module not installed there) stops the batch with a
  :class:`ConfigError` naming the worker's address and the module.
- The model server going away: the task ends ``model_error`` on the worker, as locally.

Ray is an optional dependency, the ``ray`` extra (``pip install '.[ray]'`` in a clone of
react-agent). Each worker needs react-agent (with the extras its model needs) and the tools'
modules installed.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

from .._persist import append_json_lines, write_json_line
from ..agent import Agent
from ..errors import ConfigError, install_hint
from ..tools import load_toolbox
from ._batch import (
    BatchReport,
    Progress,
    bad_task_record,
    latest_records,
    plan_batch,
    run_task,
)
from ._tasks import BatchTask

AgentSetup = Callable[[], Callable[[BatchTask], Agent]]
"""Called once on each worker: returns the ``make_agent(task)`` of that worker's tasks. It is
sent to the workers pickled (by cloudpickle), so it should name functions of modules installed
there (a ``functools.partial`` of such a function, or an instance of such a class)."""


class BatchWorker:
    """One Ray actor of a batch: ``setup()`` once, then :meth:`run` task after task."""

    def __init__(self, setup: AgentSetup) -> None:
        self.error: str | None = None
        self.make_agent: Callable[[BatchTask], Agent] | None = None
        try:
            self.make_agent = setup()
        except Exception as exc:  # told to the driver by ready()
            self.error = f"{type(exc).__name__}: {exc}" if not isinstance(exc, ConfigError) \
                else str(exc)

    def ready(self, tools: list[str]) -> tuple[str | None, str]:
        """``(problem or None, this worker's address)``: whether the agents could be set up and
        each tools module imported here."""
        import ray

        node = ray.util.get_node_ip_address()  # type: ignore[no-untyped-call]
        where = f"{node}, pid {os.getpid()}"
        if self.error:
            return self.error, where
        for spec in tools:
            try:
                load_toolbox(spec)
            except ConfigError as exc:
                return str(exc), where
        return None, where

    def ping(self) -> bool:
        """``True``: this worker is up (after Ray restarted it)."""
        return True

    def run(self, task: BatchTask, fresh_model: bool) -> dict[str, Any] | None:
        """The record of ``task`` (see :func:`~react_agent.harness.run_batch`)."""
        assert self.make_agent is not None, "ready() said why setup failed"
        return run_task(task, self.make_agent, fresh_model)


def run_batch_ray(
    tasks: Iterable[BatchTask],
    out: str | os.PathLike[str],
    setup: AgentSetup,
    *,
    address: str | None = None,
    workers: int | None = None,
    progress: Progress | None = None,
    fresh_model: bool = True,
    max_attempts: int = 3,
    init_options: dict[str, Any] | None = None,
    start_timeout: float = 300.0,
) -> BatchReport:
    """:func:`~react_agent.harness.run_batch` on a Ray cluster: the tasks not yet in ``out``
    run on ``workers`` Ray actors, each set up once with ``setup()``; the records are written
    to ``out`` here, as they come back (the same records, in the same file format).

    Args:
        tasks: the tasks (``load_tasks(path, strict=False)``: the lines that are not tasks are
            recorded as failed, ``bad_task``, not run).
        out: the results file (tasks whose last record there is done are skipped).
        setup: called once on each worker, returns its ``make_agent(task)``
            (see :data:`AgentSetup`).
        address: the cluster (``ray://HOST:10001``, ``HOST:6379`` or ``auto``); ``None``: the
            one in ``$RAY_ADDRESS``, else (or ``"local"``) a new local cluster whose services
            listen on loopback only (stopped at the end). When Ray is already initialised in
            this process, that cluster is used and left running.
        workers: how many actors (tasks at once); default: the cluster's CPUs. Each reserves
            ``min(1, CPUs / workers)`` CPUs, so that all of them fit.
        progress: as for ``run_batch``, called here as tasks start and finish.
        fresh_model: reset each worker's model before each task (as ``run_batch``).
        max_attempts: how many times a task is tried on a worker that dies under it before it
            is recorded as ``worker_lost``.
        init_options: more keyword arguments for ``ray.init`` (``runtime_env``, ...).
        start_timeout: seconds the workers may take to start before the batch gives up.

    Raises:
        ConfigError: Ray is not installed; or a new local cluster would not listen on
            loopback only; or a worker cannot set up its agents or import a
            tools module (before any task starts: the message names the worker); or every
            worker died (the finished tasks are in ``out``; run again to go on).
    """
    try:
        import ray
    except ImportError as exc:
        raise ConfigError(f"--ray needs Ray: {install_hint('ray')}.") from exc
    if max_attempts < 1:
        raise ConfigError(f"max_attempts must be at least 1, got {max_attempts}.")
    if workers is not None and workers < 1:
        raise ConfigError(f"workers must be at least 1, got {workers}.")
    report, todo = plan_batch(tasks, out)
    bad = [t for t in todo if t.problem is not None]
    good = [t for t in todo if t.problem is None]
    started = False
    if good and not ray.is_initialized():
        options: dict[str, Any] = {"log_to_driver": False, **(init_options or {})}
        if address == "local" or (address is None and not os.environ.get("RAY_ADDRESS")):
            options.setdefault("include_dashboard", False)
            _start_on_loopback(ray, options)
        else:
            ray.init(address=address, **options)
        started = True
    try:
        with append_json_lines(out) as sink:
            first = len(report.records)

            def written(task: BatchTask, record: dict[str, Any]) -> None:
                write_json_line(sink, record)
                report.records.append(record)
                if progress:
                    progress(len(report.records) - first, len(todo), task, record)

            def starting(task: BatchTask) -> None:
                if progress:
                    progress(len(report.records) - first, len(todo), task, None)

            pool = None
            try:
                if good:  # the workers start and check their tools before any record is written
                    pool = _Pool(ray, setup, good, workers, start_timeout)
                for task in bad:
                    written(task, bad_task_record(task))
                if pool:
                    pool.run(good, fresh_model, max_attempts, written, starting)
            except KeyboardInterrupt:
                report.interrupted = True
            finally:
                if pool:
                    pool.close()
    finally:
        if started:
            ray.shutdown()
    report.records = latest_records(report.records)
    return report


def _start_on_loopback(ray: Any, options: dict[str, Any]) -> None:
    """Start a new local Ray cluster whose services listen on loopback only.

    Ray's servers (GCS, raylet with its object manager, core workers, the agents, metrics)
    listen on loopback when the node's address is ``127.0.0.1``, and on every interface
    otherwise; ``ray.init(_node_ip_address="127.0.0.1")`` is turned into the machine's own
    address, so the node address is taken the way Ray takes it on macOS and Windows
    (``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``: loopback), for the time of ``ray.init``.

    Raises:
        ConfigError: the node's address is still not loopback (another Ray version, or a
            ``_node_ip_address`` in ``options``); the cluster is stopped first.
    """
    import ray._private.ray_constants as constants

    before = getattr(constants, "ENABLE_RAY_CLUSTER", True)
    constants.ENABLE_RAY_CLUSTER = False
    try:
        ray.init(address="local", **options)
    finally:
        constants.ENABLE_RAY_CLUSTER = before
    node = str(ray.util.get_node_ip_address())
    try:
        loopback = ipaddress.ip_address(node).is_loopback
    except ValueError:  # a host name
        loopback = False
    if not loopback:
        ray.shutdown()
        raise ConfigError(
            f"The local Ray cluster started on {node}, where other machines can reach it "
            f"(Ray {ray.__version__}): it was stopped before any task started. Start a cluster "
            "yourself (ray start --head) and pass its address: --ray ADDRESS.")


_PINGS = 100
"""How many pings a worker that died may fail (while Ray restarts it) before it is dropped."""


class _Pool:
    """The workers of one batch (started and checked on creation) and the loop that feeds
    them."""

    def __init__(self, ray: Any, setup: AgentSetup, tasks: list[BatchTask], workers: int | None,
                 start_timeout: float) -> None:
        self.ray = ray
        cpus = float(ray.cluster_resources().get("CPU", 1.0))
        count = min(workers or max(1, int(cpus)), len(tasks))
        actor = ray.remote(BatchWorker).options(
            num_cpus=min(1.0, cpus / count), max_restarts=-1, max_task_retries=0)
        self.actors: list[Any] = [actor.remote(setup) for _ in range(count)]
        self.start_timeout = start_timeout
        self._check(sorted({t.tools for t in tasks if t.tools}))

    def _check(self, tools: list[str]) -> None:
        """Every worker set up its agents and imported every tools module.

        Raises:
            ConfigError: one could not (the first problem, with the worker's address).
        """
        ray = self.ray
        try:
            answers = ray.get([a.ready.remote(tools) for a in self.actors],
                              timeout=self.start_timeout)
        except ray.exceptions.GetTimeoutError as exc:
            raise ConfigError(
                f"{len(self.actors)} Ray worker(s) did not start within {self.start_timeout:g} "
                f"s (cluster resources: {ray.cluster_resources()}); no task was started."
            ) from exc
        except ray.exceptions.RayActorError as exc:
            raise ConfigError(f"A Ray worker died while starting: {exc}; no task was "
                              "started.") from exc
        for problem, where in answers:
            if problem:
                raise ConfigError(
                    f"A Ray worker ({where}) cannot run the tasks: {problem}. Install "
                    "react-agent and the tools' modules on every worker (or ship them with a "
                    "runtime_env); no task was started.")

    def run(self, tasks: list[BatchTask], fresh_model: bool, max_attempts: int,
            written: Callable[[BatchTask, dict[str, Any]], None],
            starting: Callable[[BatchTask], None]) -> None:
        """Feed ``tasks`` to the workers, one at a time each; ``written(task, record)`` as each
        comes back. A task whose worker died goes back to the front of the queue; the worker
        gets tasks again once it answers a ping (Ray restarts it), or is dropped if it is gone
        for good.

        Raises:
            ConfigError: every worker died.
            Exception: a task raised (as ``run_batch`` raises it).
        """
        ray = self.ray
        queue = deque((task, 1) for task in tasks)
        idle = deque(self.actors)
        running: dict[Any, tuple[BatchTask | None, int, Any]] = {}  # task None: a ping
        while queue or any(task for task, _, _ in running.values()):
            while queue and idle:
                next_task, tries = queue.popleft()
                actor = idle.popleft()
                running[actor.run.remote(next_task, fresh_model)] = (next_task, tries, actor)
                if tries == 1:
                    starting(next_task)
            if not running:
                raise ConfigError(
                    f"Every Ray worker died; {len(queue)} task(s) were not run. The finished "
                    "ones are in the results file: run the same command again to go on.")
            ready, _ = ray.wait(list(running), num_returns=1, timeout=1.0)
            for ref in ready:
                task, attempt, actor = running.pop(ref)
                try:
                    record = ray.get(ref)
                except ray.exceptions.RayActorError as exc:
                    if task is None and (isinstance(exc, ray.exceptions.ActorDiedError)
                                         or attempt >= _PINGS):
                        self.actors.remove(actor)  # gone for good
                        continue
                    # not back yet: ping it until it is (Ray restarts it)
                    running[actor.ping.remote()] = (None, attempt + 1 if task is None else 1,
                                                    actor)
                    if task is None:
                        continue
                    if attempt < max_attempts:
                        queue.appendleft((task, attempt + 1))
                    else:
                        written(task, _lost_record(task, attempt, exc))
                    continue
                idle.append(actor)
                if task is None:  # the worker is back
                    continue
                if record is None:  # interrupted on the worker (cancelled): not written
                    raise KeyboardInterrupt
                written(task, record)

    def close(self) -> None:
        """Stop the workers (a task still running is abandoned, not written)."""
        for actor in self.actors:
            with contextlib.suppress(Exception):  # already gone
                self.ray.kill(actor, no_restart=True)


def _lost_record(task: BatchTask, attempts: int, exc: Exception) -> dict[str, Any]:
    """The record of a task whose worker died under it each time (status ``worker_lost``)."""
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    problem = (f"the Ray worker running it died {attempts} time(s) ({type(exc).__name__}: "
               f"{first[:200]})")
    return {
        "id": task.id, "line": task.line, "shape": task.shape, "task": task.task,
        "status": "worker_lost", "final_answer": None, "best_effort": False, "error": problem,
        "passed": False, "problems": [problem], "missing": [], "steps": 0, "tool_calls": 0,
        "prompt_tokens": 0, "completion_tokens": 0, "seconds": 0.0, "result": None,
    }
