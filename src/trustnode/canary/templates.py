"""Correct reasoning the canary generator writes itself, and the ways it breaks it (issue 15).

Numeric scenarios are word problems with random numbers, written as calculation steps that name
their intermediate results with single capital letters ("Let C = 12 * 7 = 84."), the way traces
define quantities; the computer checker binds such names, so every FAIL mutation below leaves a
claim it can refute.  Verbal scenarios are inferences with no number in them (they route to the
LLM or human tier), broken by dropping a condition or swapping an inference into its converse.
Nothing here reads evaluation data: every text comes from these templates and a seeded RNG.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from enum import StrEnum


class Mutation(StrEnum):
    """How a FAIL canary was made from correct text; NONE for a PASS canary."""

    NONE = "none"
    NUMBER = "number"  # one claimed result changed
    OPERATOR = "operator"  # one operator changed, the claimed result kept
    DROP_CONDITION = "drop_condition"  # a step computed as if an earlier condition were absent
    SWAP_INFERENCE = "swap_inference"  # two conclusions exchanged (numeric) or a converse drawn (verbal)


NUMERIC_MUTATIONS = (Mutation.NUMBER, Mutation.OPERATOR, Mutation.DROP_CONDITION, Mutation.SWAP_INFERENCE)
VERBAL_MUTATIONS = (Mutation.DROP_CONDITION, Mutation.SWAP_INFERENCE)


@dataclass(frozen=True)
class Step:
    """One calculation `name = a op b = value` and the sentence around it."""

    lead: str
    name: str
    a: str  # a number or an earlier step's name
    op: str  # one of + - * /
    b: str
    value: int
    tail: str

    def render(self, value: int | None = None, op: str | None = None) -> str:
        v = self.value if value is None else value
        return f"{self.lead} {self.name} = {self.a} {op or self.op} {self.b} = {v}{self.tail}"


_OPS = {"+": lambda x, y: x + y, "-": lambda x, y: x - y, "*": lambda x, y: x * y}
_OTHER_OP = {"+": "*", "-": "+", "*": "+"}


def _scenarios() -> list[tuple[str, list[tuple[str, str, str]]]]:
    """(setting, [(lead, kind, tail)]) families; kind names the step's arithmetic."""
    return [  # fmt: skip
        (
            "A shop sells notebooks in packs.",
            [
                ("The packs bought hold", "mul", " notebooks in total."),
                ("After giving some away, the notebooks left are", "sub", "."),
                ("Adding the spare box gives", "add", " notebooks."),
            ],
        ),
        (
            "A cyclist rides at a steady speed for several hours.",
            [
                ("The distance covered on the first day is", "mul", " km."),
                ("Counting the detour as well, the total is", "add", " km."),
                ("Without the part already logged, what remains to log is", "sub", " km."),
            ],
        ),
        (
            "A recipe is scaled up for a larger group.",
            [
                ("The flour needed for all batches is", "mul", " grams."),
                ("Taking out what is already in the bowl leaves", "sub", " grams to add."),
                ("With the extra dusting flour, the amount to buy is", "add", " grams."),
            ],
        ),
        (
            "A worker is paid by the hour and keeps a running balance.",
            [
                ("This week's pay comes to", "mul", " dollars."),
                ("Adding the bonus, the total is", "add", " dollars."),
                ("After rent is paid, the balance is", "sub", " dollars."),
            ],
        ),
        (
            "A floor is tiled row by row.",
            [
                ("The tiles in the laid rows number", "mul", "."),
                ("Including the border tiles, the count is", "add", "."),
                ("Subtracting the broken ones, the usable tiles are", "sub", "."),
            ],
        ),
    ]


def numeric_steps(rng: random.Random, names: list[str], n_steps: int) -> tuple[str, list[Step]]:
    """A setting and its first `n_steps` (1 to 3) correct calculation steps, each using the previous result."""
    setting, family = rng.choice(_scenarios())
    steps: list[Step] = []
    prev_name, prev_val = "", 0
    for i, (lead, kind, tail) in enumerate(family[:n_steps]):
        name = names[i]
        if i == 0:
            a, b = rng.randint(3, 19), rng.randint(4, 29)
            steps.append(Step(f"{lead} (let", name, str(a), "*", str(b), a * b, f"){tail}"))
        else:
            op = {"mul": "*", "add": "+", "sub": "-"}[kind]
            b = rng.randint(2, 9) if op == "*" else rng.randint(3, max(4, prev_val // 2))
            value = _OPS[op](prev_val, b)
            steps.append(Step(f"{lead} (let", name, prev_name, op, str(b), value, f"){tail}"))
        prev_name, prev_val = name, steps[-1].value
    return setting, steps


def mutate_numeric(rng: random.Random, steps: list[Step], mutation: Mutation) -> list[str]:
    """Rendered sentences of `steps`, with exactly one claim made wrong by `mutation` (NONE: correct)."""
    out = [s.render() for s in steps]
    if mutation is Mutation.NONE:
        return out
    i = rng.randrange(len(steps))
    s = steps[i]
    if mutation is Mutation.NUMBER:
        delta = rng.choice([-1, 1]) * rng.choice([1, 2, 3, 5, 10, max(1, s.value // 10)])
        out[i] = s.render(value=s.value + delta)
    elif mutation is Mutation.OPERATOR:
        out[i] = s.render(op=_OTHER_OP[s.op])
    elif mutation is Mutation.DROP_CONDITION:
        # a later step computed from the step before the previous one, as if its condition were absent
        j = rng.randrange(1, len(steps)) if len(steps) > 1 else 0
        s = steps[j]
        if j == 0:
            out[0] = s.render(value=int(s.a))  # the multiplier dropped: "a * b = a"
        else:
            base = int(steps[j - 2].value) if j >= 2 else int(steps[0].a)
            wrong = _OPS[s.op](base, int(s.b))
            if wrong == s.value:
                wrong += 1
            out[j] = s.render(value=wrong)
    elif mutation is Mutation.SWAP_INFERENCE:
        if len(steps) < 2 or steps[0].value == steps[1].value:
            out[0] = s.render(value=steps[0].value + 1)
        else:
            out[0] = steps[0].render(value=steps[1].value)
            out[1] = steps[1].render(value=steps[0].value)
    return out


_VERBAL: list[tuple[str, str, str, str]] = [
    # (a sufficient rule with two conditions, condition 1 holds, condition 2 holds, conclusion)
    ("a member who has a card and has no overdue loans may borrow a rare book",
     "Dana has a card", "Dana has no overdue loans", "Dana may borrow the rare book"),
    ("a train leaves on time whenever the crew is present and the signal is green",
     "the crew is present", "the signal is green", "the train leaves on time"),
    ("a seed sprouts when it gets water and stays warm",
     "the seed got water", "the seed stayed warm", "the seed sprouts"),
    ("the alarm sounds whenever the door opens while the system is armed",
     "the door opened", "the system was armed", "the alarm sounds"),
]  # fmt: skip
_CLINICAL: list[tuple[str, str, str, str]] = [
    ("the guideline allows the antibiotic for a patient with no penicillin allergy and normal kidney function",
     "the patient reports no penicillin allergy", "the kidney function is normal",
     "the antibiotic is allowed, though the clinician should still confirm the history"),
    ("a vaccine dose may be given to a patient who is not febrile and has had no earlier reaction",
     "the patient is not febrile", "there was no earlier reaction",
     "the dose may be given, though the nurse might still observe the patient afterwards"),
]  # fmt: skip


def verbal_sentences(rng: random.Random, mutation: Mutation, clinical: bool) -> list[str]:
    """A two-condition inference, correct, with a condition dropped, or as its converse."""
    rule, c1, c2, concl = rng.choice(_CLINICAL if clinical else _VERBAL)
    opener = rng.choice(["The rule says that", "We are told that", "By the stated policy,"])
    first = f"{opener} {rule}."
    if mutation is Mutation.NONE:
        return [first, f"Here {c1}, and {c2}.", f"Both conditions hold, so {concl}."]
    if mutation is Mutation.DROP_CONDITION:
        return [first, f"Here {c1}.", f"That condition holds, so {concl}."]
    # the converse: the conclusion taken as proof of a condition
    return [first, f"Here {concl.split(',')[0]}.", f"So it follows that {c2}, and {c1}."]


_SHORT: list[tuple[str, str, str, str]] = [
    # (rule, valid conclusion, converse drawn instead, conclusion with a condition dropped)
    ("every square is a rectangle", "this square is a rectangle", "this rectangle is a square",
     "this four-sided shape is a rectangle"),
    ("all mammals breathe air", "the whale, a mammal, breathes air", "anything breathing air is a mammal",
     "the whale breathes air because it swims"),
    ("a guest with a ticket and a passport may board", "Ana has both, so she may board",
     "Ana boarded, so she had no passport check", "Ana has a ticket, so she may board"),
    ("a shop opens when the owner arrives and the power is on", "both hold, so the shop opens",
     "the shop is open, so the owner must have come first", "the owner arrived, so the shop opens"),
]  # fmt: skip
_SHORT_CLINICAL: list[tuple[str, str, str, str]] = [
    ("the drug is advised for adults without liver disease", "this adult has none, so it may be advised",
     "she takes the drug, so she probably has no liver disease", "she is an adult, so it may be advised"),
    ("rest is advised when a fever and a cough persist", "both persist, so rest is probably advised",
     "he is resting, so he likely has a fever and a cough", "the fever persists, so rest is probably advised"),
]  # fmt: skip


def short_verbal(rng: random.Random, mutation: Mutation, clinical: bool) -> str:
    """One sentence: a rule and a conclusion (valid, its converse, or with a condition dropped)."""
    rule, valid, converse, dropped = rng.choice(_SHORT_CLINICAL if clinical else _SHORT)
    conclusion = {Mutation.NONE: valid, Mutation.SWAP_INFERENCE: converse, Mutation.DROP_CONDITION: dropped}[
        mutation
    ]
    return f"{rng.choice(['Since', 'Because', 'Given that'])} {rule}, {conclusion}."
