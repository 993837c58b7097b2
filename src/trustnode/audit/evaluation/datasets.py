"""Loaders for public step-labelled reasoning data (read in place, never copied).

Every format becomes `EvalItem`: a problem, its steps, and the 0-based index of the
earliest wrong step (-1 when the trace has no error). Records whose label is known to be
unreliable are kept but flagged `suspect` with the reason, so a run can exclude them and
say which and why.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
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


class DatasetError(ValueError):
    """The file is not in the announced format."""


# BIG-Bench Mistake records whose "no mistake" label a reader can refute by exact arithmetic.
# Each was read by hand; the reason quotes the step. Excluded together with the records
# whose final answer disagrees with the target although no mistake is labelled.
BBM_VERIFIED_LABEL_ERRORS: dict[int, str] = {
    125: (
        "labelled without mistake, but step 2 rewrites (2 * 1 - 8 + -5), which is -11, as "
        "(2 * 1 - (8 + -5)), which is -1, then turns (8 + -5) into 13; the two slips cancel, "
        "so the final answer matches the target"
    ),
}

# GSM8K reference solutions that contain an equation that is false as written.
GSM8K_REFERENCE_ERRORS: dict[int, str] = {
    501: "writes 364 / 4 = 273 (273 is 3/4 of 364; 364 / 4 is 91)",
    1024: "writes $32 - $20 = $300 (the revenue was $320; 32 - 20 is 12)",
}


def _read_json(path: Path) -> object:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{path}: not JSON ({exc})") from exc


def _read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, object]]]:
    with path.open(encoding="utf-8") as fh:
        for i, line in enumerate(fh):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DatasetError(f"{path}:{i + 1}: not JSON ({exc})") from exc
            if not isinstance(row, dict):
                raise DatasetError(f"{path}:{i + 1}: expected an object")
            yield i, row


def _need(row: dict[str, object], key: str, where: str) -> object:
    if key not in row:
        raise DatasetError(f"{where}: missing field {key!r}")
    return row[key]


def _steps(value: object, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(s, str) for s in value) or not value:
        raise DatasetError(f"{where}: 'steps' must be a non-empty list of strings")
    return [str(s) for s in value]


def load_processbench(path: Path) -> list[EvalItem]:
    data = _read_json(path)
    if not isinstance(data, list):
        raise DatasetError(f"{path}: expected a JSON list of traces")
    out: list[EvalItem] = []
    for i, row in enumerate(data):
        where = f"{path}[{i}]"
        if not isinstance(row, dict):
            raise DatasetError(f"{where}: expected an object")
        label = _need(row, "label", where)
        if not isinstance(label, int):
            raise DatasetError(f"{where}: 'label' must be an integer")
        steps = _steps(_need(row, "steps", where), where)
        if label >= len(steps):
            raise DatasetError(f"{where}: label {label} is past the last step")
        out.append(
            EvalItem(
                id=str(row.get("id", i)),
                problem=str(_need(row, "problem", where)),
                steps=steps,
                label=label,
                meta={"generator": str(row.get("generator", ""))},
            )
        )
    return out


def load_bbm(path: Path) -> list[EvalItem]:
    out: list[EvalItem] = []
    for i, row in _read_jsonl(path):
        where = f"{path}:{i + 1}"
        steps = _steps(_need(row, "steps", where), where)
        idx = _need(row, "mistake_index", where)
        if idx is not None and not isinstance(idx, int):
            raise DatasetError(f"{where}: 'mistake_index' must be an integer or null")
        label = -1 if idx is None else idx
        answer, target = str(row.get("answer", "")), str(row.get("target", ""))
        suspect = None
        if idx is None and answer.strip() != target.strip():
            suspect = f"no mistake labelled, but the answer {answer} differs from the target {target}"
        elif idx is None and i in BBM_VERIFIED_LABEL_ERRORS:
            suspect = BBM_VERIFIED_LABEL_ERRORS[i]
        out.append(
            EvalItem(
                id=f"bbm-{i}",
                problem=str(_need(row, "input", where)),
                steps=steps,
                label=label,
                suspect=suspect,
                meta={"answer": answer, "target": target},
            )
        )
    return out


def load_gsm8k(path: Path) -> list[EvalItem]:
    """Reference solutions: one step per line, the '#### answer' line dropped; all correct."""
    out: list[EvalItem] = []
    for i, row in _read_jsonl(path):
        where = f"{path}:{i + 1}"
        body, _, final = str(_need(row, "answer", where)).partition("####")
        steps = [ln for ln in body.split("\n") if ln.strip()]
        if not steps:
            raise DatasetError(f"{where}: empty solution")
        out.append(
            EvalItem(
                id=f"gsm8k-{i}",
                problem=str(_need(row, "question", where)),
                steps=steps,
                label=-1,
                suspect=GSM8K_REFERENCE_ERRORS.get(i),
                meta={"final_answer": final.strip()},
            )
        )
    return out


_STEP_PREFIX = re.compile(r"^\s*Step\s+\d+\s*:\s*", re.IGNORECASE)


def _mrben_step(raw: str) -> str:
    """Drop the "Step N:" prefix; an empty step keeps its prefix so step numbers stay aligned."""
    return _STEP_PREFIX.sub("", raw).strip() or raw.strip() or "(empty step)"


def load_mrben(path: Path) -> list[EvalItem]:
    data = _read_json(path)
    if not isinstance(data, dict):
        raise DatasetError(f"{path}: expected an object of question id -> solutions")
    out: list[EvalItem] = []
    for qid, sols in data.items():
        if not isinstance(sols, list):
            raise DatasetError(f"{path}[{qid}]: expected a list of solutions")
        for j, sol in enumerate(sols):
            where = f"{path}[{qid}][{j}]"
            if not isinstance(sol, dict):
                raise DatasetError(f"{where}: expected an object")
            steps = _steps(_need(sol, "Model_Solution_Steps", where), where)
            first = str(_need(sol, "Model_Solution_First_Error_Step", where)).strip()
            correctness = str(sol.get("Model_Solution_Correctness", "")).strip().lower()
            suspect = None
            if first.upper() in ("N/A", "NA", ""):
                label = -1
                if correctness == "incorrect":
                    suspect = "marked incorrect but no first error step is given"
            else:
                try:
                    label = int(first) - 1
                except ValueError as exc:
                    raise DatasetError(f"{where}: first error step {first!r} is not a number") from exc
                if not 0 <= label < len(steps):
                    raise DatasetError(f"{where}: first error step {first} is outside the steps")
            problem = str(_need(sol, "Question", where))
            options = str(sol.get("Options", "")).strip()
            if options:
                problem += "\n" + options
            out.append(
                EvalItem(
                    id=f"mrben-{str(qid)[:8]}-{j}",
                    problem=problem,
                    steps=[_mrben_step(s) for s in steps],
                    label=label,
                    suspect=suspect,
                    meta={"subject": str(sol.get("Subject", "")), "model": str(sol.get("Sampled_Model", ""))},
                )
            )
    return out


LOADERS = {
    EvalFormat.PROCESSBENCH: load_processbench,
    EvalFormat.BBM: load_bbm,
    EvalFormat.GSM8K: load_gsm8k,
    EvalFormat.MRBEN: load_mrben,
}


def load(path: Path, fmt: EvalFormat) -> list[EvalItem]:
    """Read a dataset file in the given format; raises DatasetError with the place of the fault."""
    if not path.is_file():
        raise DatasetError(f"{path}: no such file")
    return LOADERS[fmt](path)
