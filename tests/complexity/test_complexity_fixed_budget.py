"""Table I error bounds, NSAR's Proposition 2 and Table II sample complexities of Shahrampour and Tarokh (2017),
on hand-computed instances and on the six setups of their Section IV.A (K = 50, M in {2, 4})."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allocopt import complexity
from allocopt.testing import bandit_instances
from complexity_reference import naive_gaps

BEST_ARM = [0.5, 0.9, 0.8]  # gaps 0.1 and 0.4; H2 = 200, H(2) = 400 (test_complexity_top_m.py)


def test_table_one_by_hand():
    n_arms, h2, h_2 = 3, 200.0, 400.0
    logbar = 0.5 + 0.5 + 1 / 3
    successive_rejects = complexity.successive_rejects_bound(BEST_ARM)
    assert successive_rejects.alpha == pytest.approx(h2 * logbar, rel=1e-12)
    assert successive_rejects.beta == pytest.approx(0.5 * 3 * 2 * math.exp(3 / (h2 * logbar)), rel=1e-12)
    halving = complexity.sequential_halving_bound(BEST_ARM)
    assert halving.alpha == pytest.approx(8 * h2 * math.log2(n_arms), rel=1e-12)
    assert halving.beta == pytest.approx(3 * math.log2(n_arms), rel=1e-12)
    c_2 = 0.25 + 0.25 + 1 / 9
    nonlinear = complexity.nonlinear_sequential_elimination_bound(BEST_ARM, 2.0)
    assert nonlinear.alpha == pytest.approx(h_2 * c_2, rel=1e-12)
    assert nonlinear.beta == pytest.approx(2 * math.exp(3 / (h_2 * c_2)), rel=1e-12)


def test_nonlinear_elimination_at_p_one_has_the_successive_rejects_exponent():
    # Table I: H(1) C_1 = H2 logbar(K), since H(1) = H2 and C_1 = logbar(K).
    assert complexity.nonlinear_sequential_elimination_bound(BEST_ARM, 1.0).alpha == pytest.approx(
        complexity.successive_rejects_bound(BEST_ARM).alpha, rel=1e-14)


def test_proposition_two_at_p_one_is_sar():
    # Proposition 2 with p = 1 (NSAR = SAR, C_1 = logbar(K)): 2K^2 exp(-(T-K)/(8 logbar(K) H2^(M))).
    means = [0.7, 0.7, 0.66, 0.5, 0.5]
    bound = complexity.nsar_error_bound(means, 2, 1.0)
    alpha = 8 * complexity.logbar(5) * complexity.h2(means, 2)
    assert bound.alpha == pytest.approx(alpha, rel=1e-14)
    budget = 3000.0
    assert bound.error_probability(budget) == pytest.approx(2 * 25 * math.exp(-(budget - 5) / alpha), rel=1e-12)


@settings(max_examples=50, deadline=None)
@given(st.floats(1e-6, 0.5), st.floats(0.1, 2.0))
def test_required_budget_inverts_the_bound(delta, p):
    bound = complexity.nsar_error_bound([0.9, 0.7, 0.6, 0.2, 0.1], 2, p)
    budget = bound.required_budget(delta)
    assert budget > 0
    assert bound.error_probability(budget) == pytest.approx(delta, rel=1e-9)
    # Proposition 2 in its own form: T = K + 8 C_p H(p) log(2K^2/delta)
    assert budget == pytest.approx(5 + bound.alpha * math.log(2 * 25 / delta), rel=1e-12)


def test_required_budget_is_zero_when_the_bound_is_already_below_delta():
    bound = complexity.sequential_halving_bound([0.9, 0.1])  # beta = 3 log2(2) = 3
    assert bound.beta == pytest.approx(3.0)
    assert bound.required_budget(0.999) > 0
    bound_small = complexity.ErrorBound("test", alpha=10.0, beta=0.5, source="a bound with beta < delta")
    assert bound_small.required_budget(0.9) == 0.0


def test_table_two_by_hand():
    # four arms, M = 2, all gaps 0.2: H1 = 4/0.04 = 100, H2 = max_{i=2..4} i/0.04 = 100, H(p) = 4^p/0.04.
    means, delta = [0.7, 0.7, 0.5, 0.5], 0.1
    logbar = 0.5 + 0.5 + 1 / 3 + 1 / 4
    assert complexity.sar_sample_complexity(means, 2, delta) == pytest.approx(100 * logbar * math.log(40), rel=1e-12)
    assert complexity.at_lucb_sample_complexity(means, 2, delta) == pytest.approx(100 * math.log(1000), rel=1e-12)
    c_07 = 2**-0.7 + 2**-0.7 + 3**-0.7 + 4**-0.7
    assert complexity.nsar_sample_complexity(means, 2, delta, 0.7) == pytest.approx(
        4**0.7 / 0.04 * c_07 * math.log(40), rel=1e-12)
    assert complexity.nsar_sample_complexity(means, 2, delta, 1.0) == pytest.approx(
        complexity.sar_sample_complexity(means, 2, delta), rel=1e-14)


# Shahrampour and Tarokh (2017), Section IV.A setups with K = 50; H1^(M), H2^(M) computed by hand from the group sizes
# and gaps: setup 1: 50 gaps 0.2.
# setup 2: 2M gaps 0.7 - 0.66 = 0.04, 50 - 2M gaps 0.2.
# setup 3: 2M gaps 0.04, M gaps 0.7 - 0.62 = 0.08, 50 - 3M gaps 0.2.
# setup 6: M + 1 gaps 0.7 - 0.68 = 0.02, 49 - M gaps 0.2.
# H2 = max over the last rank of each gap level of rank / gap^2.
SETUP_VALUES = {
    (1, 2): (50 / 0.04, 50 / 0.04),
    (1, 4): (50 / 0.04, 50 / 0.04),
    (2, 2): (4 / 0.0016 + 46 / 0.04, max(4 / 0.0016, 50 / 0.04)),  # 3650, 2500
    (2, 4): (8 / 0.0016 + 42 / 0.04, max(8 / 0.0016, 50 / 0.04)),  # 6050, 5000
    (3, 2): (4 / 0.0016 + 2 / 0.0064 + 44 / 0.04, max(4 / 0.0016, 6 / 0.0064, 50 / 0.04)),  # 3912.5, 2500
    (3, 4): (8 / 0.0016 + 4 / 0.0064 + 38 / 0.04, max(8 / 0.0016, 12 / 0.0064, 50 / 0.04)),  # 6575, 5000
    (6, 2): (3 / 0.0004 + 47 / 0.04, max(3 / 0.0004, 50 / 0.04)),  # 8675, 7500
    (6, 4): (5 / 0.0004 + 45 / 0.04, max(5 / 0.0004, 50 / 0.04)),  # 13625, 12500
}


@pytest.mark.parametrize(("setup", "m"), sorted(SETUP_VALUES))
def test_nsar_setups_by_hand(setup, m):
    theta = bandit_instances.nsar_setup(setup, m)
    expected_h1, expected_h2 = SETUP_VALUES[setup, m]
    assert complexity.h1(theta, m) == pytest.approx(expected_h1, rel=1e-9)
    assert complexity.h2(theta, m) == pytest.approx(expected_h2, rel=1e-9)
    # the experiments' budget T = ceil(H1^(M)) (Shahrampour and Tarokh 2017, Section IV.A); the 1e-9 margin absorbs
    # rounding of differences such as 0.7 - 0.66
    assert math.ceil(complexity.h1(theta, m) - 1e-9) == math.ceil(expected_h1 - 1e-9)


@pytest.mark.parametrize("m", [2, 4])
def test_nsar_setup_four_arithmetic_progression(m):
    # setup 4: Delta_i = mu_1 - mu_i = 0.6 (i - 1)/49; the top-M gaps follow from the case definition.
    theta = [0.7 - 0.6 * i / 49 for i in range(50)]
    gaps = naive_gaps(theta, m)
    np.testing.assert_allclose(complexity.gaps(bandit_instances.nsar_setup(4, m), m), gaps, rtol=1e-12, atol=1e-15)
    assert complexity.h1(bandit_instances.nsar_setup(4, m), m) == pytest.approx(sum(g**-2 for g in gaps), rel=1e-9)


def test_nsar_setup_five_invariants(rng):
    # setup 5 draws Beta(5, 5) means: no hand value, but the measures must not depend on the order of the arms
    theta = bandit_instances.nsar_setup(5, 2, rng=rng)
    assert complexity.h2(theta, 2) == pytest.approx(complexity.h2(np.sort(theta), 2), rel=1e-14)
    assert complexity.h2(theta, 2) <= complexity.h1(theta, 2) <= complexity.logbar(50) * complexity.h2(theta, 2)


def _nsar_over_sar(setup: int, m: int, p: float) -> float:
    theta = bandit_instances.nsar_setup(setup, m)
    return complexity.nsar_sample_complexity(theta, m, 0.1, p) / complexity.sar_sample_complexity(theta, m, 0.1)


@pytest.mark.parametrize("m", [2, 4])
def test_corollary_three_regime_one_setup_one(m):
    # Setup 1 is Regime 1 (Shahrampour and Tarokh 2017, Section IV.A): with 0 < p < 1 NSAR's Table II order is below
    # SAR's; with p > 1 it is above.
    assert all(_nsar_over_sar(1, m, p) < 1 for p in (0.7, 0.85))
    assert all(_nsar_over_sar(1, m, p) > 1 for p in (1.1, 1.2, 1.3))


@pytest.mark.parametrize(("setup", "m"), [(2, 2), (3, 2), (4, 2), (4, 4), (6, 2), (6, 4)])
def test_corollary_three_few_competitive_arms(setup, m):
    # Setups with a few competitive arms (2, 3, 6: close to Regime 2) and setup 4: p in {1.1, 1.2, 1.3} gives a
    # smaller order than SAR (Shahrampour and Tarokh 2017, Section IV.A comments on Figure 2), and p = 0.7 a larger one.
    assert all(_nsar_over_sar(setup, m, p) < 1 for p in (1.1, 1.2, 1.3))
    assert _nsar_over_sar(setup, m, 0.7) > 1


def test_batched_bounds(rng):
    batch = rng.random((5, 6))
    bound = complexity.nsar_error_bound(batch, 2, 0.8)
    assert bound.alpha.shape == (5,)
    for row, alpha, beta in zip(batch, bound.alpha, bound.beta):
        single = complexity.nsar_error_bound(row, 2, 0.8)
        assert (alpha, beta) == pytest.approx((single.alpha, single.beta), rel=1e-14)
    np.testing.assert_allclose(bound.required_budget(0.05),
                               [complexity.nsar_error_bound(row, 2, 0.8).required_budget(0.05) for row in batch])
    halving = complexity.sequential_halving_bound(batch)
    np.testing.assert_allclose(halving.beta, np.full(5, 3 * math.log2(6)))
