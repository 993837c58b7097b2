"""A generic rule for labels that exact arithmetic refutes.

A label says which steps are correct: every step of an error-free trace, and every step
before the labelled first error. When such a step writes something exact arithmetic
refutes as written, the label is not trusted and the trace is marked suspect with what
was written. Two forms count, both written with whole numbers only (no rounding, no
units, no named values; each step read after the steps before it):
- an equality between numeric expressions that is false ("364 / 4 = 273");
- an equation in one unknown rewritten as another that no solution of the first solves
  ("(2x + 10) + (x + 1) + x = 100" then "4x + 20 = 100").
Both forms are facts about the text, not readings of it, and the reports show every
figure both with and without the suspect records, so the rule cannot flatter one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from trustnode.audit.claims import context_from, extract_claims
from trustnode.audit.evaluation.datasets import EvalItem
from trustnode.models.audit import ClaimStatus

# integers, operators and brackets only: nothing a reader could take for a unit, a label or a rounding
_PLAIN_INTEGER_ARITHMETIC = re.compile(r"[\d\s()+\-*/^]+")
_PLAIN_INTEGER_EQUATION = re.compile(r"[\d\s()+\-*/^=A-Za-z]+")


def _one_unknown(text: str) -> bool:
    return bool(_PLAIN_INTEGER_EQUATION.fullmatch(text)) and len({c for c in text if c.isalpha()}) == 1


def refuted_equality(step: str, before: Sequence[str] = ()) -> str | None:
    """The first whole-number equality or equation step in `step` that exact arithmetic refutes."""
    ctx = context_from(before)
    for c in extract_claims(step, facts=ctx.facts).claims:
        if c.status is not ClaimStatus.WRONG:
            continue
        if c.tolerance == "exact" and all(
            _PLAIN_INTEGER_ARITHMETIC.fullmatch(s) for s in (c.expression, c.found)
        ):
            return f"{c.text} (it is {c.correct})"
        if c.tolerance == "solution" and all(_one_unknown(s) for s in (c.expression, c.found)):
            return f"{c.found} after {c.expression} ({c.note})"
    return None


def flag_refuted_labels(items: Iterable[EvalItem]) -> list[EvalItem]:
    """Items with `suspect` set where a step the label calls correct refutes it."""
    out: list[EvalItem] = []
    for item in items:
        if item.suspect is None:
            correct = item.steps if item.label < 0 else item.steps[: item.label]
            for i, step in enumerate(correct):
                found = refuted_equality(step, item.steps[:i])
                if found is not None:
                    why = (
                        f"labelled {'error-free' if item.label < 0 else f'correct up to step {item.label}'}, "
                        f"but step {i} writes {found}"
                    )
                    item = item.model_copy(update={"suspect": why})
                    break
        out.append(item)
    return out
