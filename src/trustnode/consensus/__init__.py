"""Consensus theory and economics of TRUST: exact probabilities, bounds, dials, tuner,
the protocol's reference rules, and agent simulations (SPEC 5)."""

from trustnode.consensus.dials import (
    DialsReport,
    EconomicParams,
    EconomicReport,
    StatisticalReport,
    check_dials,
    economic_report,
    statistical_report,
)
from trustnode.consensus.probability import (
    failure_report,
    log_chernoff_bound,
    log_hoeffding_bound,
    segment_pass_probability,
    trace_moments,
    weighted_bernoulli_pmf,
)
from trustnode.consensus.trace import ConsensusParams, TierSetting, TraceShape
from trustnode.consensus.tuner import TuneError, TuneRequest, TuneResult, tune

__all__ = [
    "ConsensusParams",
    "DialsReport",
    "EconomicParams",
    "EconomicReport",
    "StatisticalReport",
    "TierSetting",
    "TraceShape",
    "TuneError",
    "TuneRequest",
    "TuneResult",
    "check_dials",
    "economic_report",
    "failure_report",
    "log_chernoff_bound",
    "log_hoeffding_bound",
    "segment_pass_probability",
    "statistical_report",
    "trace_moments",
    "tune",
    "weighted_bernoulli_pmf",
]
