"""The harness around runs: batches of tasks and their checks, first-action evaluation, traces
and replay, the printer of the thought chain (the CLI's callback), the offline HTML view of runs
and OpenTelemetry spans."""

from ._batch import (
    RERUN_STATUSES,
    BatchReport,
    WorkerLocal,
    latest_records,
    read_records,
    run_batch,
    summary_table,
)
from ._checks import check_run
from ._display import Printer, output_json, progress_bar, safe
from ._evaluation import EvalItem, load_suite, report, run_eval, scored, toolbox_from_specs
from ._otel import (
    OtelCallback,
    OtelMiddleware,
    annotate_turn,
    global_tracer_provider,
    tracer_provider_from_env,
)
from ._ray import AgentSetup, run_batch_ray
from ._redaction import SECRET_PATTERNS, Redactor
from ._tasks import BatchTask, load_tasks
from ._trace import TraceWriter, read_trace, replay_events
from ._view import render_view, write_view
from ._view_entries import ViewEntry, load_view

__all__ = [
    "RERUN_STATUSES", "SECRET_PATTERNS", "AgentSetup", "BatchReport", "BatchTask", "EvalItem",
    "OtelCallback", "OtelMiddleware", "Printer", "Redactor", "TraceWriter", "ViewEntry",
    "WorkerLocal", "annotate_turn", "check_run", "global_tracer_provider", "latest_records",
    "load_suite", "load_tasks", "load_view", "output_json", "progress_bar", "read_records",
    "read_trace",
    "render_view", "replay_events", "report", "run_batch", "run_batch_ray", "run_eval", "safe",
    "scored", "summary_table", "toolbox_from_specs", "tracer_provider_from_env", "write_view",
]
