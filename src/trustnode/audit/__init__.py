"""Auditor backends (computer, structural, LLM judge, human queue) and their evaluation."""
