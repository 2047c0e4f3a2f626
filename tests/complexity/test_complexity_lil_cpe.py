"""The LIL radius and c_eps (Jiang, Li, Qiao 2017, Lemma 2.1, Section 5) and their combinatorial pure exploration gaps
(Section 4.2)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allocopt import complexity
from allocopt.exceptions import InvalidArgumentError, InvalidInstanceError


def paper_radius(t: float, omega: float, eps: float, sigma: float, shift: float = 0.0) -> float:
    """Jiang, Li, Qiao (2017), Lemma 2.1 written out with the math module; shift = 2 gives the form of Section 5."""
    return (1 + math.sqrt(eps)) * math.sqrt(2 * sigma**2 * (1 + eps) / t * math.log(math.log((1 + eps) * t + shift)
                                                                                  / omega))


@pytest.mark.parametrize("t", [1, 2, 10, 1000, 10**6])
def test_lil_radius_both_forms(t):
    # omega = 0.01 < log(1.5)/e = 0.149 (Lemma 2.1's range for eps = 0.5); sigma = 1/2 (variance 1/4, Section 5)
    assert complexity.lil_radius(t, 0.01, 0.5, 0.5) == pytest.approx(paper_radius(t, 0.01, 0.5, 0.5), rel=1e-13)
    assert complexity.lil_radius(t, 0.01, 0.5, 0.5, form="experiments") == pytest.approx(
        paper_radius(t, 0.01, 0.5, 0.5, shift=2.0), rel=1e-13)
    # the heuristic runs of Section 5 use eps = 0 with the experiments' form
    assert complexity.lil_radius(t, 0.01, 0.0, 0.5, form="experiments") == pytest.approx(
        math.sqrt(2 * 0.25 / t * math.log(math.log(t + 2) / 0.01)), rel=1e-13)


def test_lil_radius_vectorised_and_ordered():
    counts = np.arange(1, 200)
    paper = complexity.lil_radius(counts, 0.001, 0.2, 1.0)
    experiments = complexity.lil_radius(counts, 0.001, 0.2, 1.0, form="experiments")
    assert paper.shape == counts.shape
    # log((1 + eps) t + 2) > log((1 + eps) t), so the experiments' radius is the wider one
    assert np.all(experiments > paper)
    # the radius scales linearly with sigma
    np.testing.assert_allclose(complexity.lil_radius(counts, 0.001, 0.2, 3.0), 3 * paper, rtol=1e-14)


def test_lil_radius_refuses_a_non_real_radius():
    # t = 1, eps = 0.5: log(1.5) = 0.405 < omega = 0.5, so log(log((1+eps) t) / omega) < 0
    with pytest.raises(InvalidArgumentError, match=r"'omega' parameter of lil_radius .* t = \[1.\]"):
        complexity.lil_radius([1, 5], 0.5, 0.5, 1.0)
    with pytest.raises(InvalidArgumentError, match=r"'eps' parameter of lil_radius must be a finite number > 0"):
        complexity.lil_radius(10, 0.01, 0.0, 1.0)


def test_c_eps_by_hand():
    # Jiang, Li, Qiao (2017), Lemma 2.1: c_eps = ((2 + eps)/eps) (1/log(1 + eps))^(1 + eps)
    for eps in (0.01, 0.1, 0.5, 0.99):
        assert complexity.c_eps(eps) == pytest.approx((2 + eps) / eps * (1 / math.log(1 + eps)) ** (1 + eps),
                                                      rel=1e-13)


def test_cpe_gaps_by_hand():
    # mu = (0.9, 0.6, 0.5, 0.1), class {01, 02, 12, 23}: mu(OPT = {0, 1}) = 1.5.
    # arm 0 in OPT: best set without it {1, 2} = 1.1 -> 0.4; arm 1: best without {0, 2} = 1.4 -> 0.1;
    # arm 2 not in OPT: best with it {0, 2} = 1.4 -> 0.1; arm 3: best with it {2, 3} = 0.6 -> 0.9.
    decision_class = [(0, 1), (0, 2), (1, 2), (2, 3)]
    np.testing.assert_allclose(complexity.cpe_gaps([0.9, 0.6, 0.5, 0.1], decision_class), [0.4, 0.1, 0.1, 0.9],
                               rtol=1e-12)
    assert complexity.cpe_h([0.9, 0.6, 0.5, 0.1], decision_class) == pytest.approx(
        0.4**-2 + 2 * 0.1**-2 + 0.9**-2, rel=1e-12)
    # an arm in every feasible set (or in none) has no alternative: gap +inf, no contribution to H
    gaps = complexity.cpe_gaps([0.9, 0.6, 0.5, 0.1], [(0, 1), (0, 2)])
    assert gaps[0] == math.inf and gaps[3] == math.inf


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-200, 200), min_size=2, max_size=7, unique=True).map(lambda xs: [x / 100 for x in xs]),
       st.data())
def test_top_k_class_gives_the_best_k_gaps(means, data):
    # means on a grid of 0.01 so that distinct subsets have distinct totals in floating point.
    # Jiang, Li, Qiao (2017), Section 4.2: Best-K is CPE with the class of all K-subsets; its CPE gaps are the Best-K
    # gaps (the best set without a top arm i swaps i for arm K+1; the best set with another arm j swaps out arm K)
    k = data.draw(st.integers(1, len(means) - 1))
    decision_class = complexity.top_k_decision_class(len(means), k)
    np.testing.assert_allclose(complexity.cpe_gaps(means, decision_class), complexity.gaps(means, k),
                               rtol=1e-9, atol=1e-12)
    assert complexity.cpe_h(means, decision_class) == pytest.approx(complexity.h1(means, k), rel=1e-7)


def test_cpe_batches_and_ties(rng):
    batch = rng.random((3, 5))
    decision_class = [(0, 1, 2), (1, 3), (4,), ()]
    np.testing.assert_allclose(complexity.cpe_gaps(batch, decision_class),
                               [complexity.cpe_gaps(row, decision_class) for row in batch])
    with pytest.raises(InvalidInstanceError, match=r"subsets \[\(0,\), \(1,\)\] tie"):
        complexity.cpe_gaps([0.5, 0.5, 0.1], [(0,), (1,), (2,)])


@pytest.mark.parametrize(("n_arms", "k"), [(4, 1), (4, 2), (5, 2), (6, 3)])
def test_top_k_width_is_two(n_arms, k):
    # CLK+14 Section 3.1 (via Jiang, Li, Qiao (2017), Section 4.2): the single swaps b = ({f}, {e}) form an exchange
    # class of the K-subsets: for any M != M' and e in M \ M' there is f in M' \ M with M - e + f feasible. Checked by
    # brute force; no exchange of size 1 keeps the size K, so the width is exactly 2.
    decision_class = [set(subset) for subset in complexity.top_k_decision_class(n_arms, k)]
    for first, second in itertools.permutations(decision_class, 2):
        for removed in first - second:
            assert any((first - {removed}) | {added} in decision_class for added in second - first)
    assert complexity.top_k_width(n_arms, k) == 2
    assert len(decision_class) == math.comb(n_arms, k)


def test_lil_sample_complexity_is_the_sum_of_theorems_3_1_and_4_1():
    # Jiang, Li, Qiao (2017), Theorems 3.1 and 4.1: sum_i Delta_i^-2 (log 1/delta + log N + log log 1/Delta_i),
    # written out arm by arm with the standard library (log log clamped at max(1/Delta, e))
    import math

    from allocopt.complexity import lil_sample_complexity

    means = [0.9, 0.5, 0.45, 0.3, 0.01, 0.0]
    top = sorted(means, reverse=True)
    boundary_high, boundary_low = top[1], top[2]  # m = 2
    gaps = [mean - boundary_low if mean >= boundary_high else boundary_high - mean for mean in means]
    expected = sum((math.log(1 / 0.05) + math.log(6) + math.log(math.log(max(1 / gap, math.e)))) / gap**2
                   for gap in gaps)
    assert math.isclose(float(lil_sample_complexity(means, 2, 0.05)), expected, rel_tol=1e-13)
    batch = lil_sample_complexity([means, means[::-1]], 2, 0.05)
    assert batch.shape == (2,) and np.allclose(batch, expected, rtol=1e-13)
    with pytest.raises(InvalidArgumentError, match="delta"):
        lil_sample_complexity(means, 2, 0.0)
