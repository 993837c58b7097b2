"""Step-level audit quality, as ProcessBench defines it.

Over erroneous traces, accuracy is the share whose predicted earliest error equals the
label; over correct traces, the share predicted error-free (-1); F1 is their harmonic
mean. Also reported: exact first-error accuracy over all traces, false alarms (correct
traces predicted erroneous), coverage (traces where the auditor decided at least one
segment) and a confusion table.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field


class TraceRow(BaseModel):
    """One trace's outcome."""

    id: str
    label: int
    predicted: int
    decided: bool = Field(description="The auditor decided at least one segment of the trace.")
    segments: int = 0
    decided_segments: int = 0
    claims_checked: int = 0
    reason: str = Field(default="", description="The first failing claim or defect, if any.")
    suspect: bool = Field(default=False, description="A stated rule distrusts this trace's label.")

    @property
    def erroneous(self) -> bool:
        return self.label >= 0

    @property
    def outcome(self) -> str:
        """Confusion cell: exact | early | late | missed for erroneous traces; clean | false_alarm."""
        if self.label < 0:
            return "clean" if self.predicted < 0 else "false_alarm"
        if self.predicted < 0:
            return "missed"
        if self.predicted == self.label:
            return "exact"
        return "early" if self.predicted < self.label else "late"


class Confusion(BaseModel):
    """Erroneous traces: exact / early / late / missed; correct traces: clean / false_alarm."""

    exact: int = 0
    early: int = 0
    late: int = 0
    missed: int = 0
    clean: int = 0
    false_alarm: int = 0


class Metrics(BaseModel):
    n: int
    n_erroneous: int
    n_correct: int
    accuracy_erroneous: float | None
    accuracy_correct: float | None
    f1: float | None
    exact_first_error_accuracy: float | None
    false_alarms: int
    false_alarm_rate: float | None
    coverage: float | None
    claims_checked: int
    confusion: Confusion


def _ratio(a: int, b: int) -> float | None:
    return a / b if b else None


def compute(rows: Sequence[TraceRow]) -> Metrics:
    """Aggregate per-trace rows into the report's figures (None where undefined)."""
    conf = Confusion()
    for r in rows:
        setattr(conf, r.outcome, getattr(conf, r.outcome) + 1)
    n_err = conf.exact + conf.early + conf.late + conf.missed
    n_ok = conf.clean + conf.false_alarm
    acc_err = _ratio(conf.exact, n_err)
    acc_ok = _ratio(conf.clean, n_ok)
    if acc_err is None or acc_ok is None:
        f1 = None
    elif acc_err + acc_ok == 0:
        f1 = 0.0
    else:
        f1 = 2 * acc_err * acc_ok / (acc_err + acc_ok)
    return Metrics(
        n=len(rows),
        n_erroneous=n_err,
        n_correct=n_ok,
        accuracy_erroneous=acc_err,
        accuracy_correct=acc_ok,
        f1=f1,
        exact_first_error_accuracy=_ratio(conf.exact + conf.clean, len(rows)),
        false_alarms=conf.false_alarm,
        false_alarm_rate=_ratio(conf.false_alarm, n_ok),
        coverage=_ratio(sum(1 for r in rows if r.decided), len(rows)),
        claims_checked=sum(r.claims_checked for r in rows),
        confusion=conf,
    )
