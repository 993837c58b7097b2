"""`store_from_settings`: the embedded store without a daemon URL, the spooled daemon client with one."""

from __future__ import annotations

from pathlib import Path

from trustnode.config import IPFSSettings, Settings
from trustnode.storage.blobstore import KuboStore, LocalStore, ResilientStore, store_from_settings


def test_no_url_gives_local_store_under_data_dir(tmp_path: Path) -> None:
    store = store_from_settings(Settings(data_dir=tmp_path))
    assert isinstance(store, LocalStore) and store.root == tmp_path / "blobs"


def test_url_gives_spooled_kubo_client(tmp_path: Path) -> None:
    s = Settings(
        data_dir=tmp_path, ipfs=IPFSSettings(api_url="http://127.0.0.1:5999", timeout_s=7, retries=2)
    )
    store = store_from_settings(s)
    assert isinstance(store, ResilientStore)
    assert isinstance(store.primary, KuboStore)
    assert store.primary.base == "http://127.0.0.1:5999/api/v0"
    assert (store.primary.timeout_s, store.primary.retries) == (7, 2)
    assert store.spool.root == tmp_path / "ipfs-spool"
    plain = store_from_settings(s, durable=False)
    assert isinstance(plain, KuboStore)
