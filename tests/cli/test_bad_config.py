"""A configured value the node cannot run with stops every command at start, naming the setting,
where it comes from and what is wrong: never a traceback (the guide: misconfiguration refuses
loudly with the reason)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.conftest import run_cli


@pytest.mark.parametrize(
    "command", [["devnet", "up"], ["deploy"], ["api", "serve"], ["auditor", "run", "--tier", "computer"]]
)
def test_bad_environment_value_is_named(command: list[str], tmp_path: Path) -> None:
    done = run_cli(command, timeout=60, TRUSTNODE_DATA_DIR=str(tmp_path), TRUSTNODE_PROTOCOL__MAX_ROUNDS="9")
    assert done.returncode == 1, done.stdout
    assert "Traceback" not in done.stderr
    assert "invalid configuration: protocol.max_rounds" in done.stderr
    assert "TRUSTNODE_PROTOCOL__MAX_ROUNDS" in done.stderr and "(got '9')" in done.stderr


def test_bad_file_values_are_all_named_with_their_section(tmp_path: Path) -> None:
    toml = tmp_path / "node.toml"
    toml.write_text('[protocol]\nseat_cap = 100\ncanary_gamma = "2"\n[llm]\ntimeout_s = -1\n')
    done = run_cli(["api", "serve"], timeout=60, TRUSTNODE_DATA_DIR=str(tmp_path), TRUSTNODE_CONFIG=str(toml))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    err = " ".join(done.stderr.split())
    for setting, section in [
        ("protocol.seat_cap", "[protocol] seat_cap"),
        ("protocol.canary_gamma", "[protocol] canary_gamma"),
        ("llm.timeout_s", "[llm] timeout_s"),
    ]:
        assert setting in err and f"{section} in {toml}" in err


def test_a_misspelt_setting_is_refused_not_ignored(tmp_path: Path) -> None:
    """pydantic-settings would drop an unknown key silently (appeals left off for a typo); the node
    refuses to start and names the key and the nearest real one."""
    toml = tmp_path / "node.toml"
    toml.write_text("[protocol]\nappeal_block = 30\n[llm]\nbase_ur = 'http://127.0.0.1:1/v1'\n")
    done = run_cli(
        ["devnet", "up"],
        timeout=60,
        TRUSTNODE_DATA_DIR=str(tmp_path),
        TRUSTNODE_CONFIG=str(toml),
        TRUSTNODE_CHAIN__RPCURL="http://127.0.0.1:1",
        TRUSTNODE_API_KEY="not-a-setting-but-read-elsewhere",
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr
    err = " ".join(done.stderr.split())
    assert (
        f"[protocol] appeal_block in {toml}: 'appeal_block' is not a setting (did you mean appeal_blocks?)"
        in err
    )
    assert "[llm] base_ur" in err and "did you mean base_url?" in err
    assert "TRUSTNODE_CHAIN__RPCURL: 'rpcurl' is not a setting (did you mean rpc_url?)" in err
    assert "TRUSTNODE_API_KEY" not in err


def test_a_list_setting_that_is_not_json_is_named_not_a_traceback(tmp_path: Path) -> None:
    """README operators write TRUSTNODE_API__API_KEYS=provider-key (no JSON list): pydantic-settings
    raised SettingsError and `api serve` printed a traceback naming only the section. The node names
    the variable, says it must be JSON and never echoes the value (an API key is a secret)."""
    done = run_cli(
        ["api", "serve"],
        timeout=60,
        TRUSTNODE_DATA_DIR=str(tmp_path),
        TRUSTNODE_API__API_KEYS="secret-provider-key",
        TRUSTNODE_CHAIN__ACCOUNT_INDEX="1",
    )
    assert done.returncode == 1, done.stdout
    assert "Traceback" not in done.stderr
    err = " ".join(done.stderr.split())
    assert "invalid configuration: TRUSTNODE_API__API_KEYS is not valid JSON" in err
    assert "secret-provider-key" not in err
