"""Tests for batches on Ray (``run_batch_ray``, ``run --tasks --ray``) on a small local cluster
this module starts (2 CPUs, no dashboard): the records of a serial run, a worker killed under a
task, a tools module the workers cannot import, the command line; and, in a process of its own,
the local cluster a batch starts itself, which listens on loopback only."""

from __future__ import annotations

import ipaddress
import json
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

ray = pytest.importorskip("ray")

from test_batch_concurrency import (  # noqa: E402  (tests/harness is on sys.path)
    KILL_ALWAYS,
    KILL_ONCE,
    by_id,
    scripted_agent,
    scripted_setup,
    task_lines,
    write_tasks,
)

from react_agent import ConfigError  # noqa: E402
from react_agent.cli import main  # noqa: E402
from react_agent.harness import (  # noqa: E402
    BatchTask,
    load_tasks,
    read_records,
    run_batch,
    run_batch_ray,
)

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def cluster() -> Iterator[None]:
    """A local Ray cluster for this module; its workers import this folder's test modules (the
    agents' setup is sent to them by reference)."""
    path = os.pathsep.join([str(HERE), str(HERE.parent), *sys.path])
    with pytest.MonkeyPatch.context() as env:
        env.setenv("RAY_USAGE_STATS_ENABLED", "0")  # no reports anywhere
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
                 runtime_env={"env_vars": {"PYTHONPATH": path}})
        yield
        ray.shutdown()


def test_a_batch_on_ray_gives_the_serial_records(cluster: None, tmp_path: Path) -> None:
    tasks = load_tasks(write_tasks(tmp_path / "tasks.jsonl", task_lines(100)))
    serial = run_batch(tasks, tmp_path / "serial.jsonl", scripted_agent)
    out = tmp_path / "ray.jsonl"
    seen: list[tuple[int, bool]] = []
    report = run_batch_ray(tasks, out, scripted_setup, workers=2,
                           progress=lambda done, total, task, record: seen.append(
                               (done, record is None)))
    written = read_records(out)
    assert len(written) == 100 and len({r["id"] for r in written}) == 100
    assert by_id(written) == by_id(serial.records) == by_id(report.records)
    assert [d for d, starting in seen if not starting] == list(range(1, 101))
    assert Counter(r["status"] for r in written) == {"final_answer": 98, "model_error": 2}

    again = run_batch_ray(tasks, out, scripted_setup, workers=2)  # only the model errors
    assert again.skipped == 98 and len(read_records(out)) == 102


def test_a_task_whose_worker_is_killed_runs_again_and_is_written_once(
    cluster: None, tmp_path: Path
) -> None:
    lines: list[dict[str, Any]] = [{"id": f"t{i}", "task": f"What is {i} times 3?"}
                                   for i in range(10, 22)]
    lines[3] = {"id": "killed-once", "task": f"What is {KILL_ONCE} times 3?"}
    lines[8] = {"id": "killed-always", "task": f"What is {KILL_ALWAYS} times 3?"}
    tasks = load_tasks(write_tasks(tmp_path / "tasks.jsonl", lines))
    out = tmp_path / "r.jsonl"
    report = run_batch_ray(tasks, out, partial(scripted_setup, str(tmp_path)), workers=2,
                           max_attempts=2)
    ids = [r["id"] for r in read_records(out)]
    assert sorted(ids) == sorted(line["id"] for line in lines)  # each exactly once
    records = {r["id"]: r for r in report.records}
    assert len(list(tmp_path.glob(f"killed-{KILL_ONCE}-*"))) == 1  # its worker was killed
    assert (records["killed-once"]["status"],
            records["killed-once"]["final_answer"]) == ("final_answer", f"The answer is "
                                                        f"{KILL_ONCE * 3}.")
    lost = records["killed-always"]
    assert lost["status"] == "worker_lost" and len(list(tmp_path.glob(
        f"killed-{KILL_ALWAYS}-*"))) == 2
    assert "the Ray worker running it died 2 time(s)" in lost["error"]
    assert all(r["status"] == "final_answer" for r in report.records
               if not r["id"].startswith("killed"))


def test_a_tools_module_the_workers_cannot_import_stops_the_batch_first(
    cluster: None, tmp_path: Path
) -> None:
    tasks = [BatchTask("1", "What is 1 times 3?"),
             BatchTask("2", "What is 2 times 3?", tools="no_such_module_here:toolbox")]
    out = tmp_path / "r.jsonl"
    with pytest.raises(ConfigError) as caught:
        run_batch_ray(tasks, out, scripted_setup, workers=2)
    message = str(caught.value)
    assert "A Ray worker (" in message and "no_such_module_here" in message
    assert "no task was started" in message and read_records(out) == []


def _final(answer: str) -> str:
    return "reply:" + json.dumps({"thought": "t", "action": {"final_answer": answer}})


def test_cli_runs_a_batch_on_ray(cluster: None, fault_server: Any, tmp_path: Path,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    tasks = write_tasks(tmp_path / "tasks.jsonl", [
        *({"id": f"t{i}", "task": f"Say {i}", "expected": ["ok"]} for i in range(4)),
        {"id": "bad", "task": 3}])
    out = tmp_path / "r.jsonl"
    fault_server.script = [_final("ok")]
    code = main(["run", "--tasks", str(tasks), "--out", str(out), "--ray", "--concurrency", "2",
                 "--bad-lines", "record", "--base-url", fault_server.url])
    captured = capsys.readouterr()
    assert code == 1  # the bad line failed
    assert "tasks.jsonl, line 5: not a task" in captured.err
    assert len(fault_server.requests) == 4 and "[########################] 5/5" in captured.err
    records = {r["id"]: r for r in read_records(out)}
    assert [records[f"t{i}"]["passed"] for i in range(4)] == [True] * 4
    assert records["bad"]["status"] == "bad_task" and records["bad"]["line"] == 5
    assert main(["run", "--tasks", str(tasks), "--out", str(out), "--ray", "--mcp", "x",
                 "--bad-lines", "record", "--base-url", fault_server.url]) == 2
    assert "--mcp cannot be used with --ray" in capsys.readouterr().err


_LISTENERS = """
import json, sys
import ray, psutil  # psutil comes with Ray
from react_agent import ConfigError
from react_agent.harness import load_tasks, run_batch_ray
from test_batch_concurrency import scripted_setup, task_lines, write_tasks
from pathlib import Path

folder = Path(sys.argv[1])
listening = []

def look(done, total, task, record):
    if listening:
        return
    me = psutil.Process()
    for process in [me, *me.children(recursive=True)]:
        try:
            name = process.name()
            listening.extend([name, c.laddr.ip, c.laddr.port]
                             for c in process.net_connections("inet")
                             if c.status == psutil.CONN_LISTEN)
        except psutil.Error:  # gone meanwhile
            pass

tasks = load_tasks(write_tasks(folder / "tasks.jsonl", task_lines(4)))
report = run_batch_ray(tasks, folder / "r.jsonl", scripted_setup, workers=2, progress=look)
seen = {"listening": listening, "records": len(report.records),
        "initialized": ray.is_initialized(), "machine": ray.util.get_node_ip_address()}
try:
    run_batch_ray(tasks, folder / "again.jsonl", scripted_setup, workers=1,
                  init_options={"_node_ip_address": seen["machine"]})
except ConfigError as exc:
    seen["refused"] = str(exc)
seen["after_refusal"] = [ray.is_initialized(), (folder / "again.jsonl").exists()]
print(json.dumps(seen))
"""


def test_the_local_cluster_of_a_batch_listens_on_loopback_only(tmp_path: Path) -> None:
    """``run_batch_ray`` with no address starts a cluster: while its tasks run, no socket of any
    Ray process it started (GCS, raylet, object manager, agents, workers, the driver's own)
    listens on an address other hosts can reach; a cluster that would is stopped before any
    task starts."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("RAY_")}
    env.update(RAY_USAGE_STATS_ENABLED="0", PYTHONPATH=os.pathsep.join(
        [str(HERE), str(HERE.parent.parent), *sys.path]))
    done = subprocess.run([sys.executable, "-c", _LISTENERS, str(tmp_path)], env=env,
                          capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["records"] == 4 and seen["initialized"] is False  # ran, then stopped
    names = {name for name, _, _ in seen["listening"]}
    assert {"gcs_server", "raylet"} <= names, seen  # the check saw Ray's servers
    exposed = [(name, ip, port) for name, ip, port in seen["listening"]
               if not _loopback(ip)]
    assert exposed == []
    if not _loopback(seen["machine"]):  # a cluster on the machine's address is refused
        assert "The local Ray cluster started on " + seen["machine"] in seen["refused"]
        assert seen["after_refusal"] == [False, False]  # stopped, no task started


def _loopback(ip: str) -> bool:
    address = ipaddress.ip_address(ip)
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        address = address.ipv4_mapped
    return address.is_loopback
