"""Rule-based classification of a unit: level, type, auditor, complexity, summary.

These rules are the offline decomposer's whole "understanding", so they are kept
explicit and cheap (precompiled regexes), except "checkable", which is the checker's own
reading (`audit.claims.has_decidable_claim`): a unit with a claim the computer tier
decides goes to it at OPERATION level, plans become STRATEGY, definitions and set-ups TACTIC,
other inferences STEP, and on high-stakes traces hedged, clinical or ethical statements
go to humans.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from trustnode.audit.claims import has_decidable_claim, normalize
from trustnode.hdag.text import protected_regions
from trustnode.models.enums import AuditorType, Complexity, Level

# ----------------------------------------------------------------- checkable claims
_MATHY = re.compile(r"[=+\-*/^<>\\\d]")


@lru_cache(maxsize=4096)
def is_checkable(text: str) -> bool:
    """Does the computer tier decide at least one claim in this text, read alone?

    The one definition of "checkable" is the checker's own (`audit.claims`): a segment
    is routed to T_Auto only when the auditor that will judge it finds a claim in it.
    Cached: validation asks again about every T_Auto segment the router just classified.
    """
    return has_decidable_claim(text)


def math_share(text: str) -> float:
    """Share of non-space characters that are digits, operators or LaTeX: 'how calculation-like'."""
    body = len("".join(text.split()))
    if not body:
        return 0.0
    return len(_MATHY.findall(text)) / body


# ----------------------------------------------------------------- levels
_STRATEGY = re.compile(
    r"^(?:\W*)(?:to (?:solve|find|determine|compute|calculate|answer|figure out|get|work out)\b.*?\b(?:we|i|let's)\b"
    r"|(?:let's|let us|we(?:'ll| will| can| need to| should| must)?|i(?:'ll| will| need to| should)?)\s+"
    r"(?:start|begin|first|break|approach|plan|proceed|tackle|outline|consider the (?:problem|cases)|"
    r"use (?:the )?(?:method|approach|strategy)|solve (?:this|the problem) (?:step|by))"
    r"|(?:my|our|the) (?:plan|approach|strategy|idea|method) (?:is|will be|here)"
    r"|(?:first|overall|plan|approach|strategy)\s*:"
    r"|step[- ]by[- ]step"
    r"|here(?:'s| is) (?:the|my|our) (?:plan|approach))",
    re.IGNORECASE,
)
_GOAL = re.compile(
    r"^(?:\W*)(?:we (?:need|want|are asked|have) to (?:find|determine|compute|calculate|show|prove|figure out)"
    r"|(?:the )?(?:question|problem|task) (?:asks|is asking|wants|requires)"
    r"|(?:our|the) (?:goal|objective|aim|task) is"
    r"|i need to (?:find|determine|compute|calculate|figure out))",
    re.IGNORECASE,
)
_TACTIC = re.compile(
    r"^(?:\W*)(?:let\s+(?:\\\(|\$)?\s*[A-Za-z](?:_\w+|\{\w+\})?\b|let'?s (?:denote|define|call|set|say|assume)"
    r"|(?:we |i )?(?:define|denote|assume|suppose|recall|note that|given that|set up|introduce)"
    r"|(?:by|using|from|applying) (?:the )?(?:formula|theorem|definition|identity|rule|property|lemma|law)"
    r"|the (?:formula|theorem|definition|identity|rule) (?:for|of|is|states)"
    r"|(?:we know|i know|it is known|we have that|recall) that"
    r"|where\s+\S+\s+(?:is|denotes|represents))",
    re.IGNORECASE,
)
_CONCLUSION = re.compile(
    r"\\boxed|\b(?:the (?:final )?answer is|therefore|thus|hence|in conclusion|so the answer)\b",
    re.IGNORECASE,
)
_VERIFY = re.compile(
    r"\b(?:check|verify|verif(?:y|ied|ication)|double-check|confirm|substitut)", re.IGNORECASE
)

# ----------------------------------------------------------------- human routing
_HEDGE = re.compile(
    r"\b(?:might|may|maybe|perhaps|possibly|probably|likely|unlikely|unclear|uncertain|not sure|"
    r"i think|i guess|i believe|it seems|seems|appears? to|could be|arguabl[ey]|ambiguous|assum(?:e|ing|ption))\b",
    re.IGNORECASE,
)
_CLINICAL = re.compile(
    r"\b(?:patient|diagnos\w*|dose|dosage|mg|mcg|medication|drug|prescri\w*|treatment|therap\w*|symptom\w*|"
    r"surgery|clinical|contraindicat\w*|pregnan\w*|allerg\w*|disease|infection|blood pressure|triage)\b",
    re.IGNORECASE,
)
_ETHICAL = re.compile(
    r"\b(?:ethic\w*|moral\w*|ought|should(?:n't| not)?|harm\w*|consent|legal\w*|illegal|lawsuit|liabilit\w*|"
    r"fair(?:ness)?|discriminat\w*|privacy|safety|risk\w*|rights?)\b",
    re.IGNORECASE,
)


def is_ambiguous(text: str) -> bool:
    """Hedged, clinical or ethical content: what a human should judge on a high-stakes trace."""
    return bool(_HEDGE.search(text) or _CLINICAL.search(text) or _ETHICAL.search(text))


@dataclass(frozen=True)
class UnitClass:
    """What the rules decided about one unit."""

    level: Level
    type: str
    primary: AuditorType
    secondary: tuple[AuditorType, ...]
    complexity: Complexity


def classify(text: str, *, high_stakes: bool = False, first: bool = False) -> UnitClass:
    """Level, type, auditors and complexity of one unit of thinking."""
    checkable = is_checkable(text)
    share = math_share(text)
    head = text[:240]
    if checkable:
        level, kind = Level.OPERATION, "calculation"
    elif _GOAL.search(head):
        level, kind = Level.GOAL, "objective_restatement"
    elif _STRATEGY.search(head):
        level, kind = Level.STRATEGY, "approach_description"
    elif _TACTIC.search(head):
        level, kind = (
            Level.TACTIC,
            "definition" if re.match(r"\W*(?:let|define|denote)", head, re.I) else "setup",
        )
    elif share >= 0.45 and len(text) > 3:
        level, kind = Level.OPERATION, "equation_manipulation"
    elif _CONCLUSION.search(text):
        level, kind = Level.STEP, "conclusion"
    elif _VERIFY.search(head):
        level, kind = Level.STEP, "verification"
    else:
        level, kind = Level.STEP, "inference"
    if first and level is Level.STEP and _STRATEGY.search(head):
        level, kind = Level.STRATEGY, "approach_description"

    ambiguous = high_stakes and is_ambiguous(text)
    if checkable:
        primary = AuditorType.T_AUTO
        secondary: tuple[AuditorType, ...] = (AuditorType.T_LLM,)
        if ambiguous:
            secondary = (AuditorType.T_LLM, AuditorType.T_HUMAN)
    elif ambiguous:
        primary, secondary = AuditorType.T_HUMAN, (AuditorType.T_LLM,)
    else:
        primary = AuditorType.T_LLM
        secondary = (AuditorType.T_AUTO,) if level is Level.OPERATION else ()

    n = len(text)
    if ambiguous or level in (Level.GOAL, Level.STRATEGY) or n > 600:
        complexity = Complexity.HIGH
    elif checkable and n <= 300:
        complexity = Complexity.LOW
    else:
        complexity = Complexity.MEDIUM
    return UnitClass(level, kind, primary, secondary, complexity)


# ----------------------------------------------------------------- summaries
_SUMMARY_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "so",
        "then",
        "and",
        "or",
        "but",
        "of",
        "to",
        "in",
        "on",
        "at",
        "by",
        "for",
        "with",
        "we",
        "i",
        "it",
        "is",
        "are",
        "was",
        "were",
        "be",
        "this",
        "that",
        "these",
        "those",
        "now",
        "next",
        "first",
        "second",
        "third",
        "finally",
        "thus",
        "therefore",
        "hence",
        "let",
        "us",
        "let's",
        "our",
        "my",
        "can",
        "will",
        "would",
        "should",
        "need",
        "have",
        "has",
        "had",
        "do",
        "does",
        "did",
        "as",
        "from",
        "into",
        "which",
        "what",
        "when",
        "where",
        "how",
        "there",
        "here",
        "also",
        "just",
        "since",
        "they",
        "their",
        "out",
    ]
)
_SUMMARY_WORD = re.compile(r"\\[A-Za-z]+|[A-Za-z][A-Za-z'-]*|\d[\d,.]*")


def summarize(text: str, kind: str) -> str:
    """A 3-5 word label: the first content words, padded with the unit type."""
    words: list[str] = []
    for m in _SUMMARY_WORD.finditer(text[:400]):
        w = m.group(0).rstrip(".,")
        if not w or w.startswith("\\") or w.lower() in _SUMMARY_STOP:
            continue
        words.append(w.lower())
        if len(words) == 5:
            break
    label = kind.replace("_", " ").split()
    while len(words) < 3:
        words.insert(0, label.pop(0) if label else "segment")
    return " ".join(words[:5])


# ----------------------------------------------------------------- quantities
# Every pattern below runs on trace text, so each is linear: word-ish runs are found by
# non-overlapping scans and checked one by one, and quantifiers that meet are possessive.
_TOKEN = re.compile(r"[A-Za-z_\d.,$%]+")
_LEADING_NUMBER = re.compile(r"\$?(\d[\d,]*+(?:\.\d+)?)")
_RESULT_BEFORE = re.compile(r"(?:=|\u2248|\bis|\bequals|\bgives)[ \t]*+\$?[ \t]*+$")
_VAR = re.compile(r"(?<![A-Za-z\\])([A-Za-z](?:_\{?\w++\}?)?)(?![A-Za-z])")
_DEFINE_VAR = re.compile(
    r"\blet\s++(?:\\\(|\$)?+\s*+([A-Za-z](?:_\{?\w++\}?)?)\s*+(?:=|be|denote|represent)", re.I
)
_BACKREF = re.compile(
    r"^\W*(?:so|thus|therefore|hence|then|this|that|these|which|consequently|as a result|from (?:this|that|"
    r"the (?:previous|above|last))|using (?:this|that|these|the (?:previous|above))|substituting|plugging)\b",
    re.IGNORECASE,
)
_STEP_REF = re.compile(r"\bstep\s*+(\d{1,3})\b", re.IGNORECASE)
_TRIVIAL = frozenset(str(i) for i in range(11))
_RESULT_LOOKBACK = 24


def _norm_number(raw: str) -> str:
    s = raw.replace(",", "").replace("$", "").rstrip("%").rstrip(",")
    if "." in s:
        s = s.rstrip("0").rstrip(".") or "0"
    return s


def _numbers(flat: str) -> tuple[set[str], set[str]]:
    """Numbers written in the text, and those written as a result ("= 12", "is $5")."""
    nums: set[str] = set()
    results: set[str] = set()
    for tok in _TOKEN.finditer(flat):
        raw = tok.group(0)
        lead = raw.lstrip("$")
        if not lead[:1].isdigit():
            continue  # "x2", "a_1": not a number
        m = _LEADING_NUMBER.match(raw)
        if m is None:
            continue
        value = _norm_number(m.group(1).rstrip("."))
        nums.add(value)
        before = flat[max(0, tok.start() - _RESULT_LOOKBACK) : tok.start()]
        if _RESULT_BEFORE.search(before):
            results.add(value)
    return nums, results


@dataclass(frozen=True)
class Quantities:
    """Numbers and variables a unit mentions, and which of them it produces."""

    numbers: frozenset[str]
    results: frozenset[str]
    variables: frozenset[str]
    defines: frozenset[str]
    backref: bool
    step_refs: tuple[int, ...]


def quantities(text: str) -> Quantities:
    """Extract what dependency linking needs from one unit."""
    flat = normalize(text)[0] if ("\\" in text or "$" in text) else text
    nums, results = _numbers(flat)
    variables: set[str] = set()
    for s, e in protected_regions(text):
        variables.update(v for v in _VAR.findall(text, s, e) if v not in {"d", "e", "i"} or len(v) > 1)
    defines = {m.group(1) for m in _DEFINE_VAR.finditer(text)}
    return Quantities(
        numbers=frozenset(n for n in nums if n not in _TRIVIAL),
        results=frozenset(results - _TRIVIAL),
        variables=frozenset(variables | defines),
        defines=frozenset(defines),
        backref=bool(_BACKREF.search(text[:60])),
        step_refs=tuple(int(x) for x in _STEP_REF.findall(text)),
    )
