"""The compiled KKT-TS step of the non-Gaussian families against its numpy twin (KKTTS.select_batch_numpy), arm
for arm, and KKT-TS's outcomes on Bernoulli arms with and without it."""

from __future__ import annotations

import numpy as np
import pytest

from allocopt import TopKProblem
from allocopt.algorithms import KKTTS, identify
from allocopt.algorithms._compiled import AVAILABLE, compiled_kernels
from allocopt.algorithms._compiled_family_kkt_ts import family_kkt_ts_arms
from allocopt.algorithms.protocol import RuleContext, RunView
from allocopt.families import Bernoulli, Exponential, Gaussian, Poisson

pytestmark = pytest.mark.skipif(not AVAILABLE, reason="numba is not importable")


def _view(family, rng, trial):
    """300 runs' counts and sums: random K and k, few pulls (posterior samples far apart, Bernoulli sums of 0 and
    of every pull) or many (samples close together), and the step's K + 2 uniforms per run (some tie-breaks and
    coins at 0 and just below 1)."""
    n_arms = int(rng.integers(2, 12))
    k = [1, n_arms - 1, int(rng.integers(1, n_arms))][trial % 3]
    counts = rng.integers(1, [3, 40, 4000][trial % 3], (300, n_arms))
    if family.name == "bernoulli":
        sums = rng.binomial(counts, rng.uniform(0.05, 0.95, n_arms)).astype(float)
    elif family.name == "poisson":
        sums = rng.poisson(counts * rng.uniform(0.2, 3.0, n_arms)).astype(float)
    else:
        sums = rng.gamma(counts, rng.uniform(0.5, 2.0, n_arms))
    uniforms = rng.uniform(1e-12, 1 - 1e-12, (300, n_arms + 2))
    uniforms[::7, n_arms:] = 0.0
    uniforms[3::7, n_arms:] = 1 - 2.0**-53
    view = RunView(np.full(300, counts.sum(axis=1)), counts, sums, sums / counts, None, None, None, None, None)
    return view, k, uniforms


@pytest.mark.parametrize("kind", ["confidence", "budget"])
@pytest.mark.parametrize("family", [Bernoulli(), Poisson(), Exponential()], ids=repr)
def test_the_compiled_step_chooses_the_numpy_steps_arms(family, kind):
    rng = np.random.default_rng(31)
    rule = KKTTS(kind=kind)
    for trial in range(9):
        view, k, uniforms = _view(family, rng, trial)
        n_arms = view.counts.shape[1]
        context = RuleContext(n_arms, k, family, np.asarray(family.arm_dispersion(n_arms), dtype=float))
        compiled = family_kkt_ts_arms(family, kind, context.dispersion, view.counts, view.sums, k, uniforms)
        numpy_twin = rule.select_batch_numpy(context, view, {}, uniforms)
        assert np.array_equal(compiled, numpy_twin), trial


def test_the_compiled_step_is_offered_only_where_it_is_a_twin():
    counts, sums, uniforms = np.array([[4, 2]]), np.array([[3.0, 1.0]]), np.full((1, 4), 0.5)
    assert family_kkt_ts_arms(Gaussian(1.0), "confidence", np.ones(2), counts, sums, 1, uniforms) is None
    with compiled_kernels(False):
        assert family_kkt_ts_arms(Bernoulli(), "confidence", np.ones(2), counts, sums, 1, uniforms) is None


def test_kkt_ts_outcomes_on_bernoulli_arms_are_the_same_with_and_without_the_compiled_step():
    problem = TopKProblem(np.round(np.arange(9, 0, -1) / 10.0, 12), 3, family="bernoulli")
    options = dict(delta=(0.1, 0.01), n_runs=6, rng=5, n_jobs=1)
    compiled = identify(problem, "kkt-ts", **options)
    with compiled_kernels(False):
        numpy_twin = identify(problem, "kkt-ts", **options)
        scalar = identify(problem, "kkt-ts", batched=False, **options)
    for other in (numpy_twin, scalar):
        for name in ("stopping_times", "recommendations", "pulls", "stopped"):
            assert np.array_equal(getattr(compiled, name), getattr(other, name)), name
