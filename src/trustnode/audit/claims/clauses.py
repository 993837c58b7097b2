"""Which equalities a text states, and which it only considers.

An equality is not a claim when it sits in a condition or a test ("if 2 + 2 = 5, then",
"check: 3^2 - 9 = 0", "suppose x = 2"), in a question ("does 44 * 55 = 3506?"), or when
the same sentence rejects it or works on it as an equation ("2+1=1 (False)", "16 = 0,
impossible", "we get 0 + 14*71 = 999, which simplifies to ..."). Relations (<, >, ≤, ≥,
≠) follow the same rules. Each pass is one linear sweep over the tokens.
"""

from __future__ import annotations

from trustnode.audit.claims.model import T, Tok
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


def _is_break(t: Tok) -> bool:
    return t.kind is T.BREAK


def _is_relation(t: Tok) -> bool:
    return t.kind is T.EQ or (t.kind is T.BREAK and t.text in RELATIONS)


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
    brk, eq = T.BREAK, T.EQ
    conditional = False
    for t in toks:
        if t.kind is brk:
            if t.text in RELATIONS:
                if conditional:
                    t.conditional = True
                continue
            low = t.text.lower()
            if low in HYPOTHETICAL_WORDS:
                conditional = True
            elif low in CLAUSE_ENDS:
                conditional = False
        elif t.kind is eq and conditional:
            t.conditional = True
    question = False  # read backwards: an equality in a sentence that ends with "?" is asked
    rejected = False  # ... and one followed in its sentence by "false" or "impossible"
    reworked = False  # ... or by "simplifies to": an equation being worked on
    for k in range(len(toks) - 1, -1, -1):
        t = toks[k]
        if t.kind is eq or (t.kind is brk and t.text in RELATIONS):
            t.conditional = t.conditional or question or rejected
            t.reworked = reworked
        elif t.kind is brk:
            text = t.text
            if text in SENTENCE_ENDS:
                question = text == "?"
                rejected = reworked = False
            elif text == CLOSE_MATH and k + 1 < len(toks) and toks[k + 1].text[:1].isupper():
                rejected = reworked = False  # "\\[x = -206\\] This does not satisfy ...": a new sentence
            elif _rejects(toks, k):
                rejected = True
            elif text.lower() in REWORK_WORDS:
                reworked = True
    prev = None
    for t in toks:
        if prev is not None and t.kind is brk:
            t.after_operator = prev.kind is T.OP
            if (
                prev.kind is not brk
                and prev.kind is not T.LP
                or not t.space_before
                and prev.kind is brk
                and prev.text.isalnum()
            ):
                t.standalone = False
        prev = t
