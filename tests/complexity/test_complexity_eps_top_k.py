"""Aggregate regret, t(eps, K), Psi_t^eps, H(t, eps), H(0, eps) and the sample complexities of Chen, Chen,
Zhang, Zhou (2017)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allocopt import complexity
from allocopt.testing import bandit_instances
from complexity_reference import naive_h_t_eps

N_ARMS, EPS, DELTA = 1000, 0.01, 0.01  # Chen, Chen, Zhang, Zhou (2017), Section 3


def test_aggregate_regret_by_hand():
    means = [0.9, 0.1, 0.5, 0.7]
    # Chen, Chen, Zhang, Zhou (2017), eq. (1): the best two sum to 0.9 + 0.7 = 1.6
    assert complexity.aggregate_regret(means, [0, 2]) == pytest.approx((1.6 - 1.4) / 2, rel=1e-12)
    assert complexity.aggregate_regret(means, [3, 0]) == pytest.approx(0.0, abs=1e-15)
    np.testing.assert_allclose(complexity.aggregate_regret(means, [[0, 2], [1, 2], [0, 3]]),
                               [0.1, (1.6 - 0.6) / 2, 0.0], rtol=1e-12, atol=1e-15)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=2, max_size=10), st.data())
def test_aggregate_regret_is_nonnegative_and_zero_on_a_top_set(means, data):
    size = data.draw(st.integers(1, len(means)))
    chosen = data.draw(st.permutations(range(len(means))))[:size]
    assert complexity.aggregate_regret(means, chosen) >= -1e-12
    top = np.argsort(-np.asarray(means), kind="stable")[:size]
    assert complexity.aggregate_regret(means, top) == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize(("k", "expected_t"), [(100, 2), (250, 6), (500, 12)])
def test_two_group(k, expected_t):
    # TWOGROUP (Chen, Chen, Zhang, Zhou 2017, Section 3): every gap is 0.7 - 0.3 = 0.4, so eq. (3) reads 0.4 t <= K eps
    # and t = floor(K eps / 0.4): 2, 6, 12. Psi_t = 0.4 > eps, and H(t, eps) = H(0, eps) = n / 0.4^2 = 6250.
    theta = bandit_instances.two_group(N_ARMS, k)
    result = complexity.h_t_eps(theta, k, EPS)
    assert result.t == expected_t
    assert result.psi_t == pytest.approx(0.4, rel=1e-12)
    assert result.psi_t_eps == pytest.approx(0.4, rel=1e-12)
    assert result.value == pytest.approx(6250.0, rel=1e-12)
    assert complexity.h_0_eps(theta, k, EPS) == pytest.approx(6250.0, rel=1e-12)


def _uniform_hardness(k: int, cap: float) -> float:
    """UNIFORM's gaps are j/n for j = 1..K (top arms) and j = 1..n-K (others): sum of max(j/n, cap)^-2."""
    return sum(max(j / N_ARMS, cap) ** -2 for j in range(1, k + 1)) + \
        sum(max(j / N_ARMS, cap) ** -2 for j in range(1, N_ARMS - k + 1))


@pytest.mark.parametrize(("k", "expected_t"), [(100, 31), (250, 49), (500, 70)])
def test_uniform(k, expected_t):
    # UNIFORM theta_i = 1 - i/n: Delta_[K-t] = Delta_[K+t+1] = (t+1)/n, so eq. (3) is t (t+1) <= n K eps:
    # 31 * 32 = 992 <= 1000 < 1056; 49 * 50 = 2450 <= 2500 < 2550; 70 * 71 = 4970 <= 5000 < 5112.
    theta = bandit_instances.uniform(N_ARMS)
    result = complexity.h_t_eps(theta, k, EPS)
    assert result.t == expected_t
    psi = (expected_t + 1) / N_ARMS
    assert result.psi_t_eps == pytest.approx(psi, rel=1e-9)
    assert result.value == pytest.approx(_uniform_hardness(k, psi), rel=1e-9)
    assert complexity.h_0_eps(theta, k, EPS) == pytest.approx(_uniform_hardness(k, EPS), rel=1e-9)


def test_uniform_hardness_falls_as_k_grows():
    # Chen, Chen, Zhang, Zhou (2017), Section 3: "t usually becomes bigger as K grows, leading to a smaller hardness
    # parameter".
    theta = bandit_instances.uniform(N_ARMS)
    results = [complexity.h_t_eps(theta, k, EPS) for k in (100, 250, 500)]
    assert results[0].t < results[1].t < results[2].t
    assert results[0].value > results[1].value > results[2].value


@pytest.mark.parametrize("k", [100, 250, 500])
def test_synthetic_p(k):
    uniform = bandit_instances.uniform(N_ARMS)
    # SYNTHETIC-1 is UNIFORM (Chen, Chen, Zhang, Zhou 2017, Section 3)
    np.testing.assert_allclose(bandit_instances.synthetic_p(N_ARMS, k, 1.0), uniform, atol=1e-12)
    # every gap decreases as p grows (x^p decreases in p on [0, 1]), so H(0, eps) increases with p:
    # SYNTHETIC-0.5 (arms far from the boundary) < UNIFORM < SYNTHETIC-6 (arms close to it)
    hardness = [complexity.h_0_eps(bandit_instances.synthetic_p(N_ARMS, k, p), k, EPS) for p in (0.5, 1.0, 6.0)]
    assert hardness[0] < hardness[1] < hardness[2] <= N_ARMS / EPS**2
    for p in (0.5, 6.0):
        theta = bandit_instances.synthetic_p(N_ARMS, k, p)
        value, t, psi_eps = naive_h_t_eps(list(theta), k, EPS)
        result = complexity.h_t_eps(theta, k, EPS)
        assert (result.t, result.psi_t_eps) == (t, pytest.approx(psi_eps, rel=1e-12))
        assert result.value == pytest.approx(value, rel=1e-9)


means_with_ties = st.lists(st.sampled_from([0.0, 0.1, 0.25, 0.3, 0.5, 0.55, 0.9, 1.0]) | st.floats(0, 1),
                           min_size=2, max_size=14)


@settings(max_examples=120, deadline=None)
@given(means_with_ties, st.data())
def test_h_t_eps_matches_the_definition_and_its_bounds(means, data):
    k = data.draw(st.integers(1, len(means) - 1))
    eps = data.draw(st.floats(1e-3, 0.5))
    result = complexity.h_t_eps(means, k, eps)
    value, t, psi_eps = naive_h_t_eps(means, k, eps)
    assert result.t == t
    assert result.psi_t_eps == pytest.approx(psi_eps, rel=1e-12)
    assert result.value == pytest.approx(value, rel=1e-10)
    # Chen, Chen, Zhang, Zhou (2017), Sections 1.1-1.2: H(t, eps) <= H(0, eps) <= n eps^-2, boundary ties included
    h_0 = complexity.h_0_eps(means, k, eps)
    assert result.value <= h_0 * (1 + 1e-12)
    assert h_0 <= len(means) / eps**2 * (1 + 1e-12)
    # H(t, eps) at t = 0 is H(0, eps): min(Delta_i, Delta_K) = Delta_K caps nothing below eps
    if result.t == 0:
        assert result.value == pytest.approx(h_0, rel=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=2, max_size=10), st.floats(1e-3, 0.5))
def test_k_one_gives_t_zero(means, eps):
    # Chen, Chen, Zhang, Zhou (2017), Section 1.2: "When K = 1, we have t(eps, K) = 0 and thus H(t, eps) = H(0, eps)".
    result = complexity.h_t_eps(means, 1, eps)
    assert result.t == 0
    assert result.value == pytest.approx(complexity.h_0_eps(means, 1, eps), rel=1e-12)


def _quantiles_of_linear_density(n_arms: int) -> np.ndarray:
    """theta_i = F^-1(1 - i/n) for the density f(x) = 1/2 + x on [0, 1] (F(x) = x/2 + x^2/2), bounded in [1/2, 3/2]."""
    level = 1.0 - np.arange(1, n_arms + 1) / n_arms
    return -0.5 + np.sqrt(0.25 + 2.0 * level)


@pytest.mark.parametrize("make", [bandit_instances.uniform, _quantiles_of_linear_density], ids=["uniform", "density"])
@pytest.mark.parametrize("gamma", [0.5, 0.25])
def test_lemma_one_rates_on_c_spread_instances(make, gamma):
    # Chen, Chen, Zhang, Zhou (2017), Lemma 1: for O(1)-spread arms and K = gamma n, H(t, eps) = O(n / sqrt(eps)) while
    # H(0, eps) = Omega(n / eps). Checked by the slopes of log H against log eps over eps in [1e-4, 1e-2], with
    # n = 2e5 so that n eps >= 20 arms sit within eps of the boundary.
    n_arms = 200_000
    theta = make(n_arms)
    # the quantiles of a density bounded in [1/2, 3/2] are 2-spread (Definition 1); UNIFORM is 1-spread
    assert complexity.spread_constant(theta) <= 2.0 + 1e-6
    k = int(gamma * n_arms)
    eps_values = np.logspace(-4, -2, 7)
    h_t = [complexity.h_t_eps(theta, k, eps).value for eps in eps_values]
    h_0 = [complexity.h_0_eps(theta, k, eps) for eps in eps_values]
    slope_t = np.polyfit(np.log(eps_values), np.log(h_t), 1)[0]
    slope_0 = np.polyfit(np.log(eps_values), np.log(h_0), 1)[0]
    assert slope_t == pytest.approx(-0.5, abs=0.03)
    assert slope_0 == pytest.approx(-1.0, abs=0.03)
    # and both are linear in n: halving n halves H (same eps)
    half = make(n_arms // 2)
    assert complexity.h_t_eps(half, k // 2, 1e-3).value / complexity.h_t_eps(theta, k, 1e-3).value == pytest.approx(
        0.5, rel=0.05)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-3, 3), min_size=2, max_size=12))
def test_spread_constant_matches_definition_one_over_all_pairs(means):
    ranked = sorted(means, reverse=True)
    n = len(ranked)
    needed = 1.0
    for i in range(n):
        for j in range(i + 1, n):
            difference = ranked[i] - ranked[j]
            needed = max(needed, n * difference / (j - i),
                         math.inf if difference == 0 else (j - i) / (n * difference))
    assert complexity.spread_constant(means) == pytest.approx(needed, rel=1e-9)


def test_sample_complexity_expressions_by_hand():
    theta = bandit_instances.two_group(N_ARMS, 250)  # H(t, eps) = H(0, eps) = 6250 (test_two_group)
    assert complexity.adaptive_topk_sample_complexity(theta, 250, EPS, DELTA) == pytest.approx(
        (math.log(math.log(100)) + math.log(1000) + math.log(100)) * 6250, rel=1e-12)  # Theorem 1
    assert complexity.improved_topk_sample_complexity(theta, 250, EPS, DELTA) == pytest.approx(
        (math.log(100) + math.log(100)) * 6250, rel=1e-12)  # Theorem 2
    assert complexity.clucb_pac_sample_complexity(theta, 250, EPS, DELTA) == pytest.approx(
        (math.log(6250) + math.log(100)) * 6250, rel=1e-12)  # Chen et al. (2014)
    assert complexity.zhou_sample_complexity(N_ARMS, 250, EPS, DELTA) == pytest.approx(
        1000 / 0.01**2 * (1 + math.log(100) / 250), rel=1e-12)  # Zhou et al. (2014)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=2, max_size=12), st.data())
def test_theorem_two_worst_case(means, data):
    # Chen, Chen, Zhang, Zhou (2017), after Theorem 2: since H(t, eps) <= n eps^-2, Theorem 2 is at most
    # O(n/eps^2 (log 1/eps + log 1/delta))
    k = data.draw(st.integers(1, len(means) - 1))
    eps, delta = data.draw(st.floats(1e-3, 0.9)), data.draw(st.floats(1e-6, 0.5))
    worst = len(means) / eps**2 * (math.log(1 / eps) + math.log(1 / delta))
    assert complexity.improved_topk_sample_complexity(means, k, eps, delta) <= worst * (1 + 1e-12)


def test_batched_h_t_eps(rng):
    batch = rng.random((4, 30))
    result = complexity.h_t_eps(batch, 7, 0.02)
    assert result.value.shape == result.t.shape == (4,)
    for row, value, t in zip(batch, result.value, result.t):
        single = complexity.h_t_eps(row, 7, 0.02)
        assert (value, t) == (pytest.approx(single.value, rel=1e-14), single.t)
    np.testing.assert_allclose(complexity.h_0_eps(batch, 7, 0.02), [complexity.h_0_eps(row, 7, 0.02) for row in batch])
