"""Gold canary segments written by the node (issue 15): templates and the generator."""

from trustnode.canary.generator import Canary, SegmentShape, make_canaries, make_canary
from trustnode.canary.templates import Mutation

__all__ = ["Canary", "Mutation", "SegmentShape", "make_canaries", "make_canary"]
