"""A new reward family is one class, and the fast paths follow what a family declares, not its class.

Families defined here, each as one subclass:

* ``Quadratic``: the unit-variance Gaussian family written from scratch on :class:`ExponentialFamily`
  (:math:`d_1(x, y) = (x - y)^2/2`, :math:`\\eta = x`, :math:`A(\\eta) = \\eta^2/2`, :math:`V_1 = 1`) with its own
  conic perspectives, declaring no capability: every solver takes its general path (the generic pair kernels of
  the base class, the budget perspective, the multi-pass forest solver).
* ``DeclaredQuadratic``: the same class declaring :math:`B_{ij} = C_{ij}` and harmonic confidence costs, which
  hold for it: the closed-form paths are selected although it is no subclass of ``Gaussian``.
* ``StdGaussian``: ``Gaussian`` re-parametrised by its standard deviation; as a subclass it keeps the fast paths.
* ``PrimitivePoisson``: the Poisson family written from its unit primitives only (no pair kernels of its own),
  :math:`d_1(x, y) = y - x + x\\log(x/y)`, :math:`\\eta = \\log x`, :math:`A(\\eta) = e^\\eta`, :math:`V_1(x) = x`:
  the example class of docs/families.md, run from that page.

Reference values are independent: the 120-digit mpmath solutions of the KKT system of Wang, Yang, You (2022),
Theorem 3.5, for k = 1 (``topk_reference.mp_star_optimum``, which uses no allocopt code), and, for the
Gaussian-scale identity, that costs with means theta and variance sigma^2 equal unit-variance costs with means
theta/sigma (both are (theta_i - theta_j)^2 / (2 sigma^2 (1/psi_i + 1/psi_j))).
"""

from __future__ import annotations

import functools
import math
import re
from pathlib import Path

import mpmath
import numpy as np
import pytest

from allocopt import TopKProblem, solve_topk
from allocopt.algorithms import identify
from allocopt.algorithms import kkt_ts as kkt_ts_module
from allocopt.algorithms import stopping as stopping_module
from allocopt._numba import compiled_enabled
from allocopt.algorithms.kkt_ts import KKTTS
from allocopt.algorithms.top_two import TTEI
from allocopt.exceptions import InvalidArgumentError
from allocopt.families import ConicPerspective, ExponentialFamily, Gaussian, Poisson
from allocopt.topk.batch import solve_topk_batch
from topk_reference import mp_star_optimum


class Quadratic(ExponentialFamily):
    """The unit-variance Gaussian family, written from scratch, declaring no capability."""

    name = "quadratic"
    lower = -np.inf
    upper = np.inf
    mean_requirement = "finite real numbers"

    @staticmethod
    def unit_kl(x, y):
        return 0.5 * np.square(np.asarray(x, dtype=float) - np.asarray(y, dtype=float))

    @staticmethod
    def unit_kl_offset(x, offset):
        return 0.5 * np.square(np.asarray(offset, dtype=float)) + 0.0 * np.asarray(x, dtype=float)

    @staticmethod
    def unit_natural(x):
        return np.asarray(x, dtype=float) + 0.0

    @staticmethod
    def unit_natural_difference(x, y):
        return np.asarray(x, dtype=float) - np.asarray(y, dtype=float)

    @staticmethod
    def unit_mean_difference(eta, eta_difference, mean):
        return np.asarray(eta_difference, dtype=float) + 0.0 * np.asarray(mean, dtype=float)

    @staticmethod
    def unit_log_partition(eta):
        return 0.5 * np.square(np.asarray(eta, dtype=float))

    @staticmethod
    def unit_conjugate(x):
        return 0.5 * np.square(np.asarray(x, dtype=float))

    @staticmethod
    def unit_mean(eta):
        return np.asarray(eta, dtype=float) + 0.0

    @staticmethod
    def unit_variance(x):
        return np.ones(np.shape(x))

    @staticmethod
    def unit_variance_bound(low, high):
        return np.ones(np.broadcast(np.asarray(low), np.asarray(high)).shape)

    def sample(self, means, size, rng):
        return rng.normal(means, 1.0, size=size)

    @staticmethod
    def _half_square_over(cp, numerator, denominator):
        # x^2 / (2 y) entry by entry, each a scalar quad_over_lin atom
        return cp.hstack([0.5 * cp.quad_over_lin(numerator[i], denominator[i]) for i in range(numerator.shape[0])])

    def conic_confidence_perspective(self, cp, total, moment, centre):
        # S d_1(M/S, c) = (M - S c)^2 / (2 S)
        return ConicPerspective(self._half_square_over(cp, moment - cp.multiply(centre, total), total), [])

    def conic_budget_perspective(self, cp, total, natural_moment, mean_centre, eta_centre):
        # S (A_1(N/S) - A_1(eta_c) - x_c (N/S - eta_c)) = (N - S eta_c)^2 / (2 S)
        return ConicPerspective(self._half_square_over(cp, natural_moment - cp.multiply(eta_centre, total), total), [])


class DeclaredQuadratic(Quadratic):
    """``Quadratic`` declaring what holds for it: B = C and C = (theta_i - theta_j)^2 / (2 (1/psi_i + 1/psi_j))."""

    name = "declared-quadratic"
    budget_equals_confidence = True
    harmonic_confidence_costs = True


class StdGaussian(Gaussian):
    """Gaussian arms given by their standard deviation (a re-parametrised Gaussian)."""

    def __init__(self, std: float):
        super().__init__(float(std) ** 2)


def _documented_family() -> type:
    """``MyPoisson``, defined by the python block of docs/families.md (so that the documented example is the
    family tested here)."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "families.md").read_text()
    namespace: dict = {}
    exec(re.findall(r"```python\n(.*?)```", text, flags=re.S)[0], namespace)
    return namespace["MyPoisson"]


PrimitivePoisson = _documented_family()


GAUSSIAN_THETA = (1.0, 0.8, 0.5, 0.3, 0.0)
POISSON_THETA = (3.0, 2.2, 1.5, 1.0)
KINDS = ["confidence", "budget"]
# tolerances against the 120-digit optimum: the exact solver certifies a relative gap below 1e-9 (its default
# tol) and reaches rounding on these instances; CVXPY's interior point reaches about 1e-8 (docs/topk.md); FWGA
# and KKT-Tracking at their default iterations are approximate, and never above the optimum
METHOD_VALUE_TOLERANCE = {"exact": 1e-12, "cvxpy": 1e-6, "fwga": 5e-2, "kkt-tracking": 5e-2}


@functools.lru_cache(maxsize=None)
def _reference(family_name, kind, theta):
    value, psi = mp_star_optimum(family_name, kind, list(theta), 1)
    return float(value), np.array([float(entry) for entry in psi])


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("method", list(METHOD_VALUE_TOLERANCE))
@pytest.mark.parametrize("family, reference_name, theta", [
    (Quadratic(), "gaussian", GAUSSIAN_THETA),
    (DeclaredQuadratic(), "gaussian", GAUSSIAN_THETA),
    (PrimitivePoisson(), "poisson", POISSON_THETA),
], ids=["quadratic", "declared-quadratic", "primitive-poisson"])
def test_a_family_defined_as_one_class_solves_with_every_method(family, reference_name, theta, method, kind):
    value, psi = _reference(reference_name, kind, theta)
    result = solve_topk(TopKProblem(theta, 1, family=family), method=method, kind=kind)
    tolerance = METHOD_VALUE_TOLERANCE[method]
    assert result.value == pytest.approx(value, rel=tolerance)
    assert result.value <= value * (1.0 + 1e-12)  # Gamma(psi) never exceeds Gamma*
    if method in ("exact", "cvxpy"):
        assert result.status == "optimal"
        np.testing.assert_allclose(result.psi, psi, atol=1e-10 if method == "exact" else 1e-4)


@pytest.mark.parametrize("kind", KINDS)
def test_a_reparametrised_gaussian_solves_like_the_scaled_unit_family(kind):
    # variance sigma^2 = 0.25 on theta equals variance 1 on theta / sigma (module docstring)
    theta = np.array(GAUSSIAN_THETA)
    value, psi = _reference("gaussian", kind, tuple(theta / 0.5))
    for method in ("exact", "cvxpy"):
        result = solve_topk(TopKProblem(theta, 1, family=StdGaussian(0.5)), method=method, kind=kind)
        assert result.status == "optimal"
        assert result.value == pytest.approx(value, rel=METHOD_VALUE_TOLERANCE[method])
        np.testing.assert_allclose(result.psi, psi, atol=1e-10 if method == "exact" else 1e-4)


@pytest.mark.parametrize("kind", KINDS)
def test_the_closed_form_double_star_is_chosen_by_capability(kind):
    closed_form = "exact: double star (closed form)"
    for family, declared in ((Quadratic(), False), (DeclaredQuadratic(), True), (StdGaussian(1.0), True)):
        result = solve_topk(TopKProblem(GAUSSIAN_THETA, 1, family=family), kind=kind)
        assert result.message.startswith(closed_form) is declared, (family, result.message)
        assert result.status == "optimal"


def test_the_batch_closed_form_is_chosen_by_capability():
    rows = np.random.default_rng(11).uniform(0.0, 1.0, size=(6, 5))
    general = solve_topk_batch(rows, 2, family=Quadratic())
    for family in (DeclaredQuadratic(), StdGaussian(1.0)):
        batch = solve_topk_batch(rows, 2, family=family)
        # the closed form solves the rows whose optimum is a double star; the others go one by one, as they all
        # do for a family that declares nothing
        assert not batch.solved_individually.all()
        np.testing.assert_allclose(batch.value, general.value, rtol=1e-12)
        np.testing.assert_allclose(batch.psi, general.psi, atol=1e-10)
    assert general.solved_individually.all()
    assert (general.status == "optimal").all()


def test_capabilities_are_declared_per_family():
    assert Gaussian().harmonic_costs("confidence") and Gaussian().harmonic_costs("budget")
    assert StdGaussian(2.0).harmonic_costs("budget")
    assert not Quadratic().harmonic_costs("confidence")
    assert not Poisson().harmonic_costs("confidence")
    assert DeclaredQuadratic().harmonic_costs("budget")


def test_harmonic_budget_costs_need_budget_equals_confidence():
    class HarmonicConfidenceOnly(Quadratic):
        harmonic_confidence_costs = True

    family = HarmonicConfidenceOnly()
    assert family.harmonic_costs("confidence") and not family.harmonic_costs("budget")


def test_a_family_without_conic_perspective_refuses_cvxpy_by_name():
    class NoCone(Quadratic):
        name = "no-cone"
        conic_confidence_perspective = ExponentialFamily.conic_confidence_perspective
        conic_budget_perspective = ExponentialFamily.conic_budget_perspective

    problem = TopKProblem(GAUSSIAN_THETA, 1, family=NoCone())
    with pytest.raises(InvalidArgumentError, match="solve_topk\\(method='cvxpy'\\).*conic perspective"):
        solve_topk(problem, method="cvxpy")
    assert solve_topk(problem).status == "optimal"  # the other methods need no cone


def test_cost_normalisation_keeps_the_subclass_and_rescales_its_variance():
    # means near 1e200 and a variance of 1e-200 are brought into range by powers of two: costs have degree 2
    # in the means and -1 in the variance, so they scale by exactly 2^-e with e = 2a - b (a, b the binary
    # exponents of the largest mean and variance); the reference costs (theta_i - theta_j)^2 /
    # (2 sigma^2 (1/psi_i + 1/psi_j)) of the unscaled instance are evaluated in mpmath (they overflow floats)
    theta, std = [3e200, 2e200, 1e200], 1e-100
    problem = TopKProblem(theta, 1, family=StdGaussian(std))
    scaled, exponent = problem.cost_normalisation()
    assert type(scaled.family) is StdGaussian
    assert exponent == 2 * math.frexp(max(theta))[1] - math.frexp(std**2)[1]
    psi = [0.3, 0.4, 0.3]
    with mpmath.workdps(50):
        expected = [float(mpmath.ldexp((mpmath.mpf(theta[0]) - mpmath.mpf(other)) ** 2
                                       / (2 * mpmath.mpf(std**2) * (1 / mpmath.mpf(psi[0]) + 1 / mpmath.mpf(weight))),
                                       -exponent)) for other, weight in zip(theta[1:], psi[1:])]
    np.testing.assert_allclose(scaled.costs(np.array(psi))[0], expected, rtol=1e-14)
    with pytest.raises(InvalidArgumentError, match="dispersion"):
        Poisson().with_dispersion(2.0)


@pytest.fixture
def counted(monkeypatch):
    """Count the calls of the engine's compiled Gaussian kernels."""
    calls = {"kkt_ts": 0, "glr": 0}

    def wrap(module, attribute, key):
        original = getattr(module, attribute)

        def counting(*args, **kwargs):
            calls[key] += 1
            return original(*args, **kwargs)

        monkeypatch.setattr(module, attribute, counting)

    wrap(kkt_ts_module, "gaussian_kkt_ts_arms", "kkt_ts")
    wrap(stopping_module, "gaussian_glr", "glr")
    return calls


@pytest.mark.skipif(not compiled_enabled(), reason="the compiled kernels are disabled in this environment")
def test_the_engine_chooses_its_compiled_kernels_by_capability(counted):
    problem = TopKProblem([1.0, 0.5, 0.4, 0.0], k=1, family=StdGaussian(0.5))
    result = identify(problem, KKTTS(), delta=0.05, n_runs=8, rng=2)
    assert counted["kkt_ts"] > 0 and counted["glr"] > 0
    assert result.correct.mean() >= 0.5
    counted["kkt_ts"] = counted["glr"] = 0
    identify(TopKProblem([3.0, 1.0], k=1, family=Poisson()), KKTTS(), delta=0.1, n_runs=2, rng=2)
    assert counted == {"kkt_ts": 0, "glr": 0}


def test_ttei_accepts_a_gaussian_subclass():
    problem = TopKProblem([1.0, 0.5, 0.4, 0.0], k=1, family=StdGaussian(0.5))
    assert identify(problem, TTEI(), delta=0.05, n_runs=4, rng=3).stopping_times.min() > 0

