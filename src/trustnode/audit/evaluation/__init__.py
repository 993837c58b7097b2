"""Evaluation harness: public step-labelled data -> ProcessBench-style metrics and reports."""

from trustnode.audit.evaluation.datasets import EvalFormat, EvalItem, load
from trustnode.audit.evaluation.metrics import Metrics, TraceRow, compute
from trustnode.audit.evaluation.runner import AuditorKind, EvalError, EvalReport, run

__all__ = [
    "AuditorKind",
    "EvalError",
    "EvalFormat",
    "EvalItem",
    "EvalReport",
    "Metrics",
    "TraceRow",
    "compute",
    "load",
    "run",
]
