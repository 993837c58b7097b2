"""Exceptions raised by the LLM client.

Callers distinguish four situations:
- `LLMUnavailableError`: the endpoint cannot be reached or keeps failing (an outage: worth
  retrying later);
- `LLMRequestError`: the server understood and refused this request (4xx, or a 500 whose
  body says the request is at fault); sending it again gives the same answer, so it is
  never retried as an outage;
- `LLMInvalidOutputError`: the model keeps answering something that does not fit the
  schema, even after the bounded repair turns (carries the evidence);
- `LLMEndpointError`: the start-up probe found that the URL is not a usable LLM endpoint
  (wrong URL, not OpenAI-compatible, a test server for another role, bad credentials).
"""

from __future__ import annotations


class LLMError(Exception):
    """Base class of every LLM client failure."""


class LLMUnavailableError(LLMError):
    """The endpoint did not give a usable HTTP answer within the retry budget."""

    def __init__(self, message: str, *, attempts: int, last_status: int | None = None) -> None:
        super().__init__(message)
        self.attempts = attempts
        self.last_status = last_status


class LLMRequestError(LLMError):
    """The server rejected the request itself; the same request would be rejected again."""

    def __init__(self, message: str, *, status: int, body: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.body = body


class LLMInvalidOutputError(LLMError):
    """The model's answers never validated against the schema, even after repair retries."""

    def __init__(self, message: str, *, raw_output: str, validation_error: str, attempts: int) -> None:
        super().__init__(f"{message} (after {attempts} answers); last error: {validation_error}")
        self.raw_output = raw_output
        self.validation_error = validation_error
        self.attempts = attempts


class LLMEndpointError(LLMError):
    """The configured URL is not an LLM endpoint this node can use (found by `probe`)."""
