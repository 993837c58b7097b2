"""Evaluation harness: public step-labelled data -> ProcessBench-style metrics and reports."""

from trustnode.audit.evaluation.datasets import EvalFormat, EvalItem, Loaded, load
from trustnode.audit.evaluation.metrics import Metrics, TraceRow, compute
from trustnode.audit.evaluation.modes import EvalError
from trustnode.audit.evaluation.runner import AuditorKind, EvalReport, run

__all__ = [
    "AuditorKind",
    "EvalError",
    "EvalFormat",
    "EvalItem",
    "EvalReport",
    "Loaded",
    "Metrics",
    "TraceRow",
    "compute",
    "load",
    "run",
]
