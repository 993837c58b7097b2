"""Where node processes keep shared files under `settings.data_dir`.

The auditor daemon and the web pages run in different processes (or containers sharing a
volume); both must find the same human queue, so its path is defined once, here.
"""

from __future__ import annotations

from pathlib import Path

from trustnode.config import Settings


def human_queue_path(settings: Settings) -> Path:
    """The SQLite human queue a human-tier auditor daemon fills and the audit page reads."""
    return settings.data_dir / "human" / "queue.db"


def web_secret_path(settings: Settings) -> Path:
    """The key that signs the audit page's session cookies and sign-in challenges (0600)."""
    return settings.data_dir / "web" / "secret.key"
