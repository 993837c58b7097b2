"""configure_logging: JSON lines with extra fields and exceptions, levels, no stacked handlers."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest

from trustnode.config import Settings
from trustnode.node.logging import configure_logging


@pytest.fixture(autouse=True)
def restore_root() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    logging.getLogger("trustnode").setLevel(logging.NOTSET)


def test_json_lines_carry_fields_and_exceptions() -> None:
    out = io.StringIO()
    configure_logging(Settings(log_json=True, log_level="info"), stream=out)
    log = logging.getLogger("trustnode.node.provider")
    log.debug("not shown")
    log.info("trace %s stage %s", "tr_1", "pinned", extra={"trace_id": "tr_1", "seconds": 0.25})
    try:
        raise ConnectionError("IPFS down")
    except ConnectionError:
        log.exception("pin failed")
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert len(lines) == 2
    first, second = lines
    assert first["level"] == "INFO" and first["logger"] == "trustnode.node.provider"
    assert first["message"] == "trace tr_1 stage pinned"
    assert first["trace_id"] == "tr_1" and first["seconds"] == 0.25
    assert first["time"].endswith("+00:00")
    assert second["level"] == "ERROR" and "ConnectionError: IPFS down" in second["exception"]


def test_plain_format_and_reconfiguring_replaces_the_handler() -> None:
    first = io.StringIO()
    configure_logging(Settings(log_json=True), stream=first)
    second = io.StringIO()
    configure_logging(Settings(log_json=False, log_level="WARNING"), stream=second)
    log = logging.getLogger("trustnode.x")
    log.info("hidden")
    log.warning("visible %d", 3)
    assert first.getvalue() == ""
    text = second.getvalue()
    assert "WARNING" in text and "trustnode.x: visible 3" in text and "hidden" not in text
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)


def test_unknown_level_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="log_level must be one of DEBUG, INFO"):
        configure_logging(Settings(log_level="LOUD"))


def test_httpx_requests_are_not_logged_at_info() -> None:
    """An auditor's INFO log was mostly "httpx: HTTP Request: POST .../api/v0/..." lines."""
    configure_logging(Settings(log_level="INFO"), stream=io.StringIO())  # type: ignore[call-arg]
    assert not logging.getLogger("httpx").isEnabledFor(logging.INFO)
    assert logging.getLogger("trustnode").isEnabledFor(logging.INFO)
    configure_logging(Settings(log_level="DEBUG"), stream=io.StringIO())  # type: ignore[call-arg]
    assert logging.getLogger("httpx").isEnabledFor(logging.DEBUG)
    for name in ("httpx", "httpcore"):
        logging.getLogger(name).setLevel(logging.NOTSET)
