"""Claims about solutions: "x = a is a root of E", and one equation following from another.

- "x = 3 is a root" / "is a solution" / "is a zero" / "satisfies": substitute into E, the
  expression or equation named after "of", else the last equation or polynomial in x of
  this text, else of the context (parent segments). "is not a root" claims the opposite.
- E1, then E2 linked to it ("⇒", "so", "we get", one display line after another), both
  in the same one symbol x and rational in it: E2 must keep a solution of E1, i.e. the
  numerators of E1 and E2 share a root (their gcd is not constant). Squaring, dropping
  a root by a side condition or cancelling a factor all keep one; a slip usually keeps
  none ("-7y = -4" from "y - 1 - 8y = -3").
- "solving ... gives x = a" with no equation in x before it in the text: against the
  last equation in x of the context.
"""

from __future__ import annotations

import sympy

from trustnode.audit.claims.algebra import MAX_EXPANSION_TERMS, expansion_size, rational_in_symbols
from trustnode.audit.claims.facts import Equation, Facts, equation_of
from trustnode.audit.claims.model import T, Tok
from trustnode.audit.claims.statements import Statement
from trustnode.audit.claims.symbolic import claim, sentence_words
from trustnode.audit.claims.words import CLOSE_MATH, IMPLIES, OPEN_MATH
from trustnode.models.audit import CheckedClaim

MAX_SOLVE_DEGREE = 12
MAX_LINK_WORDS = 5
_ROOT_WORDS = frozenset({"root", "roots", "solution", "solutions", "zero", "zeros", "zeroes"})
_LINK_WORDS = frozenset(
    {IMPLIES, OPEN_MATH, CLOSE_MATH, ",", ":", ";", "\n", "so", "thus", "hence", "therefore", "then",
     "gives", "giving", "get", "we", "which", "yields", "becomes", "obtain", "have", "and", "this",
     "simplifies", "simplifying", "to", "us", "it", "solving", "solve", "i.e", "means"}
)  # fmt: skip
# Words that name a step of solving: an equation after them follows from the one before.
_MANIPULATION = frozenset(
    {"subtracting", "subtract", "adding", "add", "dividing", "divide", "multiplying", "multiply",
     "both", "sides", "side", "from", "by", "each", "combining", "combine", "like", "terms",
     "rearranging", "rearrange", "isolate", "isolating", "expanding", "expand", "moving", "move",
     "collecting", "collect", "cross", "taking", "square", "equation", "the", "of", "on", "simplifying",
     "simplify", "and"}
)  # fmt: skip
_SOLVE_CUES = frozenset({"solving", "solve", "solved", "solution"})
# "solving ... gives x = 3": the words that may stand right before the value
_RESULT_LEADS = frozenset(
    {IMPLIES, "gives", "get", "obtain", "yields", "so", "thus", "hence", "therefore", "find", "is", "then"}
)


def _continues_context(toks: list[Tok], s: Statement) -> bool:
    """Does the text open with a step of solving and then this equation ("Combining like terms: ...")?"""
    before = toks[: s.first]
    if not before or len(before) > 2 * MAX_LINK_WORDS + 4:
        return False
    words = [t.text.lower() for t in before if t.kind is T.BREAK]
    if not any(w in _MANIPULATION for w in words) or not (
        {"both", "terms", "simplifying", "expanding"} & set(words)
    ):
        return False
    return all(t.kind in (T.BREAK, T.NUM) and (t.kind is T.NUM or _connective(t.text)) for t in before)


def _connective(word: str) -> bool:
    w = word.lower()
    return w in _LINK_WORDS or w in _MANIPULATION or w in (".", "we", "get", "have")


def _last_equation(var: str | None, context: Facts) -> Equation | None:
    if var is None:
        return None
    found = [e for e in context.equations if e.var == var and not e.trivial]
    return found[-1] if found else None


def _numerator(expr: sympy.Expr, var: sympy.Symbol) -> sympy.Poly | None:
    if not rational_in_symbols(expr) or expansion_size(expr) > MAX_EXPANSION_TERMS:
        return None
    if expr.is_polynomial(var):
        num = expr  # the common case: no denominator to clear
    else:
        num, _den = sympy.fraction(sympy.cancel(sympy.together(expr)))
    try:
        p = sympy.Poly(num, var)
    except sympy.PolynomialError:
        return None
    if p.degree() < 1 or p.degree() > MAX_SOLVE_DEGREE or not p.domain.is_Exact:
        return None
    return p


def _linked(toks: list[Tok], s1: Statement, s2: Statement) -> bool:
    """Only connectives between the two ("⇒", "so we get", "subtracting 150 from both sides:")."""
    between = toks[s1.last : s2.first]
    if len(between) > 2 * MAX_LINK_WORDS + 4:
        return False
    manipulation = any(t.text.lower() in _MANIPULATION for t in between)
    for t in between:
        w = t.text.lower()
        if t.kind is T.BREAK and (w in _LINK_WORDS or w == "." or (manipulation and w in _MANIPULATION)):
            continue
        if manipulation and t.kind in (T.NUM, T.SYM) and not t.attached:
            continue  # "dividing both sides by 7", "subtracting x"
        return False
    return True


def _follows(e1: Equation, e2: Equation) -> bool | None:
    """Does E2 keep a solution of E1? None when that cannot be decided here."""
    if e1.var is None or e1.var != e2.var or e1.trivial or not (e1.exact and e2.exact):
        return None
    x = sympy.Symbol(e1.var)
    p1, p2 = _numerator(e1.expr, x), _numerator(e2.expr, x)
    if p1 is None or p2 is None:
        return None
    return bool(sympy.gcd(p1, p2).degree() >= 1)


def _value(stmt: Statement) -> tuple[str, sympy.Expr] | None:
    """ "x = 3" -> ("x", 3)."""
    if len(stmt.sides) != 2:
        return None
    a, b = stmt.sides
    name = a.lone_symbol
    if name is None or b.value is None or b.value.free_symbols:
        return None
    return name, b.value


def _root_phrase(toks: list[Tok], s: Statement) -> tuple[bool, bool] | None:
    """After "x = a": (is a root claim, negated), from the words up to the sentence end."""
    words: list[str] = []
    for t in toks[s.last : s.last + 8]:
        article = t.kind is T.SYM and t.text in ("a", "A")  # symbolic mode reads "a" as a letter
        if (t.kind is not T.BREAK and not article) or t.text in (".", "!", "?", "\n", ";"):
            break
        words.append(t.text.lower())
    if not words or words[0] not in ("is", "are", "satisfies"):
        return None
    if words[0] == "satisfies" or any(w in _ROOT_WORDS for w in words[1:5]):
        return True, "not" in words[:3]
    return None


def _is_zero(v: sympy.Expr) -> bool | None:
    if v.has(sympy.zoo, sympy.nan):
        return None
    if v == 0:
        return True
    n = sympy.N(v, 50)
    if not n.is_number:
        return None
    return bool(abs(n) < sympy.Float("1e-40", 60))


def _target(var: str, before: int, own: list[Equation], facts: Facts, context: Facts) -> Equation | None:
    """The equation or polynomial a root claim is about: the last one in `var` before it."""
    mine = [e for e in own if e.var == var and not e.trivial and e.start < before]
    if mine:
        return mine[-1]
    theirs = [e for e in context.equations if e.var == var and not e.trivial]
    if theirs:
        return theirs[-1]
    for name, fn in list(facts.functions.items())[::-1]:
        if fn.param.name == var:
            return Equation(fn.body, f"{name}({var})", var, -1, False, True)
    return None


def root_and_solution_claims(
    toks: list[Tok], stmts: list[Statement], facts: Facts, context: Facts
) -> list[CheckedClaim]:
    claims: list[CheckedClaim] = []
    own: list[tuple[Statement, Equation]] = []
    for s in stmts:
        eq = equation_of(s)
        if eq is not None:
            own.append((s, eq))
    own_eqs = [e for _, e in own]
    for k, (s2, e2) in enumerate(own):
        if k == 0 and _continues_context(toks, s2):
            # "Subtracting 150 from both sides, we get: x = 350 - 150": the text goes on
            # from the last equation in x the earlier segments wrote
            e1 = _last_equation(e2.var, context)
            ok = _follows(e1, e2) if e1 is not None else None
            if e1 is not None and ok is not None:
                claims.append(
                    claim(f"{e1.text} \u21d2 {e2.text}", e1.text, e2.text, "", ok, "solution",
                          "" if ok else f"no solution of {e1.text} solves {e2.text}")
                )  # fmt: skip
                continue
        if k > 0 and _root_phrase(toks, s2) is None:  # "x = 2 is not a root" is a root claim
            s1, e1 = own[k - 1]
            alternatives = s1.lead in ("or", "and") or any(
                t.text.lower() in ("or", "and") for t in toks[s1.last : s1.last + 2]
            )  # "x - 8 = 12 or x - 8 = -12": either may lead to the next line
            if not alternatives and _linked(toks, s1, s2):
                ok = _follows(e1, e2)
                if ok is not None:
                    claims.append(
                        claim(f"{e1.text} \u21d2 {e2.text}", e1.text, e2.text, "", ok, "solution",
                              "" if ok else f"no solution of {e1.text} solves {e2.text}")
                    )  # fmt: skip
                    continue
        value = _value(s2)
        if value is None or s2.tested:
            continue
        var, a = value
        phrase = _root_phrase(toks, s2)
        target: Equation | None = None
        if phrase is not None:
            target = _target(var, s2.start, own_eqs, facts, context)
        elif (
            s2.lead in _RESULT_LEADS
            and sentence_words(toks, s2.first) & _SOLVE_CUES
            and not any(e.var == var and not e.trivial for e in own_eqs if e.start < s2.start)
        ):
            target = _target(var, s2.start, [], Facts(), context)
            phrase = (True, False) if target is not None and target.exact else None
        if target is None or phrase is None:
            continue
        zero = _is_zero(target.expr.xreplace({sympy.Symbol(var): a}))
        if zero is None:
            continue
        negated = phrase[1]
        ok = zero != negated
        what = "a root of" if not negated else "not a root of"
        claims.append(
            claim(f"{e2.text} is {what} {target.text}", target.text, e2.text, "", ok, "root",
                  "" if zero else f"{target.text} at {var} = {a} is {sympy.N(target.expr.xreplace({sympy.Symbol(var): a}), 12)}")
        )  # fmt: skip
    return claims
