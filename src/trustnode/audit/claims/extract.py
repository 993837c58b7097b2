"""Every checkable claim of a text, checked: the one definition of "checkable".

Arithmetic chains, numeric comparisons and symbolic claims (identities, roots,
solutions, derivatives, integrals, sums) are read from one normalised text. The router
(`hdag.rules`) asks `has_decidable_claim` whether a segment goes to the computer tier,
and the computer auditor reads the same `extract_claims`, so a segment routed to T_Auto
always holds at least one decided claim.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache

import sympy

from trustnode.audit.claims.chains import Chain, Side, make_chains
from trustnode.audit.claims.check import (
    Tolerance,
    check_chain,
    format_value,
    lone_var,
    pair_holds,
    restated_name,
)
from trustnode.audit.claims.evaluate import Unparseable, evaluate
from trustnode.audit.claims.facts import Facts
from trustnode.audit.claims.model import T, Tok
from trustnode.audit.claims.normalize import normalize
from trustnode.audit.claims.relations import relation_claims
from trustnode.audit.claims.symbolic import read_symbolic, worth_reading
from trustnode.audit.claims.tokens import tokenize
from trustnode.audit.claims.words import RELATIONS
from trustnode.models.audit import CheckedClaim, ClaimStatus

MAX_TEXT_CHARS = 200_000
MAX_REBINDS = 64
_DIGIT = re.compile(r"\d")


@dataclass
class Extraction:
    """All claims found in one text, and the names it defined."""

    claims: list[CheckedClaim]
    bindings: dict[str, sympy.Expr]
    text: str
    facts: Facts = field(default_factory=Facts)
    annotations: int = 0
    truncated: bool = False  # the text was longer than MAX_TEXT_CHARS; the rest was not read

    @property
    def wrong(self) -> list[CheckedClaim]:
        return [c for c in self.claims if c.status is ClaimStatus.WRONG]

    @property
    def held(self) -> list[CheckedClaim]:
        return [c for c in self.claims if c.status is ClaimStatus.HOLDS]


def check_annotation(expr: str, result: str) -> CheckedClaim | None:
    """A calculator annotation `<<expr=result>>` as one claim, or None if unreadable."""
    text, _ = normalize(f"{expr} = {result}")
    toks = tokenize(text)
    parts: list[list[Tok]] = [[]]
    for t in toks:
        if t.kind is T.EQ:
            parts.append([])
        elif t.kind is T.BREAK:
            return None
        else:
            parts[-1].append(t)
    if len(parts) != 2:
        return None
    try:
        va = evaluate(parts[0], {})
        vb = evaluate(parts[1], {})
    except (Unparseable, ZeroDivisionError):
        return None
    a = Side(parts[0], 0, 0)
    b = Side(parts[1], 0, 0)
    holds, tol = pair_holds(a, va, b, vb, False, {}, True)
    return CheckedClaim(
        text=f"<<{expr}={result}>>",
        expression=expr.strip(),
        found=result.strip(),
        correct=format_value(va),
        status=ClaimStatus.HOLDS if holds else ClaimStatus.WRONG,
        tolerance="annotation" if tol is Tolerance.EXACT else tol.value,
    )


_BETWEEN_RESTATEMENTS = re.compile(r"(?:[\s.,;\u27e6\u27e7]|\b(?:so|thus|then|therefore|hence)\b)*")


def _head(chain: Chain) -> Side:
    """The first value side of a named chain ("S = 9 * 6" -> "9 * 6")."""
    return chain.sides[1] if lone_var(chain.sides[0]) and len(chain.sides) > 1 else chain.sides[0]


def _restates(norm: str, first: Chain, second: Chain) -> bool:
    """ "Total = 3.00 + 1.50. Total = 8.00.": the same name, nothing but punctuation between.

    A one-letter name counts only in upper case ("x = (-16 + 32)/6 ... x = (-16 - 32)/6"
    are two roots) and only restated by a computation ("A = 5 + 1. A = 0." may be a new
    case); a restatement that repeats the start of the computation is the computation
    done in steps ("= 720 * 24 * 120 * 6 ... = 720 * 24 = 17280"), not a new value.
    """
    if not first.label or first.label != second.label or second.label_start < first.sides[-1].end:
        return False
    head = _head(second)
    if len(first.label) == 1 and (head.literal is not None or not first.label.isupper()):
        return False
    if head.literal is None:
        prior = [t.text for t in first.sides[-1].toks]
        if [t.text for t in head.toks] == prior[: len(head.toks)]:
            return False
    gap = norm[first.sides[-1].end : second.label_start]
    return len(gap) <= 40 and _BETWEEN_RESTATEMENTS.fullmatch(gap) is not None


def _arithmetic(norm: str, bindings: dict[str, sympy.Expr], toks: list[Tok]) -> list[CheckedClaim]:
    """Equality chains between numeric expressions; `bindings` gains the names defined."""
    claims: list[CheckedClaim] = []
    done = -1  # chains ending at or before this offset are already checked
    rereads = 0
    chains = make_chains(toks, bindings, norm)
    named: Chain | None = None  # the last "Total = <computation>" chain, for its restatement
    k = 0
    while k < len(chains):
        chain = chains[k]
        k += 1
        if chain.sides[-1].end <= done:
            continue
        res = check_chain(chain, norm, bindings)
        claims.extend(res.claims)
        if named is not None and _restates(norm, named, chain):
            eq = Tok(T.EQ, "=", chain.label_start, chain.label_start)
            restated = Chain([named.sides[-1], _head(chain)], [eq])
            claims.extend(check_chain(restated, norm, bindings).claims)
        named = chain if chain.label and chain.sides[-1].literal is None else None
        done = chain.sides[-1].end
        name = chain.defines or restated_name(chain)
        ok = res.last_value is not None and not any(c.status is ClaimStatus.WRONG for c in res.claims)
        computed = any(sd.literal is None and not lone_var(sd) for sd in chain.sides)
        changed = False
        if name and name in bindings and bindings[name] != res.last_value:
            del bindings[name]  # "A = 0 ... A = 1": cases, not one quantity; stop using the name
            changed = True
        elif name and name not in bindings and ok and computed and res.last_value is not None:
            bindings[name] = res.last_value  # only a computed definition: "A = (-9 - 5 - 0)"
            changed = True
        if changed:
            rereads += 1
            if rereads > MAX_REBINDS:  # a text that keeps renaming is not worth quadratic time
                if name:
                    bindings.pop(name, None)
                break
            # the name's meaning changed from here on: read the rest again
            chains = make_chains(tokenize(norm, bindings), bindings, norm)
            k = 0
    return claims


def extract_claims(
    text: str,
    variables: Mapping[str, sympy.Expr] | None = None,
    *,
    annotations: str = "strip",
    facts: Facts | None = None,
) -> Extraction:
    """Every checkable claim in `text`, checked.

    `variables`: single upper-case names bound by earlier segments ("A = -14");
    chains of the form `A = ...` with A unbound define A for later text.
    `facts`: functions, definitions and equations stated by earlier segments.
    `annotations`: "strip" removes `<<expr=result>>`; "check" also checks each one.
    """
    truncated = len(text) > MAX_TEXT_CHARS
    if truncated:
        text = text[:MAX_TEXT_CHARS]
    # Callers may bind plain numbers; the checker compares sympy values.
    bindings: dict[str, sympy.Expr] = {k: sympy.sympify(v) for k, v in (variables or {}).items()}
    context = facts or Facts()
    norm, notes = normalize(text)
    claims: list[CheckedClaim] = []
    if annotations == "check":
        for expr, result in notes:
            c = check_annotation(expr, result)
            if c is not None:
                claims.append(c)
    before = dict(bindings)
    toks = tokenize(norm, before)
    claims += _arithmetic(norm, bindings, toks)
    if any(r in norm for r in RELATIONS):
        claims += relation_claims(norm, toks, before)
    out_facts = context
    if worth_reading(norm):
        found, out_facts, _ = read_symbolic(norm, tokenize(norm, before, symbolic=True), before, context)
        claims += found
    return Extraction(
        claims=claims,
        bindings=bindings,
        text=norm,
        facts=out_facts,
        annotations=len(notes),
        truncated=truncated,
    )


@dataclass(frozen=True)
class Context:
    """What the segments before this one defined: names with values, functions, equations."""

    bindings: dict[str, sympy.Expr]
    facts: Facts


def context_from(texts: Iterable[str]) -> Context:
    """Read earlier segments in order; a later one may rebind a name."""
    seq = tuple(texts)
    out: tuple[tuple[tuple[str, sympy.Expr], ...], Facts] = ((), Facts())
    for k in range(len(seq) + 1):  # prefixes in order keep the cache's recursion one level deep
        out = _context_prefix(seq[:k])
    return Context(dict(out[0]), out[1].copy())


def bind_from(texts: Iterable[str]) -> dict[str, sympy.Expr]:
    """Names defined by earlier segments, in reading order (a later segment may rebind)."""
    return context_from(texts).bindings


@lru_cache(maxsize=512)
def _context_prefix(texts: tuple[str, ...]) -> tuple[tuple[tuple[str, sympy.Expr], ...], Facts]:
    # step i of a trace reuses the context of steps 0..i-1: cache by prefix
    if not texts:
        return (), Facts()
    names, facts = _context_prefix(texts[:-1])
    ext = extract_claims(texts[-1], dict(names), facts=facts)
    return tuple(sorted(ext.bindings.items())), ext.facts


def has_decidable_claim(text: str) -> bool:
    """Does the text, read alone, hold at least one claim the checker decides?

    The same readings as `extract_claims(text)` (so the answer is `bool(...claims)`),
    cheapest first, stopping at the first claim found.
    """
    if len(text) > MAX_TEXT_CHARS:
        text = text[:MAX_TEXT_CHARS]
    norm, _ = normalize(text)
    if not _DIGIT.search(norm) and not worth_reading(norm):
        return False  # no number and no symbol next to an operator: nothing to decide
    bindings: dict[str, sympy.Expr] = {}
    toks = tokenize(norm, bindings)
    if _arithmetic(norm, bindings, toks):
        return True
    if any(r in norm for r in RELATIONS) and relation_claims(norm, toks, {}):
        return True
    if not worth_reading(norm):
        return False
    found, _, _ = read_symbolic(norm, tokenize(norm, {}, symbolic=True), {}, Facts(), first=True)
    return bool(found)
