"""Read a chat answer that must BE one JSON document.

The whole answer (after trimming whitespace) has to parse as JSON, optionally wrapped in a
single Markdown code fence with nothing outside it. Prose around the JSON, two documents,
or a JSON object quoted from the audited text are parse failures, which the client sends
back to the model through its bounded repair turns. Scanning for "the first JSON object
in the answer" would let text that the model echoed from a hostile trace (for instance a
`{"violations": []}` planted in a segment) become the answer, so we never do it.
"""

from __future__ import annotations

import json
import re
from typing import Any

_FENCED = re.compile(r"\A```[ \t]*(?:json|JSON)?[ \t]*\n(.*)\n[ \t]*```\Z", re.DOTALL)


class JSONExtractionError(ValueError):
    """The answer is not exactly one JSON document."""


def _where(exc: json.JSONDecodeError) -> str:
    return f"{exc.msg} at line {exc.lineno} column {exc.colno}"


def extract_json(text: str) -> Any:
    """The JSON value that the whole answer is; JSONExtractionError says why it is not."""
    stripped = text.strip()
    if not stripped:
        raise JSONExtractionError("the answer is empty; it must be one JSON document")
    fenced = _FENCED.match(stripped)
    body = fenced.group(1).strip() if fenced else stripped
    if "```" in body:
        raise JSONExtractionError(
            "the answer must be one JSON document (one code fence at most, nothing outside it)"
        )
    try:
        return json.loads(body)
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data":
            raise JSONExtractionError(
                f"the answer must be only the JSON document, but text follows it ({_where(exc)})"
            ) from None
        if exc.pos == 0 and body[:1] not in "{[":
            raise JSONExtractionError(
                "the answer must start with the JSON document, with no text before it"
            ) from None
        raise JSONExtractionError(f"the answer is not valid JSON: {_where(exc)}") from None
