"""OpenAI-compatible LLM access (SPEC 7): one robust client shared by the HDAG pipeline,
the LLM judge and the node, a start-up probe, a local model server (`local_server`, the
`llm` extra) and a scriptable fake server for tests and demos."""

from trustnode.llm.client import LLMClient
from trustnode.llm.errors import (
    LLMEndpointError,
    LLMError,
    LLMInvalidOutputError,
    LLMRequestError,
    LLMUnavailableError,
)
from trustnode.llm.probe import ProbeReport
from trustnode.llm.usage import LLMUsage

__all__ = [
    "LLMClient",
    "LLMEndpointError",
    "LLMError",
    "LLMInvalidOutputError",
    "LLMRequestError",
    "LLMUnavailableError",
    "LLMUsage",
    "ProbeReport",
]
