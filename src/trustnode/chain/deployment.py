"""The deployment file: which chain, which RPC, which contract at which address.

Every command that touches the chain reads this file (or the settings pointing at it),
so it is the single source of truth for addresses.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from trustnode.chain.client import rpc_alive
from trustnode.chain.deploy import checked_operators
from trustnode.chain.errors import ChainError, redact_url
from trustnode.chain.protocol import DEVNET_SESSION_PARAMS, Protocol, SessionParams
from trustnode.chain.units import format_trust, parse_trust
from trustnode.config import ProtocolSettings
from trustnode.consensus.appeals import check_appeal_params
from trustnode.consensus.canaries import check_canary_window


class DeploymentError(ChainError):
    """The deployment file is missing, malformed, or points at a dead chain."""


class Deployment(BaseModel):
    chain_id: int
    rpc_url: str
    contracts: dict[str, str]
    deploy_block: int = Field(ge=0)
    deployer: str
    created_at: str = Field(default_factory=lambda: datetime.now(UTC).isoformat())
    anvil_pid: int | None = Field(
        default=None, description="Set when `trustnode devnet up` started the chain."
    )
    port: int | None = None
    canary_operators: list[str] = Field(
        default_factory=list,
        description="Canary operators authorized on the CanaryModule by this deployment (checksummed).",
    )

    def address(self, name: str) -> str:
        try:
            return self.contracts[name]
        except KeyError as exc:
            raise DeploymentError(f"the deployment has no contract named {name!r}") from exc

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.model_dump(), indent=2) + "\n")
        tmp.replace(path)

    @classmethod
    def load(cls, path: Path, *, check_alive: bool = True) -> Deployment:
        if not path.is_file():
            raise DeploymentError(f"no deployment file at {path}: run `trustnode devnet up` first")
        try:
            dep = cls.model_validate_json(path.read_text())
        except ValidationError as exc:
            raise DeploymentError(f"deployment file {path} is malformed: {exc}") from exc
        if check_alive and not rpc_alive(dep.rpc_url):
            raise DeploymentError(
                f"deployment file {path} points at {redact_url(dep.rpc_url)}, which does not answer: "
                "the chain is down (run `trustnode devnet up`)"
            )
        return dep


# -- protocol parameters ----------------------------------------------------------------------
#
# `devnet up` and `deploy` share one rule: what the operator asked for (a flag, or a value set
# in the config) is what the chain runs. A deployment that runs something else is changed by
# its owner (setParams: sessions opened from then on) or the command fails, naming the owner.

#: ProtocolSettings field -> SessionParams field (amounts are TRUST in settings, wei on chain).
_PARAM_FIELDS: dict[str, str] = {
    "seats_per_tier": "seats_per_tier",
    "seat_cap": "seat_cap",
    "tau_bps": "tau_bps",
    "beta_bps": "beta_bps",
    "reward": "reward",
    "slash": "slash_amount",
    "draw_blocks": "draw_blocks",
    "key_blocks": "key_blocks",
    "commit_blocks": "commit_blocks",
    "reveal_blocks": "reveal_blocks",
    "canary_commit_blocks": "canary_commit_blocks",
}


class ParamsConflictError(DeploymentError):
    """The chain runs other parameters than asked and this signer cannot change them."""


def _on_chain_values(p: ProtocolSettings) -> dict[str, Any]:
    values = p.model_dump()
    out = {_PARAM_FIELDS[k]: v for k, v in values.items() if k in _PARAM_FIELDS}
    out["reward"] = parse_trust(p.reward)
    out["slash_amount"] = parse_trust(p.slash)
    out["seats_per_tier"] = tuple(p.seats_per_tier)
    return out


def session_params(p: ProtocolSettings, base: SessionParams = DEVNET_SESSION_PARAMS) -> SessionParams:
    """The SessionParams a new deployment starts with: `base` with every value of `p`."""
    return SessionParams.model_validate({**base.model_dump(), **_on_chain_values(p)})


def _shown(name: str, value: Any) -> str:
    if name in ("reward", "slash_amount"):
        return format_trust(int(value))
    if isinstance(value, tuple | list):
        return ",".join(str(v) for v in value)
    return str(value)


def params_diff(current: SessionParams, p: ProtocolSettings, fields: set[str]) -> dict[str, tuple[str, str]]:
    """{settings field: (on chain, asked)} for each of `fields` whose asked value differs."""
    want = _on_chain_values(p)
    have = current.model_dump()
    out: dict[str, tuple[str, str]] = {}
    for field in sorted(fields & set(_PARAM_FIELDS)):
        key = _PARAM_FIELDS[field]
        old = tuple(have[key]) if isinstance(have[key], list | tuple) else have[key]
        if old != want[key]:
            out[field] = (_shown(key, old), _shown(key, want[key]))
    return out


def apply_params(proto: Protocol, p: ProtocolSettings, fields: set[str]) -> dict[str, tuple[str, str]]:
    """Make the chain run the asked `fields` of `p`; returns what changed (empty: nothing to do).

    Raises ParamsConflictError when a value differs and this signer does not own AuditSessions.
    """
    current = proto.params()
    diff = params_diff(current, p, fields)
    if not diff:
        return {}
    owner = str(proto.client.call(proto.sessions.functions.owner()))
    if owner.lower() != proto.address.lower():
        changes = "; ".join(f"{k} is {old} on chain, {new} asked" for k, (old, new) in diff.items())
        raise ParamsConflictError(
            f"the deployment runs other parameters than asked ({changes}) and only the owner of "
            f"AuditSessions ({owner}) can change them: sign with its key, or leave these values out"
        )
    want = _on_chain_values(p)
    updated = SessionParams.model_validate(
        {**current.model_dump(), **{_PARAM_FIELDS[f]: want[_PARAM_FIELDS[f]] for f in diff}}
    )
    check_canary_window(updated.canary_commit_blocks, proto.epoch_blocks)
    proto.client.transact(proto.sessions.functions.setParams(updated.as_abi()))
    return diff


def apply_appeal_params(proto: Protocol, wanted: Mapping[str, int]) -> dict[str, tuple[str, str]]:
    """Make the AppealSettlement run the asked appeal and canary values (`SessionParams` field names)
    for sessions opened from now on; returns what changed. ValueError when the values, merged with
    those on chain, would be refused (`check_appeal_params`); ParamsConflictError when a value
    differs and this signer does not own it."""
    escrow = proto.appeal_settlement
    if not wanted or escrow is None:
        return {}
    current = proto.appeal_params_of(proto.session_count() + 1)
    have = current.model_dump()
    diff = {k: (str(have[k]), str(v)) for k, v in wanted.items() if have[k] != v}
    if not diff:
        return {}
    merged = SessionParams.model_validate({**proto.params().model_dump(), **have, **wanted})
    check_appeal_params(  # as setParams
        merged.appeal,
        merged.seats_per_tier,
        merged.tau_bps,
        merged.econ,
        canary_refund_bps=merged.canary_refund_bps,
    )
    owner = str(proto.client.call(escrow.functions.owner()))
    if owner.lower() != proto.address.lower():
        changes = "; ".join(f"{k} is {old} on chain, {new} asked" for k, (old, new) in diff.items())
        raise ParamsConflictError(
            f"the deployment runs other appeal parameters than asked ({changes}) and only the owner of "
            f"the AppealSettlement ({owner}) can change them: sign with its key, or leave these values out"
        )
    proto.set_appeal_params(current.model_copy(update=dict(wanted)))
    return diff


def apply_canary_operators(proto: Protocol, operators: Sequence[str]) -> list[str]:
    """Authorize each of `operators` not yet a canary operator; returns those newly authorized.

    Additive: an operator authorized on chain but not listed stays (revoking is governance's
    explicit act, `set_canary_operator(address, False)`). ParamsConflictError when one is missing
    and this signer does not own AuditSessions (the core's owner authorizes operators).
    """
    if proto.canary_module is None:
        return []
    missing = [a for a in checked_operators(operators) if not proto.is_canary_operator(a)]
    if not missing:
        return []
    owner = str(proto.client.call(proto.sessions.functions.owner()))
    if owner.lower() != proto.address.lower():
        raise ParamsConflictError(
            f"protocol.canary_operators lists {', '.join(missing)}, not authorized on chain, and only the "
            f"owner of AuditSessions ({owner}) can authorize them: sign with its key, or leave them out"
        )
    for address in missing:
        proto.set_canary_operator(address, True)
    return missing
