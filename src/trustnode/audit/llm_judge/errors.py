"""The one error the judge raises: no verdict was reached, and none was guessed.

`LLMJudge.audit` either returns an `AuditResult` (decided, or undecided with the reason in
`evidence.details["reason"]`) or raises `JudgeError`. A daemon catches `JudgeError` per
session, logs `str(exc)` (it names the segment and the cause) and abstains on that seat;
`reason` says which of the cases below it was, for metrics and retry decisions:

- "unavailable": the endpoint could not be reached within the retry budget (an outage;
  trying again later may help);
- "rejected": the server refused the request (e.g. the prompt exceeds its context
  window); the same request will be refused again;
- "invalid_output": the model never gave a schema-valid answer within the bounded repair
  turns;
- "error": any other failure of the LLM client (bad credentials, not an LLM endpoint).
"""

from __future__ import annotations

from typing import Literal

from trustnode.llm.errors import (
    LLMError,
    LLMInvalidOutputError,
    LLMRequestError,
    LLMUnavailableError,
)

JudgeErrorReason = Literal["unavailable", "rejected", "invalid_output", "error"]


def reason_of(cause: LLMError) -> JudgeErrorReason:
    if isinstance(cause, LLMUnavailableError):
        return "unavailable"
    if isinstance(cause, LLMRequestError):
        return "rejected"
    if isinstance(cause, LLMInvalidOutputError):
        return "invalid_output"
    return "error"


class JudgeError(LLMError):
    """The judge could not reach a verdict on one segment (see the module docstring)."""

    def __init__(self, message: str, *, node_id: str, cause: LLMError) -> None:
        super().__init__(message)
        self.node_id = node_id
        self.cause = cause
        self.reason: JudgeErrorReason = reason_of(cause)
