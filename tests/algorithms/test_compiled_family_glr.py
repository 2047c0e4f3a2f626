"""The compiled Chernoff statistic of the non-Gaussian families against its numpy twin
(allocopt.algorithms.stopping.glr_statistic_numpy), to the pair kernels' error bound (tests/tolerance.py), and the outcomes of the rules stopped by it on
Bernoulli arms with and without it."""

from __future__ import annotations

import numpy as np
import pytest

from allocopt import TopKProblem
from allocopt.algorithms import identify
from allocopt.algorithms._compiled import AVAILABLE, compiled_kernels
from allocopt.algorithms.stopping import glr_statistic, glr_statistic_numpy
from allocopt.algorithms._pair_kernels import pair_cost_grid, sort_arms
from allocopt.families import Bernoulli, Exponential, Gamma, Gaussian, Poisson
from tolerance import assert_within, minimiser_within

pytestmark = pytest.mark.skipif(not AVAILABLE, reason="numba is not importable")


def _state(family, rng, trial):
    """200 runs' counts and empirical means: random K and k, few pulls (Bernoulli means of 0 and 1, ties within
    and across the top-k boundary), many pulls, and unequal counts."""
    n_arms = int(rng.integers(2, 12))
    k = [1, n_arms - 1, int(rng.integers(1, n_arms))][trial % 3]
    counts = rng.integers(1, [4, 60, 5000][trial % 3], (200, n_arms))
    if family.name == "bernoulli":
        theta = rng.uniform(0.05, 0.95, n_arms)
        means = rng.binomial(counts, theta) / counts
    elif family.name == "poisson":
        means = rng.poisson(counts * rng.uniform(0.2, 3.0, n_arms)) / counts  # means of 0 included
    else:
        means = rng.gamma(counts, rng.uniform(0.5, 2.0, n_arms)) / counts
    return counts, means, k


@pytest.mark.twin
@pytest.mark.parametrize("family", [Bernoulli(), Poisson(), Exponential(), Gamma(2.5)], ids=repr)
def test_the_compiled_statistic_equals_its_numpy_twin(family):
    # the empirical top-k bit for bit (pure IEEE arithmetic); the statistic within twice the pair kernels' error
    # bound, and the compiled minimising pair one of the numpy pairs within that bound of the minimum (the pairs
    # differ only where numpy's log is not the C library's; tests/tolerance.py)
    rng = np.random.default_rng(23)
    for trial in range(9):
        counts, means, k = _state(family, rng, trial)
        dispersion = np.asarray(family.arm_dispersion(means.shape[1]), dtype=float)
        compiled = glr_statistic(family, dispersion, counts, means, k)
        numpy_twin = glr_statistic_numpy(family, dispersion, counts, means, k)
        assert np.array_equal(compiled.top, numpy_twin.top) and np.array_equal(compiled.bottom, numpy_twin.bottom)
        bound = 2.0 * family.pair_error_bound("confidence", means[(means > 0) & (means < np.inf)])
        assert_within(compiled.value, numpy_twin.value, bound, trial)
        for row in range(counts.shape[0]):
            arms = sort_arms(means[row], counts[row] / dispersion, k)  # the numpy statistic's pair grid
            with np.errstate(all="ignore"):
                cost = pair_cost_grid(family, "confidence", arms)[0]
            cost = np.where((arms.value_top > arms.value_bottom) & ~np.isnan(cost), cost, 0.0)
            chosen = (list(arms.top).index(compiled.pair_top[row]) * cost.shape[1]
                      + list(arms.bottom).index(compiled.pair_bottom[row]))
            assert minimiser_within(cost.ravel(), chosen, bound), (trial, row)
        if family.name == "bernoulli" and trial % 3 == 0:  # the premise: ties and means on the domain's ends
            assert (numpy_twin.value == 0).any() and ((means == 0) | (means == 1)).any()


def test_the_compiled_statistic_is_offered_only_where_there_is_a_kernel():
    from allocopt.algorithms._loop import GAUSSIAN_STATISTIC
    from allocopt.algorithms.stopping import statistic_code

    assert statistic_code(Gaussian(1.0)) == GAUSSIAN_STATISTIC  # harmonic costs: the closed form
    assert statistic_code(Bernoulli()) is not None

    class Custom(Bernoulli):  # its own numpy kernel: no compiled one
        def unit_confidence_pair(self, *arguments):
            return super().unit_confidence_pair(*arguments)

    assert statistic_code(Custom()) is None
    with compiled_kernels(False):
        assert statistic_code(Bernoulli()) is None


@pytest.mark.twin
@pytest.mark.parametrize("rule", ["track-and-stop", "kkt-ts", "uniform"])
def test_outcomes_on_bernoulli_arms_are_the_same_with_and_without_the_compiled_statistic(rule):
    problem = TopKProblem([0.9, 0.8, 0.7, 0.6, 0.5, 0.4], 2, family="bernoulli")
    options = dict(delta=(0.1, 0.01), n_runs=6, rng=7, n_jobs=1, max_samples=3000)
    compiled = identify(problem, rule, **options)
    with compiled_kernels(False):
        numpy_twin = identify(problem, rule, **options)
    for name in ("stopping_times", "recommendations", "pulls", "stopped"):
        assert np.array_equal(getattr(compiled, name), getattr(numpy_twin, name)), name
