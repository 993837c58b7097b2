"""SQLite connections configured for durability and for two processes sharing a file.

The files hold secrets (the provider's job queue keeps traces and every segment's key), so
they are created 0600 in 0700 directories whatever the process umask; SQLite gives its
-wal and -shm files the database file's mode.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

PRIVATE_FILE_MODE = 0o600
PRIVATE_DIR_MODE = 0o700


def private_file(path: Path) -> Path:
    """Make sure `path` exists with mode 0600 (created so, never briefly wider; an existing
    wider file is narrowed), its directory created 0700."""
    path.parent.mkdir(mode=PRIVATE_DIR_MODE, parents=True, exist_ok=True)
    fd = os.open(path, os.O_CREAT | os.O_RDWR, PRIVATE_FILE_MODE)
    try:
        if os.fstat(fd).st_mode & 0o777 != PRIVATE_FILE_MODE:
            os.fchmod(fd, PRIVATE_FILE_MODE)
    finally:
        os.close(fd)
    return path


class Database:
    """One SQLite file; a connection per thread; WAL so readers never block the writer."""

    def __init__(self, path: Path, schema: str) -> None:
        self.path = path
        private_file(path)
        self._local = threading.local()
        self.conn().executescript(schema)

    def conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None, check_same_thread=False)
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")
            conn.execute("PRAGMA busy_timeout=30000")
            self._local.conn = conn
        return conn

    @contextmanager
    def tx(self) -> Iterator[sqlite3.Connection]:
        """An IMMEDIATE transaction: committed on success, rolled back on any exception."""
        conn = self.conn()
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None
