"""Throughput of ``run --tasks``: one task at a time, N at once, and on a local Ray cluster.

    python benchmarks/batch_throughput.py [--tasks 32] [--reply-ms 200] [--tool-ms 50]

The backend is a scripted OpenAI-compatible server on 127.0.0.1 (a thread of this process)
that takes ``--reply-ms`` to answer each chat completion, whatever the number of requests at
once, so that the server is not the limit: to a task it answers with a call of ``lookup``, to
the tool's observation with the final answer. ``lookup`` takes ``--tool-ms``. Each task is
then two model calls and one tool call (about 450 ms with the defaults).

Printed: tasks/s one at a time (serial), at concurrency 4 and 16 (threads, one
``OpenAIChatModel`` shared by all agents), each as a ratio to serial; then the same batch on a
local Ray cluster with 2 workers (``num_cpus=2``, no dashboard): the time to start the cluster
and the workers, tasks/s once they run, its ratio to serial, and the overhead Ray adds per task
(ms): a worker's wall time per task (``wall x workers / tasks``) less the serial run's time per
task, and less the task's own time on the worker (the records' ``seconds``: what is left is
Ray's scheduling and the trips of the task and its record). Each batch is checked: every task
answered correctly, once.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from react_agent import Agent, Toolbox
from react_agent.harness import BatchTask, read_records, run_batch, run_batch_ray
from react_agent.models import OpenAIChatModel


class ScriptedServer:
    """OpenAI's chat completions on 127.0.0.1, answering each request after ``delay`` s."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.requests = 0
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"
        threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True).start()

    def reply(self, body: dict[str, Any]) -> str:
        with self._lock:
            self.requests += 1
        time.sleep(self.delay)
        last = body["messages"][-1]["content"]
        if last.startswith("Observation:"):
            value = last.split(":", 1)[1].split()[0]
            return json.dumps({"thought": "I have it.", "action": {
                "final_answer": f"The value is {value}."}})
        key = re.search(r"key (\d+)", last)
        return json.dumps({"thought": "Look it up.", "action": {
            "name": "lookup", "args": {"key": int(key.group(1)) if key else 0}}})

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def _handler(server: ScriptedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            text = server.reply(body)
            data = json.dumps({
                "id": "chatcmpl-bench", "object": "chat.completion", "created": 0,
                "model": "bench", "choices": [{"index": 0, "finish_reason": "stop",
                                               "message": {"role": "assistant",
                                                           "content": text}}],
                "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
            }).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


def toolbox(tool_seconds: float) -> Toolbox:
    box = Toolbox()

    @box.tool
    def lookup(key: int) -> str:
        """Look a key up."""
        time.sleep(tool_seconds)
        return f"v{key * 7}"

    return box


def agents(url: str, tool_seconds: float) -> Callable[[BatchTask], Agent]:
    """The agents of one process (a Ray worker's setup): one model client, fresh tools per
    task."""
    model = OpenAIChatModel("bench", url, max_retries=0)
    return lambda task: Agent(model, toolbox(tool_seconds), max_steps=4)


def check(out: Path, count: int) -> None:
    records = read_records(out)
    ids = [r["id"] for r in records]
    assert len(ids) == count == len(set(ids)), (len(ids), len(set(ids)))
    wrong = [r["id"] for r in records if r["final_answer"] != f"The value is v{int(r['id']) * 7}."]
    assert not wrong, f"wrong answers: {wrong[:5]}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=32)
    parser.add_argument("--reply-ms", type=float, default=200.0)
    parser.add_argument("--tool-ms", type=float, default=50.0)
    parser.add_argument("--no-ray", action="store_true", help="leave out the Ray run")
    args = parser.parse_args(argv)
    server = ScriptedServer(args.reply_ms / 1000)
    tasks = [BatchTask(str(i), f"What is the value of key {i}?") for i in range(args.tasks)]
    tool_seconds = args.tool_ms / 1000
    print(f"{args.tasks} tasks, 2 model calls ({args.reply_ms:g} ms each) and 1 tool call "
          f"({args.tool_ms:g} ms) per task; {server.url}")
    rates: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as folder:
        for concurrency in (1, 4, 16):
            out = Path(folder) / f"c{concurrency}.jsonl"
            make_agent = agents(server.url, tool_seconds)
            started = time.perf_counter()
            run_batch(tasks, out, make_agent, concurrency=concurrency)
            wall = time.perf_counter() - started
            check(out, args.tasks)
            rates[f"concurrency {concurrency}"] = args.tasks / wall
            print(f"concurrency {concurrency:>2}: {wall:6.2f} s  {args.tasks / wall:6.2f} tasks/s"
                  f"  x{args.tasks / wall / rates['concurrency 1']:.2f} serial")
        serial_wall = args.tasks / rates["concurrency 1"]
        if not args.no_ray:
            ray_run(args, tasks, server.url, tool_seconds, Path(folder), serial_wall)
    print(f"server requests: {server.requests}")
    server.close()
    return 0


def ray_run(args: argparse.Namespace, tasks: list[BatchTask], url: str, tool_seconds: float,
            folder: Path, serial_wall: float) -> None:
    import ray

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no reports anywhere
    workers = 2
    started = time.perf_counter()
    here = str(Path(__file__).resolve().parent)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": here}})
    cluster = time.perf_counter() - started
    first: list[float] = []
    out = folder / "ray.jsonl"

    def progress(done: int, total: int, task: BatchTask, record: Any) -> None:
        if not first:
            first.append(time.perf_counter())  # the workers are up: the first task starts

    started = time.perf_counter()
    from batch_throughput import agents as worker_agents  # by name: importable on the workers

    run_batch_ray(tasks, out, partial(worker_agents, url, tool_seconds), workers=workers,
                  progress=progress)
    end = time.perf_counter()
    ray.shutdown()
    check(out, args.tasks)
    start_workers, wall = first[0] - started, end - first[0]
    per_task = wall * workers / args.tasks * 1000  # a worker's wall time per task, ms
    on_worker = statistics.mean(r["seconds"] for r in read_records(out)) * 1000
    print(f"Ray, {workers} workers: cluster start {cluster:.1f} s, workers start "
          f"{start_workers:.1f} s; then {wall:6.2f} s  {args.tasks / wall:6.2f} tasks/s  "
          f"x{serial_wall / wall:.2f} serial")
    print(f"  overhead per task: {per_task - serial_wall / args.tasks * 1000:+.0f} ms against "
          f"the serial run, {per_task - on_worker:+.0f} ms against the task's own time on the "
          f"worker ({on_worker:.0f} ms)")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    sys.exit(main())
