"""The compiled pair kernels of the families (allocopt.families.kernels) against the numpy kernels of
allocopt.families and against an independent 60-digit evaluation of the definitions with mpmath.

The grids are adversarial: exact ties and ties to 1e-12, Bernoulli means within 1e-15 (and 1e-300) of 0 and 1,
Poisson and exponential means 300 decades apart (the range the families document), shares down to 1e-300.
"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

from allocopt.families.kernels import pair_arrays
from allocopt._numba import AVAILABLE, compiled_kernels
from allocopt.families import Bernoulli, Exponential, Gamma, Gaussian, Poisson
from tolerance import assert_within

pytestmark = pytest.mark.skipif(not AVAILABLE, reason="numba is not importable")

FAMILIES = [Gaussian(), Bernoulli(), Poisson(), Exponential()]
KINDS = ["confidence", "budget"]


def _pair_bounds(family, kind, theta_top, theta_bottom) -> np.ndarray:
    """Twice the family's pair_error_bound of each pair: both kernels are within the bound of the exact value, so
    they agree within twice it (tests/tolerance.py; equal bit for bit where numpy's log and exp are the C
    library's, as on most machines)."""
    return np.array([2.0 * family.pair_error_bound(kind, [top, bottom]) for top, bottom in zip(theta_top, theta_bottom)])


def _grid(family, rng, size=4000):
    if family.name == "bernoulli":
        base = np.concatenate([rng.uniform(0, 1, 200), [1e-15, 1 - 1e-15, 0.5, 0.5 + 1e-16, 1e-300, 1 - 2**-53,
                                                         0.3, 0.3 + 1e-12]])
    elif family.name == "gaussian":
        base = rng.normal(size=200)
    else:
        base = np.concatenate([np.exp(rng.uniform(-300, 300, 100)), rng.uniform(0.5, 3, 100),
                               [1.0, 1 + 1e-15, 1e-150, 1e150]])  # at most 300 decades apart (families docstring)
    theta_top, theta_bottom = rng.choice(base, size), rng.choice(base, size)
    theta_bottom[:200] = theta_top[:200]  # exact ties
    theta_bottom[200:400] = theta_top[200:400] * (1 + rng.uniform(-1e-12, 1e-12, 200))  # near ties
    if family.name == "bernoulli":
        theta_bottom = np.clip(theta_bottom, 1e-300, 1 - 2**-53)
    share_top = np.concatenate([rng.uniform(0, 1, size - 400), 10.0 ** rng.uniform(-300, -1, 200),
                                1 - 10.0 ** rng.uniform(-16, -1, 200)])
    rng.shuffle(share_top)
    return theta_top, theta_bottom, share_top, 1.0 - share_top


def _numpy_pair(family, kind, theta_top, theta_bottom, share_top, share_bottom):
    with np.errstate(all="ignore"):
        if kind == "confidence":
            return family.unit_confidence_pair(theta_top, theta_bottom, share_top, share_bottom)
        return family.unit_budget_pair(theta_top, theta_bottom, family.unit_natural(theta_top),
                                       family.unit_natural(theta_bottom), share_top, share_bottom)


@pytest.mark.twin
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("family", FAMILIES, ids=lambda family: family.name)
def test_compiled_pair_kernel_matches_the_numpy_kernel(family, kind):
    rng = np.random.default_rng(17)
    arguments = _grid(family, rng)
    expected = _numpy_pair(family, kind, *arguments)
    with np.errstate(all="ignore"):
        got = pair_arrays(family.name, kind, *arguments)
    bounds = _pair_bounds(family, kind, arguments[0], arguments[1])
    for field in range(5):
        assert_within(got[field], expected[field], bounds, (family.name, kind, field))


def _mp_divergence(name, x, y):
    """d_1(x, y) from its definition (table of allocopt.families), at mpmath's working precision."""
    if name == "gaussian":
        return (x - y) ** 2 / 2
    if name == "bernoulli":
        return x * mpmath.log(x / y) + (1 - x) * mpmath.log((1 - x) / (1 - y))
    if name == "poisson":
        return y - x + x * mpmath.log(x / y)
    return x / y - 1 - mpmath.log(x / y)


def _mp_point(name, kind, theta_top, theta_bottom, share_top):
    """The infimum point for the shares (s, 1 - s): the share-weighted mean (confidence) or the mean at the
    share-weighted natural parameter eta = log(x/(1-x)), log x, -1/x (budget), each written as the bottom
    value plus s times the difference, so that a tiny s is not absorbed."""
    if kind == "confidence" or name == "gaussian":
        return theta_bottom + share_top * (theta_top - theta_bottom)
    if name == "bernoulli":
        natural_bottom = mpmath.log(theta_bottom / (1 - theta_bottom))
        eta = natural_bottom + share_top * (mpmath.log(theta_top / (1 - theta_top)) - natural_bottom)
        return 1 / (1 + mpmath.exp(-eta))
    if name == "poisson":
        return theta_bottom * mpmath.exp(share_top * mpmath.log(theta_top / theta_bottom))
    return 1 / (1 / theta_bottom + share_top * (1 / theta_top - 1 / theta_bottom))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("family", FAMILIES, ids=lambda family: family.name)
def test_compiled_pair_kernel_matches_a_high_precision_reference(family, kind):
    # the kernel takes the shares (s, fl(1 - s)) and forms every difference of the point from the means from
    # the gap and one share, so its result is that of the exact shares (s, 1 - s) up to its own error bound;
    # 420 digits hold 1 - s exactly for s down to 1e-300 with 100 digits to spare
    rng = np.random.default_rng(5)
    theta_top, theta_bottom, share_top, share_bottom = (array[::20] for array in _grid(family, rng))
    with np.errstate(all="ignore"):
        got = pair_arrays(family.name, kind, theta_top, theta_bottom, share_top, share_bottom)
    bound = family.pair_error_bound(kind, np.concatenate([theta_top, theta_bottom]))
    with mpmath.workdps(420):
        for index in range(theta_top.size):
            t_i, t_j = mpmath.mpf(float(theta_top[index])), mpmath.mpf(float(theta_bottom[index]))
            s_i = mpmath.mpf(float(share_top[index]))
            point = _mp_point(family.name, kind, t_i, t_j, s_i)
            if kind == "confidence" or family.name == "gaussian":
                expected = (_mp_divergence(family.name, t_i, point), _mp_divergence(family.name, t_j, point))
            else:
                expected = (_mp_divergence(family.name, point, t_i), _mp_divergence(family.name, point, t_j))
            for field, value in ((0, expected[0]), (1, expected[1]), (2, point)):
                computed = float(got[field, index])
                if abs(value) < mpmath.mpf(2.0) ** -1074:  # below the smallest subnormal: rounds to zero
                    assert abs(computed) <= 2.0**-1074, (index, field)
                    continue
                if abs(value) > np.finfo(float).max:  # beyond the floating-point range: rounds to infinity
                    assert computed == np.inf, (index, field)
                    continue
                # the divergences (the gradients) to relative precision; the point to that of the means' scale
                # (a Gaussian point between means of opposite signs cancels)
                scale = abs(value) if field < 2 else max(abs(value), abs(t_i), abs(t_j))
                error = abs(mpmath.mpf(computed) - value) / scale
                assert error <= bound, (family.name, kind, index, field, theta_top[index], theta_bottom[index],
                                        share_top[index], computed, float(value), float(error / bound))


@pytest.mark.twin
@pytest.mark.parametrize("kind", KINDS)
def test_families_hand_out_their_kernels_and_only_their_own(kind):
    for family in [Bernoulli(), Poisson(), Exponential(), Gamma(2.0), Gaussian([1.0, 2.0])]:
        kernel = family.compiled_pair(kind)
        assert kernel is not None
        values = kernel(0.7, 0.4, 0.25, 0.75)
        expected = _numpy_pair(family, kind, 0.7, 0.4, 0.25, 0.75)
        assert_within(values, [float(field) for field in expected], _pair_bounds(family, kind, [0.7], [0.4])[0])

    class OwnKernel(Bernoulli):
        def unit_budget_pair(self, *arguments):
            return super().unit_budget_pair(*arguments)

    assert (OwnKernel().compiled_pair(kind) is None) == (kind == "budget")
    with compiled_kernels(False):
        assert Bernoulli().compiled_pair(kind) is None
    assert Bernoulli().compiled_pair("other") is None


@pytest.mark.twin
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("family", FAMILIES, ids=lambda family: family.name)
def test_pair_terms_from_the_compiled_kernel_match_the_numpy_ones(family, kind):
    # pair_terms(compiled=True) (the barrier's evaluations) against the numpy kernel through the same function,
    # first and second order, on the adversarial grid with weights on several scales
    from allocopt.topk.pairs import pair_terms

    rng = np.random.default_rng(18)
    theta_top, theta_bottom, share_top, share_bottom = _grid(family, rng)
    scale = 10.0 ** rng.uniform(-5, 5, theta_top.shape[0])
    eta_top, eta_bottom = family.unit_natural(theta_top), family.unit_natural(theta_bottom)
    with np.errstate(all="ignore"):
        expected = pair_terms(family, kind, theta_top, theta_bottom, eta_top, eta_bottom, share_top * scale,
                              share_bottom * scale, second_order=True)
        got = pair_terms(family, kind, theta_top, theta_bottom, eta_top, eta_bottom, share_top * scale,
                         share_bottom * scale, second_order=True, compiled=True)
    # each field combines the pair's fields with the weights in a few more correctly rounded operations
    bounds = 3 * _pair_bounds(family, kind, theta_top, theta_bottom)
    for name in ("cost", "grad_top", "grad_bottom", "point", "hess_top", "hess_cross", "hess_bottom"):
        assert_within(getattr(got, name), getattr(expected, name), bounds, (family.name, kind, name))


def test_pair_terms_of_a_family_without_a_compiled_kernel_stay_numpy():
    from allocopt.topk.pairs import pair_terms

    class Custom(Poisson):  # overrides the numpy kernel: compiled_pair is None, so compiled=True runs this one
        def unit_confidence_pair(self, theta_top, theta_bottom, share_top, share_bottom):
            pair = super().unit_confidence_pair(theta_top, theta_bottom, share_top, share_bottom)
            return pair._replace(top=2.0 * pair.top)

    family = Custom()
    theta_top, theta_bottom = np.array([2.0, 3.0]), np.array([1.0, 0.5])
    weights = np.array([0.3, 0.6]), np.array([0.7, 0.2])
    got = pair_terms(family, "confidence", theta_top, theta_bottom, None, None, *weights, compiled=True)
    plain = Poisson().unit_confidence_pair(theta_top, theta_bottom, weights[0] / (weights[0] + weights[1]),
                                           weights[1] / (weights[0] + weights[1]))
    assert np.array_equal(got.grad_top, 2.0 * plain.top)
