"""REST API and web pages (FastAPI)."""
