"""Gaussian instances near the ends of the floating-point range are solved on rescaled costs or refused.

Gaussian costs are homogeneous: C_ij = (theta_i - theta_j)^2 / (2 (s2_i/psi_i + s2_j/psi_j)), of degree two
in the means and -1 in the variances, so scaling the means by c and the variances by v scales Gamma* by
c^2/v and leaves psi* unchanged. The references are Example 1 of Wang, Yang, You (2022) (psi* and
Gamma* = 0.0568 for means (0.51, 0.5, 0, -0.01, -0.092), variance 1/4, k = 2) and, for k = 1, the KKT system
solved in mpmath (tests/topk/topk_reference.py); Gamma(psi) is evaluated in mpmath from the closed form.
"""

from __future__ import annotations

import warnings

import mpmath
import numpy as np
import pytest

from allocopt import InvalidInstanceError, TopKProblem, solve_topk

from topk_reference import mp_star_optimum

EXAMPLE_1 = np.array([0.51, 0.5, 0.0, -0.01, -0.092])
EXAMPLE_1_PSI = np.array([0.2185, 0.2371, 0.2185, 0.2026, 0.1232])  # Wang, Yang, You (2022), Example 1
EXAMPLE_1_VALUE = 0.0568  # Gamma* of Example 1 (same source)


def mp_gaussian_gamma(theta, variance, k, psi):
    """min over (top, bottom) pairs of the Gaussian closed form, in mpmath."""
    with mpmath.workdps(50):
        theta = [mpmath.mpf(float(value)) for value in theta]
        order = sorted(range(len(theta)), key=lambda index: -theta[index])
        variance, psi = mpmath.mpf(variance), [mpmath.mpf(float(value)) for value in psi]
        return min((theta[i] - theta[j]) ** 2 / (2 * (variance / psi[i] + variance / psi[j]))
                   for i in order[:k] for j in order[k:])


@pytest.mark.parametrize("mean_scale, variance_scale", [(1e154, 1.0), (1e-150, 1.0), (1.0, 1e154), (1.0, 1e-150),
                                                        (1e40, 1.0), (1e-100, 1e-200)])
def test_example_1_scaled_to_the_ends_of_the_range_is_solved(mean_scale, variance_scale):
    theta, variance = EXAMPLE_1 * mean_scale, 0.25 * variance_scale
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning (nor any other) may escape
        result = solve_topk(TopKProblem(theta, 2, variance=variance))
    assert result.status == "optimal" and result.relative_gap <= 1e-9
    assert np.allclose(result.psi, EXAMPLE_1_PSI, atol=1e-4)
    factor = mean_scale**2 / variance_scale  # homogeneity (module docstring)
    assert result.value / factor == pytest.approx(EXAMPLE_1_VALUE, abs=1e-4)
    at_psi = mp_gaussian_gamma(theta, variance, 2, result.psi)
    assert abs(mpmath.mpf(result.value) - at_psi) <= 1e-13 * at_psi


@pytest.mark.parametrize("mean_scale", [1e40, 1e154, 1e-150])
def test_k_equal_one_scaled_means_reach_the_mpmath_optimum(mean_scale):
    # once reported "not_certified" eight orders of magnitude below the optimum at 1e40
    theta = EXAMPLE_1 * mean_scale
    result = solve_topk(TopKProblem(theta, 1, variance=0.25))
    assert result.status == "optimal"
    # the unit-variance reference scaled by 1/variance (homogeneity of degree -1 in the variance)
    optimum, _ = mp_star_optimum("gaussian", "confidence", theta, 1, seed=result.psi)
    optimum = optimum / mpmath.mpf(0.25)
    assert mpmath.mpf(result.value) <= optimum * (1 + 1e-13)
    assert mpmath.mpf(result.value + result.gap) >= optimum
    assert mpmath.mpf(result.value) >= optimum * (1 - 1e-9)


@pytest.mark.parametrize("theta, variance", [([1e308, -1e308, 0.0], 1.0), (list(EXAMPLE_1 * 1e154), 1e-150)])
def test_optimal_values_beyond_the_floating_point_range_are_refused_clearly(theta, variance):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(InvalidInstanceError, match="floating-point range"):
            solve_topk(TopKProblem(theta, 1, variance=variance))


def test_scaled_results_keep_their_problem_and_certificate():
    problem = TopKProblem(EXAMPLE_1 * 1e154, 2, variance=0.25)
    result = solve_topk(problem)
    assert result.problem is problem
    # the certificate of the returned allocation, recomputed on the caller's problem in mpmath: value and
    # gap scale together (upper_bound = value + the unrounded gap)
    assert result.upper_bound >= result.value
    assert result.value + result.gap >= result.upper_bound
