"""The exact solver's compiled double star for the families with a compiled pair kernel
(allocopt.topk._exact.star): its answers against the general active-set path (compiled kernels off), its
certificate against the numpy certifier (allocopt.topk.certificate.certify) evaluated on the returned allocation
and multipliers, and the cases it must leave to the general path."""

from __future__ import annotations

import numpy as np
import pytest

from allocopt import TopKProblem, solve_topk
from allocopt._numba import AVAILABLE, compiled_kernels
from allocopt.families import Bernoulli, Gamma
from allocopt.topk.certificate import certify
from allocopt.topk._exact.star import double_star_edges
from allocopt.topk.multipliers import PairMultipliers

pytestmark = pytest.mark.skipif(not AVAILABLE, reason="numba is not importable")

COMPILED = "double star (compiled)"


def _family_object(family):
    """The family object that a problem of the family named ``family`` holds."""
    return TopKProblem([0.6, 0.4], 1, family=family).family


def _instances(family, rng, count):
    for trial in range(count):
        n_arms = int(rng.integers(2, 26))
        k = [1, n_arms - 1, int(rng.integers(1, n_arms))][trial % 3]
        if family == "bernoulli":
            theta = rng.uniform(0.02, 0.98, n_arms) if trial % 4 else rng.uniform(0.999, 1 - 1e-9, n_arms)
        else:
            theta = rng.uniform(0.2, 5.0, n_arms) if trial % 4 else np.exp(rng.uniform(-20, 20, n_arms))
        yield TopKProblem(theta, k, family=Gamma(2.5) if family == "gamma" else family)


@pytest.mark.twin
@pytest.mark.parametrize("kind", ["confidence", "budget"])
@pytest.mark.parametrize("family", ["bernoulli", "poisson", "exponential", "gamma"])
def test_compiled_double_star_agrees_with_the_general_path_and_the_numpy_certificate(family, kind):
    rng = np.random.default_rng(23)
    used = 0
    for problem in _instances(family, rng, 40):
        result = solve_topk(problem, kind=kind)
        assert result.status == "optimal"
        if COMPILED not in result.message:
            continue
        used += 1
        # the certificate of the returned allocation and multipliers, by the numpy certifier
        reference = certify(problem, result.psi, result.multipliers, kind)
        # the same pair costs from the compiled and the numpy kernel: to twice the family's pair error bound
        # (bit for bit where numpy's log is the C library's; tests/tolerance.py)
        agree = 2 * problem.family.pair_error_bound(kind, problem.theta) + 8 * np.finfo(float).eps
        assert result.value == pytest.approx(reference.value, rel=agree)
        assert result.upper_bound == pytest.approx(reference.upper_bound, rel=agree)
        assert reference.gap <= 1e-9 * reference.value
        assert result.gap == pytest.approx(reference.gap, rel=1e-6, abs=64 * np.finfo(float).eps * reference.value)
        # the same optimum as the active set (which certifies its own answer)
        with compiled_kernels(False):
            general = solve_topk(problem, kind=kind)
        assert COMPILED not in general.message and general.status == "optimal"
        assert result.value == pytest.approx(general.value, rel=1e-9)
        np.testing.assert_allclose(result.psi, general.psi, rtol=1e-7)
        assert result.psi.sum() == pytest.approx(1.0, rel=1e-14)
    assert used >= 20  # most random instances have the double star as their optimal forest (Theorem 3.4)


def test_ties_and_non_double_star_instances_go_to_the_general_path():
    # tied arms: not this kernel's instance; the double star of their groups (tests/topk/test_topk_tied_fast_path.py)
    tied = solve_topk(TopKProblem([0.9, 0.9, 0.5, 0.3, 0.2], 2, family="bernoulli"))
    assert tied.status == "optimal" and COMPILED not in tied.message and "of the tie groups" in tied.message
    # instances whose optimal forest is not the double star (the general path pivots away from it): the fast
    # path's certificate fails there, and the answer is the general path's
    rng = np.random.default_rng(4)
    found = 0
    for _ in range(200):
        problem = TopKProblem(rng.uniform(0.05, 0.95, 12), 6, family="bernoulli")
        with compiled_kernels(False):
            general = solve_topk(problem)
        if general.extras["pivots"] == 0:
            continue
        found += 1
        result = solve_topk(problem)
        assert result.status == "optimal" and COMPILED not in result.message
        np.testing.assert_allclose(result.psi, general.psi, rtol=1e-9)
        if found == 3:
            break
    assert found == 3


def test_a_user_family_and_the_switch_use_the_general_path():
    class OwnBernoulli(Bernoulli):
        def unit_confidence_pair(self, *arguments):
            return super().unit_confidence_pair(*arguments)

    theta = [0.9, 0.8, 0.4, 0.3]
    assert COMPILED not in solve_topk(TopKProblem(theta, 2, family=OwnBernoulli())).message
    with compiled_kernels(False):
        assert COMPILED not in solve_topk(TopKProblem(theta, 2, family="bernoulli")).message
    assert COMPILED in solve_topk(TopKProblem(theta, 2, family="bernoulli")).message


def test_warm_start_from_a_double_star_gives_the_same_answer():
    rng = np.random.default_rng(9)
    theta = rng.uniform(0.5, 3.0, 20)
    first = solve_topk(TopKProblem(theta, 5, family="poisson"))
    nearby = TopKProblem(theta * (1 + rng.uniform(-1e-3, 1e-3, 20)), 5, family="poisson")
    warm, cold = solve_topk(nearby, warm_start=first), solve_topk(nearby)
    assert COMPILED in warm.message and COMPILED in cold.message
    np.testing.assert_allclose(warm.psi, cold.psi, rtol=1e-12)


@pytest.mark.twin
@pytest.mark.parametrize("kind", ["confidence", "budget"])
@pytest.mark.parametrize("family", ["bernoulli", "poisson", "exponential"])
def test_the_certificates_minimum_skips_only_pairs_that_cannot_be_smallest(family, kind):
    # star_certificate skips a pair when its closed-form lower bound is at least the smallest cost so far; its
    # Gamma must still be the minimum over every pair, here each evaluated by the numpy kernel, on allocations
    # where many pairs nearly tie (Bernoulli means around 1/2, where the variance bound 1/4 is tight; close
    # Poisson and exponential means, where the bound tends to the cost) and on random ones
    from allocopt.topk._exact.star import star_certificate

    rng = np.random.default_rng(31)
    pair = _family_object(family).compiled_pair(kind)
    for trial in range(60):
        n_arms = int(rng.integers(2, 25))
        k = int(rng.integers(1, n_arms))
        centre = 0.5 if family == "bernoulli" else float(np.exp(rng.uniform(-3, 3)))
        spread = [1e-6, 1e-3, 0.3][trial % 3] * (centre if family != "bernoulli" else 1.0)
        theta = -np.sort(-(centre + spread * rng.uniform(-1, 1, n_arms)))
        if not theta[k - 1] > theta[k]:
            continue
        psi = rng.uniform(0.2, 1.0, n_arms) if trial % 2 else np.full(n_arms, 1.0 / n_arms)
        psi = psi / psi.sum()
        problem = TopKProblem(theta, k, family=family)  # theta sorted: top = 0..k-1, bottom = k..K-1
        costs = problem.pair_terms(psi, *np.meshgrid(np.arange(k), np.arange(n_arms - k), indexing="ij"),
                                   kind=kind).cost
        got = star_certificate(pair, theta, np.ones(n_arms), k, psi, np.array([k - 1]), np.array([0]),
                               np.array([1.0]))
        # the compiled and the numpy kernel's costs agree to twice the pair error bound (tests/tolerance.py)
        agree = 2 * problem.family.pair_error_bound(kind, theta) + 8 * np.finfo(float).eps
        assert abs(got.value - costs.min()) <= agree * costs.min(), (trial, got.value, costs.min())


@pytest.mark.parametrize("kind", ["confidence", "budget"])
@pytest.mark.parametrize("family", ["bernoulli", "poisson", "exponential"])
def test_the_balance_solve_reaches_the_same_root_from_far_starts(family, kind):
    # the balance is solved by secant steps from the start (the first one -residual, each at most twice the one
    # before) until they bracket its root, then by regula falsi; from starts far on either side of the root, and
    # on instances whose root lies far from 0 (means spread over many orders of magnitude, k = 1 and K - 1), it
    # must converge to the same double star, whose stationarity the numpy certifier checks
    from allocopt.topk._exact.star import solve_star

    rng = np.random.default_rng(57)
    pair = _family_object(family).compiled_pair(kind)
    for problem in _instances(family, rng, 24):
        theta = problem.theta[problem.order]
        if not np.all(np.diff(theta[:problem.k]) < 0) or not np.all(np.diff(theta[problem.k:]) < 0):
            continue
        reference = solve_star(pair, theta, np.ones(problem.n_arms), problem.k)
        assert reference.converged
        for start in (-40.0, -3.0, 3.0, 40.0):
            solution = solve_star(pair, theta, np.ones(problem.n_arms), problem.k, start=start)
            assert solution.converged, (start, theta.tolist(), problem.k)
            np.testing.assert_allclose(solution.psi, reference.psi, rtol=1e-12, atol=0)
        # the double star's stationarity, by the numpy certifier (theta sorted: top = 0..k-1, bottom = k..K-1)
        sorted_problem = TopKProblem(theta, problem.k, family=family)
        rows, cols = double_star_edges(problem.k, problem.n_arms)  # the edge order of the star's multipliers
        multipliers = PairMultipliers(rows, cols, reference.mu, (problem.k, problem.n_arms - problem.k))
        if np.all(reference.mu >= 0):
            check = certify(sorted_problem, reference.psi, multipliers, kind)
            assert check.stationarity <= 1e-12, check.stationarity


def test_a_hub_multiplier_zero_to_rounding_is_dropped_from_the_certified_answer():
    # Theorem 3.4's condition (14) with equality: along the segment between two Poisson instances, the
    # multiplier of the pair (i_k, j_1) changes sign; bisected to the last float, it is zero to rounding
    # (|nu| <= 1e-12 of the largest), the fast path drops the pair and certifies the rest, and the numpy
    # certifier confirms the answer with the pairs it returns
    from allocopt.topk._exact.star import solve_star

    pair = _family_object("poisson").compiled_pair("confidence")
    positive = np.array([6.75230134, 3.72296972, 3.0, 0.9470896, 0.7, 0.5, 0.34788593])
    negative = np.array([6.75230134, 3.72296972, 3.6203374, 0.9470896, 0.94006171, 0.86146091, 0.34788593])

    def hub_multiplier(s):
        return solve_star(pair, (1 - s) * positive + s * negative, np.ones(7), 3).mu[0]

    low, high = 0.0, 1.0
    assert hub_multiplier(low) > 0 > hub_multiplier(high)
    for _ in range(80):
        middle = 0.5 * (low + high)
        low, high = (middle, high) if hub_multiplier(middle) > 0 else (low, middle)
    theta = (1 - high) * positive + high * negative
    assert -1e-12 <= hub_multiplier(high) <= 0
    problem = TopKProblem(theta, 3, family="poisson")
    result = solve_topk(problem)
    assert COMPILED in result.message and result.status == "optimal"
    pairs = set(zip(problem.top[result.multipliers.rows].tolist(), problem.bottom[result.multipliers.cols].tolist()))
    assert (2, 3) not in pairs and len(pairs) == problem.n_arms - 2  # i_k = arm 2, j_1 = arm 3 (sorted means)
    reference = certify(problem, result.psi, result.multipliers, "confidence")
    assert reference.gap <= 1e-9 * reference.value


@pytest.mark.parametrize("kind", ["confidence", "budget"])
@pytest.mark.parametrize("family", ["bernoulli", "poisson", "exponential"])
def test_the_certificates_pair_bounds_are_below_every_cost_and_tight_for_close_means(family, kind):
    # the certificate skips a pair whose closed-form lower bound (less 1e-9) is at least the smallest cost so far,
    # so each bound must stay below the pair's cost, here evaluated by the numpy kernel (allocopt.topk.pairs),
    # at means from nearly tied to orders of magnitude apart and weights from balanced to 1e6 apart; and where
    # the means nearly tie the bound's quadratics are the cost's own second-order terms (the bound tends to the
    # cost), so a bound made 1% too large fails here
    from allocopt.topk._exact import star as _compiled_star
    from allocopt.topk.pairs import pair_terms

    _compiled_star._kernels()  # rebinds _pair_lower_bound to its compiled version
    family_object = _family_object(family)
    code = family_object._compiled_pair_code(kind)
    rng = np.random.default_rng(43)
    relative_gap = np.exp(rng.uniform(np.log(1e-7), 0.0, 4000))
    if family == "bernoulli":
        bottom = rng.uniform(1e-6, 0.98, relative_gap.shape[0])
        top = bottom + relative_gap * (1.0 - bottom) * 0.999
    else:
        bottom = np.exp(rng.uniform(-8, 8, relative_gap.shape[0]))
        top = bottom * (1.0 + 50.0 * relative_gap)
    w_top = np.exp(rng.uniform(-7, 7, top.shape[0]))
    w_bottom = np.exp(rng.uniform(-7, 7, top.shape[0]))
    eta = family_object.unit_natural
    cost = pair_terms(family_object, kind, top, bottom, eta(top), eta(bottom), w_top, w_bottom).cost
    bound = np.array([_compiled_star._pair_lower_bound(code, *values)
                      for values in zip(top.tolist(), bottom.tolist(), w_top.tolist(), w_bottom.tolist())])
    assert np.all(bound * (1.0 - 1e-9) <= cost)
    close = relative_gap <= 1e-6
    assert close.sum() >= 100
    assert np.min(bound[close] / cost[close]) >= 0.999
