"""Economic layer and Theorem D.1 (SPEC 5, paper 3.1 and D.2): the two dials and the tails.

The per-segment pay-off of a human seat is X in {R, 0, -P}: R for a vote that agrees with
the decided verdict, -P when a disagreeing vote is slashed (probability p_slash(r)), 0 when
it is not.  From that:

* mu_H(r) = (1 - eps_H) R - eps_H P p_slash(r); mu_min = min_r mu_H(r) = mu_H at p_slash = p_max;
* sigma_H^2 = sup_r Var[X] (D.12), a concave quadratic in p_slash maximised exactly over
  [p_min, p_max] (the range p_slash(r) takes for r in [0, 1]);
* b = R (D.11); honest tail exp(-lambda T mu_min^2 / (2 sigma_H^2 + 2/3 b mu_min)) (D.13);
  malicious tail exp(-lambda T (delta P)^2 / (2 sigma_H^2 + 2/3 b delta P)) (D.14);
* a malicious seat always disagrees, so its reputation decays to 0 and its expected pay-off
  per segment is -P p_slash(0) = -P p_max (the paper's -4.0); at worst (r = 1) it is -P p_min.
"""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict, Field, model_validator

from trustnode.consensus.probability import failure_report, trace_moments, w_beta
from trustnode.consensus.trace import ConsensusParams, TraceShape


class EconomicParams(BaseModel):
    """Real-valued economic parameters of Theorem D.1 (token units, probabilities in [0, 1])."""

    model_config = ConfigDict(frozen=True)

    R: float = Field(default=6.0, gt=0, description="reward per agreeing vote")
    P: float = Field(default=8.0, gt=0, description="penalty per slashed vote")
    p_min: float = Field(default=0.2, ge=0, le=1)
    p_max: float = Field(default=0.5, ge=0, le=1)
    delta: float = Field(default=0.2, gt=0, lt=1, description="design constant: min loss per malicious seat")
    lam: float = Field(default=60.0, gt=0, description="segment intensity (segments per unit time)")
    T: float = Field(default=24.0, gt=0, description="time horizon")
    eps_h: float = Field(default=0.30, ge=0, lt=1, description="honest human error rate")

    @model_validator(mode="after")
    def _ordered(self) -> EconomicParams:
        if self.p_min > self.p_max:
            raise ValueError("p_min must not exceed p_max")
        return self

    def p_slash(self, r: float) -> float:
        """p_slash(r) = p_min + (p_max - p_min)(1 - r)."""
        return self.p_min + (self.p_max - self.p_min) * (1.0 - r)

    def mu_h_at(self, p_slash: float) -> float:
        """Expected honest pay-off at a given slash probability (D.10)."""
        return (1.0 - self.eps_h) * self.R - self.eps_h * self.P * p_slash

    def var_h_at(self, p_slash: float) -> float:
        """Var[X] at a given slash probability (the bracket of D.12)."""
        second = (1.0 - self.eps_h) * self.R**2 + self.eps_h * p_slash * self.P**2
        return second - self.mu_h_at(p_slash) ** 2

    @property
    def mu_min(self) -> float:
        """min_r mu_H(r): mu_H is decreasing in p_slash, so it is taken at p_max."""
        return self.mu_h_at(self.p_max)

    @property
    def sigma_h_sq(self) -> float:
        """sup over r of Var[X]: maximise the concave quadratic in p on [p_min, p_max]."""
        candidates = [self.p_min, self.p_max]
        if self.eps_h > 0:
            vertex = ((1.0 - self.eps_h) * self.R + self.P / 2.0) / (self.eps_h * self.P)
            if self.p_min <= vertex <= self.p_max:
                candidates.append(vertex)
        return max(self.var_h_at(p) for p in candidates)

    @property
    def b(self) -> float:
        """Range bound of the centred increment, b = R (D.11)."""
        return self.R

    @property
    def n_segments(self) -> float:
        """Expected segments in the horizon, lambda T."""
        return self.lam * self.T

    @property
    def alpha(self) -> float:
        return self.P * self.p_max / (self.R + self.P * self.p_max)


class EconomicReport(BaseModel):
    """Everything `trustnode params check` prints about the economic side."""

    mu_min: float
    sigma_h_sq: float
    b: float
    honest_tail_exponent: float = Field(description="ln of the D.13 bound")
    malicious_tail_exponent: float = Field(description="ln of the D.14 bound")
    honest_tail_log10: float
    malicious_tail_log10: float
    malicious_expected_loss: float = Field(description="E[X_mal] per segment at reputation 0 (-P p_max)")
    malicious_expected_loss_worst: float = Field(description="E[X_mal] at reputation 1 (-P p_min)")
    malicious_variance: float
    malicious_horizon_loss_bound: float = Field(description="E[U_mal(T)] <= -lambda T delta P")
    alpha: float
    reward_lower_bound: float = Field(description="eps_H/(1-eps_H) P p_max; E1 needs R above it")
    p_min_lower_bound: float = Field(description="delta/(1-alpha); E1 needs p_min at least this")
    e1_reward_ok: bool
    e1_p_min_ok: bool
    mu_min_positive: bool
    economic_dial_ok: bool


def economic_report(params: EconomicParams) -> EconomicReport:
    """Evaluate the economic dial (E1) and both Bernstein tails of Theorem D.1."""
    mu = params.mu_min
    sig = params.sigma_h_sq
    b = params.b
    dp = params.delta * params.P
    n = params.n_segments
    honest = -n * mu * mu / (2.0 * sig + (2.0 / 3.0) * b * mu) if mu > 0 else 0.0
    malicious = -n * dp * dp / (2.0 * sig + (2.0 / 3.0) * b * dp)
    p_mal = params.p_max
    reward_lb = params.eps_h / (1.0 - params.eps_h) * params.P * params.p_max
    p_min_lb = params.delta / (1.0 - params.alpha)
    e1_r = reward_lb < params.R
    e1_p = params.p_min >= p_min_lb
    return EconomicReport(
        mu_min=mu,
        sigma_h_sq=sig,
        b=b,
        honest_tail_exponent=honest,
        malicious_tail_exponent=malicious,
        honest_tail_log10=honest / math.log(10),
        malicious_tail_log10=malicious / math.log(10),
        malicious_expected_loss=-params.P * p_mal,
        malicious_expected_loss_worst=-params.P * params.p_min,
        malicious_variance=params.P**2 * p_mal * (1.0 - p_mal),
        malicious_horizon_loss_bound=-n * dp,
        alpha=params.alpha,
        reward_lower_bound=reward_lb,
        p_min_lower_bound=p_min_lb,
        e1_reward_ok=e1_r,
        e1_p_min_ok=e1_p,
        mu_min_positive=mu > 0,
        economic_dial_ok=e1_r and e1_p and mu > 0,
    )


class StatisticalReport(BaseModel):
    """The statistical dial (S1) for one trace shape, with the exact value beside it."""

    mu_vote: float
    sigma_vote_sq: float
    sigma_max_sq: float
    w_beta: float
    margin: float = Field(description="mu_vote - W_beta")
    s1_required_margin: float = Field(description="sqrt(0.5 sigma_vote^2 ln(lambda T / eps_target))")
    s1_ok: bool
    hoeffding_required_margin: float = Field(
        description="the same with sigma_max^2, the range term Hoeffding actually needs"
    )
    hoeffding_ok: bool
    trace_failure_exact: float
    trace_failure_hoeffding: float
    trace_failure_chernoff: float
    horizon_failure_exact_bound: float = Field(description="lambda T * exact per-trace failure (union bound)")
    eps_target: float
    exact_ok: bool


def statistical_report(
    consensus: ConsensusParams, shape: TraceShape, eps_target: float, lam: float, T: float
) -> StatisticalReport:
    """Evaluate S1 for a trace of the given shape: the paper's form, Hoeffding's and the exact value."""
    if not 0 < eps_target < 1:
        raise ValueError("eps_target must be in (0, 1)")
    p, w = consensus.segment_arrays(shape)
    mom = trace_moments(p, w)
    wb = w_beta(mom.total_weight, consensus.beta_bps)
    log_term = math.log(lam * T / eps_target)
    need = math.sqrt(max(0.0, 0.5 * mom.sigma_vote_sq * log_term))
    need_h = math.sqrt(max(0.0, 0.5 * mom.sigma_max_sq * log_term))
    rep = failure_report(p, w, consensus.beta_bps)
    horizon = lam * T * rep.exact
    return StatisticalReport(
        mu_vote=mom.mu_vote,
        sigma_vote_sq=mom.sigma_vote_sq,
        sigma_max_sq=mom.sigma_max_sq,
        w_beta=wb,
        margin=mom.mu_vote - wb,
        s1_required_margin=need,
        s1_ok=mom.mu_vote - wb >= need,
        hoeffding_required_margin=need_h,
        hoeffding_ok=mom.mu_vote - wb >= need_h,
        trace_failure_exact=rep.exact,
        trace_failure_hoeffding=rep.hoeffding,
        trace_failure_chernoff=rep.chernoff,
        horizon_failure_exact_bound=horizon,
        eps_target=eps_target,
        exact_ok=horizon <= eps_target,
    )


class DialsReport(BaseModel):
    """Theorem D.1 for one full parameter setting."""

    economic: EconomicParams
    consensus: ConsensusParams
    shape: TraceShape
    economic_report: EconomicReport
    statistical_report: StatisticalReport
    all_ok: bool


def check_dials(
    economic: EconomicParams, consensus: ConsensusParams, shape: TraceShape, eps_target: float
) -> DialsReport:
    """Both dials and both tails; ``all_ok`` needs E1, mu_min > 0, S1 and the exact failure target."""
    er = economic_report(economic)
    sr = statistical_report(consensus, shape, eps_target, economic.lam, economic.T)
    return DialsReport(
        economic=economic,
        consensus=consensus,
        shape=shape,
        economic_report=er,
        statistical_report=sr,
        all_ok=er.economic_dial_ok and sr.s1_ok and sr.exact_ok,
    )
