"""Unit words inside a computation (stage 2 of claim extraction, after tokenizing).

"5 hours * 3" and "$194/meter * 490 meters" compute with numbers; the words only say what
they count. Dropping them lets the arithmetic read the computation, while a conversion
such as "3 hours = 180 minutes" stays unread.
"""

from __future__ import annotations

from trustnode.audit.claims.model import T, Tok
from trustnode.audit.claims.words import (
    CLAUSE_ENDS,
    FUNCTION_WORDS,
    HYPOTHETICAL_WORDS,
    LEFT_JOIN_WORDS,
    NOT_UNITS,
    RIGHT_JOIN_WORDS,
    UNIT_WORDS,
)


def _unit_word(t: Tok, spaced: bool = True) -> bool:
    """A lower-case word that can only name what a number counts ("5 hours", "495 students")."""
    w = t.text
    return (
        t.kind is T.BREAK
        and (t.space_before or not spaced)
        and len(w) >= 2
        and w.isalpha()
        and w.islower()
        and w not in LEFT_JOIN_WORDS
        and w not in RIGHT_JOIN_WORDS
        and w not in FUNCTION_WORDS
        and w not in HYPOTHETICAL_WORDS
        and w not in CLAUSE_ENDS
        and w not in NOT_UNITS
    ) or (t.kind is T.BREAK and w.lower() in UNIT_WORDS)


def drop_units(toks: list[Tok]) -> list[Tok]:
    """Drop unit words inside a computation: "5 hours * 3", "$194/meter * 490 meters = ...".

    A word between a number and an operator is a unit; so is "/word" right after a number
    (a rate) when an operator or "=" follows; a word before "=" only when the side
    already holds an operator (so "3 hours = 180 minutes" stays a conversion, unread).
    """
    out: list[Tok] = []
    n = len(toks)
    idx = 0
    while idx < n:
        t = toks[idx]
        nxt = toks[idx + 1] if idx + 1 < n else None
        after_operand = bool(out) and out[-1].kind in (T.NUM, T.RP)
        if (
            after_operand
            and t.kind is T.OP
            and t.text == "/"
            and nxt is not None
            and _unit_word(nxt, spaced=False)
            and not nxt.space_before
            and (idx + 2 >= n or toks[idx + 2].kind in (T.OP, T.EQ, T.RP) or toks[idx + 2].text in ".,;")
        ):
            idx += 2  # "$15/student": a rate's unit
            continue
        before_op = nxt is not None and nxt.kind in (T.OP, T.RP) and nxt.text not in "^!"
        before_eq = nxt is not None and nxt.kind is T.EQ and _has_operator(out)
        if after_operand and _unit_word(t) and (before_op or before_eq):
            idx += 1
            continue
        out.append(t)
        idx += 1
    return out


def _has_operator(out: list[Tok]) -> bool:
    """Does the expression ending `out` (back to the last word) hold an operator?"""
    for t in reversed(out):
        if t.kind is T.BREAK or t.kind is T.EQ:
            return False
        if t.kind is T.OP and t.text in "+-*":
            return True  # not "/": "1/2 inch = 20 miles" is a scale, not a computation
    return False
