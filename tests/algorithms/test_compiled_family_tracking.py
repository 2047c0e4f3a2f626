"""The compiled KKT-Tracking of the non-Gaussian families (DT-TS's solver) against its numpy twin
(allocopt.topk._tracking.kkt_tracking_batch), to the pair kernels' error bound, and DT-TS's outcomes with and without it."""

from __future__ import annotations

import numpy as np
import pytest

from allocopt import TopKProblem
from allocopt.algorithms import DTTS, identify
from allocopt.algorithms._compiled import AVAILABLE, compiled_kernels
from allocopt.algorithms._compiled_family_tracking import family_kkt_tracking, tracking_pair_kernel
from allocopt.algorithms.statistics import top_k_order
from allocopt.families import Bernoulli, Exponential, Gamma, Gaussian, Poisson
from allocopt.topk.tracking import TrackingIterations, kkt_tracking_batch
from tolerance import assert_within

pytestmark = pytest.mark.skipif(not AVAILABLE, reason="numba is not importable")


def _batch(family, rng, trial):
    """30 instances: random K, k in {1, K - 1, random}, means spread or nearly tied (pair costs equal to
    rounding), one exact tie inside the top set and one inside the bottom set."""
    n_arms = int(rng.integers(2, 16))
    k = [1, n_arms - 1, int(rng.integers(1, n_arms))][trial % 3]
    if family.name == "bernoulli":
        theta = rng.uniform(1e-6, 1 - 1e-6, (30, n_arms))
        if trial % 4 == 0:
            theta = 0.5 + rng.integers(-3, 4, (30, n_arms)) * 1e-13
    else:
        theta = rng.uniform(0.1, 5.0, (30, n_arms)) if trial % 4 else 2.0 ** rng.integers(-3, 4, (30, n_arms))
    top, bottom = top_k_order(theta, k)
    rows = np.arange(30)
    keep = theta[rows[:, None], top].min(axis=1) > theta[rows[:, None], bottom].max(axis=1)
    return theta[keep], top[keep], bottom[keep]


def _decided_iterations(family, kind, theta, dispersion, top, bottom, iterations, bound):
    """Per row, the iterations of the numpy KKT-Tracking before its first decision that the pair kernels' error
    bound cannot settle (a second pair cost within ``bound`` of the smallest): up to there both kernels choose the
    same pairs on any machine (tests/tolerance.py)."""
    tracker = TrackingIterations(family, kind, theta, dispersion, top, bottom)
    decided = np.full(theta.shape[0], iterations)
    for iteration in range(iterations):
        with np.errstate(all="ignore"):
            costs = np.sort(tracker.costs().reshape(theta.shape[0], -1), axis=1)
        if costs.shape[1] > 1:
            near = costs[:, 1] <= costs[:, 0] + bound * np.abs(costs[:, 0])
            decided = np.where(near & (decided == iterations), iteration, decided)
        tracker.step()
    return decided


@pytest.mark.twin
@pytest.mark.parametrize("kind", ["confidence", "budget"])
@pytest.mark.parametrize("family", [Bernoulli(), Poisson(), Exponential(), Gamma(2.5)], ids=repr)
def test_compiled_kkt_tracking_equals_its_numpy_twin(family, kind):
    # the same pairs up to the first decision within the error bound, so allocations within that bound (summed
    # over the iterations' updates); bit for bit where numpy's log and exp are the C library's
    rng = np.random.default_rng(11)
    compared = 0
    for trial in range(12):
        theta, top, bottom = _batch(family, rng, trial)
        if theta.shape[0] == 0:
            continue
        dispersion = family.arm_dispersion(theta.shape[1])
        iterations = [1, 7, 60][trial % 3]
        bound = 2.0 * family.pair_error_bound(kind, theta.ravel())
        decided = _decided_iterations(family, kind, theta, dispersion, top, bottom, iterations, bound)
        for count in np.unique(decided[decided > 0]):
            rows = np.flatnonzero(decided == count)
            compiled = family_kkt_tracking(family, theta[rows], dispersion, top[rows], bottom[rows], int(count), kind)
            numpy_twin = kkt_tracking_batch(family, kind, theta[rows], dispersion, top[rows], bottom[rows], int(count))
            assert_within(compiled, numpy_twin, 4 * count * bound, (trial, kind, count))
            compared += rows.size
    assert compared >= 100  # most rows decide every iteration: the comparison is not vacuous


def test_the_compiled_kkt_tracking_is_offered_only_where_it_is_a_twin():
    assert tracking_pair_kernel(Gaussian(1.0)) is None  # harmonic costs: the Gaussian closed-form kernel
    assert tracking_pair_kernel(Bernoulli()) is not None
    with compiled_kernels(False):
        assert tracking_pair_kernel(Bernoulli()) is None
        assert family_kkt_tracking(Bernoulli(), np.array([[0.8, 0.2]]), np.ones(2), np.array([[0]]),
                                   np.array([[1]]), 1) is None


# the scalar loop costs several times the batched numpy loop: the default suite compares the first 2 of the 4 runs
# with it, in two chunks, and the slow suite all 4
@pytest.mark.parametrize("n_scalar_runs", [2, pytest.param(4, marks=pytest.mark.slow)])
@pytest.mark.parametrize("family", ["bernoulli", "poisson"])
def test_dt_ts_outcomes_are_the_same_with_and_without_the_compiled_kernel(family, n_scalar_runs):
    theta = [0.8, 0.7, 0.45, 0.35, 0.3] if family == "bernoulli" else [3.0, 2.5, 1.2, 1.0, 0.8]
    problem = TopKProblem(theta, 2, family=family)
    options = dict(delta=(0.1, 0.01), n_runs=4, rng=7, n_jobs=1, max_samples=800)
    compiled = identify(problem, DTTS(iterations=30), **options)
    with compiled_kernels(False):
        numpy_twin = identify(problem, DTTS(iterations=30), **options)
        # replication i draws from SeedSequence(entropy, spawn_key=(i,)) whatever n_runs: the first runs of the batch
        scalar = identify(problem, DTTS(iterations=30), batched=False, chunk_size=n_scalar_runs // 2,
                          **{**options, "n_runs": n_scalar_runs})
    for other in (numpy_twin, scalar):
        runs = other.stopping_times.shape[0]
        assert np.array_equal(compiled.stopping_times[:runs], other.stopping_times)
        assert np.array_equal(compiled.pulls[:runs], other.pulls)
        assert np.array_equal(compiled.diagnostics["solver_fallbacks"][:runs], other.diagnostics["solver_fallbacks"])
