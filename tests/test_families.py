"""Exponential families: divergences, natural parameters, log-partition, conjugate, validation.

Reference values are computed independently inside the tests: the divergence from its definition as an
expectation (sums or quadrature), in 50-digit arithmetic with mpmath for the near-equal arguments, and the
conjugate by numerical maximisation.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from scipy import integrate, optimize, stats

from allocopt import Bernoulli, Exponential, Gaussian, InvalidArgumentError, InvalidInstanceError, Poisson, get_family
from allocopt.families import FAMILIES, log1pmx
from allocopt.testing.families import reference_family

mpmath.mp.dps = 50

# pairs of means inside each family's domain
PAIRS = {
    "gaussian": [(0.3, -1.2), (2.0, 2.5), (0.0, 0.0)],
    "bernoulli": [(0.3, 0.7), (0.05, 0.5), (0.999, 0.998), (1e-6, 0.2)],
    "poisson": [(0.5, 3.0), (4.0, 3.9), (10.0, 1.0)],
    "exponential": [(0.5, 3.0), (4.0, 3.9), (10.0, 1.0)],
    "gamma": [(0.5, 3.0), (4.0, 3.9), (10.0, 1.0)],
}
GAMMA_SHAPE = 3.0  # the shape of reference_family("gamma")


def _kl_by_expectation(name: str, x: float, y: float) -> float:
    """KL(P_x || P_y) as E_x[log p_x - log p_y], computed from scipy's distributions."""
    if name == "gaussian":
        value, _ = integrate.quad(lambda z: stats.norm.pdf(z, x) * (stats.norm.logpdf(z, x) - stats.norm.logpdf(z, y)),
                                  -np.inf, np.inf)
        return value
    if name == "bernoulli":
        return sum(stats.bernoulli.pmf(z, x) * (stats.bernoulli.logpmf(z, x) - stats.bernoulli.logpmf(z, y))
                   for z in (0, 1) if stats.bernoulli.pmf(z, x) > 0)
    if name == "poisson":
        support = np.arange(0, 200)
        weights = stats.poisson.pmf(support, x)
        return float(np.sum(weights * (stats.poisson.logpmf(support, x) - stats.poisson.logpmf(support, y))))
    if name == "gamma":
        a = GAMMA_SHAPE
        value, _ = integrate.quad(lambda z: stats.gamma.pdf(z, a, scale=x / a)
                                  * (stats.gamma.logpdf(z, a, scale=x / a) - stats.gamma.logpdf(z, a, scale=y / a)),
                                  0, np.inf)
        return value
    value, _ = integrate.quad(lambda z: stats.expon.pdf(z, scale=x)
                              * (stats.expon.logpdf(z, scale=x) - stats.expon.logpdf(z, scale=y)), 0, np.inf)
    return value


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_kl_matches_expectation_definition(name):
    family = reference_family(name)
    for x, y in PAIRS[name]:
        assert family.kl(x, y) == pytest.approx(_kl_by_expectation(name, x, y), rel=1e-8, abs=1e-12)


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_kl_is_bregman_divergence_of_conjugate(name):
    # d(x, y) = A*(x) - A*(y) - (A*)'(y)(x - y) with (A*)' = eta (spec/topk.md)
    family = reference_family(name)
    for x, y in PAIRS[name]:
        bregman = family.conjugate(x) - family.conjugate(y) - family.natural(y) * (x - y)
        assert family.kl(x, y) == pytest.approx(bregman, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_conjugate_is_fenchel_transform_and_mean_inverts_natural(name):
    family = reference_family(name)
    for x, _ in PAIRS[name]:
        eta = float(family.natural(x))
        assert float(family.mean(eta)) == pytest.approx(x, rel=1e-12, abs=1e-15)
        # A*(x) = sup_eta [eta x - A(eta)], attained at eta(x); exponential natural parameters are negative
        bounds = (10 * eta, 0.1 * eta) if name in ("exponential", "gamma") else (eta - 5.0, eta + 5.0)
        result = optimize.minimize_scalar(lambda e: float(family.log_partition(e)) - e * x, bounds=bounds,
                                          method="bounded", options={"xatol": 1e-10})
        assert -result.fun == pytest.approx(float(family.conjugate(x)), rel=1e-7, abs=1e-9)


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_variance_function_is_second_derivative_of_log_partition(name):
    family = reference_family(name)
    for x, _ in PAIRS[name]:
        eta, step = float(family.natural(x)), 1e-4 * max(1.0, abs(float(family.natural(x))))
        second = (family.log_partition(eta + step) - 2 * family.log_partition(eta) + family.log_partition(eta - step)) / step**2
        assert float(family.variance(x)) == pytest.approx(float(second), rel=1e-5)


def _mp_kl(name: str, x: float, y: float) -> float:
    x, y = mpmath.mpf(x), mpmath.mpf(y)
    if name == "gaussian":
        return float((x - y) ** 2 / 2)
    if name == "bernoulli":
        return float(x * mpmath.log(x / y) + (1 - x) * mpmath.log((1 - x) / (1 - y)))
    if name == "poisson":
        return float(y - x + x * mpmath.log(x / y))
    scale = GAMMA_SHAPE if name == "gamma" else 1  # gamma: alpha (x/y - 1 - log(x/y))
    return float(scale * (x / y - 1 - mpmath.log(x / y)))


@pytest.mark.parametrize("name", sorted(FAMILIES))
@pytest.mark.parametrize("relative_gap", [1e-2, 1e-5, 1e-8, 1e-11])
def test_kl_keeps_relative_precision_for_nearly_equal_means(name, relative_gap):
    # The textbook formulas lose ~|log(gap)| digits to cancellation; allocopt's must stay within 1e-12 of the
    # 50-digit value (near-ties of 1e-6 at the top-k boundary are part of the requirements).
    family = reference_family(name)
    for base in {"gaussian": [0.3, -2.0], "bernoulli": [0.3, 1e-6, 1 - 1e-6], "poisson": [0.2, 7.0],
                 "exponential": [0.2, 7.0], "gamma": [0.2, 7.0]}[name]:
        other = base * (1 + relative_gap) if base < 0.5 or name != "bernoulli" else base * (1 - relative_gap)
        expected = _mp_kl(name, base, other)
        assert float(family.kl(base, other)) == pytest.approx(expected, rel=1e-12)


def test_log1pmx_matches_high_precision():
    points = np.array([-0.9, -0.3, -0.05, -0.049, -1e-3, -1e-9, 0.0, 1e-9, 1e-3, 0.049, 0.05, 0.3, 5.0])
    expected = [float(mpmath.log1p(mpmath.mpf(p)) - mpmath.mpf(p)) for p in points]
    assert np.allclose(log1pmx(points), expected, rtol=1e-14, atol=0)


def test_kl_accepts_empirical_means_at_the_boundary():
    # empirical Bernoulli means can be exactly 0 or 1 and Poisson counts 0: d(0, y) = -log(1 - y), d(1, y) = -log y
    assert Bernoulli().kl(0.0, 0.3) == pytest.approx(-math.log(0.7), rel=1e-14)
    assert Bernoulli().kl(1.0, 0.3) == pytest.approx(-math.log(0.3), rel=1e-14)
    assert Poisson().kl(0.0, 2.5) == pytest.approx(2.5, rel=1e-14)


def test_kl_is_vectorised_and_broadcasts():
    x = np.linspace(0.1, 0.9, 5)[:, None]
    y = np.linspace(0.2, 0.8, 4)[None, :]
    matrix = Bernoulli().kl(x, y)
    assert matrix.shape == (5, 4)
    assert matrix[2, 1] == pytest.approx(float(Bernoulli().kl(x[2, 0], y[0, 1])))


def test_gaussian_per_arm_variances_divide_the_unit_divergence():
    family = Gaussian([0.5, 2.0])
    assert np.allclose(family.kl(np.array([1.0, 1.0]), np.array([0.0, 0.0])), [1.0, 0.25])
    assert family.is_heteroscedastic
    assert np.allclose(family.natural([1.0, 1.0]), [2.0, 0.5])


def test_sampling_has_the_family_mean(rng):
    for name, mean in (("gaussian", 0.3), ("bernoulli", 0.3), ("poisson", 2.0), ("exponential", 2.0), ("gamma", 2.0)):
        family = reference_family(name)
        draws = family.sample(mean, 200_000, rng)
        assert draws.mean() == pytest.approx(mean, abs=5 * math.sqrt(float(family.variance(mean)) / 200_000))
        # and the family's variance function: x^2/alpha for gamma (scipy's gamma(a, scale=x/a) has variance x^2/a)
        assert draws.var() == pytest.approx(float(family.variance(mean)), rel=0.05)


@pytest.mark.parametrize("name,bad", [("bernoulli", [0.2, 1.0]), ("bernoulli", [0.0, 0.5]), ("poisson", [1.0, -1.0]),
                                      ("exponential", [0.0, 1.0]), ("gaussian", [0.0, np.inf])])
def test_validate_means_names_the_argument_domain_and_entries(name, bad):
    with pytest.raises(InvalidInstanceError if name != "gaussian" else InvalidArgumentError) as error:
        get_family(name).validate_means(bad, "f", "theta")
    message = str(error.value)
    assert "'theta' parameter of f" in message and ("[1]" in message or "[0]" in message)


def test_get_family_errors_list_the_valid_names_and_reject_misplaced_variance():
    with pytest.raises(InvalidArgumentError, match="'gaussian', 'bernoulli', 'poisson', 'exponential'"):
        get_family("student")
    with pytest.raises(InvalidArgumentError, match="applies to the gaussian family only"):
        get_family("bernoulli", variance=0.5)
    with pytest.raises(InvalidArgumentError, match="'variance' parameter of Gaussian must be a finite number > 0"):
        Gaussian(0.0)
    with pytest.raises(InvalidArgumentError, match="'variance'"):
        Gaussian([1.0, -1.0])
    assert isinstance(get_family("Poisson"), Poisson) and isinstance(get_family(Exponential()), Exponential)


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_divergence_partial_derivatives_match_finite_differences(name):
    # d/dy d(x, y) = (y - x) / V(y) and d/dx d(x, y) = eta(x) - eta(y) (spec/topk.md, gradients)
    family = get_family(name, variance=0.5) if name == "gaussian" else reference_family(name)
    for x, y in PAIRS[name]:
        step = 1e-6 * max(1.0, abs(y))
        numeric_second = (family.kl(x, y + step) - family.kl(x, y - step)) / (2 * step)
        assert float(family.kl_grad_second(x, y)) == pytest.approx(float(numeric_second), rel=1e-6, abs=1e-9)
        step = 1e-6 * max(1.0, abs(x))
        if name == "bernoulli" and not step < x < 1 - step:
            continue
        numeric_first = (family.kl(x + step, y) - family.kl(x - step, y)) / (2 * step)
        assert float(family.kl_grad_first(x, y)) == pytest.approx(float(numeric_first), rel=1e-6, abs=1e-9)


def test_gaussian_keeps_its_variance_and_effective_weights_divide_by_it():
    from allocopt import TopKProblem

    family = Gaussian([0.5, 2.0, 1.0])
    assert np.array_equal(family.variance_parameter, [0.5, 2.0, 1.0])
    problem = TopKProblem([1.0, 0.5, 0.0], 1, family=family)
    assert np.allclose(problem.effective_weights(np.array([0.2, 0.3, 0.5])), [0.4, 0.15, 0.5])


@pytest.mark.parametrize("name, points", [
    ("bernoulli", [1e-15, 1e-9, 0.3, 0.5, 1 - 1e-9, 1 - 1e-15]),
    ("poisson", [1e-150, 1e-3, 1.0, 3.0, 1e100, 1e150]),
    ("exponential", [1e-150, 1e-3, 1.0, 3.0, 1e100, 1e150]),
    ("gamma", [1e-150, 1e-3, 1.0, 3.0, 1e100, 1e150]),
])
def test_kl_keeps_relative_precision_over_the_whole_domain(name, points):
    # far-apart arguments (a Bernoulli complement of 1e-15 against 0.5, Poisson means 300 decades apart): the
    # grouping x log1pmx(r) + (x - y)^2 / y cancels catastrophically there; 120-digit mpmath reference
    family = reference_family(name)
    with mpmath.workdps(120):
        for x in points:
            for y in points:
                expected = _mp_kl(name, x, y) if x != y else 0.0
                value = float(family.kl(x, y))
                assert abs(value - expected) <= 1e-14 * abs(expected), (x, y, value, expected)


def test_gamma_is_the_exponential_family_with_dispersion_one_over_the_shape():
    from allocopt.families import Gamma

    # d(x, y) = alpha (x/y - 1 - log(x/y)) (mean parametrisation of Gamma with known shape alpha)
    for shape in (0.5, 3.0, 40.0):
        family = Gamma(shape=shape)
        x, y = 2.5, 0.7
        assert float(family.kl(x, y)) == pytest.approx(shape * (x / y - 1 - math.log(x / y)), rel=1e-14)
        assert float(family.natural(x)) == pytest.approx(-shape / x, rel=1e-15)
        assert float(family.variance(x)) == pytest.approx(x * x / shape, rel=1e-15)
    assert Gamma(shape=3.0) == Gamma(shape=3.0) and Gamma(shape=3.0) != Gamma(shape=2.0)
    assert Gamma(shape=1.0) != Exponential()  # equal divergences, but distinct families by name


@pytest.mark.parametrize("shape", [0.0, -1.0, float("inf"), float("nan"), "three"])
def test_gamma_shape_must_be_finite_and_positive(shape):
    from allocopt.families import Gamma

    with pytest.raises(InvalidArgumentError, match="'shape' parameter of Gamma must be a finite number > 0"):
        Gamma(shape=shape)


def test_a_gamma_name_alone_is_refused_with_the_object_to_use():
    with pytest.raises(InvalidArgumentError, match=r"Gamma\(shape=\.\.\.\)"):
        get_family("gamma")
