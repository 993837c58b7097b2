"""The provider API of a local network as its users call it (`LocalCluster` mixes it in): submit
a trace, read its view, wait for verdicts. Plain HTTP with the cluster's API key, as any client."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import httpx


class ProviderAPIClient:
    """Needs `api_url` and `cfg.api_key` (the cluster's)."""

    if TYPE_CHECKING:

        @property
        def api_url(self) -> str: ...

        cfg: Any

    def submit(self, trace: dict[str, Any]) -> str:
        r = httpx.post(
            f"{self.api_url}/v1/traces",
            json=trace,
            headers={"Authorization": f"Bearer {self.cfg.api_key}"},
            timeout=30,
        )
        if r.status_code != 202:
            raise RuntimeError(f"submission refused: {r.status_code} {r.text}")
        return str(r.json()["trace_id"])

    def trace(self, trace_id: str) -> dict[str, Any]:
        r = httpx.get(
            f"{self.api_url}/v1/traces/{trace_id}",
            headers={"Authorization": f"Bearer {self.cfg.api_key}"},
            timeout=30,
        )
        r.raise_for_status()
        result: dict[str, Any] = r.json()
        return result

    def wait(
        self, trace_ids: list[str], timeout_s: float = 180, on_update: Any = None
    ) -> dict[str, dict[str, Any]]:
        """Poll until every trace is done or failed; `on_update(trace_id, view)` sees progress."""
        deadline = time.monotonic() + timeout_s
        views: dict[str, dict[str, Any]] = {}
        while True:
            for tid in trace_ids:
                try:
                    views[tid] = self.trace(tid)
                except httpx.HTTPError:
                    continue  # the API may be restarting
                if on_update is not None:
                    on_update(tid, views[tid])
            if len(views) == len(trace_ids) and all(
                v["status"] in ("done", "failed") for v in views.values()
            ):
                return views
            if time.monotonic() > deadline:
                stuck = {t: v.get("stage") for t, v in views.items() if v["status"] not in ("done", "failed")}
                raise TimeoutError(f"traces not finished after {timeout_s}s: {stuck}")
            time.sleep(0.5)
