"""The node's web pages: public dashboard and the human audit form (see `pages`)."""

from trustnode.api.web.pages import WebPages, register_web

__all__ = ["WebPages", "register_web"]
