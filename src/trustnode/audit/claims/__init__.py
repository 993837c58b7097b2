"""Claims in reasoning text, found and checked exactly (the computer tier's engine).

Stages, one module each: `normalize` (LaTeX and unicode to plain operators), `tokens`,
`chains` (`e0 = e1 = ... = en` runs), `evaluate` (a bounded parser to exact sympy
values), `check` (each link, with rounding rules), and `extract`, which ties them
together and is the one definition of a decidable claim.
"""

from trustnode.audit.claims.extract import (
    MAX_TEXT_CHARS,
    Context,
    Extraction,
    bind_from,
    context_from,
    extract_claims,
    has_decidable_claim,
)
from trustnode.audit.claims.facts import Facts
from trustnode.audit.claims.normalize import normalize

__all__ = [
    "MAX_TEXT_CHARS",
    "Context",
    "Facts",
    "context_from",
    "Extraction",
    "bind_from",
    "extract_claims",
    "has_decidable_claim",
    "normalize",
]
