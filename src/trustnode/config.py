"""Node configuration: environment variables `TRUSTNODE_*` and an optional TOML file.

Nested sections use a double underscore in the environment, e.g.
`TRUSTNODE_LLM__BASE_URL=http://127.0.0.1:8000/v1`, and a table in TOML (`[llm]`).
The TOML file is `$TRUSTNODE_CONFIG` if set, else `trustnode.toml` in the working
directory when present. Every field here is documented in README.md.
"""

from __future__ import annotations

import os
import tomllib
from decimal import Decimal
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, SecretStr, ValidationError
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from trustnode.config_keys import unknown_settings
from trustnode.llm.settings import LLMSettings


def _default_data_dir() -> Path:
    return Path(os.environ.get("XDG_DATA_HOME", Path.home() / ".local" / "share")) / "trustnode"


class ChainSettings(BaseModel):
    """How to reach the chain and which key signs."""

    rpc_url: str | None = Field(default=None, description="JSON-RPC URL; default: the devnet's.")
    deployment_file: Path | None = Field(
        default=None, description="Deployment JSON; default: <data_dir>/devnet/deployment.json."
    )
    private_key: SecretStr | None = Field(default=None, description="Hex private key of this node's account.")
    keystore_path: Path | None = Field(default=None, description="Encrypted eth-account keystore file.")
    keystore_password: SecretStr | None = Field(default=None, description="Password of the keystore.")
    account_index: int = Field(
        default=0,
        ge=0,
        description="On the devnet, which anvil dev account signs: 0 deploys, 1 is the provider's (API), 2..19 one per auditor, 20 the canary operator's. Unset: 1 for `api serve`/`worker` (20 with canary_operator.enabled), 0 for `deploy`; `auditor run` must be told.",
    )
    tx_timeout_s: float = Field(default=60.0, gt=0, description="How long to wait for a receipt.")
    poll_interval_s: float = Field(default=0.5, gt=0, description="Event polling interval.")


class DevnetSettings(BaseModel):
    """The local anvil chain started by `trustnode devnet up`."""

    port: int = Field(default=8545, ge=1, le=65535, description="RPC port of anvil on 127.0.0.1.")
    block_time_s: float | None = Field(
        default=1.0,
        description="Seconds per block; None: a block only for each transaction (needs automine).",
    )
    automine: bool = Field(
        default=False,
        description="Also mine a block for every transaction at once. Off: phases counted in blocks last a steady wall time, whatever the traffic (a person needs that).",
    )
    chain_id: int = Field(default=31337, description="Chain id anvil is started with.")
    auditor_accounts: int = Field(
        default=8,
        ge=0,
        le=18,
        description="Dev accounts 2.. funded for auditors by `devnet up` (ETH and tokens).",
    )
    auditor_tokens: Decimal = Field(
        default=Decimal(10_000),
        ge=0,
        description="TRUST each funded auditor account holds after `devnet up`.",
    )
    provider_tokens: Decimal = Field(
        default=Decimal(1_000_000),
        ge=0,
        description="TRUST the provider's account (1) holds after `devnet up`.",
    )


class ProtocolSettings(BaseModel):
    """Session parameters `devnet up` and `deploy` put on chain; a changed value is applied by the
    owner (AuditSessions.setParams, for sessions opened afterwards) or refused."""

    seats_per_tier: tuple[int, int, int] = Field(
        default=(2, 1, 1), description="Auditors per segment (k) for computer, LLM and human segments."
    )
    seat_cap: int = Field(
        default=32,
        ge=1,
        le=64,
        description="Most seats one auditor holds in one session (a devnet of four auditors needs more than 25%).",
    )
    tau_bps: int = Field(
        default=6000,
        gt=5000,
        le=10_000,
        description="Quorum per segment, basis points of k (q = ceil(tau k)).",
    )
    beta_bps: int = Field(
        default=9000,
        gt=0,
        le=10_000,
        description="A trace passes when its PASS weight reaches beta (basis points).",
    )
    reward: Decimal = Field(
        default=Decimal(6), ge=0, description="TRUST paid per vote that agrees with the outcome."
    )
    slash: Decimal = Field(
        default=Decimal(8), ge=0, description="TRUST slashed per vote against the outcome."
    )
    draw_blocks: int = Field(default=40, ge=1, description="Blocks to draw the auditors.")
    key_blocks: int = Field(default=40, ge=1, description="Blocks to publish the key bundle.")
    commit_blocks: int = Field(
        default=120,
        ge=1,
        description="Blocks of the commit phase (it ends early once every auditor committed).",
    )
    reveal_blocks: int = Field(default=40, ge=1, description="Blocks of the reveal phase.")
    canary_commit_blocks: int = Field(
        default=8,
        ge=0,
        le=199,
        description="Blocks the canary operator has after a session opens to commit its canaries (the "
        "draw's randomness waits that long when canaries are owed); 0..199.",
    )
    # Appeals and gold canaries (issue 15). Unset: the deployment's default, which is off on a
    # devnet; a value set here is asked for like the matching `--appeal-*`/`--canary-*` option.
    appeal_blocks: int | None = Field(
        default=None, ge=0, description="Appeal window after each decision (blocks); 0 disables appeals."
    )
    max_rounds: int | None = Field(default=None, ge=0, le=4, description="Appeal panels per segment (0..4).")
    appeal_bond_multiplier_bps: int | None = Field(
        default=None, ge=10_000, le=100_000, description="Appeal bond = k * reward * this / 10000."
    )
    appeal_reward_bps: int | None = Field(
        default=None,
        ge=0,
        le=10_000,
        description="A successful appellant's reward, basis points of its bond.",
    )
    appeal_budget: Decimal | None = Field(
        default=None, ge=0, description="Most TRUST the treasury grants one session's appeals."
    )
    canary_rate_bps: int | None = Field(
        default=None, ge=0, le=3000, description="Gold canaries per segment of a session (basis points)."
    )
    canary_reveal_blocks: int | None = Field(
        default=None, ge=1, description="Blocks the canary operator has to reveal its canaries' verdicts."
    )
    canary_gamma: Decimal | None = Field(
        default=None, ge=0, le=1, description="Reputation step of one canary vote (0..1)."
    )
    canary_refund_bps: int | None = Field(
        default=None,
        ge=0,
        le=2500,
        description="Treasury refund per revealed canary, basis points of k * reward; at most 2500, the "
        "treasury's share of the canary's fee (above it a provider would recover more than its canaries cost).",
    )
    canary_operators: list[str] = Field(
        default_factory=list,
        description="Addresses authorized to write, commit and reveal gold canaries (never a provider).",
    )


class IPFSSettings(BaseModel):
    """Blob storage: a Kubo-compatible RPC, or the embedded store when no URL is set."""

    api_url: str | None = Field(default=None, description="e.g. http://127.0.0.1:5001; None: LocalStore.")
    timeout_s: float = Field(default=30.0, gt=0, description="Per-request timeout of the IPFS RPC.")
    retries: int = Field(default=3, ge=0, description="Retries (with backoff) before IPFS counts as down.")
    max_fetch_bytes: int = Field(
        default=16 * 1024 * 1024,
        ge=1,
        description="Largest blob one read fetches; a CID declaring more is refused after its first block.",
    )


class DecomposerSettings(BaseModel):
    """How the provider node breaks traces into segments; separate from the LLM auditors' endpoint."""

    mode: Literal["offline", "llm-single", "llm-five-step"] = Field(
        default="offline", description="offline rules, or the LLM pipeline in one call or five steps."
    )
    llm: LLMSettings = Field(default_factory=LLMSettings, description="The decomposer's own endpoint.")
    offline_fallback: bool = Field(
        default=False, description="Use the offline decomposer when the LLM endpoint fails (else refuse)."
    )


class APISettings(BaseModel):
    """The provider/user REST API."""

    host: str = Field(default="127.0.0.1", description="Address the API binds.")
    port: int = Field(default=8080, ge=1, le=65535, description="Port the API listens on.")
    api_keys: list[SecretStr] = Field(default_factory=list, description="Accepted provider API keys.")
    allowed_signers: list[str] = Field(
        default_factory=list,
        description="Addresses whose EIP-191 signatures are accepted.",
    )
    accept_any_signer: bool = Field(
        default=False,
        description="Accept a valid signature from anyone (spends this node's tokens); needed when no keys or signers are set.",
    )
    public_origin: str | None = Field(
        default=None,
        description="Canonical origin of the pages (e.g. https://audit.example.org), named in sign-in messages; default http://<host>:<port>.",
    )
    forwarded_allow_ips: list[str] = Field(
        default_factory=lambda: ["127.0.0.1"],
        description="Proxies whose X-Forwarded-Proto/For headers are trusted (TLS termination).",
    )
    signature_max_age_s: int = Field(
        default=300, gt=0, description="Oldest accepted signed-request timestamp."
    )
    worker: bool = Field(default=True, description="Run the provider pipeline worker inside `api serve`.")
    max_body_bytes: int = Field(default=1_000_000, gt=0, description="Largest accepted request body.")


class BatchSettings(BaseModel):
    """Batching and shuffling of traces before sessions open (privacy)."""

    size: int = Field(default=4, ge=1, description="Traces per batch.")
    max_wait_s: float = Field(default=5.0, ge=0, description="Open a partial batch after this long.")


class PrivacySettings(BaseModel):
    """How much of a trace one auditor may read (SPEC 3; issue 16)."""

    max_decrypt_share: float = Field(
        default=0.25,
        gt=0,
        le=1,
        description="Largest share of a trace's thinking characters one auditor can decrypt, its seats and their context together; context beyond it is shown by its summary. Same figure as the seat cap by default.",
    )


class CanaryOperatorSettings(BaseModel):
    """Serving gold canaries to providers (issue 15): this node writes them and vouches for them."""

    enabled: bool = Field(default=False, description="Serve /v1/canary and commit and reveal canaries.")
    max_open_tickets: int = Field(
        default=16,
        ge=1,
        le=10_000,
        description="Tickets one client may hold issued and not yet placed (more get HTTP 429).",
    )
    open_ticket_ttl_s: int = Field(
        default=3600,
        ge=60,
        description="An issued ticket never placed stops counting against its client after this long.",
    )


class ProviderCanarySettings(BaseModel):
    """Where a provider gets its gold canaries: an authorized canary operator's API."""

    operator_url: str | None = Field(
        default=None, description="e.g. http://127.0.0.1:8100; required when the chain's canaryRateBps > 0."
    )
    operator_api_key: str | None = Field(default=None, description="The operator API's key, if it wants one.")


class AuditorSettings(BaseModel):
    """The auditor daemon."""

    tier: str = Field(default="computer", description="computer, llm or human.")
    stake: int = Field(default=1000 * 10**18, ge=0, description="Self-stake in token wei.")
    domains: int = Field(default=1, ge=0, description="Expertise bitmask.")


class Settings(BaseSettings):
    """All settings of a trustnode process."""

    model_config = SettingsConfigDict(
        env_prefix="TRUSTNODE_", env_nested_delimiter="__", extra="ignore", validate_default=True
    )

    data_dir: Path = Field(default_factory=_default_data_dir, description="State, queues, caches, keys.")
    log_level: str = Field(default="INFO", description="DEBUG, INFO, WARNING or ERROR.")
    log_json: bool = Field(default=False, description="Structured (JSON) log lines.")
    chain: ChainSettings = Field(default_factory=ChainSettings)
    devnet: DevnetSettings = Field(default_factory=DevnetSettings)
    protocol: ProtocolSettings = Field(default_factory=ProtocolSettings)
    ipfs: IPFSSettings = Field(default_factory=IPFSSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings, description="The LLM auditors' (judge's) endpoint.")
    decomposer: DecomposerSettings = Field(default_factory=DecomposerSettings)
    api: APISettings = Field(default_factory=APISettings)
    batch: BatchSettings = Field(default_factory=BatchSettings)
    privacy: PrivacySettings = Field(default_factory=PrivacySettings)
    auditor: AuditorSettings = Field(default_factory=AuditorSettings)
    canary_operator: CanaryOperatorSettings = Field(default_factory=CanaryOperatorSettings)
    canaries: ProviderCanarySettings = Field(
        default_factory=ProviderCanarySettings, description="The provider's canary operator."
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        path = config_file()
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        if path.is_file():
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=path))
        return tuple(sources)

    @property
    def deployment_file(self) -> Path:
        return self.chain.deployment_file or self.data_dir / "devnet" / "deployment.json"

    @property
    def llm_cache_dir(self) -> Path:
        return self.llm.cache_dir or self.data_dir / "llm-cache"


PRIVATE_DIR_MODE = 0o700


def secure_data_dir(path: Path) -> Path:
    """Create the data directory 0700, or narrow an existing one to 0700.

    It holds the job queue (traces, HDAGs, every segment's key), the human queue, evidence
    and keystores: nobody but the node's user may list or read it.
    """
    path.mkdir(mode=PRIVATE_DIR_MODE, parents=True, exist_ok=True)
    if path.stat().st_mode & 0o777 != PRIVATE_DIR_MODE:
        path.chmod(PRIVATE_DIR_MODE)
    return path


class ConfigError(ValueError):
    """The configuration (environment or TOML file) holds a value the node cannot run with."""


def config_file() -> Path:
    """The TOML file settings are read from (it need not exist)."""
    return Path(os.environ.get("TRUSTNODE_CONFIG") or "trustnode.toml")


def describe_config_errors(exc: ValidationError) -> str:
    """One line per bad value: its setting, where it may come from, and what is wrong."""
    lines = []
    for err in exc.errors():
        loc = [str(p) for p in err["loc"]]
        env = "TRUSTNODE_" + "__".join(p.upper() for p in loc)
        where = f"{env} or [{loc[0]}] {'.'.join(loc[1:])} in {config_file()}" if len(loc) > 1 else env
        got = f" (got {err['input']!r})" if "input" in err and not isinstance(err["input"], dict) else ""
        lines.append(f"{'.'.join(loc)}: {err['msg']}{got}; set by {where}")
    return "; ".join(lines)


def load_settings(**overrides: object) -> Settings:
    """Read settings from env and TOML; keyword overrides win (used by the CLI flags).

    Raises ConfigError naming every bad value and where it is set."""
    path = config_file()
    try:
        toml = tomllib.loads(path.read_text()) if path.is_file() else {}
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read the configuration file {path}: {exc}") from None
    unknown = unknown_settings(Settings, toml, str(path), os.environ)
    if unknown:
        raise ConfigError("invalid configuration: " + "; ".join(unknown))
    try:
        return Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as exc:
        raise ConfigError(f"invalid configuration: {describe_config_errors(exc)}") from None
