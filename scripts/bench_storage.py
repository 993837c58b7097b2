#!/usr/bin/env python3
"""Storage benchmark: add/cat throughput of LocalStore and an IPFS daemon, the cost of encrypting
segments, and the peak memory of fetching a large CID.

    .venv/bin/python scripts/bench_storage.py [--json] [--api-url URL] [--mib 16] [--no-daemon]
    .venv/bin/python scripts/bench_storage.py --fetch-mib 256 --fetch-only [--json]

Without --api-url a js-ipfs daemon is started in a temporary directory (and stopped after).
Throughput is MB/s (10^6 bytes per second) over random (incompressible) data.

The fetch figure adds a file of `--fetch-mib` MiB of zeros to the daemon, then reads it back in
a fresh child process per mode and reports that process's peak RSS growth (ru_maxrss):
`unbounded` is what the node did before the cap (read the whole answer, then re-import it to
verify), `capped` is `KuboStore.cat` with the default limit (refused after the root block), and
`streamed` is `KuboStore.cat` with the limit raised to the blob's size.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from trustnode.storage.blobstore import BlobStore, BlobTooLargeError, KuboStore, LocalStore
from trustnode.storage.crypto import OVERHEAD, decrypt_segment, encrypt_segment, new_session_nonce
from trustnode.storage.envelopes import ENVELOPE_BYTES, EncryptionKeyPair, open_key, seal_key
from trustnode.storage.jsipfs import JsIpfsDaemon
from trustnode.storage.merkle import SegmentCommitment, SegmentMerkleTree
from trustnode.storage.unixfs import compute_cid, import_bytes


def _mbps(nbytes: int, seconds: float) -> float:
    return round(nbytes / seconds / 1e6, 2) if seconds > 0 else float("inf")


def bench_store(store: BlobStore, total_mib: int, blob_mib: int) -> dict[str, Any]:
    """Add then cat `total_mib` of random data in blobs of `blob_mib`."""
    blobs = [os.urandom(blob_mib * 1024 * 1024) for _ in range(max(1, total_mib // blob_mib))]
    total = sum(len(b) for b in blobs)
    t0 = time.perf_counter()
    cids = [store.add(b) for b in blobs]
    t_add = time.perf_counter() - t0
    t0 = time.perf_counter()
    for cid, b in zip(cids, blobs, strict=True):
        if store.cat(cid) != b:
            raise RuntimeError(f"cat({cid}) returned different bytes")
    t_cat = time.perf_counter() - t0
    return {
        "blob_mib": blob_mib,
        "blobs": len(blobs),
        "add_mb_s": _mbps(total, t_add),
        "cat_mb_s": _mbps(total, t_cat),
    }


def bench_small_blobs(store: BlobStore, n: int, size: int) -> dict[str, Any]:
    """Per-operation latency for segment-sized blobs (what the node pins most)."""
    blobs = [os.urandom(size) for _ in range(n)]
    t0 = time.perf_counter()
    cids = [store.add(b) for b in blobs]
    t_add = time.perf_counter() - t0
    t0 = time.perf_counter()
    for cid in cids:
        store.cat(cid)
    t_cat = time.perf_counter() - t0
    return {
        "blob_bytes": size,
        "n": n,
        "add_ms": round(t_add / n * 1e3, 3),
        "cat_ms": round(t_cat / n * 1e3, 3),
    }


def _timeit(fn: Callable[[], object], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def bench_crypto(sizes: list[int], auditors: int, repeat: int = 200) -> list[dict[str, Any]]:
    """Per segment: encrypt, decrypt, seal the key to each auditor, open one envelope; bytes added."""
    nonce = new_session_nonce()
    kp = EncryptionKeyPair.generate()
    out = []
    for size in sizes:
        pt = os.urandom(size)
        enc = encrypt_segment(pt, chain_id=31337, session_key=nonce, segment_index=3)
        env = seal_key(enc.key, kp.public_key)
        t_enc = _timeit(
            partial(encrypt_segment, pt, chain_id=31337, session_key=nonce, segment_index=3), repeat
        )
        t_dec = _timeit(
            partial(decrypt_segment, enc.blob, enc.key, chain_id=31337, session_key=nonce, segment_index=3),
            repeat,
        )
        t_seal = _timeit(partial(seal_key, enc.key, kp.public_key), repeat)
        t_open = _timeit(partial(open_key, env, kp.private_key), repeat)
        t_cid = _timeit(partial(compute_cid, enc.blob), repeat)
        out.append(
            {
                "segment_bytes": size,
                "encrypt_us": round(t_enc * 1e6, 1),
                "decrypt_us": round(t_dec * 1e6, 1),
                "seal_key_us": round(t_seal * 1e6, 1),
                "open_envelope_us": round(t_open * 1e6, 1),
                "cid_us": round(t_cid * 1e6, 1),
                f"total_provider_us_k{auditors}": round((t_enc + t_cid + auditors * t_seal) * 1e6, 1),
                "ciphertext_overhead_bytes": OVERHEAD,
                "envelope_bytes": ENVELOPE_BYTES,
                f"bytes_overhead_pct_k{auditors}": round(
                    100 * (OVERHEAD + auditors * ENVELOPE_BYTES) / size, 2
                ),
            }
        )
    return out


def bench_merkle(n: int, repeat: int = 20) -> dict[str, Any]:
    segs = [
        SegmentCommitment(index=i, cid=compute_cid(os.urandom(8)), tier=i % 3, weight=10) for i in range(n)
    ]
    t_build = _timeit(lambda: SegmentMerkleTree(segs), repeat)
    tree = SegmentMerkleTree(segs)
    t_proofs = _timeit(lambda: [tree.proof(i) for i in range(n)], repeat)
    return {"segments": n, "build_ms": round(t_build * 1e3, 3), "all_proofs_ms": round(t_proofs * 1e3, 3)}


def _maxrss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def fetch_child(mode: str, url: str, cid: str, size: int) -> dict[str, Any]:
    """One read of `cid` in this (fresh) process; peak RSS growth over the read."""
    import httpx

    base = _maxrss_mib()
    t0 = time.perf_counter()
    outcome = "ok"
    if mode == "unbounded":  # the node's read before the cap: whole body, copy, re-import to verify
        resp = httpx.post(f"{url}/api/v0/cat", params={"arg": cid}, timeout=600)
        data = resp.content
        if import_bytes(data).cid != cid:
            outcome = "mismatch"
        got = len(data)
    else:
        store = KuboStore(
            url, timeout_s=600, max_fetch_bytes=size if mode == "streamed" else 16 * 1024 * 1024
        )
        try:
            got = len(store.cat(cid))
        except BlobTooLargeError:
            outcome, got = "refused (BlobTooLargeError)", 0
    return {
        "mode": mode,
        "outcome": outcome,
        "bytes": got,
        "seconds": round(time.perf_counter() - t0, 2),
        "peak_growth_mib": round(_maxrss_mib() - base, 1),
    }


def bench_fetch(url: str, mib: int, workdir: Path) -> dict[str, Any]:
    """Add `mib` MiB of zeros, then read it in a child process per mode (see the module docstring)."""
    path = workdir / "zeros.bin"
    with open(path, "wb") as fh:
        fh.truncate(mib * 1024 * 1024)
    store = KuboStore(url, timeout_s=600)
    t0 = time.perf_counter()
    cid = store.add_file(path, pin=True)
    add_s = round(time.perf_counter() - t0, 1)
    path.unlink()
    rows = []
    for mode in ("unbounded", "capped", "streamed"):
        print(f"fetch {mib} MiB: {mode} ...", file=sys.stderr, flush=True)
        res = subprocess.run(
            [sys.executable, __file__, "--child", mode, url, cid, str(mib * 1024 * 1024)],
            capture_output=True,
            text=True,
            timeout=1200,
            check=True,
        )
        rows.append(json.loads(res.stdout))
    store.unpin(cid)
    return {"mib": mib, "cid": cid, "add_s": add_s, "rows": rows}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        mode, url, cid, size = argv[1:5]
        print(json.dumps(fetch_child(mode, url, cid, int(size))))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--api-url", help="benchmark this daemon instead of starting js-ipfs")
    ap.add_argument("--no-daemon", action="store_true", help="skip the daemon figures")
    ap.add_argument("--mib", type=int, default=16, help="MiB moved per throughput run")
    ap.add_argument("--fetch-mib", type=int, default=0, help="also measure fetching a CID of this many MiB")
    ap.add_argument("--fetch-only", action="store_true", help="only the fetch figure (needs --fetch-mib)")
    args = ap.parse_args(argv)

    results: dict[str, Any] = {"cpu_count": os.cpu_count()}
    with tempfile.TemporaryDirectory(prefix="bench-storage-") as tmp:
        root = Path(tmp)
        if args.fetch_only:
            if not args.fetch_mib or args.no_daemon:
                ap.error("--fetch-only needs --fetch-mib and a daemon")
            daemon = None if args.api_url else JsIpfsDaemon(root / "ipfs").start()
            try:
                results["fetch"] = bench_fetch(args.api_url or daemon.api_url, args.fetch_mib, root)  # type: ignore[union-attr]
            finally:
                if daemon is not None:
                    daemon.stop()
            _report(results, args.json)
            return 0
        results["local_fsync"] = [bench_store(LocalStore(root / "l1"), args.mib, m) for m in (1, 8)]
        results["local_nofsync"] = [
            bench_store(LocalStore(root / "l2", fsync=False), args.mib, m) for m in (1, 8)
        ]
        results["local_small"] = bench_small_blobs(LocalStore(root / "l3"), 200, 2048)
        if not args.no_daemon:
            daemon = None
            url = args.api_url
            try:
                if url is None:
                    daemon = JsIpfsDaemon(root / "ipfs")
                    t0 = time.perf_counter()
                    daemon.start()
                    results["daemon_start_s"] = round(time.perf_counter() - t0, 2)
                    url = daemon.api_url
                store = KuboStore(url, timeout_s=120)
                results["daemon_url"] = url
                results["daemon_version"] = store.version().get("Version")
                results["daemon"] = [bench_store(store, args.mib, m) for m in (1, 8)]
                results["daemon_small"] = bench_small_blobs(store, 100, 2048)
                store.close()
                if args.fetch_mib:
                    results["fetch"] = bench_fetch(url, args.fetch_mib, root)
            finally:
                if daemon is not None:
                    daemon.stop()
    results["crypto"] = bench_crypto([512, 2048, 16384], auditors=3)
    results["merkle"] = bench_merkle(32)
    _report(results, args.json)
    return 0


def _report(results: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print(json.dumps(results, indent=2))
        return
    print(f"cpus: {results['cpu_count']}")
    if "fetch" in results:
        f = results["fetch"]
        for row in f["rows"]:
            print(
                f"fetch {f['mib']} MiB CID, {row['mode']:<9}: {row['outcome']}, peak RSS +{row['peak_growth_mib']} MiB, "
                f"{row['seconds']} s"
            )
    if "crypto" not in results:
        return
    for key in ("local_fsync", "local_nofsync", "daemon"):
        for row in results.get(key, []):
            print(
                f"{key:<14} blobs of {row['blob_mib']} MiB: add {row['add_mb_s']} MB/s, cat {row['cat_mb_s']} MB/s"
            )
    for key in ("local_small", "daemon_small"):
        if key in results:
            r = results[key]
            print(f"{key:<14} {r['blob_bytes']} B blobs: add {r['add_ms']} ms, cat {r['cat_ms']} ms each")
    if "daemon_start_s" in results:
        print(f"js-ipfs start: {results['daemon_start_s']} s")
    for row in results["crypto"]:
        print(
            f"segment {row['segment_bytes']:>6} B: encrypt {row['encrypt_us']} us, decrypt {row['decrypt_us']} us, "
            f"seal {row['seal_key_us']} us, open {row['open_envelope_us']} us, cid {row['cid_us']} us; "
            f"+{row['ciphertext_overhead_bytes']} B ciphertext, +{row['envelope_bytes']} B per envelope"
        )
    m = results["merkle"]
    print(
        f"merkle over {m['segments']} segments: build {m['build_ms']} ms, all proofs {m['all_proofs_ms']} ms"
    )


if __name__ == "__main__":
    sys.exit(main())
