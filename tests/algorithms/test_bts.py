"""BTS (Wang, Yang, You 2022, Appendix D): KKT-TS restricted to Theorem 3.4's pairs (i_k, j) and (i, j_1),
choosing within the pair by the balance (16); checked on hand-made states against costs and null vectors
computed independently in the tests."""

from __future__ import annotations

import math

import numpy as np
import pytest

from allocopt import TopKProblem
from allocopt.algorithms import BTS, RuleContext, RunView, identify
from allocopt.algorithms.rules.bts import double_star
from allocopt.exceptions import InvalidArgumentError
from allocopt.families import get_family


def _view(counts, sums):
    return RunView(int(counts.sum()), counts, sums, sums / counts, 0.0, None, None, None, None)


def test_double_star_pairs():
    # top-3 of theta: arms 1, 3, 4 (0.9, 0.7, 0.5); i_k = 4; bottom 0, 2, 5; j_1 = 0 (0.3)
    theta = np.array([0.3, 0.9, 0.1, 0.7, 0.5, 0.2])
    pair_top, pair_bottom, top, bottom = double_star(theta, 3)
    assert list(zip(pair_top.tolist(), pair_bottom.tolist())) == [(4, 0), (4, 2), (4, 5), (1, 0), (3, 0)]
    batch = double_star(np.stack([theta, theta[::-1]]), 3)
    assert batch[0][0].tolist() == pair_top.tolist()
    # reversed: arms 4, 2, 1 on top (0.9, 0.7, 0.5 at positions 4, 2, 1); i_k = 1; j_1 = 5 (0.3)
    assert list(zip(batch[0][1].tolist(), batch[1][1].tolist())) == [(1, 0), (1, 3), (1, 5), (2, 5), (4, 5)]
    one = double_star(np.array([0.2, 0.9, 0.5]), 1)
    assert list(zip(one[0].tolist(), one[1].tolist())) == [(1, 0), (1, 2)]


def _gaussian_expected(means, counts, variance, k):
    order = np.argsort(-means)
    top, bottom = order[:k], order[k:]
    worst, best = top[np.argmin(means[top])], bottom[np.argmax(means[bottom])]
    pairs = [(worst, j) for j in sorted(bottom)] + [(i, best) for i in sorted(top) if i != worst]
    cost = {p: (means[p[0]] - means[p[1]]) ** 2 / (2 * (variance[p[0]] / counts[p[0]] + variance[p[1]] / counts[p[1]]))
            for p in pairs}
    i, j = min(cost, key=cost.get)
    squares = counts.astype(float) ** 2 / variance
    return (i if squares[top].sum() < squares[bottom].sum() else j), (i, j)


@pytest.mark.parametrize("counts", [np.array([40, 35, 50, 20, 10, 8]), np.array([10, 12, 30, 28, 25, 15])])
def test_gaussian_bts_pulls_by_the_sum_of_squares_balance_of_the_sample(counts):
    # u = 1/2 for every arm: the posterior sample is the vector of means (the median of N(mean, s^2/N))
    variance = np.array([0.25, 0.25, 0.5, 0.25, 1.0, 0.25])
    means = np.array([1.0, 0.8, 0.6, 0.5, 0.2, 0.1])
    context = RuleContext(6, 3, get_family("gaussian", variance=variance), variance)
    expected, pair = _gaussian_expected(means, counts, variance, 3)
    arm = BTS().select(context, _view(counts, means * counts), {}, np.full(7, 0.5))
    assert arm == expected
    assert arm in pair


def test_the_two_gaussian_states_exercise_both_sides():
    variance = np.array([0.25, 0.25, 0.5, 0.25, 1.0, 0.25])
    means = np.array([1.0, 0.8, 0.6, 0.5, 0.2, 0.1])
    sides = set()
    for counts in (np.array([40, 35, 50, 20, 10, 8]), np.array([10, 12, 30, 28, 25, 15])):
        arm, (i, j) = _gaussian_expected(means, counts, variance, 3)
        sides.add("top" if arm == i else "bottom")
    assert sides == {"top", "bottom"}


def _kl(p, q):
    return p * math.log(p / q) + (1 - p) * math.log((1 - p) / (1 - q))


@pytest.mark.parametrize("counts, side", [(np.array([30, 50, 60, 40, 10]), "top"),
                                          (np.array([60, 10, 12, 20, 80]), "top"),
                                          (np.array([80, 90, 20, 15, 10]), "bottom")])
def test_bernoulli_bts_balances_the_double_star_null_vector(counts, side):
    # k = 2; the posterior sample at u = 1/2 is the median of Beta(1 + S, 1 + F), computed here with scipy
    from scipy import stats

    means = np.array([0.8, 0.65, 0.6, 0.4, 0.2])
    sums = means * counts
    theta = stats.beta.ppf(0.5, 1 + sums, 1 + counts - sums)
    order = np.argsort(-theta)
    top, bottom = order[:2], order[2:]
    worst, best = top[np.argmin(theta[top])], bottom[np.argmax(theta[bottom])]

    def derivatives(i, j):
        """(d_i C_ij, d_j C_ij, C_ij) at weights N: d(theta_a, m) with m the weighted mean."""
        m = (counts[i] * theta[i] + counts[j] * theta[j]) / (counts[i] + counts[j])
        d_i, d_j = _kl(theta[i], m), _kl(theta[j], m)
        return d_i, d_j, counts[i] * d_i + counts[j] * d_j

    pairs = [(worst, j) for j in sorted(bottom)] + [(i, best) for i in sorted(top) if i != worst]
    costs = {p: derivatives(*p)[2] for p in pairs}
    i, j = min(costs, key=costs.get)
    # null vector: z_{i_k} = 1, z_j = -d_{i_k}/d_j on (i_k, j), z_i = |z_{j_1}| d_{j_1}/d_i on (i, j_1)
    z_bottom = {b: derivatives(worst, b)[0] / derivatives(worst, b)[1] for b in bottom}
    z_top = {worst: 1.0}
    for a in top:
        if a != worst:
            d_a, d_best, _ = derivatives(a, best)
            z_top[a] = z_bottom[best] * d_best / d_a
    expected = i if sum(z_top.values()) < sum(z_bottom.values()) else j
    assert (expected == i) == (side == "top")
    context = RuleContext(5, 2, get_family("bernoulli"), np.ones(5))
    assert BTS().select(context, _view(counts, sums), {}, np.full(6, 0.5)) == expected


def test_a_sample_tied_across_the_boundary_uses_the_sum_of_squares_of_the_counts():
    # Beta(6, 1) quantiles at u = 1 - 2^-53 round to 1 and are clipped to the same value for arms 0 and 1
    # (k = 1): the pair (0, 1) costs 0 and its derivatives vanish; counts (5, 5, 5): 25 < 50 -> the top arm 0
    context = RuleContext(3, 1, get_family("bernoulli"), np.ones(3))
    counts, sums = np.array([5, 5, 5]), np.array([5.0, 5.0, 0.0])
    uniforms = np.array([1 - 2.0**-53, 1 - 2.0**-53, 0.5, 0.1])
    assert BTS().select(context, _view(counts, sums), {}, uniforms) == 0


def test_scalar_and_batched_runs_agree_and_bts_identifies():
    problem = TopKProblem([1.0, 0.8, 0.7, 0.3, 0.0], k=2, variance=0.25)
    batched = identify(problem, BTS(kind="budget"), delta=0.01, n_runs=4, rng=6, max_samples=300)
    scalar = identify(problem, BTS(kind="budget"), delta=0.01, n_runs=4, rng=6, max_samples=300, batched=False)
    assert np.array_equal(batched.pulls, scalar.pulls)


def test_bad_kind_is_named():
    with pytest.raises(InvalidArgumentError, match="'kind' parameter of BTS"):
        BTS(kind="fixed")
