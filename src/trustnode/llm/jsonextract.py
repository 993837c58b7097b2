"""Pull a JSON value out of a chat answer from a server without structured output.

Models wrap JSON in prose or Markdown fences; we try the whole text, then fenced blocks,
then the first balanced object/array found by scanning, and report why nothing parsed.
"""

from __future__ import annotations

import json
import re
from typing import Any

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


class JSONExtractionError(ValueError):
    """No JSON value could be parsed from the text."""


def _balanced_candidates(text: str) -> list[str]:
    out: list[str] = []
    tried = 0
    for start, ch in enumerate(text):
        if ch not in "{[":
            continue
        tried += 1
        if tried > 32:
            break
        depth = 0
        in_str = False
        esc = False
        for i in range(start, len(text)):
            c = text[i]
            if in_str:
                if esc:
                    esc = False
                elif c == "\\":
                    esc = True
                elif c == '"':
                    in_str = False
                continue
            if c == '"':
                in_str = True
            elif c in "{[":
                depth += 1
            elif c in "}]":
                depth -= 1
                if depth == 0:
                    out.append(text[start : i + 1])
                    break
        if len(out) >= 8:
            break
    return out


def extract_json(text: str) -> Any:
    """Return the first JSON value in `text`; raise JSONExtractionError with the parse error."""
    stripped = text.strip()
    if not stripped:
        raise JSONExtractionError("the answer is empty")
    first_error: str | None = None
    try:
        return json.loads(stripped)
    except json.JSONDecodeError as exc:
        first_error = f"{exc.msg} at line {exc.lineno} column {exc.colno}"
    for block in _FENCE.findall(stripped):
        try:
            return json.loads(block.strip())
        except json.JSONDecodeError:
            continue
    for cand in _balanced_candidates(stripped):
        try:
            return json.loads(cand)
        except json.JSONDecodeError:
            continue
    raise JSONExtractionError(f"no valid JSON found in the answer ({first_error})")
