"""Property-based fuzz of the live API from its own `/openapi.json` (schemathesis), bounded.

The app is served on 127.0.0.1 over a real anvil devnet (so chain-backed routes answer rather
than report an outage); every documented operation gets generated valid and invalid requests,
anonymous and with a provider key. Every answer must be a documented status with a body that
matches its documented schema and content type, and never a server error.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis import Case, GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.schemas import APIOperation
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.conftest import start_server, stop_server
from trustnode.api.app import create_app
from trustnode.chain.deployment import Deployment
from trustnode.chain.devnet import CANARY_OPERATOR_ACCOUNT
from trustnode.config import Settings
from trustnode.node.context import NodeContext

pytestmark = pytest.mark.chain

API_KEY = "fuzzing-provider-key-0123"
#: Requests per operation, generation mode and credential (bounds, not targets); the submit
#: route, whose body is the richest input, gets more.
MAX_EXAMPLES = 10
MAX_EXAMPLES_SUBMIT = 60
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    negative_data_rejection,
]


def _serve_node(devnet: Deployment, data_dir: Path, account: int, **sections: object) -> Iterator[str]:
    """A node on the shared devnet, signing with dev `account`, serving the API until closed."""
    dep_file = data_dir / "deployment.json"
    devnet.save(dep_file)
    s = Settings(
        data_dir=data_dir,
        chain={"deployment_file": dep_file, "account_index": account},  # type: ignore[arg-type]
        api={"api_keys": [API_KEY], "worker": False},  # type: ignore[arg-type]
        **sections,  # type: ignore[arg-type]
    )
    server, thread, url = start_server(create_app(NodeContext(s)))
    try:
        yield url
    finally:
        stop_server(server, thread)


@pytest.fixture(scope="module")
def live_api(devnet: Deployment, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from _serve_node(devnet, tmp_path_factory.mktemp("fuzz"), 9)


def _fuzz(operation: APIOperation, mode: GenerationMode, headers: dict[str, str]) -> None:
    """Generated requests of one operation (bounded), each answer checked."""
    examples = MAX_EXAMPLES_SUBMIT if operation.label == "POST /v1/traces" else MAX_EXAMPLES

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        database=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    def run(case: Case) -> None:
        case.call_and_validate(headers=headers, checks=CHECKS, timeout=20)

    run()


@pytest.mark.timeout(120)
def test_api_has_no_server_errors_and_keeps_its_schema(live_api: str) -> None:
    schema = schemathesis.openapi.from_url(f"{live_api}/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    assert {f"{op.method.upper()} {op.path}" for op in operations} >= {
        "POST /v1/traces",
        "GET /v1/traces/{trace_id}",
        "GET /v1/sessions",
        "GET /v1/sessions/{session_id}",
        "GET /v1/sessions/{session_id}/segments/{index}/proof",
        "GET /v1/auditors/{address}",
        "GET /healthz",
        "GET /metrics",
    }
    _fuzz_every_operation(operations)


@pytest.fixture(scope="module")
def live_operator(devnet: Deployment, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A canary operator node (the devnet's authorized operator account) with its three routes."""
    yield from _serve_node(
        devnet,
        tmp_path_factory.mktemp("fuzz-operator"),
        CANARY_OPERATOR_ACCOUNT,
        canary_operator={"enabled": True},
    )


@pytest.mark.timeout(120)
def test_canary_operator_routes_have_no_server_errors_and_keep_their_schema(live_operator: str) -> None:
    """The operator's routes take texts, tickets and placements from strangers: every generated
    request, valid or not, gets a documented answer."""
    schema = schemathesis.openapi.from_url(f"{live_operator}/openapi.json")
    operations = [
        op
        for op in (result.ok() for result in schema.get_all_operations())
        if op.path.startswith("/v1/canary")
    ]
    assert {f"{op.method.upper()} {op.path}" for op in operations} == {
        "POST /v1/canary/requests",
        "POST /v1/canary/requests/{ticket}/placement",
        "GET /v1/canary/requests/{ticket}",
    }
    _fuzz_every_operation(operations)


def _fuzz_every_operation(operations: list[APIOperation]) -> None:
    """Each operation in every generation mode it has inputs for, anonymous and with a key."""
    for op in operations:
        has_inputs = any(True for _ in op.iter_parameters()) or len(op.body) > 0
        modes = (
            [GenerationMode.POSITIVE, GenerationMode.NEGATIVE] if has_inputs else [GenerationMode.POSITIVE]
        )
        for mode in modes:
            # Anonymous (as generated, credentials included), and with a valid key that
            # overrides any generated one.
            for headers in ({}, {"X-API-Key": API_KEY}):
                _fuzz(op, mode, headers)
