"""OpenAI-compatible LLM access (SPEC 7): one robust client shared by the HDAG pipeline,
the LLM judge and the node, plus a scriptable fake server for tests and demos."""

from trustnode.llm.client import LLMClient, LLMUsage
from trustnode.llm.errors import LLMError, LLMInvalidOutputError, LLMUnavailableError

__all__ = ["LLMClient", "LLMError", "LLMInvalidOutputError", "LLMUnavailableError", "LLMUsage"]
