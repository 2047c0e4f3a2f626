"""SFSR, SFSR-L and USLP on simulated instances, and cbmai_error_rate."""

from __future__ import annotations

import functools
from fractions import Fraction

import joblib
import numpy as np
import pytest
from cbmai_testlib import random_problem, table_1_problem
from hypothesis import given, settings
from hypothesis import strategies as st

import allocopt
from allocopt._rng import replication_generator
from allocopt.algorithms import cbmai_error_rate, sfsr, sfsr_schedule, uslp

EASY = allocopt.CBMAIProblem([0.9, 0.5, 0.2, 0.1], [[1.5, 0.5, 0.2, 0.9]], [1.0])  # I* = {0, 1}, value 0.7


def test_schedule_by_hand():
    # (7) for K = K0 = 4, L = 1, N = 100: Psi = 1/2 + 1/2 + 1/2 + 1/3 = 11/6 and
    # n_k = ceil(96 / (11/6 (5 - k))) = ceil(13.09), ceil(17.45), ceil(26.18) = 14, 18, 27.
    schedule = sfsr_schedule(4, 4, 1, 100)
    assert schedule.psi == pytest.approx(11 / 6)
    assert schedule.cumulative.tolist() == [14, 18, 27]
    assert schedule.per_round.tolist() == [14, 4, 9]


@settings(max_examples=300, deadline=None)
@given(n_arms=st.integers(1, 30), n_costs=st.integers(1, 5), unknown_share=st.floats(0.0, 1.0),
       extra=st.integers(1, 100_000))
def test_schedule_worst_case_never_exceeds_the_budget(n_arms, n_costs, unknown_share, extra):
    # The proof of Proposition 1 (Appendix B.2, (17)): the total is at most sum_{k=K-K0+L+1}^{K+L} n_k with
    # n_k = n_{K-1} for k > K-1; computed here with exact fractions.
    n_unknown = max(1, round(unknown_share * n_arms))
    budget = n_unknown + extra
    schedule = sfsr_schedule(n_arms, n_unknown, n_costs, budget)
    psi = sum(Fraction(1, max(2, j - n_costs)) for j in range(1, n_unknown + 1))
    cumulative = [-(-(budget - n_unknown) // (psi * (n_arms + 1 - k))) for k in range(1, n_arms)]
    assert schedule.cumulative.tolist() == cumulative
    if n_arms > 1:
        extended = cumulative + [cumulative[-1]] * (n_costs + 1)  # n_k for k = 1..K+L
        assert sum(extended[n_arms - n_unknown + n_costs:]) <= budget


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_arms=st.integers(1, 7), n_costs=st.integers(1, 3),
       unknown_share=st.floats(0.0, 1.0), extra=st.integers(1, 3000), score=st.sampled_from(["iv", "lagrangian"]))
def test_proposition_1_sfsr_never_pulls_more_than_the_budget(seed, n_arms, n_costs, unknown_share, extra, score):
    rng = np.random.default_rng(seed)
    base = random_problem(rng, n_costs=n_costs, n_arms=n_arms)
    n_unknown = max(1, round(unknown_share * n_arms))
    problem = allocopt.CBMAIProblem(base.rewards, base.costs, base.bounds, n_unknown)
    budget = n_unknown + extra
    run = sfsr(problem, budget, sigma_r=1.0, sigma_c=0.5, score=score, rng=rng)
    assert run.total_pulls == int(run.pulls.sum()) <= budget
    assert np.all(run.pulls[n_unknown:] == 0)  # known arms are never pulled
    if n_arms > 1:
        assert np.all(run.pulls[:n_unknown] >= sfsr_schedule(n_arms, n_unknown, n_costs, budget).cumulative[0])
    assert len(run.support) in (0, n_costs + 1)
    assert run.declared_infeasible == (len(run.support) == 0)
    if run.support:
        assert len(run.elimination_order) == n_arms - 1
        assert set(run.support).isdisjoint(run.elimination_order)


@pytest.mark.parametrize("algorithm", ["sfsr", "sfsr-l", "uslp"])
@pytest.mark.parametrize("name", ["cbmai-d1p", "cbmai-d2p", "cbmai-d3p"])
def test_almost_noiseless_runs_find_the_optimal_support(name, algorithm):
    # With sigma = 1e-4 the sample means are within ~1e-4 of the truth, far below Table 1's 0.02 spacing.
    rate = cbmai_error_rate(table_1_problem(name), algorithm, 2000, 20, rng=1, sigma_r=1e-4, sigma_c=1e-4)
    assert rate.n_errors == 0 and rate.target == allocopt.solve_cbmai(table_1_problem(name)).support


def test_remark_2_estimate_of_the_best_mixed_arm():
    # D2P: x* puts 2/3 on arm 10 (costs 0.8, 1.1) and 1/3 on arm 20 (1.4, 0.7), and the slack of cost 2 is
    # 1 - (2/3 1.1 + 1/3 0.7) = 1/30; with tiny noise the estimate A^_X^{-1} b on the returned support is close.
    problem = table_1_problem("cbmai-d2p")
    truth = allocopt.solve_cbmai(problem).x
    for run in (sfsr(problem, 4000, 1e-4, 1e-4, rng=3), uslp(problem, 4000, 1e-4, 1e-4, rng=3)):
        np.testing.assert_allclose(run.estimate, truth, atol=1e-3)
        assert run.support_labels() == ["arm 10", "arm 20", "slack 1"]


def test_infeasible_instance_returns_the_empty_support():
    # Every arm costs at least 1.4 > cbar = 1 in cost 1, a margin of 400 standard deviations at sigma_c = 1e-3.
    problem = allocopt.CBMAIProblem([1.0, 0.5, 0.2], [[1.4, 1.5, 1.6], [0.2, 0.3, 0.4]], [1.0, 1.0])
    for score in ("iv", "lagrangian"):
        run = sfsr(problem, 300, sigma_r=1e-3, sigma_c=1e-3, score=score, rng=0)
        assert run.support == () and run.declared_infeasible
        assert np.all(np.isnan(run.estimate))
        # the verdict comes in round 1, after n_1 pulls of every arm
        assert run.pulls.tolist() == [sfsr_schedule(3, 3, 2, 300).cumulative[0]] * 3
    assert uslp(problem, 300, 1e-3, 1e-3, rng=0).support == ()
    rate = cbmai_error_rate(problem, "sfsr", 300, 10, rng=0, sigma_r=1e-3, sigma_c=1e-3)
    assert rate.target == () and rate.n_errors == 0


def test_degenerate_instance_runs_and_needs_an_explicit_target():
    # Arm 0 costs exactly the bound (a degenerate optimum, Assumption 1 fails): the algorithms run, the error
    # rate needs the support that counts as correct.
    problem = allocopt.CBMAIProblem([1.0, 0.3, 0.2], [[1.0, 0.5, 0.2]], [1.0])
    for score in ("iv", "lagrangian"):
        assert len(sfsr(problem, 100, score=score, rng=1).support) in (0, 2)
    with pytest.raises(allocopt.InvalidInstanceError, match="Assumption 1.*degenerate optimum"):
        cbmai_error_rate(problem, "sfsr", 100, 10, rng=1)
    rate = cbmai_error_rate(problem, "uslp", 100, 10, rng=1, target=[0, 3])
    assert rate.target == (0, 3) and 0 <= rate.n_errors <= 10


@pytest.mark.parametrize("algorithm", ["sfsr", "sfsr-l", "uslp"])
def test_error_rate_equals_independent_single_runs(algorithm):
    # Run i of cbmai_error_rate uses SeedSequence(entropy, spawn_key=(i,)); calling the single-run function
    # with that generator must give the same support (this checks the vectorised batch against one-by-one runs).
    problem = table_1_problem("cbmai-d2p")
    rate = cbmai_error_rate(problem, algorithm, 1000, 40, rng=11, chunk_size=16)
    target = allocopt.solve_cbmai(problem).support
    single = {"sfsr": functools.partial(sfsr, score="iv"), "sfsr-l": functools.partial(sfsr, score="lagrangian"),
              "uslp": uslp}[algorithm]
    errors = sum(single(problem, 1000, rng=replication_generator(rate.entropy, i)).support != target
                 for i in range(40))
    assert rate.n_errors == errors
    assert 0 < errors < 40  # D2P at N = 1000 is hard enough for both outcomes to occur


def test_error_rate_does_not_depend_on_chunks_or_workers():
    problem = table_1_problem("cbmai-d3p")
    reference = cbmai_error_rate(problem, "sfsr", 1000, 48, rng=5, chunk_size=48)
    assert cbmai_error_rate(problem, "sfsr", 1000, 48, rng=5, chunk_size=7).n_errors == reference.n_errors
    with joblib.parallel_config(backend="threading", n_jobs=2):
        threaded = cbmai_error_rate(problem, "sfsr", 1000, 48, rng=5, chunk_size=5)
    assert threaded.n_errors == reference.n_errors and threaded.entropy == reference.entropy


def test_callable_algorithm_matches_the_built_in_one():
    problem = EASY
    built_in = cbmai_error_rate(problem, "sfsr-l", 200, 30, rng=2, sigma_r=2.0)
    custom = cbmai_error_rate(problem, sfsr, 200, 30, rng=2, sigma_r=2.0, score="lagrangian")
    assert custom.n_errors == built_in.n_errors and custom.algorithm == "sfsr"


def test_confidence_interval_of_the_error_rate():
    rate = cbmai_error_rate(EASY, "uslp", 40, 200, rng=4, sigma_r=2.0, sigma_c=1.0, interval="wilson")
    assert rate.ci_low <= rate.error_rate <= rate.ci_high
    low, high = allocopt.simulate.binomial_confidence_interval(rate.n_errors, 200, 0.95, "wilson")
    assert (rate.ci_low, rate.ci_high) == (low, high)


def test_known_arms_are_used_but_never_pulled():
    # Arm 3 is known (n_unknown = 3) and is the only cheap arm: it must be in the support with arm 0.
    problem = allocopt.CBMAIProblem([0.9, 0.3, 0.2, 0.1], [[1.5, 1.2, 1.1, 0.2]], [1.0], n_unknown=3)
    assert allocopt.solve_cbmai(problem).support == (0, 3)
    run = sfsr(problem, 600, sigma_r=1e-3, sigma_c=1e-3, rng=0)
    assert run.support == (0, 3) and run.pulls[3] == 0
    assert uslp(problem, 600, rng=0).pulls.tolist() == [200, 200, 200, 0]


@pytest.mark.parametrize(
    ("call", "fragments"),
    [
        (lambda: sfsr(EASY, 100, sigma_r=0.0), ["'sigma_r' parameter of sfsr", "> 0", "0.0"]),
        (lambda: sfsr(EASY, 100, sigma_c=-1.0), ["'sigma_c' parameter of sfsr", "> 0", "-1.0"]),
        (lambda: uslp(EASY, 100, sigma_c=np.inf), ["'sigma_c' parameter of uslp", "> 0"]),
        (lambda: sfsr(EASY, 4), ["'budget' parameter of sfsr", ">= 5", "n_unknown = 4", "Got 4"]),
        (lambda: uslp(EASY, 3), ["'budget' parameter of uslp", ">= 4"]),
        (lambda: sfsr(EASY, 100, score="ucb"), ["'score' parameter of sfsr", "'iv', 'lagrangian'"]),
        (lambda: sfsr(EASY, 100, rng=-3), ["'rng' parameter of sfsr"]),
        (lambda: cbmai_error_rate(EASY, "sar", 100, 10), ["'algorithm' parameter of cbmai_error_rate",
                                                          "'sfsr', 'sfsr-l', 'uslp'"]),
        (lambda: cbmai_error_rate(EASY, "sfsr", 100, 0), ["'n_runs' parameter of cbmai_error_rate", ">= 1"]),
        (lambda: cbmai_error_rate(EASY, "sfsr", 100, 10, interval="exact"), ["'interval' parameter"]),
        (lambda: cbmai_error_rate(EASY, "sfsr", 100, 10, sigma_r=0), ["'sigma_r' parameter of cbmai_error_rate"]),
        (lambda: cbmai_error_rate(EASY, "sfsr", 100, 10, score="iv"), ["'options' parameter", "'sfsr'"]),
        (lambda: cbmai_error_rate(EASY, "sfsr", 100, 10, target=[9]), ["'target' parameter"]),
    ],
)
def test_bad_input(call, fragments):
    with pytest.raises(allocopt.InvalidArgumentError) as error:
        call()
    for fragment in fragments:
        assert fragment in str(error.value)
