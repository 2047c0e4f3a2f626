"""The compiled Gaussian kernels against their numpy twins, bit for bit, and identify's outcomes with and
without them.

The numpy twins (``glr_statistic_numpy``, ``KKTTS.select_batch_numpy``) are the engine's vectorised code and
``KKTTS.select`` is the step of one run written after Wang, Yang, You (2022), Algorithm 2; the compiled kernels
must choose the same arms and return the same floating-point numbers on every state, including exact ties of
means across the top-k boundary, exact ties of pair costs (the random tie-break), near-ties one ulp apart,
k = 1 and k = K - 1, and per-arm variances.
"""

from __future__ import annotations

import numpy as np
import pytest

from allocopt import TopKProblem
from allocopt.algorithms import KKTTS, RuleContext, RunView, identify, identify_fixed_budget
from allocopt.algorithms._compiled import AVAILABLE, compiled_enabled, compiled_kernels, gaussian_glr
from allocopt.algorithms.stopping import glr_statistic, glr_statistic_numpy
from allocopt.families import get_family

pytestmark = pytest.mark.skipif(not AVAILABLE, reason="numba is not importable")


def _random_state(rng, trial):
    """A batch of 40 Gaussian runs: random K, k (including 1 and K - 1), counts, means and variances; every
    third trial has integer means (exact ties across the boundary and between pair costs), every fifth has
    means one ulp apart."""
    n_arms = int(rng.integers(2, 24))
    k = [1, n_arms - 1, int(rng.integers(1, n_arms))][trial % 3]
    per_arm = trial % 2 == 1
    dispersion = rng.uniform(0.05, 3.0, n_arms) if per_arm else np.full(n_arms, 0.25)
    family = get_family("gaussian", variance=dispersion if per_arm else 0.25)
    n_runs = 40
    counts = rng.integers(1, [4, 200, 10**6][trial % 3], size=(n_runs, n_arms))
    if trial % 3 == 0:
        counts = np.where(rng.random((n_runs, n_arms)) < 0.5, 3, counts)  # equal counts: equal pair costs
        means = rng.integers(0, 3, size=(n_runs, n_arms)).astype(float)
    elif trial % 5 == 0:
        means = np.nextafter(0.5, np.where(rng.random((n_runs, n_arms)) < 0.5, 0.0, 1.0))
    else:
        means = rng.normal(0.0, rng.choice([1e-6, 1.0, 1e3]), size=(n_runs, n_arms))
    return family, dispersion, k, counts, means * counts, means


def test_compiled_glr_equals_its_numpy_twin_bit_for_bit(rng):
    for trial in range(150):
        family, dispersion, k, counts, sums, _ = _random_state(rng, trial)
        means = sums / counts
        compiled = glr_statistic(family, dispersion, counts, means, k)
        numpy_twin = glr_statistic_numpy(family, dispersion, counts, means, k)
        for field in compiled._fields:
            got, expected = getattr(compiled, field), getattr(numpy_twin, field)
            assert got.dtype == expected.dtype and np.array_equal(got, expected), (trial, field)


def test_compiled_glr_is_used_for_gaussian_batches_only():
    counts, means = np.array([[4, 2, 3]]), np.array([[1.0, 0.0, 0.5]])
    assert compiled_enabled()
    glr = glr_statistic(get_family("gaussian", variance=1.0), np.ones(3), counts, means, 1)
    # independent: (1 - 0.5)^2 / (2 (1/4 + 1/3)) is the smallest pair cost (eq. (22) of Wang, Yang, You 2022)
    assert glr.value[0] == pytest.approx(0.25 / (2 * (1 / 4 + 1 / 3)), rel=1e-15)
    assert np.array_equal(gaussian_glr(np.ones(3), counts, means, 1).value, glr.value)
    with compiled_kernels(False):
        assert not compiled_enabled()
        assert np.array_equal(glr_statistic(get_family("gaussian", variance=1.0), np.ones(3), counts, means,
                                            1).value, glr.value)
    assert compiled_enabled()


@pytest.mark.parametrize("kind", ["confidence", "budget"])
def test_compiled_kkt_ts_step_equals_its_numpy_twin_and_the_scalar_select(kind, rng):
    rule = KKTTS(kind=kind)
    for trial in range(120):
        family, dispersion, k, counts, sums, means = _random_state(rng, trial)
        n_runs, n_arms = counts.shape
        context = RuleContext(n_arms, k, family, dispersion)
        glr = glr_statistic_numpy(family, dispersion, counts, means, k)
        view = RunView(counts.sum(axis=1), counts, sums, means, *glr)
        uniforms = rng.random((n_runs, n_arms + 2))
        if trial % 3 == 0:
            uniforms[:, :n_arms] = 0.5  # theta~ = the means: exact ties of theta~ and of the pair costs
        compiled = rule.select_batch(context, view, {}, uniforms)
        numpy_twin = rule.select_batch_numpy(context, view, {}, uniforms)
        assert np.array_equal(compiled, numpy_twin), trial
        scalar = [rule.select(context, RunView(*(value[row] for value in view)), {}, uniforms[row])
                  for row in range(n_runs)]
        assert compiled.tolist() == scalar, trial


def test_compiled_kkt_ts_breaks_exact_cost_ties_uniformly():
    # three arms with equal means and counts, k = 1: the two pairs (top, other) tie exactly; the tie uniform
    # picks the first pair below 1/2 and the second above, and h = 1/2 for equal counts (coin 0.9: bottom arm)
    family = get_family("gaussian", variance=1.0)
    context = RuleContext(3, 1, family, np.ones(3))
    counts, sums = np.full((2, 3), 5), np.full((2, 3), 5.0)
    view = RunView(counts.sum(axis=1), counts, sums, sums / counts,
                   *glr_statistic_numpy(family, np.ones(3), counts, sums / counts, 1))
    uniforms = np.array([[0.5, 0.5, 0.5, 0.25, 0.9], [0.5, 0.5, 0.5, 0.75, 0.9]])
    assert KKTTS().select_batch(context, view, {}, uniforms).tolist() == [1, 2]


IDENTIFY_CASES = {
    "paper, 20 arms, k = 5": TopKProblem(1.0 - np.arange(20) / 20.0, 5, variance=0.25),
    "per-arm variances": TopKProblem([1.0, 0.9, 0.85, 0.5, 0.5, 0.1], 2, variance=[0.25, 1.0, 0.5, 0.3, 2.0, 0.2]),
    "k = 1": TopKProblem([1.0, 0.8, 0.5, 0.2], 1, variance=1.0),
    "k = K - 1": TopKProblem([1.0, 0.8, 0.5, 0.2], 3, variance=1.0),
}


@pytest.mark.parametrize("name", sorted(IDENTIFY_CASES))
def test_identify_outcomes_are_the_same_with_and_without_the_compiled_kernels(name):
    problem = IDENTIFY_CASES[name]
    options = dict(delta=(0.1, 0.001), n_runs=8, rng=5, n_jobs=1, max_samples=2500)
    compiled = identify(problem, "kkt-ts", **options)
    with compiled_kernels(False):
        numpy_twins = identify(problem, "kkt-ts", **options)
        scalar = identify(problem, "kkt-ts", batched=False, chunk_size=4, **options)
    for other in (numpy_twins, scalar):
        assert np.array_equal(compiled.stopping_times, other.stopping_times)
        assert np.array_equal(compiled.recommendations, other.recommendations)
        assert np.array_equal(compiled.stopped, other.stopped)
        assert np.array_equal(compiled.pulls, other.pulls)


def test_fixed_budget_outcomes_are_the_same_with_and_without_the_compiled_kernels():
    problem = IDENTIFY_CASES["per-arm variances"]
    compiled = identify_fixed_budget(problem, KKTTS(kind="budget"), [50, 200, 600], n_runs=20, rng=2, n_jobs=1)
    with compiled_kernels(False):
        numpy_twins = identify_fixed_budget(problem, KKTTS(kind="budget"), [50, 200, 600], n_runs=20, rng=2,
                                            n_jobs=1)
    assert np.array_equal(compiled.recommendations, numpy_twins.recommendations)


def test_compiled_kkt_tracking_equals_its_numpy_twin_bit_for_bit(rng):
    # the Gaussian branch of kkt_tracking_batch (the numpy kernel that solve_topk's "kkt-tracking" method runs)
    # against the compiled kernel DT-TS uses: random K, k, variances, means at every scale, near-ties one ulp
    # apart across the boundary and equal gaps (exact ties of pair costs, resolved to the first pair)
    from allocopt.algorithms._compiled import gaussian_kkt_tracking
    from allocopt.algorithms.statistics import top_k_order
    from allocopt.topk.tracking import kkt_tracking_batch

    for trial in range(60):
        family, dispersion, k, _, _, _ = _random_state(rng, trial)
        n_arms = dispersion.size
        if trial % 3 == 0:
            theta = rng.integers(0, 4, size=(30, n_arms)).astype(float) + np.arange(n_arms) * 1e-3
        elif trial % 5 == 0:
            theta = np.nextafter(0.5, np.where(rng.random((30, n_arms)) < 0.5, 0.0, 1.0)) \
                + np.arange(n_arms) * 2.0**-40
        else:
            theta = rng.normal(0.0, rng.choice([1e-6, 1.0, 1e3]), size=(30, n_arms))
        top, bottom = top_k_order(theta, k)
        rows = np.arange(theta.shape[0])[:, None]
        keep = theta[rows, top].min(axis=1) > theta[rows, bottom].max(axis=1)  # DT-TS solves these rows only
        iterations = int(rng.integers(1, 120))
        compiled = gaussian_kkt_tracking(theta[keep], dispersion, top[keep], bottom[keep], iterations)
        numpy_twin = kkt_tracking_batch(family, "confidence", theta[keep], dispersion, top[keep], bottom[keep],
                                        iterations)
        assert np.array_equal(compiled, numpy_twin), trial


# the scalar loop (one replication at a time in Python) costs ten times the batched numpy loop: the default suite
# compares the first 2 of the 6 runs with it, in two chunks, and the slow suite all 6
@pytest.mark.parametrize("n_scalar_runs", [2, pytest.param(6, marks=pytest.mark.slow)])
@pytest.mark.parametrize("name", ["paper, 20 arms, k = 5", "per-arm variances"])
def test_dt_ts_outcomes_are_the_same_with_and_without_the_compiled_kernels(name, n_scalar_runs):
    from allocopt.algorithms import DTTS

    problem = IDENTIFY_CASES[name]
    options = dict(delta=(0.1, 0.001), n_runs=6, rng=4, n_jobs=1, max_samples=1500)
    compiled = identify(problem, DTTS(iterations=40), **options)
    with compiled_kernels(False):
        numpy_twins = identify(problem, DTTS(iterations=40), **options)
        # replication i draws from SeedSequence(entropy, spawn_key=(i,)) whatever n_runs: the first runs of the batch
        scalar = identify(problem, DTTS(iterations=40), batched=False, chunk_size=n_scalar_runs // 2,
                          **{**options, "n_runs": n_scalar_runs})
    for other in (numpy_twins, scalar):
        runs = other.stopping_times.shape[0]
        assert np.array_equal(compiled.stopping_times[:runs], other.stopping_times)
        assert np.array_equal(compiled.pulls[:runs], other.pulls)
        assert np.array_equal(compiled.diagnostics["solver_fallbacks"][:runs], other.diagnostics["solver_fallbacks"])


def test_compiled_gap_indices_equal_their_numpy_twin_bit_for_bit(rng):
    # UGapE's gap indices, J_t and the other arms: the compiled batch kernel against the numpy body, on random
    # bounds with exact ties of U (integer values), of B (equal radii), and k = 1 and k = K - 1
    from allocopt.algorithms.ugape import gap_indices, gap_indices_numpy

    for trial in range(150):
        n_arms = int(rng.integers(2, 24))
        k = [1, n_arms - 1, int(rng.integers(1, n_arms))][trial % 3]
        if trial % 2 == 0:
            means = rng.integers(0, 3, size=(40, n_arms)).astype(float)
            radius = np.where(rng.random((40, n_arms)) < 0.5, 1.0, 0.5)
        else:
            means = rng.normal(size=(40, n_arms))
            radius = rng.uniform(0.0, 2.0, size=(40, n_arms))
        compiled = gap_indices(means, radius, k)
        numpy_twin = gap_indices_numpy(means + radius, means - radius, radius, k)
        for field in compiled._fields:
            got, expected = getattr(compiled, field), getattr(numpy_twin, field)
            assert got.dtype == expected.dtype and np.array_equal(got, expected), (trial, field)
        one_run = gap_indices(means[0], radius[0], k)  # a single run takes the numpy path
        assert np.array_equal(one_run.chosen, compiled.chosen[0]) and one_run.chosen_index == compiled.chosen_index[0]


def test_compiled_ugape_choice_equals_the_three_numpy_picks(rng):
    # u_t (max U outside J_t), l_t (min L in J_t), then the larger radius: the compiled kernel against the
    # numpy picks (random_candidate tie-breaks), on integer-valued bounds and radii so that every pick ties
    # often, with k = 1 and k = K - 1, and uniforms that hit the ends of [0, 1)
    from allocopt.algorithms._compiled import ugape_choice
    from allocopt.algorithms.lucb import _pick
    from allocopt.algorithms.ugape import gap_indices

    for trial in range(150):
        n_arms = int(rng.integers(2, 24))
        k = [1, n_arms - 1, int(rng.integers(1, n_arms))][trial % 3]
        if trial % 2 == 0:
            means = rng.integers(0, 3, size=(40, n_arms)).astype(float)
            radius = rng.integers(1, 3, size=(40, n_arms)).astype(float)
        else:
            means = rng.normal(size=(40, n_arms))
            radius = rng.uniform(0.0, 2.0, size=(40, n_arms))
        uniforms = rng.random((40, 3))
        uniforms[:5] = 0.0
        uniforms[5:10] = np.nextafter(1.0, 0.0)
        gaps = gap_indices(means, radius, k)
        u = _pick(gaps.others, gaps.upper, "max", uniforms[:, 0])
        l = _pick(gaps.chosen, gaps.lower, "min", uniforms[:, 1])
        expected = _pick(np.stack([l, u], axis=-1), gaps.radius, "max", uniforms[:, 2])
        got = ugape_choice(gaps.others, gaps.upper, gaps.chosen, gaps.lower, gaps.radius, uniforms)
        assert np.array_equal(got, expected), trial


@pytest.mark.parametrize("mode", ["confidence", "budget"])
def test_ugape_outcomes_with_and_without_compiled_kernels_in_both_modes(mode):
    from allocopt.algorithms import UGapE, identify_fixed_budget

    problem = IDENTIFY_CASES["per-arm variances"]
    if mode == "confidence":
        run = lambda **extra: identify(problem, UGapE(), delta=[0.1, 0.01], n_runs=6, rng=5, max_samples=3000, **extra)
    else:
        rule = UGapE("budget", a=2.0, complexity=50.0)
        run = lambda **extra: identify_fixed_budget(problem, rule, [60, 400], n_runs=6, rng=5, **extra)
    compiled = run()
    with compiled_kernels(False):
        numpy_twins = run()
    for name in ("recommendations", "pulls"):
        assert np.array_equal(getattr(compiled, name), getattr(numpy_twins, name)), name


def test_ugape_outcomes_are_the_same_with_and_without_the_compiled_kernels():
    from allocopt.algorithms import UGapE

    problem = IDENTIFY_CASES["per-arm variances"]
    options = dict(delta=0.1, n_runs=6, rng=4, n_jobs=1, max_samples=3000)
    compiled = identify(problem, UGapE(), **options)
    with compiled_kernels(False):
        numpy_twins = identify(problem, UGapE(), **options)
        scalar = identify(problem, UGapE(), batched=False, chunk_size=3, **options)
    for other in (numpy_twins, scalar):
        assert np.array_equal(compiled.stopping_times, other.stopping_times)
        assert np.array_equal(compiled.recommendations, other.recommendations)
        assert np.array_equal(compiled.pulls, other.pulls)


@pytest.mark.parametrize("k_choice", ["1", "K-1", "middle"])
def test_incremental_kkt_tracking_equals_its_numpy_twin_on_tied_pair_costs(k_choice):
    # the compiled kernel recomputes only the costs of the two arms that changed and keeps each row's first
    # minimum; the numpy twin recomputes every cost and takes np.argmin. Instances built so that many pair costs
    # tie exactly at every iterate (equal means within the top set and within the bottom set, equal variances:
    # the pairs are interchangeable, so the tie rule "first pair in row-major order" decides every step) or
    # nearly (means a few ulps apart), and with gaps at several scales
    from allocopt.algorithms._compiled import gaussian_kkt_tracking
    from allocopt.algorithms.statistics import top_k_order
    from allocopt.families import get_family
    from allocopt.topk.tracking import kkt_tracking_batch

    for n_arms in (2, 3, 7, 20):
        k = {"1": 1, "K-1": n_arms - 1, "middle": max(1, n_arms // 3)}[k_choice]
        rows = []
        for scale in (1e-6, 1.0, 1e3):
            rows.append(np.where(np.arange(n_arms) < k, 2.0, 0.0) * scale)  # all pair costs equal
            rows.append(np.where(np.arange(n_arms) < k, 2.0, 0.0) * scale
                        + np.arange(n_arms) * np.spacing(2.0 * scale))  # a few ulps apart
            rows.append(np.floor(np.linspace(n_arms, 0, n_arms) / 2) * scale)  # pairs of equal means
        theta = np.array(rows)
        top, bottom = top_k_order(theta, k)
        keep = theta[np.arange(theta.shape[0])[:, None], top].min(axis=1) \
            > theta[np.arange(theta.shape[0])[:, None], bottom].max(axis=1)
        for variance in (np.full(n_arms, 0.25), np.linspace(0.5, 2.0, n_arms)):
            family = get_family("gaussian", variance=variance)
            for iterations in (1, 2, 3, 100):
                compiled = gaussian_kkt_tracking(theta[keep], variance, top[keep], bottom[keep], iterations)
                numpy_twin = kkt_tracking_batch(family, "confidence", theta[keep], variance, top[keep],
                                                bottom[keep], iterations)
                assert np.array_equal(compiled, numpy_twin), (n_arms, k, iterations)


def test_compiled_kkt_tracking_does_not_depend_on_the_number_of_lanes(rng, monkeypatch):
    # the kernel iterates TRACKING_LANES rows side by side; each row's numbers are its own whatever the lanes and
    # whatever the number of rows left in the last group (1 to 7 rows here), including exact ties of pair costs
    # (integer means: equal gaps) resolved to the first pair, compared with the numpy twin run row by row
    from allocopt.algorithms import _compiled
    from allocopt.algorithms.statistics import top_k_order
    from allocopt.families import Gaussian
    from allocopt.topk.tracking import kkt_tracking_batch

    dispersion = np.full(7, 0.25)
    theta = rng.integers(0, 5, size=(7, 7)).astype(float)
    theta[:, :2] += [10.0, 5.0]  # every row: the unique top-2 {0, 1}; equal bottom means tie pair costs
    top, bottom = top_k_order(theta, 2)
    rows_alone = np.concatenate([kkt_tracking_batch(Gaussian(dispersion), "confidence", theta[row:row + 1],
                                                    dispersion, top[row:row + 1], bottom[row:row + 1], 50)
                                 for row in range(7)])
    for lanes in (1, 3, 4, 8):
        monkeypatch.setattr(_compiled, "TRACKING_LANES", lanes)
        for n_rows in range(1, 8):
            psi = _compiled.gaussian_kkt_tracking(theta[:n_rows], dispersion, top[:n_rows], bottom[:n_rows], 50)
            assert np.array_equal(psi, rows_alone[:n_rows]), (lanes, n_rows)
