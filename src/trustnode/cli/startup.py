"""Start-up checks of node commands: refuse what cannot work, and say why, before taking work.

- an LLM endpoint (the decomposer's for `api serve`/`worker`, the judge's for `auditor run
  --tier llm`) is probed once; a wrong one is refused, or replaced by the offline decomposer
  only when `decomposer.offline_fallback` says so;
- an auditor holds the tokens and gas its stake needs, or is told how to get them;
- the provider's account is not also an auditor's, and the devnet roles are kept;
- a canary operator's account is authorized on chain, and it has IPFS and clients.
"""

from __future__ import annotations

from pathlib import Path

from trustnode.chain.accounts import KeyConfigError
from trustnode.chain.errors import ChainError, redact_url
from trustnode.chain.units import format_trust
from trustnode.config import Settings
from trustnode.llm.errors import LLMError
from trustnode.llm.settings import LLMSettings
from trustnode.node.context import NodeContext

DECOMPOSER_ROLE = "decomposer"
JUDGE_ROLE = "judge"


class StartupError(RuntimeError):
    """The node cannot work as configured; the message says what to change."""


def probe_llm(llm: LLMSettings, cache_dir: Path, role: str) -> str:
    """Probe the endpoint `llm` for `role`; a one-line summary, or LLMError saying what is wrong."""
    from trustnode.llm.client import LLMClient

    client = LLMClient(llm, cache_dir)
    try:
        probe = getattr(client, "probe", None)
        if probe is not None:  # the audit engineers' probe: a small JSON request of this role
            return str(probe(role).summary())
        # Until that probe reaches this branch: the endpoint must at least list models.
        models = client.list_models()
        listed = "" if llm.model in models or not models else f" (not among {', '.join(models)})"
        return f"{redact_url(client.base_url)}: model {llm.model}{listed} reachable"
    finally:
        client.close()


def decomposer_mode(s: Settings) -> tuple[str, str]:
    """(mode the provider pipeline runs, a line for the operator); StartupError when refused."""
    d = s.decomposer
    if d.mode == "offline":
        return "offline", "decomposer: offline rules"
    why = ""
    if not d.llm.base_url:
        why = "no endpoint is set (TRUSTNODE_DECOMPOSER__LLM__BASE_URL)"
    else:
        try:
            return d.mode, f"decomposer: {d.mode} via {probe_llm(d.llm, s.llm_cache_dir, DECOMPOSER_ROLE)}"
        except LLMError as exc:
            why = f"its endpoint failed the start-up probe: {exc}"
    if d.offline_fallback:
        return "offline", f"decomposer: offline rules, because the {d.mode} decomposer cannot run ({why})"
    raise StartupError(
        f"the {d.mode} decomposer cannot run: {why}. Fix TRUSTNODE_DECOMPOSER__LLM__BASE_URL (and "
        "__MODEL), choose TRUSTNODE_DECOMPOSER__MODE=offline, or allow "
        "TRUSTNODE_DECOMPOSER__OFFLINE_FALLBACK=true"
    )


def judge_endpoint(s: Settings) -> str:
    """Probe the LLM judge's endpoint; a line for the operator, or StartupError."""
    if not s.llm.base_url:
        raise StartupError("an LLM auditor needs TRUSTNODE_LLM__BASE_URL (an OpenAI-compatible endpoint)")
    try:
        return f"judge: {probe_llm(s.llm, s.llm_cache_dir, JUDGE_ROLE)}"
    except LLMError as exc:
        raise StartupError(
            f"the LLM judge's endpoint failed the start-up probe: {exc}. Fix TRUSTNODE_LLM__BASE_URL "
            "(and TRUSTNODE_LLM__MODEL)"
        ) from exc


def check_service_urls(s: Settings) -> None:
    """StartupError for an IPFS or chain URL that is not an http(s) URL at all (`notaurl`,
    `127.0.0.1:5001`): a typo, not an outage, so it is refused instead of retried forever."""
    from urllib.parse import urlsplit

    for name, url in (
        ("TRUSTNODE_IPFS__API_URL", s.ipfs.api_url),
        ("TRUSTNODE_CHAIN__RPC_URL", s.chain.rpc_url),
    ):
        if not url:
            continue  # unset: each role says whether it needs it ("set TRUSTNODE_...")
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise StartupError(
                f"{name} = {redact_url(url)!r} is not an http(s) URL: give scheme, host and port, e.g. "
                "http://127.0.0.1:5001 (IPFS) or http://127.0.0.1:8545 (chain)"
            )


#: What waits for IPFS, per role, in the start-up warning.
IPFS_WAITS = {
    "provider": "traces wait, spooled locally, until it does",
    "auditor": "this auditor cannot read its seats' bundles until it does (a seat it cannot read before "
    "the commit deadline is not voted, and may be slashed)",
}


def ipfs_warning(s: Settings, role: str = "provider") -> str | None:
    """A line for the operator when the IPFS RPC does not answer now (an outage, not a refusal:
    traces wait, spooled locally, until it does; `/healthz` says degraded meanwhile)."""
    if not s.ipfs.api_url:
        return None
    from trustnode.storage.errors import StorageError
    from trustnode.storage.kubo import KuboStore

    probe = KuboStore(s.ipfs.api_url, timeout_s=min(5.0, s.ipfs.timeout_s), retries=1)
    try:
        probe.version()
    except StorageError as exc:
        return (
            f"IPFS at {redact_url(s.ipfs.api_url)} does not answer ({exc}): {IPFS_WAITS[role]}. Start it, "
            "or fix TRUSTNODE_IPFS__API_URL"
        )
    finally:
        probe.close()
    return None


def fund_hint(address: str, on_devnet: bool) -> str:
    if on_devnet:
        return (
            f"fund it with `trustnode devnet fund --address {address}` (`trustnode devnet up --auditors N` "
            "funds accounts 2..N+1)"
        )
    return f"the deployer funds it with `trustnode deploy --fund {address}`, or send it TRUST and gas"


def check_auditor_funds(ctx: NodeContext, stake: int) -> None:
    """StartupError unless this account can pay the gas and the rest of its `stake` (token wei)."""
    proto = ctx.protocol()
    address = proto.address
    on_devnet = ctx.deployment().chain_id == ctx.settings.devnet.chain_id
    if int(proto.client.w3.eth.get_balance(address)) == 0:  # type: ignore[arg-type]
        raise StartupError(f"auditor {address} has no ETH to pay for gas: {fund_hint(address, on_devnet)}")
    need = max(0, stake - proto.pool(address).backing)  # v2: pending deposits back the auditor too
    have = proto.balance_of(address)
    if have < need:
        raise StartupError(
            f"auditor {address} needs {format_trust(need)} to stake but holds {format_trust(have)}: "
            + fund_hint(address, on_devnet)
        )


def role_warnings(ctx: NodeContext, role: str) -> list[str]:
    """Configurations that work but mix roles: said loudly at start-up."""
    s = ctx.settings
    out: list[str] = []
    try:
        dep = ctx.deployment()
        on_devnet = dep.chain_id == s.devnet.chain_id
        explicit_key = s.chain.private_key is not None or s.chain.keystore_path is not None
        index = s.chain.account_index
        if on_devnet and not explicit_key:
            if role == "auditor" and index == 0:
                out.append(
                    "this auditor signs with devnet account 0, which is the deployer's: give each auditor "
                    "its own (2..19)"
                )
            if role == "provider" and index != 1:
                out.append(f"the provider signs with devnet account {index}; by convention it is 1")
        if role == "provider":
            proto = ctx.protocol()
            if proto.profile(proto.address).registered:
                out.append(
                    f"the provider's account {proto.address} is also a registered auditor: it may be drawn "
                    "to audit the traces it pays for. Give the API node its own account"
                )
    except (ChainError, OSError) as exc:
        out.append(f"could not check the account roles on chain: {exc}")
    return out


def provider_account_reason(ctx: NodeContext) -> str | None:
    """Why this auditor's account is a provider's (None: it is not, as far as one cheap look tells).

    The devnet's account 1 signs for `api serve`/`worker` by convention; on any chain an account
    that opened a session (SessionOpened names its provider) is one. A chain that cannot be read
    here is left to the start-up's other checks."""
    s = ctx.settings
    dep = ctx.deployment()
    explicit_key = s.chain.private_key is not None or s.chain.keystore_path is not None
    if dep.chain_id == s.devnet.chain_id and not explicit_key and s.chain.account_index == 1:
        return "devnet account 1 is the provider's (`api serve` and `worker` sign with it)"
    try:
        proto = ctx.protocol()
        opened = proto.sessions.events.SessionOpened().get_logs(
            from_block=dep.deploy_block, argument_filters={"provider": proto.address}
        )
    except (ChainError, OSError, ValueError):
        return None
    if opened:
        return f"account {proto.address} opened {len(opened)} session(s) on this chain as a provider"
    return None


#: Why `auditor run` refuses a provider's account, for the refusal and the flag's help.
PROVIDER_ACCOUNT_RISKS = (
    "the chain never draws a provider into its own sessions, so its auditor daemon stakes for nothing "
    "on its own traces (it could only serve other providers'); both processes would sign with one key "
    "(their transactions race for nonces and one stuck transaction delays the other), and the fees it "
    "pays and the stake that may be slashed would mix in one account"
)


def check_canary_operator(ctx: NodeContext, *, run_worker: bool) -> str:
    """A line for the operator, or StartupError: a canary operator reads the providers' ciphertexts
    from IPFS, commits from an account governance authorized, and authenticates its clients."""
    s = ctx.settings
    if run_worker:
        raise StartupError(
            "a canary operator does not run the provider pipeline: the chain refuses canaries from a "
            "session's own provider, and both would sign with this account. Start it with --no-worker "
            "(TRUSTNODE_API__WORKER=false) and run the provider as another node"
        )
    if not (s.api.api_keys or s.api.allowed_signers or s.api.accept_any_signer):
        raise StartupError(
            "nobody could ask this canary operator for canaries: set TRUSTNODE_API__API_KEYS (the key "
            "providers give as TRUSTNODE_CANARIES__OPERATOR_API_KEY) or TRUSTNODE_API__ALLOWED_SIGNERS"
        )
    if not s.ipfs.api_url:
        raise StartupError(
            "a canary operator checks each placement by reading its ciphertext from IPFS: set "
            "TRUSTNODE_IPFS__API_URL to the IPFS RPC the providers pin to"
        )
    from trustnode.storage.errors import StorageError
    from trustnode.storage.kubo import KuboStore

    probe = KuboStore(s.ipfs.api_url, timeout_s=min(10.0, s.ipfs.timeout_s), retries=1)
    try:
        probe.version()
    except StorageError as exc:
        raise StartupError(
            f"the canary operator cannot reach IPFS at {redact_url(s.ipfs.api_url)}: {exc}"
        ) from exc
    finally:
        probe.close()
    try:
        port = ctx.port()
        address = port.address
        allowed = port.is_canary_operator(address)
    except (ChainError, KeyConfigError, OSError) as exc:
        raise StartupError(f"the canary operator cannot read the chain: {exc}") from exc
    if not allowed:
        raise StartupError(
            f"account {address} is not an authorized canary operator: governance (the core's owner) "
            f"authorizes it with CanaryModule.setCanaryOperator({address}, true), or at deploy through "
            "protocol.canary_operators; or sign with an authorized account (TRUSTNODE_CHAIN__PRIVATE_KEY)"
        )
    return f"canary operator {address}: authorized on chain; IPFS at {redact_url(s.ipfs.api_url)}"
