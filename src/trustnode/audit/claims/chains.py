"""Stage 3 of claim extraction: tokens -> chains `e0 = e1 = ... = en`.

A run of arithmetic tokens between words is split at its equality signs. Every way a
side could be the tail or head of something longer (an operator word before it, a
variable, a label such as "Day 1 = ...") drops that side: precision comes first.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import sympy

from trustnode.audit.claims.model import T, Tok
from trustnode.audit.claims.tokens import var_name
from trustnode.audit.claims.words import (
    FUNCTION_WORDS,
    IMPLIES,
    JUXTAPOSED,
    LEFT_JOIN_WORDS,
    OPEN_MATH,
    PARTIAL_MARKS,
    RIGHT_JOIN_WORDS,
    SAFE_LEFT_ATTACHED,
    SAFE_LEFT_SYMBOLS,
    SAFE_RIGHT_ATTACHED,
    UNARY_MINUS_AFTER,
    VERBS,
)

MAX_SEGMENT_TOKENS = 400

OPERAND_START = (T.NUM, T.VAR, T.LP, T.FUNC)
OPERAND_END = (T.NUM, T.VAR, T.RP)


@dataclass
class Side:
    """One side of a chain: tokens and where they sit in the normalised text."""

    toks: list[Tok]
    start: int
    end: int

    @property
    def literal(self) -> Tok | None:
        """The number token when the side is a bare (possibly negative) literal."""
        ts = self.toks
        while len(ts) >= 2 and ts[0].kind is T.LP and ts[-1].kind is T.RP:
            ts = ts[1:-1]
        if len(ts) == 1 and ts[0].kind is T.NUM:
            return ts[0]
        if len(ts) == 2 and ts[0].kind is T.OP and ts[0].text in "+-" and ts[1].kind is T.NUM:
            return ts[1]
        return None


@dataclass
class Chain:
    sides: list[Side]
    eqs: list[Tok]  # eqs[i] sits between sides[i] and sides[i+1]
    defines: str | None = None  # "A = ..." with A not yet bound
    label: str = ""  # "Total earnings = ...": the words naming what the chain computes
    label_start: int = -1  # where the label starts in the normalised text


_LABEL_STOPS = frozenset(".;:\n,!?()\u27e6\u27e7")
MAX_LABEL_CHARS = 60


def label_before(norm: str, pos: int) -> tuple[str, int]:
    """The words right before `pos` back to a separator ("Total earnings" in "Total earnings = 8").

    Only letters, spaces and apostrophes; ("", -1) when anything else comes first.
    """
    i = pos
    lo = max(0, pos - MAX_LABEL_CHARS)
    while i > lo and norm[i - 1] not in _LABEL_STOPS:
        c = norm[i - 1]
        if not (c.isalpha() or c in " \t'"):
            return "", -1
        i -= 1
    if i == lo and lo > 0:
        return "", -1
    words = norm[i:pos].split()
    if not words:
        return "", -1
    label = words[0] if len(words) == 1 and len(words[0]) == 1 else " ".join(w.lower() for w in words)
    return label, i + (len(norm[i:pos]) - len(norm[i:pos].lstrip()))


def _balanced(toks: list[Tok]) -> bool:
    depth = 0
    for t in toks:
        if t.kind is T.LP:
            depth += 1
        elif t.kind is T.RP:
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


def _trim_parens(toks: list[Tok], left: bool) -> list[Tok]:
    """Drop unmatched brackets at the outer end of a chain's first or last side."""
    toks = list(toks)
    if left:
        while toks and toks[0].kind is T.LP and not _balanced(toks):
            depth = 0
            for t in toks:
                depth += 1 if t.kind is T.LP else -1 if t.kind is T.RP else 0
            if depth <= 0:
                break
            toks = toks[1:]
    else:
        while toks and toks[-1].kind is T.RP and not _balanced(toks):
            depth = 0
            for t in toks:
                depth += 1 if t.kind is T.LP else -1 if t.kind is T.RP else 0
            if depth >= 0:
                break
            toks = toks[:-1]
    return toks


def left_partial(first: list[Tok], before: Tok | None, opened: Tok | None = None) -> bool:
    """Is the chain's first side possibly the tail of a longer expression?

    `opened`: the outermost bracket trimmed off the side ("year (365 - 180 = 185)"); it,
    not the side's first token, is what touches `before`.
    """
    if not first:
        return True
    t0 = first[0]
    if t0.kind is T.OP and t0.text != "-":
        return True
    glued = not (opened or t0).space_before
    if before is not None and glued and before.text not in SAFE_LEFT_ATTACHED:
        return True  # glued to the previous token: "2:30", "f(2)", "a_1", "3!"
    if before is not None and before.kind is T.BREAK:
        w = before.text
        if w in PARTIAL_MARKS and w != IMPLIES:
            return True
        if w.lower() in LEFT_JOIN_WORDS or w.lower() in FUNCTION_WORDS or (len(w) == 1 and w.isalpha()):
            return True
        if Side(first, 0, 0).literal is not None and w not in SAFE_LEFT_SYMBOLS and w.lower() not in VERBS:
            return True  # "Day 1 = ...", "Step 2 = ...": a label, not a value ("is 42 = ..." is one)
        if not w.isalnum() and w not in SAFE_LEFT_SYMBOLS:
            return True  # "22 – 7 = 15" with an unknown dash, "|x| = 5", "≤ 3 = ..."
        if t0.kind is T.OP and not w.isalpha() and w not in (":", ",", ";", "\n", OPEN_MATH):
            return True  # "3! - 1 = 5": the minus is binary
        if t0.kind is T.OP and w.isalpha() and len(w) > 1 and w.lower() not in UNARY_MINUS_AFTER:
            return True  # "Total - 5 = 3", "50 total students - 10 baking - ... = 25": a binary minus
        if w.isalpha() and before.after_operator:
            return True  # "25 classmates + his 1 teacher + 1 = 27": a word inside a longer sum
    return bool(before is not None and before.kind is T.NUM and before.attached)


def right_partial(last: list[Tok], after: Tok | None) -> bool:
    """Is the chain's last side possibly the head of a longer expression?"""
    if not last:
        return True
    t = last[-1]
    if t.kind in (T.OP, T.LP, T.FUNC):
        return True
    if t.kind is T.NUM and t.attached:
        return True
    if after is None:
        return False
    if not after.space_before and after.text not in SAFE_RIGHT_ATTACHED:
        return True
    if after.kind is T.BREAK:
        w = after.text
        if w.lower() in RIGHT_JOIN_WORDS or w.lower() in FUNCTION_WORDS:
            return True  # "= 50 - 50 cos C"
        if len(w) == 1 and w.isalpha():
            return True
        if w in PARTIAL_MARKS and w not in (IMPLIES, "^", "_", "&"):
            return True
    return False


def split_runs(toks: list[Tok]) -> list[tuple[list[Tok], Tok | None, Tok | None]]:
    """Maximal stretches of arithmetic tokens, with the token before and after each."""
    runs: list[tuple[list[Tok], Tok | None, Tok | None]] = []
    cur: list[Tok] = []
    before: Tok | None = None
    prev_break: Tok | None = None
    for t in toks:
        if t.kind is T.BREAK or (t.kind is T.NUM and t.attached):
            if cur:
                runs.append((cur, before, t))
                cur = []
            prev_break = t
            continue
        if (
            cur
            and cur[-1].kind in OPERAND_END
            and (
                (t.kind in (T.NUM, T.VAR) and t.text != "\u03c0")
                or (t.kind is T.FUNC and t.text not in ("sqrt", "floor", "ceil"))
                or (t.kind is T.LP and t.space_before)
            )
        ):
            # two operands side by side: "1 1/2", "A 5" -> not one expression ("27 sqrt(3)" is)
            runs.append((cur, before, t))
            cur = []
            prev_break = Tok(T.BREAK, JUXTAPOSED, t.start, t.start)
        if not cur:
            before = prev_break
        cur.append(t)
    if cur:
        runs.append((cur, before, None))
    return runs


def make_chains(toks: list[Tok], variables: Mapping[str, sympy.Expr], norm: str = "") -> list[Chain]:
    chains: list[Chain] = []
    for run, before, after in split_runs(toks):
        if not any(t.kind is T.EQ for t in run):
            continue
        if any(t.kind is T.EQ and (t.conditional or t.reworked) for t in run):
            continue  # a condition being tested, not a claim
        if len(run) > MAX_SEGMENT_TOKENS * 4:
            continue
        parts: list[list[Tok]] = [[]]
        eqs: list[Tok] = []
        for t in run:
            if t.kind is T.EQ:
                eqs.append(t)
                parts.append([])
            else:
                parts[-1].append(t)
        defines = None
        if (
            not parts[0]
            and before is not None
            and before.kind is T.BREAK
            and before.standalone
            and var_name(before.text)
            and before.text not in variables
        ):
            defines = before.text
        if (
            len(parts[0]) > 1
            and parts[0][0].kind is T.OP
            and parts[0][0].text == "-"
            and parts[0][1].space_before
            and (before is None or before.text in ("\n", ":", ";"))
        ):
            parts[0] = parts[0][1:]  # "for B: - A = 0": a dash that starts a list item
        head = parts[0]
        parts[0] = _trim_parens(parts[0], left=True)
        opened = head[0] if len(parts[0]) < len(head) else None
        parts[-1] = _trim_parens(parts[-1], left=False)
        first_ok = not left_partial(parts[0], before, opened)
        last_ok = not right_partial(parts[-1], after)
        lo = 0 if first_ok else 1
        hi = len(parts) if last_ok else len(parts) - 1
        if hi - lo < 1:
            continue
        label, label_start = ("", -1)
        if not parts[0] and eqs:
            label, label_start = label_before(norm, eqs[0].start)
        elif len(parts[0]) == 1 and parts[0][0].kind is T.VAR and eqs:
            label, label_start = parts[0][0].text, parts[0][0].start
        if hi - lo < 2 and not ((label or defines) and hi - lo == 1):
            continue
        sides = [Side(p, p[0].start if p else 0, p[-1].end if p else 0) for p in parts[lo:hi]]
        chains.append(
            Chain(
                sides=sides,
                eqs=eqs[lo : max(lo, hi - 1)],
                defines=defines if lo == 1 else None,
                label=label,
                label_start=label_start,
            )
        )
    return chains
