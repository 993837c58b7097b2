"""The LLM judge (T_LLM); see `judge.py` for the design and the survival rule.

- `judge.py`: `LLMJudge`, prompts, verification, `judge_from_settings`;
- `schemas.py`: the answer schemas sent to the model;
- `textnorm.py`, `grounding.py`, `screen.py`: what the judge checks in hostile text;
- `errors.py`: `JudgeError`, the one error `audit` raises (no verdict, none guessed);
- `standin.py`: the deterministic stand-in "model" of the offline demo.
"""

from trustnode.audit.llm_judge.errors import JudgeError, JudgeErrorReason
from trustnode.audit.llm_judge.grounding import slice_in_segment
from trustnode.audit.llm_judge.judge import (
    DEFAULT_JUDGE_SEED,
    MAX_CONTEXT_CHARS,
    MAX_PROBLEM_CHARS,
    MAX_SEGMENT_CHARS,
    LLMJudge,
    fence_key_from_file,
    judge_from_settings,
    prompt_digest,
)
from trustnode.audit.llm_judge.schemas import (
    MAX_VIOLATIONS,
    JudgeFindings,
    ReportedViolation,
    VerificationAnswer,
    ViolationCheck,
)
from trustnode.audit.llm_judge.screen import steering_signals
from trustnode.audit.llm_judge.standin import arithmetic_judge_responder
from trustnode.audit.llm_judge.textnorm import fold, reveal

__all__ = [
    "DEFAULT_JUDGE_SEED",
    "MAX_CONTEXT_CHARS",
    "MAX_PROBLEM_CHARS",
    "MAX_SEGMENT_CHARS",
    "MAX_VIOLATIONS",
    "JudgeError",
    "JudgeErrorReason",
    "JudgeFindings",
    "LLMJudge",
    "ReportedViolation",
    "VerificationAnswer",
    "ViolationCheck",
    "arithmetic_judge_responder",
    "fence_key_from_file",
    "fold",
    "judge_from_settings",
    "prompt_digest",
    "reveal",
    "slice_in_segment",
    "steering_signals",
]
