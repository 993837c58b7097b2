"""Compatibility name: the claim checker lives in `trustnode.audit.claims`.

Kept only because code outside the audit engine (`audit/llm_judge/standin.py`) still
imports `bind_from` and `extract_claims` from here; new code imports the package.
"""

from trustnode.audit.claims import bind_from, extract_claims

__all__ = ["bind_from", "extract_claims"]
