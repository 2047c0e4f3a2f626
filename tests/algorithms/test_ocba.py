"""OCBAss ("ocba-balanced") and OCBASS ("ocba-unbalanced") of Wang, Yang, You (2022, Appendix C.3) against
their definitions on hand-made states; the pair costs are computed independently in the tests."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from allocopt import TopKProblem
from allocopt.algorithms import OCBA, POLICIES, Pull, RuleContext, RunView, identify
from allocopt.exceptions import InvalidArgumentError
from allocopt.families import get_family


def _view(counts, means):
    return RunView(int(counts.sum()), counts, means * counts, means, 0.0, None, None, None, None)


def _gaussian_pair(means, counts, variance, k):
    """argmin over the empirical top-k x the others of (m_i - m_j)^2 / (s_i^2/N_i + s_j^2/N_j) (OCBA's ratio)."""
    order = np.argsort(-means, kind="stable")
    top, bottom = sorted(order[:k]), sorted(order[k:])
    costs = {(i, j): (means[i] - means[j]) ** 2 / (variance[i] / counts[i] + variance[j] / counts[j])
             for i, j in itertools.product(top, bottom)}
    return min(costs, key=costs.get), top, bottom


def test_the_registered_names_are_the_two_rules():
    assert POLICIES["ocba-balanced"]() == OCBA(balance=True)
    assert POLICIES["ocba-unbalanced"]() == OCBA(balance=False)
    assert OCBA().initial_pulls == 10 and OCBA().block == 10


@pytest.mark.parametrize("counts, expected_side", [
    # top {0, 1}: 40^2 + 30^2 = 2500 >= bottom 20^2 + 30^2 + 25^2 = 1925 -> the bottom arm
    (np.array([40, 30, 20, 30, 25]), "bottom"),
    # top 10^2 + 12^2 = 244 < bottom 20^2 + 15^2 + 10^2 = 725 -> the top arm
    (np.array([10, 12, 20, 15, 10]), "top"),
])
def test_ocbass_pulls_the_pair_arm_that_balances_the_sums_of_squares(counts, expected_side):
    variance = np.full(5, 0.25)
    context = RuleContext(5, 2, get_family("gaussian", variance=0.25), variance)
    means = np.array([1.0, 0.7, 0.55, 0.3, 0.0])
    (i, j), top, bottom = _gaussian_pair(means, counts, variance, 2)
    top_squares, bottom_squares = sum(counts[a] ** 2 for a in top), sum(counts[a] ** 2 for a in bottom)
    assert (top_squares < bottom_squares) == (expected_side == "top")
    action = OCBA(balance=True).select(context, _view(counts, means), {}, np.array([0.3, 0.9]))
    assert action == Pull(i if expected_side == "top" else j, 10)


def test_ocbass_weights_the_squares_by_the_variances():
    # heteroscedastic Gaussian arms: N_a^2 / sigma_a^2 (Proposition 3.3's balance); top 10^2/0.25 = 400 against
    # bottom 20^2/1 = 400 + 10^2/1 = 100 -> 400 < 500: the top arm
    variance = np.array([0.25, 1.0, 1.0])
    context = RuleContext(3, 1, get_family("gaussian", variance=variance), variance)
    counts, means = np.array([10, 20, 10]), np.array([1.0, 0.5, 0.2])
    (i, j), _, _ = _gaussian_pair(means, counts, variance, 1)
    assert OCBA(balance=True, block=3).select(context, _view(counts, means), {}, np.array([0.5, 0.5])) == Pull(i, 3)


@pytest.mark.parametrize("coin, side", [(0.2, "top"), (0.7, "bottom")])
def test_ocbass_without_balance_chooses_within_the_pair_by_a_fair_coin(coin, side):
    variance = np.full(5, 0.25)
    context = RuleContext(5, 2, get_family("gaussian", variance=0.25), variance)
    counts, means = np.array([40, 30, 20, 30, 25]), np.array([1.0, 0.7, 0.55, 0.3, 0.0])
    (i, j), _, _ = _gaussian_pair(means, counts, variance, 2)
    action = OCBA(balance=False).select(context, _view(counts, means), {}, np.array([0.3, coin]))
    assert action == Pull(i if side == "top" else j, 10)


def test_minimal_pairs_tied_are_chosen_at_random():
    # means (1, 1, 0, 0), equal counts, k = 2: the four pairs (0,2), (0,3), (1,2), (1,3) cost the same; a
    # tie-break uniform of 0.6 takes candidate floor(0.6 * 4) = 2 in row-major order: (1, 2); the top sum of
    # squares equals the bottom one, so OCBAss pulls the bottom arm 2
    context = RuleContext(4, 2, get_family("gaussian", variance=1.0), np.ones(4))
    counts, means = np.full(4, 10), np.array([1.0, 1.0, 0.0, 0.0])
    assert OCBA().select(context, _view(counts, means), {}, np.array([0.6, 0.5])) == Pull(2, 10)
    assert OCBA(balance=False).select(context, _view(counts, means), {}, np.array([0.6, 0.1])) == Pull(1, 10)


def test_bernoulli_pairs_use_the_family_cost():
    # C_ij = N_i kl(m_i, x) + N_j kl(m_j, x), x = (N_i m_i + N_j m_j)/(N_i + N_j), computed here with math.log
    def kl(p, q):
        return p * math.log(p / q) + (1 - p) * math.log((1 - p) / (1 - q))

    counts, means = np.array([10, 40, 12, 30]), np.array([0.9, 0.6, 0.5, 0.2])
    costs = {}
    for i, j in itertools.product([0, 1], [2, 3]):
        x = (counts[i] * means[i] + counts[j] * means[j]) / (counts[i] + counts[j])
        costs[(i, j)] = counts[i] * kl(means[i], x) + counts[j] * kl(means[j], x)
    i, j = min(costs, key=costs.get)
    context = RuleContext(4, 2, get_family("bernoulli"), np.ones(4))
    # top squares 100 + 1600 > bottom 144 + 900: the bottom arm
    assert OCBA().select(context, _view(counts, means), {}, np.array([0.5, 0.5])) == Pull(j, 10)


@pytest.mark.parametrize("balance", [True, False])
def test_runs_start_with_the_initial_pulls_and_pull_in_blocks(balance):
    problem = TopKProblem([1.0, 0.8, 0.5, 0.3, 0.0], k=2, variance=0.25)
    rule = OCBA(balance=balance, block=7, initial=4)
    result = identify(problem, rule, delta=0.01, n_runs=5, rng=2, max_samples=10**5)
    assert np.all(result.pulls >= 4)
    assert np.all((result.pulls - 4) % 7 == 0)
    batched = identify(problem, rule, delta=0.01, n_runs=3, rng=9, max_samples=300)
    scalar = identify(problem, rule, delta=0.01, n_runs=3, rng=9, max_samples=300, batched=False)
    assert np.array_equal(batched.pulls, scalar.pulls)


@pytest.mark.parametrize("kwargs, match", [
    ({"block": 0}, "'block' parameter of OCBA must be an integer >= 1"),
    ({"initial": 0}, "'initial' parameter of OCBA must be an integer >= 1"),
    ({"block": 2.5}, "'block' parameter of OCBA"),
    ({"balance": "yes"}, "'balance' parameter of OCBA"),
])
def test_bad_options_are_named(kwargs, match):
    with pytest.raises(InvalidArgumentError, match=match):
        OCBA(**kwargs)
