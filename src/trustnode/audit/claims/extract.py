"""Every checkable claim of a text, checked: the one definition of "checkable".

The router (`hdag.rules`) asks `has_decidable_claim` whether a segment goes to the
computer tier, and the computer auditor reads the same `extract_claims`, so a segment
routed to T_Auto always holds at least one decided claim.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache

import sympy

from trustnode.audit.claims.chains import Side, make_chains
from trustnode.audit.claims.check import (
    Tolerance,
    check_chain,
    format_value,
    lone_var,
    pair_holds,
    restated_name,
)
from trustnode.audit.claims.evaluate import Unparseable, evaluate
from trustnode.audit.claims.normalize import normalize
from trustnode.audit.claims.tokens import T, Tok, tokenize
from trustnode.models.audit import CheckedClaim, ClaimStatus

MAX_TEXT_CHARS = 200_000
MAX_REBINDS = 64


@dataclass
class Extraction:
    """All claims found in one text, and the names it defined."""

    claims: list[CheckedClaim]
    bindings: dict[str, sympy.Expr]
    text: str
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


def extract_claims(
    text: str,
    variables: Mapping[str, sympy.Expr] | None = None,
    *,
    annotations: str = "strip",
) -> Extraction:
    """Every checkable claim in `text`, checked.

    `variables`: single upper-case names bound by earlier segments ("A = -14");
    chains of the form `A = ...` with A unbound define A for later text.
    `annotations`: "strip" removes `<<expr=result>>`; "check" also checks each one.
    """
    truncated = len(text) > MAX_TEXT_CHARS
    if truncated:
        text = text[:MAX_TEXT_CHARS]
    bindings: dict[str, sympy.Expr] = dict(variables or {})
    norm, notes = normalize(text)
    claims: list[CheckedClaim] = []
    if annotations == "check":
        for expr, result in notes:
            c = check_annotation(expr, result)
            if c is not None:
                claims.append(c)
    done = -1  # chains ending at or before this offset are already checked
    rereads = 0
    chains = make_chains(tokenize(norm, bindings), bindings)
    k = 0
    while k < len(chains):
        chain = chains[k]
        k += 1
        if chain.sides[-1].end <= done:
            continue
        res = check_chain(chain, norm, bindings)
        claims.extend(res.claims)
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
            chains = make_chains(tokenize(norm, bindings), bindings)
            k = 0
    return Extraction(
        claims=claims, bindings=bindings, text=norm, annotations=len(notes), truncated=truncated
    )


def bind_from(texts: Iterable[str]) -> dict[str, sympy.Expr]:
    """Names defined by earlier segments, in reading order (a later segment may rebind)."""
    seq = tuple(texts)
    out: tuple[tuple[str, sympy.Expr], ...] = ()
    for k in range(len(seq) + 1):  # prefixes in order keep the cache's recursion one level deep
        out = _bind_prefix(seq[:k])
    return dict(out)


@lru_cache(maxsize=512)
def _bind_prefix(texts: tuple[str, ...]) -> tuple[tuple[str, sympy.Expr], ...]:
    # step i of a trace reuses the bindings of steps 0..i-1: cache by prefix
    if not texts:
        return ()
    before = dict(_bind_prefix(texts[:-1]))
    return tuple(sorted(extract_claims(texts[-1], before).bindings.items()))


def has_decidable_claim(text: str) -> bool:
    """Does the text, read alone, hold at least one claim the checker decides?"""
    return bool(extract_claims(text).claims)
