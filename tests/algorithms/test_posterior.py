"""Posterior probability of the best arm (Wang, Yang, You 2022, Appendix D) against Monte Carlo, the closed form
of two Gaussian arms and adaptive quadrature; the posterior-convergence runner and the sample paths."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import integrate, stats

from allocopt import TopKProblem
from allocopt.algorithms import (posterior_convergence, posterior_error_paths,
                                 posterior_error_probability)
from allocopt.exceptions import InvalidArgumentError
from allocopt.families import get_family


@pytest.mark.parametrize("n", [1, 10, 100, 1000])
def test_two_gaussian_arms_match_the_closed_form_far_into_the_tail(n):
    # posteriors N(1, 1/n) and N(0, 1/n) (variance 1): P(theta_1 > theta_0) = Phi(-1 / sqrt(2/n))
    value = posterior_error_probability(get_family("gaussian", variance=1.0), np.ones(2), np.array([n, n]),
                                        np.array([float(n), 0.0]), 0)
    reference = stats.norm.logcdf(-1.0 / math.sqrt(2.0 / n))  # down to exp(-254) at n = 1000
    assert math.log(value) == pytest.approx(reference, rel=1e-9)


def _monte_carlo(family, counts, sums, variance, best, draws, rng):
    if family == "gaussian":
        theta = rng.normal(sums / counts, np.sqrt(variance / counts), size=(draws, counts.size))
    else:
        theta = rng.beta(1 + sums, 1 + counts - sums, size=(draws, counts.size))
    return float(np.mean(np.argmax(theta, axis=1) != best))


@pytest.mark.parametrize("family, counts, sums, variance", [
    ("gaussian", np.array([12, 5, 9, 3]), np.array([9.0, 3.0, 5.0, 0.9]), np.array([0.25, 0.25, 0.5, 1.0])),
    ("gaussian", np.array([40, 40, 40]), np.array([20.0, 18.0, 10.0]), np.full(3, 0.25)),
    ("bernoulli", np.array([20, 15, 30, 8]), np.array([14.0, 9.0, 17.0, 2.0]), None),
    ("bernoulli", np.array([3, 2, 1]), np.array([2.0, 1.0, 0.0]), None),
])
def test_quadrature_against_monte_carlo(family, counts, sums, variance, rng):
    resolved = get_family(family, variance=variance)
    dispersion = resolved.arm_dispersion(counts.size, "test")
    value = posterior_error_probability(resolved, dispersion, counts, sums, 0)
    draws = 400_000
    estimate = _monte_carlo(family, counts, sums, dispersion, 0, draws, rng)
    standard_error = math.sqrt(estimate * (1 - estimate) / draws)
    assert abs(value - estimate) < 5 * standard_error + 1e-12


@pytest.mark.parametrize("counts, sums", [
    (np.array([200, 150, 60, 90]), np.array([150.0, 90.0, 20.0, 50.0])),
    (np.array([900, 300, 400, 250]), np.array([720.0, 150.0, 260.0, 100.0])),
    (np.array([5, 80, 60, 200]), np.array([4.0, 60.0, 30.0, 100.0])),
])
def test_bernoulli_quadrature_against_adaptive_quadrature(counts, sums):
    # 1 - P_n = int Beta_0 pdf (1 - prod_a Beta_a cdf) over (0, 1), with scipy.integrate.quad split at the
    # posterior means (scipy.stats densities and distribution functions)
    a, b = 1 + sums, 1 + counts - sums

    def integrand(x):
        return stats.beta.pdf(x, a[0], b[0]) * -math.expm1(sum(stats.beta.logcdf(x, a[j], b[j]) for j in (1, 2, 3)))

    points = sorted(set((a / (a + b)).tolist()))
    reference = integrate.quad(integrand, 0.0, 1.0, points=points, limit=400, epsabs=1e-300, epsrel=1e-10)[0]
    value = posterior_error_probability(get_family("bernoulli"), np.ones(4), counts, sums, 0)
    assert value == pytest.approx(reference, rel=1e-7)


def test_batched_rows_equal_single_rows_and_the_best_arm_may_vary(rng):
    family = get_family("gaussian", variance=0.25)
    counts = rng.integers(1, 50, size=(6, 5))
    sums = counts * rng.uniform(0, 1, size=(6, 5))
    best = np.array([0, 1, 2, 3, 4, 0])
    batch = posterior_error_probability(family, np.full(5, 0.25), counts, sums, best)
    for row in range(6):
        assert batch[row] == posterior_error_probability(family, np.full(5, 0.25), counts[row], sums[row], best[row])
    # the probabilities that each arm is the best sum to one
    total = sum(1 - posterior_error_probability(family, np.full(5, 0.25), counts[0], sums[0], arm) for arm in range(5))
    assert total == pytest.approx(1.0, abs=1e-10)


def test_first_times_are_the_first_crossings_of_the_recorded_paths():
    problem = TopKProblem([1.0, 0.6, 0.5, 0.2], k=1, variance=0.25)
    result = posterior_convergence(problem, "t3c", (0.9, 0.99), n_runs=3, rng=4, max_samples=2000)
    paths = posterior_error_paths(problem, "t3c", int(result.first_times.max()), n_paths=3, rng=4)
    for run in range(3):
        for index, level in enumerate((0.9, 0.99)):
            above = np.flatnonzero(1.0 - paths.error[run] > level)
            assert result.first_times[run, index] == paths.samples[above[0]]
    assert result.status == "completed" and result.success
    payload = result.to_dict()
    json.dumps(payload, allow_nan=False)
    assert [row["level"] for row in payload["summary"]] == [0.9, 0.99]
    json.dumps(paths.to_dict(), allow_nan=False)


def test_gamma_star_of_the_paths_is_the_exact_solver_value():
    # two Gaussian arms of variance 1/4 and gap 1: by symmetry psi* = (1/2, 1/2) and
    # Gamma* = gap^2 / (2 (sigma^2/psi_1 + sigma^2/psi_2)) = 1 / (2 (0.5 + 0.5)) = 1/2
    paths = posterior_error_paths(TopKProblem([1.0, 0.0], k=1, variance=0.25), "uniform", 10, n_paths=1, rng=0)
    assert paths.gamma_star == pytest.approx(0.5, rel=1e-9)
    assert paths.samples.tolist() == list(range(2, 11))


def test_scalar_and_batched_runs_agree():
    problem = TopKProblem([0.7, 0.5, 0.4], k=1, family="bernoulli")
    batched = posterior_convergence(problem, "ttts", (0.9, 0.99), n_runs=3, rng=2, max_samples=3000)
    scalar = posterior_convergence(problem, "ttts", (0.9, 0.99), n_runs=3, rng=2, max_samples=3000, batched=False)
    assert np.array_equal(batched.first_times, scalar.first_times)


def test_bad_input_is_named():
    gaussian = TopKProblem([1.0, 0.5, 0.0], k=1, variance=0.25)
    with pytest.raises(InvalidArgumentError, match="'levels' parameter of posterior_convergence"):
        posterior_convergence(gaussian, "uniform", (0.9, 1.0))
    with pytest.raises(InvalidArgumentError, match="'problem' parameter of posterior_convergence must be a best-arm"):
        posterior_convergence(TopKProblem([1.0, 0.5, 0.0], k=2, variance=0.25), "uniform")
    with pytest.raises(InvalidArgumentError, match="gaussian or bernoulli"):
        posterior_convergence(TopKProblem([1.0, 0.5, 0.2], k=1, family="poisson"), "uniform")
    with pytest.raises(InvalidArgumentError, match="'horizon' parameter of posterior_error_paths"):
        posterior_error_paths(gaussian, "uniform", 2)
    with pytest.raises(InvalidArgumentError, match="'family' parameter of posterior_error_probability"):
        posterior_error_probability(get_family("poisson"), np.ones(2), np.array([1, 1]), np.array([1.0, 0.0]), 0)
