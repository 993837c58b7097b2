"""Exceptions raised by the LLM client.

Callers distinguish three situations: the endpoint cannot be reached or keeps failing
(`LLMUnavailableError`, worth retrying later), the model keeps answering something that
does not fit the schema (`LLMInvalidOutputError`, carries the evidence), and everything
else (`LLMError`, e.g. a 401 or a 400 that is not about structured output).
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


class LLMInvalidOutputError(LLMError):
    """The model's answers never validated against the schema, even after repair retries."""

    def __init__(self, message: str, *, raw_output: str, validation_error: str, attempts: int) -> None:
        super().__init__(f"{message} (after {attempts} answers); last error: {validation_error}")
        self.raw_output = raw_output
        self.validation_error = validation_error
        self.attempts = attempts
