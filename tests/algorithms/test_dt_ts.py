"""DT-TS (Wang, Yang, You 2022, Appendix C.2, Algorithm 4) and the batched KKT-Tracking kernel (Algorithm 3)
against their definitions, computed independently in the tests."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from allocopt import TopKProblem, solve_topk
from allocopt.algorithms import DTTS, RuleContext, RunView, identify
from allocopt.exceptions import InvalidArgumentError
from allocopt.families import get_family
from allocopt.topk._iterative import kkt_tracking as _tracking
from allocopt.topk.tracking import kkt_tracking_batch


def _view(counts, sums):
    means = sums / counts
    return RunView(int(counts.sum()), counts, sums, means, 0.0, None, None, None, None)


def _gaussian_kkt_tracking(theta, variance, k, iterations):
    """Algorithm 3 written out with the Gaussian closed forms in the weights w_a = psi_a / sigma_a^2:
    C_ij = (theta_i - theta_j)^2 w_i w_j / (2 (w_i + w_j)), h_{i;j} = w_j / (w_i + w_j) (1/2 when both weights
    vanish); ties to the first pair in row-major order over (top arms, bottom arms) in increasing arm order."""
    order = np.argsort(-theta, kind="stable")
    top, bottom = np.sort(order[:k]), np.sort(order[k:])
    psi = np.full(theta.size, 1.0 / theta.size)
    for t in range(1, iterations + 1):
        best, pair = np.inf, None
        for i in top:
            for j in bottom:
                w_i, w_j = psi[i] / variance[i], psi[j] / variance[j]
                cost = (theta[i] - theta[j]) ** 2 * w_i * w_j / (2 * (w_i + w_j)) if w_i + w_j > 0 else 0.0
                if cost < best:
                    best, pair = cost, (i, j)
        i, j = pair
        w_i, w_j = psi[i] / variance[i], psi[j] / variance[j]
        h = w_j / (w_i + w_j) if w_i + w_j > 0 else 0.5
        psi = psi * (t - 1) / t
        psi[i] += h / t
        psi[j] += (1 - h) / t
    return psi


def test_batched_kernel_equals_the_written_out_algorithm(rng):
    family = get_family("gaussian", variance=np.array([0.25, 0.5, 0.3, 1.0, 0.2, 0.4]))
    variance = family.arm_dispersion(6, "test")
    theta = rng.normal(size=(7, 6))
    top = np.sort(np.argsort(-theta, axis=1)[:, :2], axis=1)
    bottom = np.sort(np.argsort(-theta, axis=1)[:, 2:], axis=1)
    psi = kkt_tracking_batch(family, "confidence", theta, variance, top, bottom, 60)
    for row in range(7):
        np.testing.assert_allclose(psi[row], _gaussian_kkt_tracking(theta[row], variance, 2, 60), rtol=1e-12)


@pytest.mark.parametrize("family, theta", [
    ("gaussian", [[0.51, 0.5, 0.0, -0.01, -0.092], [1.0, 0.3, 0.9, -0.2, 0.1]]),  # the first row: Example 1
    ("bernoulli", [[0.8, 0.6, 0.59, 0.4, 0.2], [0.99, 0.01, 0.5, 0.7, 0.3]]),
    ("poisson", [[3.0, 2.5, 1.0, 0.8, 0.3], [0.1, 5.0, 2.0, 2.1, 0.4]]),
    ("exponential", [[3.0, 2.5, 1.0, 0.8, 0.3], [0.1, 5.0, 2.0, 2.1, 0.4]]),
])
@pytest.mark.parametrize("kind", ["confidence", "budget"])
def test_single_solve_is_the_batched_kernel_with_one_row_bit_for_bit(family, theta, kind):
    theta = np.array(theta)
    variance = 0.25 if family == "gaussian" else None
    resolved = get_family(family, variance=variance)
    dispersion = resolved.arm_dispersion(5, "test")
    problems = [TopKProblem(row, 2, family=resolved) for row in theta]
    top = np.array([problem.top for problem in problems])
    bottom = np.array([problem.bottom for problem in problems])
    batch = kkt_tracking_batch(resolved, kind, theta, dispersion, top, bottom, 40)
    for row, problem in enumerate(problems):
        single = _tracking.solve(problem, kind, iterations=40, tol=0.0)
        assert single.iterations == 40
        assert np.array_equal(single.psi, batch[row])


def test_solve_topk_kkt_tracking_still_matches_the_paper_example():
    # Example 1 of Wang, Yang, You (2022): psi* ~ (0.2185, 0.2371, 0.2185, 0.2026, 0.1232), Gamma* ~ 0.0568
    result = solve_topk(TopKProblem([0.51, 0.5, 0, -0.01, -0.092], k=2, variance=0.25), method="kkt-tracking",
                        iterations=20000)
    np.testing.assert_allclose(result.psi, [0.2185, 0.2371, 0.2185, 0.2026, 0.1232], atol=2e-3)


def test_select_tracks_the_allocation_of_the_posterior_sample():
    # hand-made state: Gaussian arms of variance 1/4, counts and sums chosen; uniforms fixed
    variance = np.full(5, 0.25)
    family = get_family("gaussian", variance=0.25)
    context = RuleContext(5, 2, family, variance)
    counts = np.array([30, 25, 20, 12, 6])
    sums = np.array([30.0, 21.0, 11.0, 4.0, 0.6])
    uniforms = np.array([0.3, 0.8, 0.45, 0.6, 0.2, 0.5])
    # theta~ by inversion of the posterior N(S/N, sigma^2/N), independently with scipy
    theta = stats.norm.ppf(uniforms[:5], loc=sums / counts, scale=np.sqrt(variance / counts))
    psi = _gaussian_kkt_tracking(theta, variance, 2, 100)
    lag = counts.sum() * psi - counts
    expected = int(np.argmax(lag))
    assert np.sort(lag)[-1] > np.sort(lag)[-2]
    rule = DTTS()
    state = {name: value[0] for name, value in rule.init_state(context, 1).items()}
    assert rule.select(context, _view(counts, sums), state, uniforms) == expected
    np.testing.assert_allclose(state["psi"], psi, rtol=1e-12)
    assert state["solver_calls"][0] == 1 and state["solver_fallbacks"][0] == 0


def test_select_with_the_exact_solver_tracks_the_exact_allocation():
    variance = np.full(4, 0.25)
    context = RuleContext(4, 1, get_family("gaussian", variance=0.25), variance)
    counts = np.array([10, 10, 10, 10])
    sums = np.array([10.0, 8.0, 5.0, 2.0])
    uniforms = np.array([0.5, 0.5, 0.5, 0.5, 0.99])
    # at u = 1/2 the sample is the mean; k = 1 and equal variances: psi* from the exact solver of the top-k layer,
    # checked here by its optimality certificate (status optimal) rather than by the rule's own output
    reference = solve_topk(TopKProblem(sums / counts, 1, variance=0.25), method="exact")
    assert reference.status == "optimal"
    lag = 40 * reference.psi - counts
    rule = DTTS(solver="exact")
    state = {name: value[0] for name, value in rule.init_state(context, 1).items()}
    assert rule.select(context, _view(counts, sums), state, uniforms) == int(np.argmax(lag))
    np.testing.assert_allclose(state["psi"], reference.psi, rtol=1e-8)


def test_a_sample_tied_across_the_boundary_keeps_the_previous_allocation_and_counts_a_fallback():
    # Bernoulli posteriors Beta(6, 1) of arms 0 and 1: the quantile at u = 1 - 2^-53 is u^(1/6), which rounds to
    # 1 and is clipped to the largest double below 1 for both arms: a tie across the top-1 boundary
    family = get_family("bernoulli")
    context = RuleContext(3, 1, family, np.ones(3))
    counts = np.array([5, 5, 5])
    sums = np.array([5.0, 5.0, 0.0])
    uniforms = np.array([1 - 2.0**-53, 1 - 2.0**-53, 0.5, 0.7])
    for rule in (DTTS(), DTTS(solver="exact")):
        state = {name: value[0].copy() for name, value in rule.init_state(context, 1).items()}
        previous = np.array([0.5, 0.3, 0.2])
        state["psi"][:] = previous
        arm = rule.select(context, _view(counts, sums), state, uniforms)
        assert np.array_equal(state["psi"], previous) and state["solver_fallbacks"][0] == 1
        lag = 15 * previous - counts  # (2.5, -0.5, -2): arm 0
        assert arm == int(np.argmax(lag)) == 0
        batch_state = {name: value.copy() for name, value in rule.init_state(context, 2).items()}
        batch_state["psi"][:] = previous
        view = RunView(np.array([15, 15]), np.stack([counts, counts]), np.stack([sums, sums]),
                       np.stack([sums / counts] * 2), None, None, None, None, None)
        arms = rule.select_batch(context, view, batch_state, np.stack([uniforms, uniforms]))
        assert arms.tolist() == [0, 0] and batch_state["solver_fallbacks"][:, 0].tolist() == [1, 1]


def test_cumulative_tracking_pulls_the_arm_lagging_the_running_sum_of_the_sampled_allocations():
    # three steps with the exact solver at u = 1/2 (each sample is the mean vector, so each psi_s is the exact
    # allocation of the empirical means, certified by the top-k layer's exact solver); the target after step s
    # is psi_1 + ... + psi_s, and the pull is the arm of largest target - N (ties: none here, checked)
    variance = np.full(4, 0.25)
    context = RuleContext(4, 1, get_family("gaussian", variance=0.25), variance)
    rule = DTTS(solver="exact", tracking="cumulative")
    state = {name: value[0].copy() for name, value in rule.init_state(context, 1).items()}
    counts = np.array([10, 9, 8, 7])
    sums = np.array([10.0, 8.0, 5.0, 2.0])
    target = np.zeros(4)
    for _ in range(3):
        reference = solve_topk(TopKProblem(sums / counts, 1, variance=0.25), method="exact")
        assert reference.status == "optimal"
        target += reference.psi
        lag = target - counts
        assert np.sort(lag)[-1] > np.sort(lag)[-2]
        arm = rule.select(context, _view(counts, sums), state, np.array([0.5, 0.5, 0.5, 0.5, 0.3]))
        assert arm == int(np.argmax(lag))
        np.testing.assert_allclose(state["target"], target, rtol=1e-8)
        counts[arm] += 1
        sums[arm] += sums[arm] / (counts[arm] - 1)  # the pull returns the arm's mean: the means stay put


def test_cumulative_tracking_compiled_step_matches_its_specification():
    # whole runs of the compiled step (dt_ts_step) against the rule's select (compiled kernels off) on Gaussian arms:
    # the posterior quantile (scipy.special.ndtri, called by both) and the Gaussian tracking kernel's arithmetic
    # only, so bit for bit (tests/tolerance.py); the other families: the random states below
    from allocopt._numba import compiled_kernels

    problem = TopKProblem([1.0, 0.8, 0.7, 0.2], 1, variance=0.5)
    rule = DTTS(tracking="cumulative", iterations=20)
    compiled = identify(problem, rule, delta=0.1, n_runs=3, rng=4, max_samples=400)
    with compiled_kernels(False):
        specification = identify(problem, rule, delta=0.1, n_runs=3, rng=4, max_samples=400)
    assert np.array_equal(compiled.pulls, specification.pulls)
    assert np.array_equal(compiled.stopping_times, specification.stopping_times)


@pytest.mark.parametrize("tracking", ["direct", "cumulative"])
@pytest.mark.parametrize("solver", ["kkt-tracking", "exact"])
def test_scalar_and_batched_runs_choose_the_same_arms(solver, tracking):
    # Gaussian arms: arithmetic and scipy.special only on both paths, so bit for bit (Bernoulli: the test below)
    problem = TopKProblem([0.8, 0.7, 0.4, 0.3, 0.2], k=2, variance=0.25)
    rule = DTTS(solver=solver, iterations=30, tracking=tracking)
    batched = identify(problem, rule, delta=0.1, n_runs=4, rng=5, max_samples=60)
    scalar = identify(problem, rule, delta=0.1, n_runs=4, rng=5, max_samples=60, batched=False)
    assert np.array_equal(batched.pulls, scalar.pulls)
    assert np.array_equal(batched.diagnostics["solver_calls"], scalar.diagnostics["solver_calls"])


@pytest.mark.twin
@pytest.mark.parametrize("tracking", ["direct", "cumulative"])
def test_exact_solver_scalar_and_batched_runs_choose_the_same_arms_on_bernoulli_arms(tracking):
    # with the exact solver the compiled loop hands every step to Python: select (one solve per run) and select_batch
    # (one solve_topk_batch call for all runs) both run the top-k layer's solver, so the runs agree bit for bit on
    # Bernoulli arms too, whatever numpy's log gives (the check runs under --perturb-transcendentals in test-dispatch)
    problem = TopKProblem([0.8, 0.7, 0.4, 0.3, 0.2], k=2, family="bernoulli")
    rule = DTTS(solver="exact", tracking=tracking)
    batched = identify(problem, rule, delta=0.1, n_runs=4, rng=5, max_samples=60)
    scalar = identify(problem, rule, delta=0.1, n_runs=4, rng=5, max_samples=60, batched=False)
    assert np.array_equal(batched.pulls, scalar.pulls)
    assert np.array_equal(batched.diagnostics["solver_calls"], scalar.diagnostics["solver_calls"])


BERNOULLI_STATES = 60
"""Random Bernoulli states per tracking mode (the compiled step and select each about 0.1 s per state here)."""


@pytest.mark.twin
@pytest.mark.parametrize("tracking", ["direct", "cumulative"])
def test_compiled_step_matches_select_on_random_bernoulli_states(tracking):
    # where log enters (the Bernoulli pair costs of KKT-Tracking), the compiled step against select stepwise on
    # random states (allocopt.testing.rules.compare_step): the same pulls wherever the decision survives moving
    # the sums by a relative 1e-12, and the tracked allocations (psi, the cumulative target) within a relative
    # 1e-12 of each other: both sides take the same pairs there, and each pair cost is within a few ulps of the
    # exact one (the family's pair_error_bound, about 1e-15 here), which the 30 iterations' averages do not amplify
    from allocopt.testing.rules import compare_step

    rng = np.random.default_rng(20261205)
    context = RuleContext(5, 2, get_family("bernoulli"), np.ones(5))
    rule = DTTS(solver="kkt-tracking", iterations=30, tracking=tracking)
    decisive = 0
    for _ in range(BERNOULLI_STATES):
        counts = rng.integers(1, 200, size=5)
        sums = rng.binomial(counts, rng.uniform(0.05, 0.95, size=5)).astype(float)
        state = {name: values[0] for name, values in rule.init_state(context, 1).items()}
        if tracking == "cumulative":
            state["target"][:] = counts * rng.uniform(0.9, 1.1, size=5)
        decided, specification, compiled = compare_step(rule, context, _view(counts, sums), state,
                                                        rng.random(rule.uniforms_per_step(context)))
        assert decided is not None  # KKT-Tracking runs in the compiled step
        if decided:
            decisive += 1
            for name in ("psi", "target"):
                np.testing.assert_allclose(compiled[name], specification[name], rtol=1e-12, atol=0.0)
    assert decisive >= 0.9 * BERNOULLI_STATES


@pytest.mark.parametrize("kwargs, match", [({"solver": "fwga"}, "'solver' parameter of DTTS"),
                                           ({"iterations": 0}, "'iterations' parameter of DTTS"),
                                           ({"iterations": 2.5}, "'iterations' parameter of DTTS"),
                                           ({"tracking": "running"}, "'tracking' parameter of DTTS")])
def test_bad_options_are_named(kwargs, match):
    with pytest.raises(InvalidArgumentError, match=match):
        DTTS(**kwargs)
