"""``react-agent run``: one task, a saved run resumed (``--resume``), or a JSON Lines file of tasks
(``--tasks``, in turn, at once or on a Ray cluster)."""

from __future__ import annotations

import argparse
import shlex
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from ..agent import Agent
from ..errors import ConfigError
from ..harness import (
    RERUN_STATUSES,
    BatchTask,
    Printer,
    ViewEntry,
    WorkerLocal,
    load_tasks,
    load_view,
    output_json,
    read_trace,
    run_batch,
    safe,
    summary_table,
)
from ..tools import load_toolbox
from ..types import RunResult
from ._parser import build_parser
from ._session import EXIT_CODES, Session, show_progress
from ._view import write_html


def run(args: argparse.Namespace) -> int:
    if sum(map(bool, (args.task, args.tasks, args.resume))) != 1:
        raise ConfigError("run needs one of: a task, --tasks FILE.jsonl, --resume FILE.")
    if args.tasks:
        return _run_tasks(args)
    earlier = _load_run(args.resume) if args.resume else None
    printer = None if args.quiet else Printer(
        sys.stderr if args.json else sys.stdout, tokens=args.stream, usage=True
    )
    with Session(args, printer) as session:
        agent = session.agent()
        result = agent.resume(earlier) if earlier else agent.run(args.task)
    if args.save:
        result.save(args.save)
    if result.status == "interrupted" and (args.save or args.trace):
        print(safe(f"To go on from here: {_resume_command(args)}"), file=sys.stderr)
    if args.html:
        write_html(args, ViewEntry("react-agent run", [result], model=session.model.name))
    if args.json:
        print(result.to_json())
    elif args.quiet and result.has_output:
        print(safe(output_json(result)))
    elif args.quiet and getattr(args, "output_schema", None):  # a script reads stdout: no prose
        print(safe(f"{result.status}: {result.error or 'no typed value'}"), file=sys.stderr)
    elif args.quiet:
        print(safe(result.final_answer if result.final_answer is not None
                   else result.error or ""))
    return EXIT_CODES.get(result.status, 1)


def _resume_command(args: argparse.Namespace) -> str:
    """The command line that continues this run: ``run --resume`` of its trace (appended to)
    or of its saved run, with the options given to this one (not ``--api-key``: a secret is not
    printed)."""
    words = ["react-agent", "run", "--resume", args.trace or args.save]
    for action in build_parser().commands["run"].options():
        value, flag = getattr(args, action.dest, action.default), action.option_strings[0]
        if action.dest in ("help", "resume", "api_key") or value == action.default:
            continue
        if isinstance(action, argparse.BooleanOptionalAction):
            words.append(flag if value else f"--no-{flag[2:]}")
        elif action.nargs == 0:  # store_true
            words.append(flag)
        elif isinstance(value, list):  # repeatable
            words += [w for item in value for w in (flag, str(item))]
        elif value == action.const:  # --ray with no address
            words.append(flag)
        else:
            words += [flag, "off" if value is None else str(value)]
    shown = shlex.join(words)
    return shown + (" --api-key ..." if args.api_key else "")


def _load_run(path: str) -> RunResult:
    """A RunResult saved with --save / --json, or the last run of a trace file."""
    if path.endswith(".jsonl"):
        return read_trace(path)[-1]
    return RunResult.load(path)


def _run_tasks(args: argparse.Namespace) -> int:
    tasks = load_tasks(args.tasks, strict=args.bad_lines == "stop")
    out = args.out or str(Path(args.tasks).with_suffix("")) + ".results.jsonl"
    for bad in (t for t in tasks if t.problem):  # --bad-lines record: the others run
        print(safe(f"react-agent: {args.tasks}, line {bad.line}: {bad.problem} (recorded as "
                   "failed; the other tasks run)"), file=sys.stderr)
    if args.concurrency is not None and args.concurrency < 1:
        raise ConfigError("--concurrency must be at least 1.")
    if (args.ray is not None or (args.concurrency or 1) > 1) and args.trace:
        raise ConfigError("--trace writes one run after another: leave it out with "
                          "--concurrency or --ray (each record holds its whole run).")
    if args.ray is not None:
        if args.mcp:
            raise ConfigError("--mcp cannot be used with --ray: give the workers tools as "
                              "MODULE:OBJECT.")
        from functools import partial

        from ..harness import run_batch_ray

        report = run_batch_ray(tasks, out, partial(_batch_agents, args),
                               address=args.ray or None, workers=args.concurrency,
                               progress=show_progress, fresh_model=args.fresh_model)
    else:
        for spec in {t.tools for t in tasks if t.tools}:  # a bad tools entry fails before loading
            load_toolbox(spec)
        sessions = WorkerLocal(lambda: Session(args, None))
        shared = None if args.model_per_worker else sessions.get()

        def make_agent(task: BatchTask) -> Agent:  # fresh tools: side effects start clean
            session = shared or sessions.get()
            return session.agent(session.toolbox(task.tools), max_steps=task.max_steps,
                                 output_schema=task.output_schema)

        try:
            report = run_batch(tasks, out, make_agent, progress=show_progress,
                               fresh_model=args.fresh_model, concurrency=args.concurrency or 1)
        finally:
            for session in sessions.instances:
                session.__exit__()
    print(file=sys.stderr)
    if report.skipped:
        print(f"{report.skipped} task(s) already in {out} were skipped.")
    for line in summary_table(report.records):
        print(safe(line))
    if any(r.get("shape") for r in report.records):
        print()
        for line in summary_table(report.records, by="shape"):
            print(safe(line))
    failed = [r for r in report.records if r.get("passed") is False]
    if failed:
        print(f"\nFailed ({len(failed)}):")
        for record in failed:
            problems = "; ".join(record.get("problems") or record["missing"])
            print(safe(f"  {record['id']}: {problems}"))
    again = Counter(r["status"] for r in report.records
                    if r.get("status") in RERUN_STATUSES - {"bad_task"})
    if again:
        print(f"\n{', '.join(f'{n} {status}' for status, n in sorted(again.items()))}: run the "
              "same command again to run these tasks again.")
    print(f"Results: {out}")
    if args.html and Path(out).exists():
        write_html(args, load_view(out))
    if report.interrupted:
        print("Interrupted: run the same command again to go on.", file=sys.stderr)
        return 130
    ok = all(r["status"] == "final_answer" and r["passed"] is not False for r in report.records)
    return 0 if ok else 1


def _batch_agents(args: argparse.Namespace) -> Callable[[BatchTask], Agent]:
    """The agents of ``run --tasks`` on one Ray worker (``--ray``): this command line's model
    and policies, set up once; fresh tools for each task. Tools marked ``requires_approval``
    are declined there unless ``--yes`` (a worker has no terminal to ask on)."""
    session = Session(args, None)
    return lambda task: session.agent(session.toolbox(task.tools), max_steps=task.max_steps,
                                      output_schema=task.output_schema)
