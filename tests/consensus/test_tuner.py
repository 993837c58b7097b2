"""The tuner returns a setting that meets every constraint, and nothing cheaper on its grid does."""

from __future__ import annotations

import itertools
import math

import pytest

from trustnode.consensus.dials import EconomicParams, check_dials, economic_report
from trustnode.consensus.trace import ConsensusParams, TierSetting, TraceShape
from trustnode.consensus.tuner import TuneError, TuneRequest, tune, tune_statistical

SMALL = TuneRequest(
    shape=TraceShape(computer=3, llm=2, human=1),
    k_max=7,
    tau_grid=[5100, 6000, 7500],
    beta_step_bps=500,
    r_grid=[1.0, 2.0, 3.0, 4.0, 6.0, 8.0],
    p_grid=[2.0, 4.0, 8.0],
    p_slash_grid=[0.2, 0.4, 0.6, 0.8, 1.0],
    max_honest_tail=1e-3,
    max_malicious_tail=1e-3,
    min_malicious_loss=0.8,
    eps_target=1e-4,
)


def _stat_ok(req: TuneRequest, cons: ConsensusParams) -> bool:
    rep = check_dials(
        EconomicParams(lam=req.lam, T=req.T), cons, req.shape, req.eps_target
    ).statistical_report
    return rep.s1_ok and rep.exact_ok and cons.beta_bps >= req.min_beta_bps


def test_result_meets_every_constraint() -> None:
    res = tune(SMALL)
    cons = res.statistical.consensus
    econ = res.economic.economic
    rep = check_dials(econ, cons, SMALL.shape, SMALL.eps_target)
    assert rep.all_ok
    assert rep.statistical_report.horizon_failure_exact_bound <= SMALL.eps_target
    assert math.log(10) * res.economic.honest_tail_log10 <= math.log(SMALL.max_honest_tail)
    assert math.log(10) * res.economic.malicious_tail_log10 <= math.log(SMALL.max_malicious_tail)
    assert econ.P * econ.p_min >= SMALL.min_malicious_loss
    assert res.seats == cons.seats(SMALL.shape)
    assert res.cost_per_trace == res.seats * econ.R


def test_no_cheaper_setting_on_the_grid() -> None:
    res = tune(SMALL)
    counts = [SMALL.shape.computer, SMALL.shape.llm, SMALL.shape.human]
    for ks in itertools.product(range(1, SMALL.k_max + 1), repeat=3):
        seats = sum(k * c for k, c in zip(ks, counts, strict=True))
        if seats >= res.seats:
            continue
        for tau in SMALL.tau_grid:
            for beta in range(SMALL.min_beta_bps, 10001, SMALL.beta_step_bps):
                cons = ConsensusParams(
                    computer=TierSetting(k=ks[0], weight=1, eps=0.0),
                    llm=TierSetting(k=ks[1], weight=2, eps=0.05),
                    human=TierSetting(k=ks[2], weight=3, eps=0.3, rho=0.1),
                    tau_bps=tau,
                    beta_bps=beta,
                )
                assert not _stat_ok(SMALL, cons), (ks, tau, beta)
    for r in SMALL.r_grid:
        if r >= res.reward:
            continue
        for pen, (p_min, p_max) in itertools.product(
            SMALL.p_grid, itertools.combinations(SMALL.p_slash_grid, 2)
        ):
            e = economic_report(EconomicParams(R=r, P=pen, p_min=p_min, p_max=p_max, eps_h=0.3))
            ok = (
                e.economic_dial_ok
                and pen * p_min >= SMALL.min_malicious_loss
                and e.honest_tail_exponent <= math.log(SMALL.max_honest_tail)
                and e.malicious_tail_exponent <= math.log(SMALL.max_malicious_tail)
            )
            assert not ok, (r, pen, p_min, p_max)


def test_false_accept_cap_raises_the_price() -> None:
    req = SMALL.model_copy(
        update={"shape": TraceShape(computer=3, llm=2, human=0), "eps_target": 0.01, "lam": 1.0, "T": 1.0}
    )
    free, _ = tune_statistical(req)
    assert free.false_accept > 0.5
    capped, _ = tune_statistical(req.model_copy(update={"max_false_accept": 0.5}))
    assert capped.false_accept <= 0.5
    assert capped.consensus.false_accept_probability(req.shape, 1) == pytest.approx(capped.false_accept)
    assert capped.seats > free.seats


def test_impossible_request_is_a_clear_error() -> None:
    with pytest.raises(TuneError, match="k_t, tau, beta"):
        tune(SMALL.model_copy(update={"k_max": 1}))
    with pytest.raises(TuneError, match="R, P"):
        tune(SMALL.model_copy(update={"r_grid": [0.5]}))
