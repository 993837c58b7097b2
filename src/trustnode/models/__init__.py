"""Data models shared by every capability: the bottom layer of the dependency graph."""
