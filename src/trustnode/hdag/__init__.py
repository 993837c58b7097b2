"""HDAG decomposition (SPEC 2): validation, the offline decomposer, importers, exporters.

Import submodules directly for the full API; `decompose` is the one entry point.
"""
