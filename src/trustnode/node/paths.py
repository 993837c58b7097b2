"""Where node processes keep shared files under `settings.data_dir`.

The auditor daemon and the web pages run in different processes (or containers sharing a
volume); both must find the same human queue, so its path is defined once, here.
"""

from __future__ import annotations

from pathlib import Path

from trustnode.config import Settings


def human_queue_path(settings: Settings) -> Path:
    """The SQLite human queue every human-tier auditor daemon of this data dir fills and the audit
    page reads. Shared by design: its rows are keyed by the auditor's address (a seat id names
    the session, the segment and the auditor), so several human accounts can share one data dir
    and the page shows each signed-in person only their own seats."""
    return settings.data_dir / "human" / "queue.db"


def auditor_dir(settings: Settings, address: str) -> Path:
    """One auditor account's private state: vote store (with its event checkpoints), encryption
    key, evidence and the daemon lock. Keyed by the address, so daemons of different accounts
    can share a data dir and never see each other's votes."""
    return settings.data_dir / "auditor" / address.lower()


def web_secret_path(settings: Settings) -> Path:
    """The key that signs the audit page's session cookies and sign-in challenges (0600)."""
    return settings.data_dir / "web" / "secret.key"
