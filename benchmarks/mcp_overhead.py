"""What an MCP tool call costs the run over the same tool in Python: the MCP plumbing per call
(the hop to the toolbox's event loop thread, JSON-RPC over the server's stdin/stdout or HTTP on
127.0.0.1, the server SDK's dispatch and validation, the result turned into an observation).

    python benchmarks/mcp_overhead.py [--calls 300] [--no-http]

The server is this file (``--serve stdio|http``): the SDK's ``MCPServer`` with one trivial tool,
``add(a, b)``. Each round times ``invoke`` of ``add`` through the :class:`MCPToolbox` and
``invoke`` of the same function as a Python tool (the invoker's own work and the tool's);
overhead = MCP time - Python time. Prints median and p95 in ms per transport: stdio with the
default per-call timeout (the call runs in a worker thread that the invoker can abandon), stdio
without a timeout (in the caller's thread), and streamable HTTP; and the start-up time (once per
run or conversation, not per call).
"""

from __future__ import annotations

import argparse
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from react_agent.tools import MCPServerConfig, MCPToolbox, Toolbox, invoke
from react_agent.types import ToolCall

HERE = Path(__file__).resolve()


def add(a: float, b: float) -> float:
    """Add two numbers."""
    return a + b


def serve(transport: str, port: int) -> None:
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("bench", log_level="WARNING")
    server.tool()(add)
    if transport == "http":
        server.run("streamable-http", host="127.0.0.1", port=port)
    else:
        server.run()


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def measure(toolbox: MCPToolbox, calls: int, warmup: int) -> tuple[list[float], list[float]]:
    """(MCP ms, Python ms) per round, the two calls interleaved so that both see the same
    machine load."""
    local = Toolbox()
    local.add(add)
    mcp_ms: list[float] = []
    local_ms: list[float] = []
    for n in range(calls + warmup):
        call = ToolCall("add", {"a": n, "b": 0.5})
        started = time.perf_counter()
        remote = invoke(toolbox, call)
        middle = time.perf_counter()
        here = invoke(local, call)
        ended = time.perf_counter()
        if not remote.ok or remote.observation != here.observation:
            raise SystemExit(f"unexpected result: {remote.observation!r} != {here.observation!r}")
        if n >= warmup:
            mcp_ms.append((middle - started) * 1000)
            local_ms.append((ended - middle) * 1000)
    return mcp_ms, local_ms


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def http_server() -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, str(HERE), "--serve", "http", "--port", str(port)],
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return proc, f"http://127.0.0.1:{port}/mcp"
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("the HTTP benchmark server did not start") from None
            time.sleep(0.1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--no-http", action="store_true", help="stdio only")
    parser.add_argument("--serve", choices=("stdio", "http"), help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.port)
        return
    stdio = [sys.executable, str(HERE), "--serve", "stdio"]
    setups: list[tuple[str, Any]] = [
        ("stdio (timeout 60 s)", MCPServerConfig(stdio)),
        ("stdio (no timeout)", MCPServerConfig(stdio, timeout=None)),
    ]
    proc = None
    if not args.no_http:
        proc, url = http_server()
        setups.append(("streamable HTTP", MCPServerConfig(url)))
    print(f"MCP plumbing per tool call: add(a, b), {args.calls} calls after {args.warmup} "
          "warm-up calls (ms)")
    print(f"{'transport':<22} {'overhead median':>15} {'p95':>7}   {'MCP call median':>15} "
          f"{'Python tool median':>18} {'start-up':>9}")
    try:
        for label, config in setups:
            started = time.perf_counter()
            with MCPToolbox(config) as toolbox:
                startup = time.perf_counter() - started
                mcp_ms, local_ms = measure(toolbox, args.calls, args.warmup)
            overhead = [m - loc for m, loc in zip(mcp_ms, local_ms, strict=True)]
            print(f"{label:<22} {statistics.median(overhead):>15.3f} "
                  f"{percentile(overhead, 0.95):>7.3f}   {statistics.median(mcp_ms):>15.3f} "
                  f"{statistics.median(local_ms):>18.4f} {startup:>8.2f}s")
    finally:
        if proc is not None:
            proc.kill()
            proc.wait()


if __name__ == "__main__":
    main()
