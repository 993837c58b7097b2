#!/usr/bin/env python3
"""Storage benchmark: add/cat throughput of LocalStore and an IPFS daemon, and the cost of encrypting segments.

    .venv/bin/python scripts/bench_storage.py [--json] [--api-url URL] [--mib 16] [--no-daemon]

Without --api-url a js-ipfs daemon is started in a temporary directory (and stopped after).
Throughput is MB/s (10^6 bytes per second) over random (incompressible) data.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from trustnode.storage.blobstore import BlobStore, KuboStore, LocalStore
from trustnode.storage.crypto import OVERHEAD, decrypt_segment, encrypt_segment, new_session_nonce
from trustnode.storage.envelopes import ENVELOPE_BYTES, EncryptionKeyPair, open_key, seal_key
from trustnode.storage.jsipfs import JsIpfsDaemon
from trustnode.storage.merkle import SegmentCommitment, SegmentMerkleTree
from trustnode.storage.unixfs import compute_cid


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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--api-url", help="benchmark this daemon instead of starting js-ipfs")
    ap.add_argument("--no-daemon", action="store_true", help="skip the daemon figures")
    ap.add_argument("--mib", type=int, default=16, help="MiB moved per throughput run")
    args = ap.parse_args(argv)

    results: dict[str, Any] = {"cpu_count": os.cpu_count()}
    with tempfile.TemporaryDirectory(prefix="bench-storage-") as tmp:
        root = Path(tmp)
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
            finally:
                if daemon is not None:
                    daemon.stop()
    results["crypto"] = bench_crypto([512, 2048, 16384], auditors=3)
    results["merkle"] = bench_merkle(32)

    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print(f"cpus: {results['cpu_count']}")
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
