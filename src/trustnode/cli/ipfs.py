"""`trustnode ipfs add|cat|cid|pin|unpin|pins|flush|daemon`: the node's blob store from the shell.

The store is the daemon at `ipfs.api_url` (behind the local write-behind spool) when set,
else the embedded LocalStore under `data_dir`; both give the same CIDs.
"""

from __future__ import annotations

import signal
import sys
import time
from pathlib import Path

import typer

from trustnode.cli.common import console, err_console, errors_as_exit, fail, print_json, settings
from trustnode.storage.blobstore import (
    BlobStore,
    RemotePinPendingError,
    ResilientStore,
    StorageError,
    compute_cid,
    store_from_settings,
)
from trustnode.storage.jsipfs import JsIpfsDaemon, JsIpfsError
from trustnode.storage.unixfs import compute_file_cid

ipfs_app = typer.Typer(
    help="Add, read and pin blobs (IPFS daemon or the embedded store).", no_args_is_help=True
)

EXIT_PENDING = 3


def _store(max_bytes: int | None = None) -> BlobStore:
    return store_from_settings(settings(), max_fetch_bytes=max_bytes)


def _read_input(file: str) -> bytes:
    if file == "-":
        return sys.stdin.buffer.read()
    path = Path(file)
    if not path.is_file():
        fail(f"no such file: {file}")
    return path.read_bytes()


def _file_cid(file: str) -> str:
    if not Path(file).is_file():
        fail(f"no such file: {file}")
    return compute_file_cid(file)


@ipfs_app.command("add")
def add_cmd(
    file: str = typer.Argument(..., help="File to add ('-' for stdin)."),
    json_out: bool = typer.Option(False, "--json", help='Print {"cid": ...}.'),
    no_pin: bool = typer.Option(False, "--no-pin", help="Do not pin (the blob may be garbage collected)."),
) -> None:
    """Add a file and print its CID (CIDv1, raw leaves: the same on a daemon and locally)."""
    if file != "-" and not Path(file).is_file():
        fail(f"no such file: {file}")
    store = _store()
    try:
        with errors_as_exit(StorageError):
            try:
                if file == "-":
                    cid = store.add(sys.stdin.buffer.read(), pin=not no_pin)
                else:
                    cid = store.add_file(file, pin=not no_pin)
            except RemotePinPendingError as exc:
                if json_out:
                    print_json({"cid": exc.cid, "pinned_remotely": False, "pending": True})
                err_console.print(f"[yellow]{exc}[/] Run `trustnode ipfs flush` once the daemon is back.")
                raise typer.Exit(EXIT_PENDING) from None
    finally:
        store.close()
    if json_out:
        print_json({"cid": cid})
    else:
        typer.echo(cid)


@ipfs_app.command("cat")
def cat_cmd(
    cid: str = typer.Argument(..., help="CID to read (any spelling)."),
    output: Path | None = typer.Option(None, "--output", "-o", help="Write to a file instead of stdout."),
    max_bytes: int = typer.Option(
        None,
        "--max-bytes",
        min=1,
        metavar="BYTES",
        help="Largest blob to fetch (default: ipfs.max_fetch_bytes).",
    ),
) -> None:
    """Write a blob's bytes to stdout (verified against its CID, bounded in size)."""
    store = _store(max_bytes)
    try:
        with errors_as_exit(StorageError):
            data = store.cat(cid)
    finally:
        store.close()
    if output is not None:
        output.write_bytes(data)
    else:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()


@ipfs_app.command("cid")
def cid_cmd(
    file: str = typer.Argument(..., help="File ('-' for stdin)."),
    json_out: bool = typer.Option(False, "--json", help='Print {"cid": ...}.'),
) -> None:
    """Compute the CID a daemon would give a file, without storing it."""
    cid = compute_cid(_read_input(file)) if file == "-" else _file_cid(file)
    if json_out:
        print_json({"cid": cid})
    else:
        typer.echo(cid)


@ipfs_app.command("pin")
def pin_cmd(cid: str = typer.Argument(..., help="CID to pin.")) -> None:
    """Pin a blob that is already stored."""
    store = _store()
    try:
        with errors_as_exit(StorageError):
            try:
                store.pin(cid)
            except RemotePinPendingError as exc:
                err_console.print(f"[yellow]{exc}[/]")
                raise typer.Exit(EXIT_PENDING) from None
    finally:
        store.close()
    console.print(f"pinned {cid}")


@ipfs_app.command("unpin")
def unpin_cmd(cid: str = typer.Argument(..., help="CID to unpin.")) -> None:
    """Release a pin (no-op if not pinned)."""
    store = _store()
    try:
        with errors_as_exit(StorageError):
            store.unpin(cid)
    finally:
        store.close()
    console.print(f"unpinned {cid}")


@ipfs_app.command("pins")
def pins_cmd(json_out: bool = typer.Option(False, "--json", help="Print a JSON list.")) -> None:
    """List pinned CIDs."""
    store = _store()
    try:
        with errors_as_exit(StorageError):
            pins = store.pins()
    finally:
        store.close()
    if json_out:
        print_json(pins)
    else:
        for cid in pins:
            typer.echo(cid)


@ipfs_app.command("flush")
def flush_cmd(json_out: bool = typer.Option(False, "--json", help="Print the result as JSON.")) -> None:
    """Push blobs spooled locally during an IPFS outage to the daemon."""
    store = _store()
    try:
        if not isinstance(store, ResilientStore):
            fail(
                "no IPFS daemon configured (ipfs.api_url): blobs live in the embedded store, nothing to flush"
            )
        with errors_as_exit(StorageError):
            result = store.flush()
    finally:
        store.close()
    if json_out:
        print_json(result.model_dump())
    else:
        console.print(
            f"pushed {len(result.pushed)}, still pending {len(result.pending)}, errors {len(result.errors)}"
        )
        for cid, err in result.errors.items():
            console.print(f"  [red]{cid}[/]: {err}")
    if not result.complete:
        raise typer.Exit(EXIT_PENDING)


@ipfs_app.command("daemon")
def daemon_cmd(
    repo: Path | None = typer.Option(None, "--repo", help="IPFS repository (default: <data_dir>/jsipfs)."),
    port: int = typer.Option(5001, "--port", help="API port on 127.0.0.1."),
    gateway_port: int | None = typer.Option(None, "--gateway-port", help="Gateway port (default: any free)."),
) -> None:
    """Run a local js-ipfs daemon (offline, 127.0.0.1) in the foreground until Ctrl-C or SIGTERM."""
    repo_dir = repo or settings().data_dir / "jsipfs"
    stop = {"now": False}

    def _on_signal(_signum: int, _frame: object) -> None:
        stop["now"] = True

    # Handlers go in before the child starts, so a signal at any moment still stops the child.
    previous = {sig: signal.signal(sig, _on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    daemon: JsIpfsDaemon | None = None
    try:
        with errors_as_exit(JsIpfsError):
            daemon = JsIpfsDaemon(repo_dir, api_port=port, gateway_port=gateway_port)
            daemon.start()
        console.print(
            f"js-ipfs API at {daemon.api_url} (repo {repo_dir}); set TRUSTNODE_IPFS__API_URL to use it"
        )
        sys.stdout.flush()
        while not stop["now"] and daemon.running:
            time.sleep(0.2)
        if not stop["now"]:
            fail(f"the js-ipfs daemon exited; see {daemon.log_path}")
    finally:
        if daemon is not None:
            daemon.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    console.print("js-ipfs daemon stopped")


def register(app: typer.Typer) -> None:
    app.add_typer(ipfs_app, name="ipfs")
