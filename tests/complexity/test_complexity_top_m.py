"""Gaps, H1, H2, H(p), C_p and logbar (Shahrampour and Tarokh 2017, eq. (2)-(4)).

Reference values are computed by hand in the comments or by the naive case-by-case definitions of
complexity_reference.py (Python sorting and loops, independent of the vectorised implementation).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allocopt import complexity
from allocopt.exceptions import InvalidInstanceError
from complexity_reference import naive_gaps, naive_h


distinct_means = st.lists(st.floats(-5, 5, allow_nan=False), min_size=2, max_size=12, unique=True).filter(
    lambda values: min(np.diff(np.sort(values))) > 1e-6)


def test_gaps_small_instance_by_hand():
    # means (0.5, 0.9, 0.7, 0.2), M = 2: mu_[2] = 0.7, mu_[3] = 0.5; top arms 1 and 2.
    # arm 0: 0.7 - 0.5 = 0.2; arm 1: 0.9 - 0.5 = 0.4; arm 2: 0.7 - 0.5 = 0.2; arm 3: 0.7 - 0.2 = 0.5.
    np.testing.assert_allclose(complexity.gaps([0.5, 0.9, 0.7, 0.2], 2), [0.2, 0.4, 0.2, 0.5], rtol=1e-12)


def test_best_arm_measures_small_instance_by_hand():
    # means (0.5, 0.9, 0.8): best-arm gaps Delta_2 = 0.1, Delta_3 = 0.4 (Shahrampour and Tarokh 2017, eq. (2)).
    means = [0.5, 0.9, 0.8]
    np.testing.assert_allclose(complexity.gaps(means, 1), [0.4, 0.1, 0.1], rtol=1e-12)
    assert complexity.h1_bai(means) == pytest.approx(0.1**-2 + 0.4**-2, rel=1e-12)  # 106.25
    assert complexity.h1(means, 1) == pytest.approx(2 * 0.1**-2 + 0.4**-2, rel=1e-12)  # 206.25
    assert complexity.h2(means, 1) == pytest.approx(max(2 / 0.1**2, 3 / 0.4**2), rel=1e-12)  # 200
    assert complexity.h_p(means, 2.0, 1) == pytest.approx(max(4 / 0.1**2, 9 / 0.4**2), rel=1e-12)  # 400


def test_c_p_and_logbar_by_hand():
    # Shahrampour and Tarokh (2017), eq. (3) and Table I: C_p = 2^-p + sum_{r=2}^K r^-p,
    # logbar(K) = 1/2 + sum_{i=2}^K 1/i.
    assert complexity.c_p(3, 2.0) == pytest.approx(0.25 + 0.25 + 1 / 9, rel=1e-15)
    assert complexity.logbar(3) == pytest.approx(0.5 + 0.5 + 1 / 3, rel=1e-15)
    assert complexity.logbar(50) == pytest.approx(0.5 + sum(1 / i for i in range(2, 51)), rel=1e-14)
    assert complexity.c_p(50, 0.7) == pytest.approx(2**-0.7 + sum(r**-0.7 for r in range(2, 51)), rel=1e-14)


@settings(max_examples=80, deadline=None)
@given(distinct_means, st.data())
def test_gaps_and_h_match_the_case_definitions(means, data):
    m = data.draw(st.integers(1, len(means) - 1))
    p = data.draw(st.floats(0.1, 2.0))
    np.testing.assert_allclose(complexity.gaps(means, m), naive_gaps(means, m), rtol=1e-12, atol=1e-12)
    assert complexity.h1(means, m) == pytest.approx(sum(g**-2 for g in naive_gaps(means, m)), rel=1e-10)
    assert complexity.h_p(means, p, m) == pytest.approx(naive_h(means, m, p), rel=1e-10)
    assert complexity.h2(means, m) == pytest.approx(naive_h(means, m, 1.0), rel=1e-10)


@settings(max_examples=80, deadline=None)
@given(distinct_means, st.data())
def test_identities_of_shahrampour_and_tarokh(means, data):
    m = data.draw(st.integers(1, len(means) - 1))
    n_arms = len(means)
    h2 = complexity.h2(means, m)
    # "H^(M)(1) = H2^(M)" (Shahrampour and Tarokh 2017, after eq. (4)).
    assert complexity.h_p(means, 1.0, m) == pytest.approx(h2, rel=1e-12)
    # "for p in (0, 1), H^(M)(p) <= H2^(M), and for p in (1, 2], H^(M)(p) >= H2^(M)" (Shahrampour and Tarokh 2017,
    # Section II.B).
    assert complexity.h_p(means, data.draw(st.floats(0.05, 0.99)), m) <= h2 * (1 + 1e-12)
    assert complexity.h_p(means, data.draw(st.floats(1.01, 2.0)), m) >= h2 * (1 - 1e-12)
    # H2 <= H1 <= logbar(K) H2, derived here: i Delta_(i)^-2 <= sum_{j<=i} Delta_(j)^-2 <= H1, and
    # H1 = sum_i (1/i) i Delta_(i)^-2 <= (1/2 + sum_{i>=2} 1/i) H2 because Delta_(1) = Delta_(2) (both boundary
    # arms share the smallest gap), so Delta_(1)^-2 <= H2 / 2. This is where logbar's 1/2 comes from.
    h1 = complexity.h1(means, m)
    assert h2 <= h1 * (1 + 1e-12)
    assert h1 <= complexity.logbar(n_arms) * h2 * (1 + 1e-12)


@settings(max_examples=60, deadline=None)
@given(distinct_means)
def test_best_arm_special_case(means):
    ranked = sorted(means, reverse=True)
    # Shahrampour and Tarokh (2017), eq. (2): H1 sums over arms 2..K; the top-1 H1^(1) of eq. (4) adds the best arm's
    # (mu_1 - mu_2)^-2.
    expected_h1 = sum((ranked[0] - value) ** -2 for value in ranked[1:])
    assert complexity.h1_bai(means) == pytest.approx(expected_h1, rel=1e-10)
    assert complexity.h1(means, 1) == pytest.approx(expected_h1 + (ranked[0] - ranked[1]) ** -2, rel=1e-10)
    # eq. (2): H2 = max_{i != 1} i / Delta_i^2 with the arms ranked by decreasing mean; eq. (4) with M = 1 agrees.
    expected_h2 = max((i + 1) / (ranked[0] - ranked[i]) ** 2 for i in range(1, len(ranked)))
    assert complexity.h2(means, 1) == pytest.approx(expected_h2, rel=1e-10)
    # "H2 ... is equal to H1 up to logarithmic factors in K" (Shahrampour and Tarokh 2017, after eq. (2)); derived here:
    # H1 = sum_{i>=2} (1/i) i Delta_i^-2 <= (logbar(K) - 1/2) H2, and (i - 1) Delta_i^-2 <= sum_{j=2..i} Delta_j^-2
    # <= H1 gives i Delta_i^-2 <= 2 H1, so H2 <= 2 H1.
    h1_bai, h2 = complexity.h1_bai(means), complexity.h2(means, 1)
    assert h2 / 2 <= h1_bai * (1 + 1e-12)
    assert h1_bai <= (complexity.logbar(len(means)) - 0.5) * h2 * (1 + 1e-12)


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 300), st.floats(0.05, 3.0))
def test_c_p_against_logbar(n_arms, p):
    # Shahrampour and Tarokh (2017), Section II.B: C_p > logbar(K) for p in (0, 1) and C_p < logbar(K) for p in (1, 2];
    # C_1 = logbar(K) (every term 2^-p, r^-p moves the same way as p crosses 1).
    assert complexity.c_p(n_arms, 1.0) == pytest.approx(complexity.logbar(n_arms), rel=1e-14)
    if p < 0.999:
        assert complexity.c_p(n_arms, p) > complexity.logbar(n_arms)
    elif p > 1.001:
        assert complexity.c_p(n_arms, p) < complexity.logbar(n_arms)


@settings(max_examples=40, deadline=None)
@given(distinct_means, st.data())
def test_order_shift_and_scale(means, data):
    m = data.draw(st.integers(1, len(means) - 1))
    permutation = data.draw(st.permutations(range(len(means))))
    shuffled = [means[i] for i in permutation]
    # the measures depend on the multiset of means only, and gaps follow the arms
    assert complexity.h1(shuffled, m) == pytest.approx(complexity.h1(means, m), rel=1e-12)
    np.testing.assert_allclose(complexity.gaps(shuffled, m), complexity.gaps(means, m)[permutation], rtol=1e-12)
    # gaps are differences of means: invariant under a shift, and H scales as scale^-2
    shifted = np.asarray(means) + 3.0
    assert complexity.h2(shifted, m) == pytest.approx(complexity.h2(means, m), rel=1e-6)
    assert complexity.h1(2.0 * np.asarray(means), m) == pytest.approx(complexity.h1(means, m) / 4, rel=1e-10)


def test_batches_match_single_instances(rng):
    batch = rng.random((3, 4, 7))
    for function in (lambda x: complexity.h1(x, 3), lambda x: complexity.h2(x, 2), lambda x: complexity.h1_bai(x),
                     lambda x: complexity.h_p(x, 0.7, 3), lambda x: complexity.gaps(x, 3)):
        result = function(batch)
        expected = np.array([[function(row) for row in block] for block in batch])
        np.testing.assert_allclose(result, expected, rtol=1e-14)


def test_ties_inside_the_groups_are_fine_but_not_at_the_boundary():
    # ties among the top arms and among the others leave the top-2 set unique (setup 1 of Shahrampour and Tarokh 2017
    # has them)
    assert complexity.h2([0.7, 0.7, 0.5, 0.5, 0.5], 2) == pytest.approx(5 / 0.2**2, rel=1e-12)
    with pytest.raises(InvalidInstanceError, match=r"arms \[1, 2\] tie at the boundary"):
        complexity.h1([0.9, 0.5, 0.5, 0.1], 2)
    # gaps alone do not divide: a boundary tie gives zero gaps for the tied arms
    np.testing.assert_allclose(complexity.gaps([0.9, 0.5, 0.5, 0.1], 2), [0.4, 0.0, 0.0, 0.4], atol=1e-15)


def test_batch_tie_names_the_instance():
    batch = np.array([[0.9, 0.5, 0.1], [0.5, 0.5, 0.1]])
    with pytest.raises(InvalidInstanceError, match=r"arms \[0, 1\] tie .* \(instance \(1,\)\)"):
        complexity.h2(batch, 1)


def test_logbar_large_k_against_the_harmonic_asymptotics():
    # logbar(K) = H_K - 1/2 and H_K = log K + Euler's gamma + 1/(2K) - 1/(12 K^2) + O(K^-4)
    n_arms = 10**6
    expected = math.log(n_arms) + 0.5772156649015329 + 1 / (2 * n_arms) - 1 / (12 * n_arms**2) - 0.5
    assert complexity.logbar(n_arms) == pytest.approx(expected, rel=1e-12)


def test_tiny_gaps_give_infinite_hardness_without_warnings():
    # a gap of 1e-200 makes Delta^-2 = 1e400, beyond float64: the measures are +inf (pyproject turns any
    # RuntimeWarning from allocopt into an error, so an overflow warning would fail this test)
    assert complexity.h1([0.0, 1e-200, -1.0], 1) == np.inf
    assert complexity.h_p([0.0, 1e-200, 1.0], 0.5, 2) == np.inf
    assert complexity.spread_constant([0.0, 1e-310]) == np.inf
