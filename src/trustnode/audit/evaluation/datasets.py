"""Loaders for public step-labelled reasoning data (read in place, never copied).

Every format becomes `EvalItem`: a problem, its steps, and the 0-based index of the
earliest wrong step (-1 when the trace has no error). A whole file that is not in its
format is an error (`DatasetError`); one malformed record is skipped, counted and listed
with the reason (`Loaded.skipped`), so a run never stops on it. Labels known to be
unreliable are flagged by stated, generic rules (`suspect`), never by record number:
here the rules the source itself states; `suspect.flag_refuted_labels` adds one more.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from enum import StrEnum
from pathlib import Path

from pydantic import BaseModel, Field


class EvalFormat(StrEnum):
    PROCESSBENCH = "processbench"
    BBM = "bbm"
    GSM8K = "gsm8k"
    MRBEN = "mrben"


class EvalItem(BaseModel):
    """One labelled trace."""

    id: str
    problem: str
    steps: list[str]
    label: int = Field(ge=-1, description="0-based earliest wrong step; -1 = no error.")
    suspect: str | None = Field(default=None, description="Why the label is not trusted, if it is not.")
    meta: dict[str, str] = Field(default_factory=dict)


class Skipped(BaseModel):
    """A record that could not be read, and why."""

    where: str
    reason: str


class Loaded(BaseModel):
    """A file's readable records and the records it skipped."""

    items: list[EvalItem]
    skipped: list[Skipped] = Field(default_factory=list)


class DatasetError(ValueError):
    """The file is not in the announced format."""


class RecordError(ValueError):
    """One record is malformed (skipped and counted, never fatal)."""


def _read_json(path: Path) -> object:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{path}: not JSON ({exc})") from exc


def _read_jsonl(path: Path, skipped: list[Skipped]) -> Iterator[tuple[int, dict[str, object]]]:
    with path.open(encoding="utf-8") as fh:
        for i, line in enumerate(fh):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                skipped.append(Skipped(where=f"{path.name}:{i + 1}", reason=f"not JSON ({exc})"))
                continue
            if not isinstance(row, dict):
                skipped.append(Skipped(where=f"{path.name}:{i + 1}", reason="expected an object"))
                continue
            yield i, row


def _need(row: dict[str, object], key: str) -> object:
    if key not in row:
        raise RecordError(f"missing field {key!r}")
    return row[key]


def _steps(value: object) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(s, str) for s in value) or not value:
        raise RecordError("'steps' must be a non-empty list of strings")
    if not any(s.strip() for s in value):
        raise RecordError("every step is empty")
    return [str(s) for s in value]


def _label(label: int, steps: list[str]) -> int:
    if not -1 <= label < len(steps):
        raise RecordError(f"first error at step {label} (0-based), but the record has {len(steps)} steps")
    return label


def _each(
    rows: Iterator[tuple[str, dict[str, object]]], make: Callable[[str, dict[str, object]], EvalItem]
) -> Loaded:
    items: list[EvalItem] = []
    skipped: list[Skipped] = []
    for where, row in rows:
        try:
            items.append(make(where, row))
        except (RecordError, ValueError) as exc:
            skipped.append(Skipped(where=where, reason=str(exc).splitlines()[0]))
    return Loaded(items=items, skipped=skipped)


def load_processbench(path: Path) -> Loaded:
    data = _read_json(path)
    if not isinstance(data, list):
        raise DatasetError(f"{path}: expected a JSON list of traces")

    def make(where: str, row: dict[str, object]) -> EvalItem:
        label = _need(row, "label")
        if not isinstance(label, int):
            raise RecordError("'label' must be an integer")
        steps = _steps(_need(row, "steps"))
        return EvalItem(
            id=str(row.get("id", where)),
            problem=str(_need(row, "problem")),
            steps=steps,
            label=_label(label, steps),
            meta={"generator": str(row.get("generator", ""))},
        )

    rows = [(f"{path.name}[{i}]", r) for i, r in enumerate(data)]
    loaded = _each(((w, r) for w, r in rows if isinstance(r, dict)), make)
    loaded.skipped[:0] = [
        Skipped(where=w, reason="expected an object") for w, r in rows if not isinstance(r, dict)
    ]
    return loaded


def load_bbm(path: Path) -> Loaded:
    skipped: list[Skipped] = []

    def make(where: str, row: dict[str, object]) -> EvalItem:
        steps = _steps(_need(row, "steps"))
        idx = _need(row, "mistake_index")
        if idx is not None and not isinstance(idx, int):
            raise RecordError("'mistake_index' must be an integer or null")
        answer, target = str(row.get("answer", "")), str(row.get("target", ""))
        suspect = None
        if idx is None and answer.strip() != target.strip():  # the source's own stated rule
            suspect = f"no mistake labelled, but the answer {answer} differs from the target {target}"
        return EvalItem(
            id=f"bbm-{where.rsplit(':', 1)[-1]}",
            problem=str(_need(row, "input")),
            steps=steps,
            label=_label(-1 if idx is None else idx, steps),
            suspect=suspect,
            meta={"answer": answer, "target": target},
        )

    loaded = _each(((f"{path.name}:{i}", r) for i, r in _read_jsonl(path, skipped)), make)
    loaded.skipped[:0] = skipped
    return loaded


def load_gsm8k(path: Path) -> Loaded:
    """Reference solutions: one step per line, the '#### answer' line dropped; all labelled correct."""
    skipped: list[Skipped] = []

    def make(where: str, row: dict[str, object]) -> EvalItem:
        body, _, final = str(_need(row, "answer")).partition("####")
        steps = [ln for ln in body.split("\n") if ln.strip()]
        if not steps:
            raise RecordError("empty solution")
        return EvalItem(
            id=f"gsm8k-{where.rsplit(':', 1)[-1]}",
            problem=str(_need(row, "question")),
            steps=steps,
            label=-1,
            meta={"final_answer": final.strip()},
        )

    loaded = _each(((f"{path.name}:{i}", r) for i, r in _read_jsonl(path, skipped)), make)
    loaded.skipped[:0] = skipped
    return loaded


_STEP_PREFIX = re.compile(r"^\s*Step\s+\d+\s*:\s*", re.IGNORECASE)


def _mrben_step(raw: str) -> str:
    """Drop the "Step N:" prefix; an empty step keeps its prefix so step numbers stay aligned."""
    return _STEP_PREFIX.sub("", raw).strip() or raw.strip() or "(empty step)"


def load_mrben(path: Path) -> Loaded:
    data = _read_json(path)
    if not isinstance(data, dict):
        raise DatasetError(f"{path}: expected an object of question id -> solutions")

    def make(where: str, sol: dict[str, object]) -> EvalItem:
        steps = _steps(_need(sol, "Model_Solution_Steps"))
        first = str(_need(sol, "Model_Solution_First_Error_Step")).strip()
        correctness = str(sol.get("Model_Solution_Correctness", "")).strip().lower()
        suspect = None
        if first.upper() in ("N/A", "NA", ""):
            label = -1
            if correctness == "incorrect":  # the record contradicts itself
                suspect = "marked incorrect but no first error step is given"
        else:
            try:
                label = int(first) - 1
            except ValueError as exc:
                raise RecordError(f"first error step {first!r} is not a number") from exc
            if correctness == "correct":
                suspect = f"marked correct but a first error step ({first}) is given"
        problem = str(_need(sol, "Question"))
        options = str(sol.get("Options", "")).strip()
        if options:
            problem += "\n" + options
        qid, j = where.rsplit("#", 1)
        return EvalItem(
            id=f"mrben-{qid[:8]}-{j}",
            problem=problem,
            steps=[_mrben_step(s) for s in steps],
            label=_label(label, steps),
            suspect=suspect,
            meta={"subject": str(sol.get("Subject", "")), "model": str(sol.get("Sampled_Model", ""))},
        )

    rows: list[tuple[str, dict[str, object]]] = []
    skipped: list[Skipped] = []
    for qid, sols in data.items():
        if not isinstance(sols, list):
            skipped.append(Skipped(where=f"{path.name}[{qid}]", reason="expected a list of solutions"))
            continue
        for j, sol in enumerate(sols):
            if not isinstance(sol, dict):
                skipped.append(Skipped(where=f"{path.name}[{qid}][{j}]", reason="expected an object"))
                continue
            rows.append((f"{qid}#{j}", sol))
    loaded = _each(iter(rows), make)
    loaded.skipped[:0] = skipped
    return loaded


LOADERS = {
    EvalFormat.PROCESSBENCH: load_processbench,
    EvalFormat.BBM: load_bbm,
    EvalFormat.GSM8K: load_gsm8k,
    EvalFormat.MRBEN: load_mrben,
}


def load(path: Path, fmt: EvalFormat) -> Loaded:
    """Read a dataset file; a bad file raises DatasetError, a bad record is skipped and listed."""
    if not path.is_file():
        raise DatasetError(f"{path}: no such file")
    return LOADERS[fmt](path)
