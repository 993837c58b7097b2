"""Which equalities a text states, and which it only considers.

An equality is not a claim when it sits in a condition or a test ("if 2 + 2 = 5, then",
"check: 3^2 - 9 = 0", "suppose x = 2"), in a question ("does 44 * 55 = 3506?"), or when
the same sentence rejects it or works on it as an equation ("2+1=1 (False)", "16 = 0,
impossible", "we get 0 + 14*71 = 999, which simplifies to ..."). Relations (<, >, ≤, ≥,
≠) follow the same rules. Each pass is one linear sweep over the tokens.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from trustnode.audit.claims.words import (
    CLAUSE_ENDS,
    CLOSE_MATH,
    HYPOTHETICAL_WORDS,
    NEGATED_REJECTIONS,
    NEGATIONS,
    REJECTION_WORDS,
    RELATIONS,
    REWORK_WORDS,
    SENTENCE_ENDS,
)

if TYPE_CHECKING:
    from trustnode.audit.claims.tokens import Tok


def _is_break(t: Tok) -> bool:
    return t.kind.value == "break"


def _is_relation(t: Tok) -> bool:
    return t.kind.value == "eq" or (_is_break(t) and t.text in RELATIONS)


def _rejects(toks: list[Tok], k: int) -> bool:
    """Does the word at k reject what came before it in its sentence?"""
    low = toks[k].text.lower()
    if low in REJECTION_WORDS:
        return True
    if low in NEGATIONS or low in ("does", "is", "are"):
        for t in toks[k + 1 : k + 4]:
            w = t.text.lower()
            if w in NEGATED_REJECTIONS:
                return low in NEGATIONS or any(x.text.lower() in NEGATIONS for x in toks[k + 1 : k + 3])
            if not _is_break(t) or w in SENTENCE_ENDS:
                break
    return False


def mark_clauses(toks: list[Tok]) -> None:
    """Set `conditional` on every equality or relation that the text does not state."""
    conditional = False
    for t in toks:
        if _is_break(t) and t.text not in RELATIONS:
            low = t.text.lower()
            if low in HYPOTHETICAL_WORDS:
                conditional = True
            elif low in CLAUSE_ENDS:
                conditional = False
        elif _is_relation(t) and conditional:
            t.conditional = True
    question = False  # read backwards: an equality in a sentence that ends with "?" is asked
    rejected = False  # ... and one followed in its sentence by "false" or "impossible"
    reworked = False  # ... or by "simplifies to": an equation being worked on
    for k in range(len(toks) - 1, -1, -1):
        t = toks[k]
        if _is_break(t) and t.text in SENTENCE_ENDS:
            question = t.text == "?"
            rejected = reworked = False
        elif t.text == CLOSE_MATH and k + 1 < len(toks) and toks[k + 1].text[:1].isupper():
            rejected = reworked = False  # "\\[x = -206\\] This does not satisfy ...": a new sentence
        elif _is_break(t) and _rejects(toks, k):
            rejected = True
        elif _is_break(t) and t.text.lower() in REWORK_WORDS:
            reworked = True
        elif _is_relation(t):
            t.conditional = t.conditional or question or rejected
            t.reworked = reworked
    for prev, t in zip(toks, toks[1:], strict=False):
        t.after_operator = _is_break(t) and prev.kind.value == "op"
        if _is_break(t) and (
            prev.kind.value not in ("break", "lp")
            or (not t.space_before and _is_break(prev) and prev.text.isalnum())
        ):
            t.standalone = False
