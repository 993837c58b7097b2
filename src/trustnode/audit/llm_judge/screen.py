"""The injection screen: does the text address the auditor rather than the problem?

It runs on `reveal(text)`, so zero-width characters, soft hyphens or Cyrillic look-alikes
inside "Ignore previous instructions" do not hide it. A signal only blocks withdrawals
by the verification call (the direction an injection wants); it never decides a verdict.
"""

from __future__ import annotations

import re

from trustnode.audit.llm_judge.textnorm import has_hidden_characters, reveal

_STEERING: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern, re.IGNORECASE | re.MULTILINE))
    for name, pattern in (
        ("ignore-instructions", r"\b(?:ignore|disregard|forget|override)\b[^.\n]{0,40}"
         r"\b(?:instructions?|prompts?|rules?|above|previous|prior|earlier|everything)\b"),
        ("dictated-verdict", r"\b(?:answer|respond|reply|output|return|say|print|mark|grade|rate|verdict|"
         r"vote|judge)\b[^.\n]{0,30}(?-i:\b(?:PASS|FAIL|PASSED|FAILED)\b)"),
        ("role-claim", r"^\s*(?:system|assistant|developer|operator)\s*:|\b(?:system|developer)\s+"
         r"(?:prompt|message|instructions?)\b"),
        ("addresses-auditor", r"\byou\s+are\s+(?:now\s+)?(?:an?|the)\s+(?:auditor|judge|grader|reviewer|"
         r"verifier|assistant|ai|language\s+model)\b|\b(?:auditors?|judges?|graders?|reviewers?|"
         r"verifiers?)\b[^.\n]{0,30}\b(?:must|should|shall|will|are\s+required\s+to)\b[^.\n]{0,30}"
         r"\b(?:pass|approve|accept|ignore|answer|output)\b"),
        ("fake-fence", r"<<<|>>>\s*$|(?-i:\bDATA\b[^\n]{0,60}\b(?:BEGIN|END)\b)|</?\s*(?:system|instructions?|"
         r"segment|data|prompt|user|assistant)\s*>"),
        ("fake-answer", r"[\"'](?:violations|checks|verdict)[\"']\s*:"),
    )
)  # fmt: skip


def steering_signals(*texts: str) -> list[str]:
    """Names of the patterns by which the text seems to address the auditor, not the problem,
    plus "hidden-characters" when it holds invisible format characters (Unicode Cf)."""
    shown = [reveal(t) for t in texts]
    found = [name for name, pattern in _STEERING if any(pattern.search(t) for t in shown)]
    if any(has_hidden_characters(t) for t in texts):
        found.append("hidden-characters")
    return found
