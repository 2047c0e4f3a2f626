"""TopKProblem: pair costs against their definitions as infima, derivatives, and input validation."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize

from allocopt import InvalidArgumentError, InvalidInstanceError, TopKProblem
from allocopt.families import FAMILIES, Gamma

INSTANCES = {
    "gaussian": dict(theta=[1.0, 0.7, 0.45, 0.3, 0.1, -0.2], k=2, family="gaussian", variance=0.25),
    "gaussian-heteroscedastic": dict(theta=[1.0, 0.7, 0.45, 0.3, 0.1, -0.2], k=3, family="gaussian",
                                     variance=[0.5, 0.1, 1.0, 0.3, 2.0, 0.25]),
    "bernoulli": dict(theta=[0.9, 0.7, 0.55, 0.4, 0.3, 0.1], k=2, family="bernoulli"),
    "poisson": dict(theta=[5.0, 3.5, 2.8, 2.0, 1.5, 0.5], k=3, family="poisson"),
    "exponential": dict(theta=[5.0, 3.5, 2.8, 2.0, 1.5, 0.5], k=2, family="exponential"),
    "gamma": dict(theta=[5.0, 3.5, 2.8, 2.0, 1.5, 0.5], k=2, family=Gamma(shape=2.5)),
}


def _numerical_infimum(problem: TopKProblem, psi, i: int, j: int, kind: str) -> float:
    """inf_x [psi_i d_i(theta_i, x) + psi_j d_j(theta_j, x)] (confidence) or with the arguments swapped
    (budget), by bounded scalar minimisation between the two means (spec/topk.md, (10))."""
    family, theta, dispersion = problem.family, problem.theta, problem.dispersion

    def objective(x):
        if kind == "confidence":
            terms = family.unit_kl(theta[i], x) / dispersion[i], family.unit_kl(theta[j], x) / dispersion[j]
        else:
            terms = family.unit_kl(x, theta[i]) / dispersion[i], family.unit_kl(x, theta[j]) / dispersion[j]
        return float(psi[i] * terms[0] + psi[j] * terms[1])

    low, high = sorted((theta[i], theta[j]))
    result = optimize.minimize_scalar(objective, bounds=(low, high), method="bounded",
                                      options={"xatol": 1e-13 * max(1.0, abs(high))})
    return float(result.fun)


@pytest.mark.parametrize("name", sorted(INSTANCES))
@pytest.mark.parametrize("kind", ["confidence", "budget"])
def test_costs_equal_the_infimum_definition(name, kind, rng):
    problem = TopKProblem(**INSTANCES[name])
    for _ in range(3):
        psi = rng.dirichlet(np.ones(problem.n_arms))
        costs = problem.costs(psi, kind=kind)
        for row, i in enumerate(problem.top):
            for col, j in enumerate(problem.bottom):
                assert costs[row, col] == pytest.approx(_numerical_infimum(problem, psi, i, j, kind), rel=1e-8)


def test_gaussian_costs_match_the_closed_form_and_budget_equals_confidence():
    # C_ij = (theta_i - theta_j)^2 / (2 (s2_i/psi_i + s2_j/psi_j))  (spec/topk.md); B = C for Gaussian arms
    problem = TopKProblem(**INSTANCES["gaussian-heteroscedastic"])
    psi = np.array([0.1, 0.2, 0.15, 0.25, 0.2, 0.1])
    theta, variance = problem.theta, problem.dispersion
    i, j = problem.top[:, None], problem.bottom[None, :]
    closed_form = (theta[i] - theta[j]) ** 2 / (2 * (variance[i] / psi[i] + variance[j] / psi[j]))
    assert np.allclose(problem.costs(psi), closed_form, rtol=1e-14)
    assert np.allclose(problem.costs(psi, kind="budget"), closed_form, rtol=1e-14)


@pytest.mark.parametrize("name", sorted(INSTANCES))
@pytest.mark.parametrize("kind", ["confidence", "budget"])
def test_derivatives_match_finite_differences(name, kind, rng):
    problem = TopKProblem(**INSTANCES[name])
    psi = rng.dirichlet(5 * np.ones(problem.n_arms))
    terms = problem.pair_terms(psi, kind=kind, second_order=True)
    step = 1e-6
    for a, position_of in ((problem.top, "top"), (problem.bottom, "bottom")):
        for index, arm in enumerate(a):
            shifted_up, shifted_down = psi.copy(), psi.copy()
            shifted_up[arm] += step
            shifted_down[arm] -= step
            up, down = problem.pair_terms(shifted_up, kind=kind), problem.pair_terms(shifted_down, kind=kind)
            numeric = (up.cost - down.cost) / (2 * step)
            analytic = terms.grad_top if position_of == "top" else terms.grad_bottom
            selection = (index, slice(None)) if position_of == "top" else (slice(None), index)
            assert np.allclose(numeric[selection], analytic[selection], rtol=1e-6, atol=1e-10)
            numeric_grad = (up.grad_top - down.grad_top) / (2 * step) if position_of == "top" else \
                (up.grad_bottom - down.grad_bottom) / (2 * step)
            hessian = terms.hess_top if position_of == "top" else terms.hess_bottom
            assert np.allclose(numeric_grad[selection], hessian[selection], rtol=1e-4, atol=1e-8)
            cross_numeric = (up.grad_bottom - down.grad_bottom) / (2 * step) if position_of == "top" else \
                (up.grad_top - down.grad_top) / (2 * step)
            assert np.allclose(cross_numeric[selection], terms.hess_cross[selection], rtol=1e-4, atol=1e-8)


@pytest.mark.parametrize("name", sorted(INSTANCES))
def test_costs_are_one_homogeneous_and_euler_holds(name, rng):
    # C(a psi) = a C(psi), and psi_i dC/dpsi_i + psi_j dC/dpsi_j = C (Euler), which gives h_{i;j} + h_{j;i} = 1
    problem = TopKProblem(**INSTANCES[name])
    psi = rng.dirichlet(np.ones(problem.n_arms))
    for kind in ("confidence", "budget"):
        terms = problem.pair_terms(psi, kind=kind)
        assert np.allclose(problem.costs(3.7 * psi, kind=kind), 3.7 * terms.cost, rtol=1e-13)
        euler = psi[problem.top][:, None] * terms.grad_top + psi[problem.bottom][None, :] * terms.grad_bottom
        assert np.allclose(euler, terms.cost, rtol=1e-12)
        h_top, h_bottom = problem.sampling_functions(psi, kind=kind)
        assert np.allclose(h_top + h_bottom, 1.0)


def test_gaussian_sampling_function_closed_form():
    # common variance: h_{i;j} = psi_j / (psi_i + psi_j)  (spec/topk.md)
    problem = TopKProblem(**INSTANCES["gaussian"])
    psi = np.array([0.1, 0.2, 0.15, 0.25, 0.2, 0.1])
    h_top, _ = problem.sampling_functions(psi)
    expected = psi[problem.bottom][None, :] / (psi[problem.top][:, None] + psi[problem.bottom][None, :])
    assert np.allclose(h_top, expected, rtol=1e-13)


def test_sampling_function_limits_at_zero_allocation():
    problem = TopKProblem([1.0, 0.5, 0.0], 1)
    h_top, _ = problem.sampling_functions([0.5, 0.0, 0.5])
    # the pair (0, 1) has zero cost because arm 1 has no allocation: all weight goes to arm 1
    assert h_top[0, list(problem.bottom).index(1)] == 0.0


def test_top_and_bottom_are_sorted_by_decreasing_mean_with_ties_by_index():
    problem = TopKProblem([0.2, 0.9, 0.5, 0.9, 0.1, 0.5], 2)
    assert problem.top.tolist() == [1, 3]
    assert problem.bottom.tolist() == [2, 5, 0, 4]
    assert problem.value(np.full(6, 1 / 6)) == pytest.approx(problem.costs(np.full(6, 1 / 6)).min())


def test_order_is_top_then_bottom_and_cost_normalisation_uses_its_ends():
    problem = TopKProblem([0.2, 0.9, 0.5, 0.9, 0.1, 0.5], 2)
    assert problem.order.tolist() == problem.top.tolist() + problem.bottom.tolist() == [1, 3, 2, 5, 0, 4]
    # the exponents of the normalisation, computed here from the whole arrays with numpy (its documented rule:
    # the largest mean magnitude and the largest variance scaled into [1/2, 1), costs scaled by 2^(2a - b))
    # (the extreme mean or variance is far from the others, so that any other arm gives another exponent)
    for theta, variance in [(-1e40 * np.array([0.2, 9.0, 0.1, 0.5, 0.3, 0.4, 0.6]), 1e-70),
                            (1e-45 * np.array([0.2, -0.1, 7.0, 0.5, -0.3, 0.4, 0.6]), 3.0),
                            (1e35 * np.array([0.2, -0.1, 0.7, 0.5, -0.3, 0.4, 0.6]),
                             np.array([1e70, 2e70, 1e75, 3e70, 1e70, 1e70, 5e70]))]:
        problem = TopKProblem(theta, 3, variance=variance)
        mean_exponent = int(np.frexp(np.abs(theta).max())[1])
        variance_exponent = int(np.frexp(np.max(variance))[1])
        scaled, exponent = problem.cost_normalisation()
        assert exponent == 2 * mean_exponent - variance_exponent
        assert np.array_equal(scaled.theta, np.ldexp(theta, -mean_exponent))


def test_attributes_are_read_only():
    problem = TopKProblem(**INSTANCES["gaussian"])
    with pytest.raises(ValueError):
        problem.theta[0] = 3.0
    with pytest.raises(ValueError):
        problem.top[0] = 3
    with pytest.raises(ValueError):
        problem.order[0] = 3


def test_the_callers_arrays_are_neither_frozen_nor_shared():
    # the problem makes its own arrays read-only in place (the package's validation hands back fresh copies);
    # a family whose validation returns the caller's array, or whose dispersion is the caller's array, must not
    # have that array frozen or shared
    from allocopt.families import Gaussian, Poisson

    means = np.array([0.5, 0.3, 0.1])
    problem = TopKProblem(means, 1, family="poisson")
    means[0] = 0.2
    assert means.flags.writeable and problem.theta[0] == 0.5 and not problem.theta.flags.writeable

    class PassThrough(Poisson):
        def validate_means(self, values, func, name="theta"):
            return values  # the caller's own array

    means = np.array([0.5, 0.3, 0.1])
    problem = TopKProblem(means, 1, family=PassThrough())
    means[0] = 0.2
    assert means.flags.writeable and problem.theta[0] == 0.5

    variances = np.array([1.0, 2.0, 3.0])

    class OwnDispersion(Gaussian):
        def arm_dispersion(self, n_arms, func="allocopt"):
            return variances

    problem = TopKProblem([0.5, 0.3, 0.1], 1, family=OwnDispersion(variances))
    variances[0] = 5.0
    assert variances.flags.writeable and problem.dispersion[0] == 1.0
    # the natural parameters, built on first use, are the family's and read-only
    np.testing.assert_array_equal(problem.unit_natural, problem.family.unit_natural(problem.theta))
    assert not problem.unit_natural.flags.writeable


@pytest.mark.parametrize("arguments,fragment", [
    (dict(theta=[0.5, np.nan, 0.1], k=1), "'theta' parameter of TopKProblem"),
    (dict(theta=[0.5, 0.3, 0.1], k=0), "'k' parameter of TopKProblem must be an integer in 1..K-1 = 1..2. Got 0"),
    (dict(theta=[0.5, 0.3, 0.1], k=3), "Got 3 instead"),
    (dict(theta=[0.5, 0.3, 0.1], k=1.5), "'k' parameter"),
    (dict(theta=[0.5], k=1), "at least 2"),
    (dict(theta=[0.9, 0.5, 0.5, 0.1], k=2), "arms [1, 2] (0-based) are tied at 0.5"),
    (dict(theta=[0.9, 1.0, 0.2], k=1, family="bernoulli"), "means in the open interval (0, 1)"),
    (dict(theta=[0.5, 0.3, 0.1], k=1, variance=0.0), "'variance' parameter of Gaussian must be"),
    (dict(theta=[0.5, 0.3, 0.1], k=1, variance=[1.0, 2.0]), "one positive number per arm (3 values)"),
    (dict(theta=[0.5, 0.3, 0.1], k=1, family="cauchy"), "'gaussian', 'bernoulli', 'poisson', 'exponential'"),
    (dict(theta=[0.5, 0.3, 0.1], k=1, family="poisson", variance=2.0), "applies to the gaussian family only"),
    (dict(theta=[[0.5, 0.3]], k=1), "one-dimensional"),
])
def test_bad_instances_raise_clear_errors(arguments, fragment):
    with pytest.raises(InvalidArgumentError) as error:
        TopKProblem(**arguments)
    assert fragment in str(error.value)


def test_tie_error_is_an_instance_error():
    with pytest.raises(InvalidInstanceError):
        TopKProblem([0.9, 0.5, 0.5, 0.1], 2)


def test_cost_arguments_are_validated():
    problem = TopKProblem(**INSTANCES["gaussian"])
    with pytest.raises(InvalidArgumentError, match="nonnegative finite vector of length K = 6"):
        problem.costs(np.full(5, 0.2))
    with pytest.raises(InvalidArgumentError, match="nonnegative finite vector"):
        problem.costs(-np.full(6, 1 / 6))
    with pytest.raises(InvalidArgumentError, match="'kind' parameter of TopKProblem.costs must be one of "
                                                   "'confidence', 'budget'"):
        problem.costs(np.full(6, 1 / 6), kind="posterior")


def test_families_cover_the_registry():
    assert {getattr(spec["family"], "name", spec["family"]) for spec in INSTANCES.values()} == set(FAMILIES)


def _mp_cost(family: str, kind: str, theta_i, theta_j, w_i, w_j):
    """C_ij or B_ij in 50-digit arithmetic from the closed forms of spec/topk.md: C at the weighted mean m,
    B = w_i A(eta_i) + w_j A(eta_j) - s A(eta_bar) at the natural-parameter average."""
    import mpmath

    mpmath.mp.dps = 50
    theta_i, theta_j, w_i, w_j = (mpmath.mpf(value) for value in (theta_i, theta_j, w_i, w_j))
    kl = {"gaussian": lambda x, y: (x - y) ** 2 / 2,
          "bernoulli": lambda x, y: x * mpmath.log(x / y) + (1 - x) * mpmath.log((1 - x) / (1 - y)),
          "poisson": lambda x, y: y - x + x * mpmath.log(x / y),
          "exponential": lambda x, y: x / y - 1 - mpmath.log(x / y)}[family]
    natural = {"gaussian": lambda x: x, "bernoulli": lambda x: mpmath.log(x / (1 - x)),
               "poisson": mpmath.log, "exponential": lambda x: -1 / x}[family]
    mean = {"gaussian": lambda e: e, "bernoulli": lambda e: 1 / (1 + mpmath.exp(-e)),
            "poisson": mpmath.exp, "exponential": lambda e: -1 / e}[family]
    total = w_i + w_j
    if kind == "confidence":
        point = (w_i * theta_i + w_j * theta_j) / total
        return float(w_i * kl(theta_i, point) + w_j * kl(theta_j, point))
    point = mean((w_i * natural(theta_i) + w_j * natural(theta_j)) / total)
    return float(w_i * kl(point, theta_i) + w_j * kl(point, theta_j))


@pytest.mark.parametrize("family,base", [("gaussian", 0.5), ("bernoulli", 0.3), ("bernoulli", 1e-5),
                                         ("poisson", 2.0), ("exponential", 2.0)])
@pytest.mark.parametrize("kind", ["confidence", "budget"])
@pytest.mark.parametrize("relative_gap", [1e-3, 1e-8, 1e-12])
def test_costs_keep_relative_precision_for_nearly_tied_means(family, base, kind, relative_gap):
    # The pair kernels form m - theta_i from theta_i - theta_j (and the natural-parameter and mean differences
    # from the families' difference functions), so a 1e-12 relative gap costs no digits.
    top = base * (1 + relative_gap)
    problem = TopKProblem([top, base], 1, family=family)
    for psi in ([0.5, 0.5], [0.9, 0.1], [0.001, 0.999]):
        expected = _mp_cost(family, kind, problem.theta[0], problem.theta[1], psi[0], psi[1])
        assert problem.costs(np.array(psi), kind=kind)[0, 0] == pytest.approx(expected, rel=1e-12)
