"""The compiled Gaussian double star against its numpy twin, and against an independent solve.

The numpy twin (``_double_star_numpy``) is the vectorised form of Theorem 3.4's double star of Wang, Yang, You
(2022); the compiled kernel must return the same answers (to the tolerances of ``assert_same_stars``: the balance
calls exp and log, whose last bits differ between numpy and the C library on some CPUs) on every row: common and per-arm
variances, tied means on one side, means one ulp apart at the boundary, k = 1 and k = K - 1, with and without
a starting split. The reference for the numbers themselves is the general active-set solver on the same
forest (the double star layout, solved by calibrated surrogates) and the CVXPY oracle's bounds.
"""

from __future__ import annotations

import numpy as np
import pytest

from allocopt import TopKProblem, solve_topk
from allocopt._numba import AVAILABLE, compiled_kernels
from allocopt.topk._exact.gaussian_star import _double_star_numpy, gaussian_double_star

pytestmark = pytest.mark.skipif(not AVAILABLE, reason="numba is not importable")

FIELDS = ("psi", "value", "bound", "stationarity", "complementarity", "multipliers", "accepted")


def _random_rows(rng, trial):
    """Sorted rows (top k by decreasing mean, then the rest) with a unique top-k set."""
    n_arms = int(rng.integers(2, 30))
    k = [1, n_arms - 1, int(rng.integers(1, n_arms))][trial % 3]
    theta = rng.normal(0.0, 1.0, (40, n_arms))
    if trial % 4 == 0:
        theta = np.round(theta, 1)  # exact ties within a side
    theta = -np.sort(-theta, axis=1)
    if trial % 5 == 0:  # the boundary one ulp wide
        theta[:, k] = np.nextafter(theta[:, k - 1], -np.inf)
    theta = theta[theta[:, k - 1] > theta[:, k]]
    per_arm = trial % 2 == 1
    variance = rng.uniform(0.05, 3.0, theta.shape) if per_arm else np.array([[rng.uniform(0.05, 3.0)]])
    start = rng.normal(0.0, 3.0, theta.shape[0]) if trial % 3 == 1 else None
    return theta, variance, k, start


def assert_same_stars(got, expected, where=()) -> None:
    """Two double-star answers of the same rows: the same acceptance, and on the accepted rows the same numbers
    to 1e-14 relative to each row's scale (allocation, value) and 1e-13 (bound, multipliers, residuals). The
    balance's Newton steps call exp and log, which numpy and the compiled kernel take from different libraries
    on some CPUs (tests/tolerance.py): with numpy's results moved one ulp (pytest --perturb-transcendentals) the
    accepted rows of the test below differ by at most 7e-16 (allocation, value) and 6e-15 (the others), and no
    acceptance changes in 7816 rows. Rows that are not accepted carry no answer to compare."""
    accepted = np.asarray(expected.accepted)
    assert np.array_equal(np.asarray(got.accepted), accepted), where
    for name, tolerance in (("psi", 1e-14), ("value", 1e-14), ("bound", 1e-13), ("multipliers", 1e-13)):
        a, b = np.asarray(getattr(got, name), dtype=float)[accepted], np.asarray(getattr(expected, name),
                                                                                   dtype=float)[accepted]
        scale = np.abs(b).max(axis=-1, keepdims=True) if b.ndim == 2 else np.abs(b)
        assert np.all(np.abs(a - b) <= tolerance * scale), (where, name)
    for name in ("stationarity", "complementarity"):
        a, b = np.asarray(getattr(got, name))[accepted], np.asarray(getattr(expected, name))[accepted]
        assert np.all(np.abs(a - b) <= 1e-13), (where, name)


@pytest.mark.twin
def test_compiled_double_star_equals_numpy_twin():
    rng = np.random.default_rng(20)
    compared = 0
    for trial in range(200):
        theta, variance, k, start = _random_rows(rng, trial)
        if theta.shape[0] == 0:
            continue
        with compiled_kernels(True):
            compiled = gaussian_double_star(theta, variance, k, start)
        with np.errstate(all="ignore"):
            twin = _double_star_numpy(theta, variance, k, start, 60)
        assert_same_stars(compiled, twin, trial)
        compared += int(np.sum(twin.accepted))
    assert compared > 4000


@pytest.mark.twin
def test_one_instance_in_its_arms_order_equals_the_batch_row():
    # gaussian_double_star_instance sorts, solves and scatters inside one compiled call; the batch row of the
    # sorted instance (the twins above) is the reference, with the arms shuffled and sorted back by `order`
    from allocopt.topk._exact.gaussian_star import gaussian_double_star_instance

    rng = np.random.default_rng(21)
    compared = 0
    for trial in range(120):
        theta, variance, k, start = _random_rows(rng, trial)
        for row in range(min(theta.shape[0], 5)):
            n_arms = theta.shape[1]
            arms = rng.permutation(n_arms)  # arm arms[p] has the p-th mean of the sorted row
            means, variances = np.empty(n_arms), np.empty(n_arms)
            means[arms] = theta[row]
            variances[arms] = variance[row] if variance.shape[1] > 1 else variance[0, 0]
            row_start = None if start is None else float(start[row])
            batch = gaussian_double_star(theta[row:row + 1], variances[arms][None, :], k,
                                         None if start is None else start[row:row + 1])
            for compiled in (True, False):
                with compiled_kernels(compiled), np.errstate(all="ignore"):
                    star = gaussian_double_star_instance(means, arms, variances, k, row_start)
                if compiled:  # the same compiled row kernel: bit for bit
                    assert np.array_equal(star.psi[arms], batch.psi[0], equal_nan=True), (trial, compiled)
                    assert np.array_equal(star.multipliers, batch.multipliers[0], equal_nan=True), (trial, compiled)
                    expected = (batch.value[0], batch.bound[0], batch.stationarity[0], batch.complementarity[0])
                    assert np.array_equal((star.value, star.bound, star.stationarity, star.complementarity),
                                          expected, equal_nan=True), (trial, compiled)
                    assert np.array_equal(star.smallest_multiplier, np.min(batch.multipliers[0]), equal_nan=True)
                else:  # the numpy twin: to the tolerances of assert_same_stars
                    row = batch._replace(psi=star.psi[arms][None, :], multipliers=star.multipliers[None, :],
                                         value=np.array([star.value]), bound=np.array([star.bound]),
                                         stationarity=np.array([star.stationarity]),
                                         complementarity=np.array([star.complementarity]),
                                         accepted=np.array([star.accepted]))
                    assert_same_stars(row, batch, (trial, compiled))
                assert star.accepted == batch.accepted[0], (trial, compiled)
            compared += 1
    assert compared > 400


@pytest.mark.twin
def test_switching_the_kernel_off_runs_the_twin():
    theta = -np.sort(-np.random.default_rng(3).normal(size=(5, 8)), axis=1)
    variance = np.array([[0.25]])
    with compiled_kernels(False):
        off = gaussian_double_star(theta, variance, 3)
    on = gaussian_double_star(theta, variance, 3)
    assert_same_stars(on, off)
    assert off.accepted.all()


@pytest.mark.parametrize("variance", [0.25, "per-arm"])
def test_double_star_matches_the_general_forest_solver(variance, monkeypatch):
    # the fast path (the kernel) against the active-set solver (calibrated surrogates on the forest, its own
    # all-pairs scan and the shared certificate), to which every instance goes when the fast path is off
    from allocopt.topk._exact import _routing

    rng = np.random.default_rng(4)
    variances = rng.uniform(0.1, 2.0, 12) if variance == "per-arm" else variance
    problems = [TopKProblem(rng.normal(0.0, 1.0, 12), 4, variance=variances) for _ in range(20)]
    fast = [solve_topk(problem) for problem in problems]
    monkeypatch.setattr(_routing, "FAST_PATH_PAIRS", 0)
    compared = 0
    for problem, quick in zip(problems, fast):
        general = solve_topk(problem)
        assert "closed form" not in general.message and general.status == quick.status == "optimal"
        if "closed form" in quick.message:
            np.testing.assert_allclose(quick.psi, general.psi, rtol=1e-12, atol=0)
            assert abs(quick.value - general.value) <= 1e-12 * general.value
            compared += 1
    assert compared >= 10


def _tracking_problems(rng):
    """Gaussian instances for the iterative methods' twins: random K and k (1, K-1 and between), common and
    per-arm variances, integer means (exact ties within a side and equal pair costs)."""
    problems = []
    for trial in range(24):
        n_arms = int(rng.integers(2, 16))
        k = [1, n_arms - 1, int(rng.integers(1, n_arms))][trial % 3]
        theta = rng.integers(0, 4, n_arms).astype(float) if trial % 4 == 0 else rng.normal(0.0, 1.0, n_arms)
        order = np.argsort(-theta, kind="stable")
        if theta[order[k - 1]] == theta[order[k]]:
            theta[order[:k]] += 1.0  # a unique top-k set
        variance = rng.uniform(0.05, 3.0, n_arms) if trial % 2 else float(rng.uniform(0.05, 3.0))
        problems.append(TopKProblem(theta, k, variance=variance))
    return problems


@pytest.mark.parametrize("method", ["kkt-tracking", "fwga"])
def test_compiled_iterations_equal_numpy_twin_bit_for_bit(method):
    rng = np.random.default_rng(21)
    for problem in _tracking_problems(rng):
        for tol in (0.0, 1e-3):
            with compiled_kernels(True):
                compiled = solve_topk(problem, method=method, iterations=300, tol=tol)
            with compiled_kernels(False):
                twin = solve_topk(problem, method=method, iterations=300, tol=tol)
            assert compiled.iterations == twin.iterations and compiled.status == twin.status
            assert np.array_equal(compiled.psi, twin.psi)
            assert np.array_equal(compiled.mu, twin.mu)
            for name in ("value", "upper_bound", "gap"):
                assert np.array_equal(getattr(compiled.history, name), getattr(twin.history, name)), name
