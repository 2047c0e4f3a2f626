"""Tied means on the exact solver's fast path (issue 29, item 6): the double star of the tie groups, for every
family with a fast path (Gaussian closed form, compiled pair kernels), against the general active-set path
(compiled kernels off), the numpy certifier evaluated on the returned allocation and multipliers, and the
symmetry of the optimum (tied arms get equal allocations); the spreading of a group pair's multiplier over its
member pairs against exact rational arithmetic."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from allocopt import TopKProblem, solve_topk
from allocopt._numba import AVAILABLE, compiled_kernels
from allocopt.topk._exact.groups import merge_ties, spread_edge
from allocopt.topk.certificate import certify

TIED = "double star of the tie groups"


def _tied_instances(family, rng, count):
    """Random instances whose means repeat (empirical means of a few pulls, or rounded Gaussian means, and the
    (k-1)-th and k-th, the (k+1)-th and (k+2)-th largest made equal), with distinct k-th and (k+1)-th means."""
    made = 0
    while made < count:
        n_arms = int(rng.integers(3, 26))
        k = int(rng.integers(1, n_arms))
        if family == "bernoulli":
            pulls = int(rng.integers(4, 30))
            theta = np.clip(rng.binomial(pulls, rng.uniform(0.05, 0.95, n_arms)) / pulls, 0.02, 0.98)
        elif family == "gaussian":
            theta = np.round(rng.normal(0.0, 1.0, n_arms), 1)
        else:
            theta = (rng.poisson(rng.uniform(5.0, 50.0, n_arms)) + 1) / 10
        order = np.argsort(-theta, kind="stable")
        if k >= 2:  # the worst top arm and the best bottom arm tied too (the double star's centres)
            theta[order[k - 2]] = theta[order[k - 1]]
        if n_arms - k >= 2:
            theta[order[k + 1]] = theta[order[k]]
        ordered = np.sort(theta)[::-1]
        if ordered[k - 1] == ordered[k] or np.unique(theta).size == n_arms:
            continue
        made += 1
        yield (TopKProblem(theta, k, variance=0.25) if family == "gaussian" else TopKProblem(theta, k, family=family))


@pytest.mark.skipif(not AVAILABLE, reason="numba is not importable")
@pytest.mark.parametrize("kind", ["confidence", "budget"])
@pytest.mark.parametrize("family", ["gaussian", "bernoulli", "poisson", "exponential"])
def test_tied_means_take_the_fast_path_and_give_the_general_paths_certified_optimum(family, kind):
    rng = np.random.default_rng(29)
    used = 0
    for problem in _tied_instances(family, rng, 25):
        result = solve_topk(problem, kind=kind)
        assert result.status == "optimal"
        if TIED not in result.message:  # (the double star of the groups is not always the optimal forest)
            continue
        used += 1
        # the numpy certifier on the returned allocation and multipliers (the member pairs' multipliers)
        reference = certify(problem, result.psi, result.multipliers, kind)
        assert reference.gap <= 1e-9 * reference.value
        agree = 2 * problem.evaluation_error(kind) + 64 * np.finfo(float).eps
        assert result.value == pytest.approx(reference.value, rel=agree)
        assert result.upper_bound == pytest.approx(reference.upper_bound, rel=agree)
        # the general path (tie merging, then the active set) reaches the same optimum
        with compiled_kernels(False):
            general = solve_topk(problem, kind=kind)
        assert TIED not in general.message and general.status == "optimal"
        assert result.value == pytest.approx(general.value, rel=1e-9)
        np.testing.assert_allclose(result.psi, general.psi, rtol=1e-7)
        # tied arms are interchangeable: equal allocations (the optimum the groups describe)
        for mean in np.unique(problem.theta):
            tied = result.psi[problem.theta == mean]
            assert np.all(tied == tied[0])
        assert result.psi.sum() == pytest.approx(1.0, rel=1e-14)
    assert used >= 12  # most of these instances have the double star of their groups as optimal forest


@pytest.mark.skipif(not AVAILABLE, reason="numba is not importable")
def test_tied_arms_of_different_variances_are_left_to_the_general_path():
    # equal means, different variances: not one group, so not the fast path of the groups
    problem = TopKProblem([1.0, 0.6, 0.6, 0.2, 0.0], 3, variance=[0.25, 0.25, 0.5, 0.25, 0.25])
    result = solve_topk(problem)
    assert result.status == "optimal" and TIED not in result.message
    with compiled_kernels(False):
        assert solve_topk(problem).value == pytest.approx(result.value, rel=1e-9)


def test_a_warm_start_from_a_tied_answer_gives_the_same_answer():
    theta = np.array([0.9, 0.9, 0.7, 0.6, 0.6, 0.3, 0.3, 0.1])
    first = solve_topk(TopKProblem(theta, 3, family="bernoulli"))
    problem = TopKProblem(np.where(theta == 0.7, 0.71, theta), 3, family="bernoulli")
    warm, cold = solve_topk(problem, warm_start=first), solve_topk(problem)
    assert warm.status == cold.status == "optimal"
    assert warm.value == pytest.approx(cold.value, rel=1e-12)
    np.testing.assert_allclose(warm.psi, cold.psi, rtol=1e-9)


@pytest.mark.parametrize("n_top, n_bottom", [(1, 1), (1, 4), (3, 1), (2, 3), (4, 6), (5, 5), (7, 3), (12, 8)])
def test_a_group_pairs_multiplier_is_spread_evenly_over_the_members_on_few_pairs(n_top, n_bottom):
    size = n_top + n_bottom
    rows, cols, values = np.empty(size, dtype=int), np.empty(size, dtype=int), np.empty(size)
    end = spread_edge(n_top, n_bottom, 3, 10, 1.0, rows, cols, values, 1)
    count = end - 1
    assert count <= n_top + n_bottom - 1  # the north-west corner rule: a forest of member pairs
    rows, cols, values = rows[1:end], cols[1:end], values[1:end]
    assert set(rows.tolist()) == set(range(3, 3 + n_top)) and set(cols.tolist()) == set(range(10, 10 + n_bottom))
    # each value is a segment's length over n_g n_h: exactly, in rational arithmetic, every top member carries
    # 1/n_g and every bottom member 1/n_h of the group pair's multiplier
    exact = [Fraction(float(value)).limit_denominator(n_top * n_bottom) for value in values]
    for value, fraction in zip(values, exact):
        assert value == pytest.approx(float(fraction), rel=2 * np.finfo(float).eps)
    for member in range(n_top):
        assert sum(f for f, row in zip(exact, rows) if row == 3 + member) == Fraction(1, n_top)
    for member in range(n_bottom):
        assert sum(f for f, col in zip(exact, cols) if col == 10 + member) == Fraction(1, n_bottom)


def test_merge_ties_groups_equal_means_on_each_side_and_refuses_unequal_dispersions():
    theta = np.array([0.3, 0.8, 0.3, 0.8, 0.5, 0.1])
    order = np.array([1, 3, 4, 0, 2, 5])  # top (k = 3): 0.8, 0.8, 0.5; bottom: 0.3, 0.3, 0.1
    group_theta, group_dispersion = np.empty(6), np.empty(6)
    first, count = np.empty(6, dtype=int), np.empty(6, dtype=int)
    dispersion = np.array([1.0, 2.0, 1.0, 2.0, 3.0, 1.0])
    assert merge_ties(theta, order, dispersion, 3, group_theta, group_dispersion, first, count) == (4, 2)
    assert group_theta[:4].tolist() == [0.8, 0.5, 0.3, 0.1]
    assert first[:4].tolist() == [0, 2, 3, 5] and count[:4].tolist() == [2, 1, 2, 1]
    assert group_dispersion[:4].tolist() == [4.0, 3.0, 2.0, 1.0]  # n_g times the members' dispersion
    dispersion[2] = 1.5  # arms 0 and 2 tie in mean, not in dispersion
    assert merge_ties(theta, order, dispersion, 3, group_theta, group_dispersion, first, count) == (0, 0)
