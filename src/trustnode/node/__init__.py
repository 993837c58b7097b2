"""Node services: the provider pipeline, the auditor daemon and user queries.

They compose the capabilities (hdag, storage, chain, audit) and are what the API and the
CLI call.
"""
