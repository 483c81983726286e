"""Prompt-evaluation and generation speed of the embedded model, with llama.cpp's extra buffer
types (the fast path: weight repacking) and without them (the safe configuration).

    python benchmarks/llama_speed.py [--runs 3] [--prompt-tokens 512] [--gen-tokens 64]

Each configuration runs in its own child process (so a CPU that dies on the fast path is
reported, not fatal): load the model, then ``--runs`` times: evaluate a fresh prompt of
``--prompt-tokens`` tokens (from an empty KV cache) and generate ``--gen-tokens`` tokens greedily.
Printed: median tokens/s of each phase per configuration, and the ratio fast / safe.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

TEXT = ("An agent reads the task, picks a tool, reads the observation and decides again. "
        "Small local models need a clear prompt and a tolerant parser. ")


def child(extra_buffer_types: bool, runs: int, prompt_tokens: int, gen_tokens: int) -> None:
    from llama_cpp import Llama

    from react_agent.models._llama_cpp import use_extra_bufts
    from react_agent.models._weights import default_model_path

    with use_extra_bufts(extra_buffer_types):
        started = time.perf_counter()
        llm = Llama(model_path=str(default_model_path()), n_ctx=2048, n_batch=512,
                    n_threads=os.cpu_count() or 1, verbose=False)
        load = time.perf_counter() - started
    words = llm.tokenize(TEXT.encode() * (prompt_tokens // 10), add_bos=False)
    prompt_speeds, gen_speeds = [], []
    for run in range(runs):
        tokens = [llm.token_bos(), *words[run: run + prompt_tokens - 1]]  # no cached prefix
        llm.reset()
        started = time.perf_counter()
        llm.eval(tokens)
        prompt_speeds.append(len(tokens) / (time.perf_counter() - started))
        started = time.perf_counter()
        for _ in range(gen_tokens):
            token = llm.sample(temp=0.0)
            llm.eval([token])
        gen_speeds.append(gen_tokens / (time.perf_counter() - started))
    print(json.dumps({"load_s": load, "prompt": statistics.median(prompt_speeds),
                      "generation": statistics.median(gen_speeds)}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--prompt-tokens", type=int, default=512)
    parser.add_argument("--gen-tokens", type=int, default=64)
    parser.add_argument("--child", choices=["on", "off"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child == "on", args.runs, args.prompt_tokens, args.gen_tokens)
        return
    results = {}
    for label, flag in (("fast path (extra buffer types on)", "on"),
                        ("safe configuration (off)", "off")):
        done = subprocess.run(
            [sys.executable, __file__, "--child", flag, "--runs", str(args.runs),
             "--prompt-tokens", str(args.prompt_tokens), "--gen-tokens", str(args.gen_tokens)],
            capture_output=True, text=True, check=False,
        )
        if done.returncode != 0:
            print(f"{label:36} failed (exit status {done.returncode}): "
                  f"{done.stderr.strip().splitlines()[-1:]}")
            continue
        results[flag] = json.loads(done.stdout.strip().splitlines()[-1])
        r = results[flag]
        print(f"{label:36} prompt {r['prompt']:7.1f} tok/s   generation {r['generation']:6.2f} "
              f"tok/s   load {r['load_s']:.1f} s")
    if len(results) == 2:
        fast, safe = results["on"], results["off"]
        print(f"{'ratio fast / safe':36} prompt {fast['prompt'] / safe['prompt']:7.2f}"
              f"         generation {fast['generation'] / safe['generation']:6.2f}")
    print(f"({args.runs} runs each, medians; prompt {args.prompt_tokens} tokens, "
          f"{args.gen_tokens} generated; {os.cpu_count()} threads)")


if __name__ == "__main__":
    main()
