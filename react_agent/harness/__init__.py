"""The harness around runs: batches of tasks and their checks, first-action evaluation, traces
and replay, and the printer of the thought chain (the CLI's callback)."""

from ._batch import BatchReport, BatchTask, load_tasks, run_batch, summary_table
from ._checks import check_run
from ._display import Printer
from ._evaluation import EvalItem, load_suite, run_eval, toolbox_from_specs
from ._trace import TraceWriter, read_trace, replay_events

__all__ = [
    "BatchReport", "BatchTask", "EvalItem", "Printer", "TraceWriter", "check_run", "load_suite",
    "load_tasks", "read_trace", "replay_events", "run_batch", "run_eval", "summary_table",
    "toolbox_from_specs",
]
