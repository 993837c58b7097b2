"""Log configuration of node processes: plain lines for people, JSON lines for collectors.

`settings.log_json` switches to one JSON object per line (time, level, logger, message, plus
every `extra=` field and the exception), which log shippers parse without regexes;
`settings.log_level` sets the threshold. Only the `trustnode` logger tree and the root get
handlers, and calling `configure_logging` again replaces ours instead of stacking them.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import IO, Any

from trustnode.config import Settings

LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")

# Attributes every LogRecord has; anything else came from `extra=` and is logged as a field.
_RECORD_FIELDS = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    """One JSON object per record; values that are not JSON become their `str`."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.threadName and record.threadName != "MainThread":
            out["thread"] = record.threadName
        for key, value in vars(record).items():
            if key not in _RECORD_FIELDS and not key.startswith("_"):
                out[key] = value
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        if record.stack_info:
            out["stack"] = self.formatStack(record.stack_info)
        return json.dumps(out, default=str, ensure_ascii=False)


class _OurHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Marks the handler this module installed, so reconfiguring replaces it."""


def configure_logging(settings: Settings, *, stream: IO[str] | None = None) -> logging.Handler:
    """Install one handler on the root logger per `settings.log_level` / `settings.log_json`."""
    level_name = settings.log_level.strip().upper()
    if level_name not in LEVELS:
        raise ValueError(f"log_level must be one of {', '.join(LEVELS)}, got {settings.log_level!r}")
    handler = _OurHandler(stream if stream is not None else sys.stderr)
    if settings.log_json:
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)-7s %(name)s: %(message)s"))
    root = logging.getLogger()
    for old in [h for h in root.handlers if isinstance(h, _OurHandler)]:
        root.removeHandler(old)
    root.addHandler(handler)
    level = getattr(logging, level_name)
    root.setLevel(level)
    logging.getLogger("trustnode").setLevel(level)
    # httpx says every request at INFO ("HTTP Request: POST .../api/v0/version"): an auditor's log
    # was mostly IPFS and LLM requests. Their failures are ours to say; DEBUG shows them all.
    for chatty in ("httpx", "httpcore"):
        logging.getLogger(chatty).setLevel(level if level <= logging.DEBUG else max(level, logging.WARNING))
    return handler
