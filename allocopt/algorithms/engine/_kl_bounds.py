r"""Compiled (numba) scalar KL confidence bounds, the twins of
:func:`allocopt.algorithms.engine.confidence_bounds.kl_bound` for one arm, shared by the step kernels of KL-Racing
(:mod:`.kl_racing`), KL-LUCB (:mod:`._lucb_step`) and UGapE (:mod:`.ugape`).

Each built-in unit divergence has a number, its position in :data:`KL_BOUND_FAMILIES` (:func:`bound_code` finds it
from the divergence a family inherits, as ``kl_bound`` does: gamma arms use the exponential one).

- Gaussian arms (0): :math:`\hat\mu \pm \sqrt{(2\sigma^2)\,\text{level}}`.
- Bernoulli (1), Poisson (2) and exponential (3) arms: the bisection of ``kl_bound`` at the unit level
  :math:`\phi\,\text{level}`, between the mean and the same outer end (1 or 0; :math:`2(\text{level} + \hat\mu)`
  or 0; :math:`\hat\mu e^{\text{level} + 1}` or :math:`\hat\mu / (2(\text{level} + 1))`), with the same midpoints
  (arithmetic, geometric for the exponential divergence) and the same divergences: Bernoulli :math:`H -
  \hat\mu\log q - (1 - \hat\mu)\log(1 - q)` with :math:`H = \hat\mu\log\hat\mu + (1 - \hat\mu)\log(1 - \hat\mu)`,
  Poisson :math:`q + (\hat\mu\log\hat\mu - \hat\mu) - \hat\mu\log q`, exponential :math:`\hat\mu/q - 1 -
  \log(\hat\mu/q)`, with ``scipy.special.xlogy``'s convention :math:`0 \log y = 0`. The outer end itself is the bound
  where the family's divergence to it is within the level (:func:`allocopt.families.kernels.unit_divergence`, the
  forms of ``unit_kl``).

The logarithm is the C library's here and numpy's there; they agree on this project's machines (see
:mod:`allocopt.families.kernels` for the caveat), and the tests compare the bounds bit for bit.
"""

from __future__ import annotations

import numpy as np

from ..._numba import compile_kernels, kernel
from ...families import ExponentialFamily
from ...families import kernels as _families
from .confidence_bounds import BISECTION_STEPS, unit_divergence_name

__all__ = ["KL_BOUND_FAMILIES", "bound_code", "kl_bound", "bound_scale", "compile_bounds"]

KL_BOUND_FAMILIES = ("gaussian", "bernoulli", "poisson", "exponential")
"""The unit divergences whose KL bounds are compiled (their codes are their positions here)."""

_GAUSSIAN, _BERNOULLI, _POISSON, _EXPONENTIAL = 0, 1, 2, 3
# the confidence pair-kernel numbers of allocopt.families.kernels, for unit_divergence (by bound code)
_PAIR_CODES = (0, 1, 3, 5)


def bound_code(family: ExponentialFamily) -> int | None:
    """The number of the family's compiled KL bounds (by the unit divergence it inherits), or ``None`` for a family
    with a divergence of its own (its bounds are computed in Python)."""
    name = unit_divergence_name(family)
    return KL_BOUND_FAMILIES.index(name) if name in KL_BOUND_FAMILIES else None


def bound_scale(code: int, dispersion: np.ndarray) -> np.ndarray:
    """The per-arm factor :func:`kl_bound` reads: :math:`2\\sigma_a^2` for Gaussian arms, the dispersion
    :math:`\\phi_a` (the unit level's factor) for the others."""
    dispersion = np.ascontiguousarray(dispersion, dtype=float)
    return 2.0 * dispersion if code == _GAUSSIAN else dispersion


@kernel
def _xlogy(x, y):
    """:math:`x \\log y`, 0 at :math:`x = 0` (unless :math:`y` is NaN): ``scipy.special.xlogy``."""
    if x == 0.0 and not np.isnan(y):
        return 0.0
    return x * np.log(y)


@kernel
def _outer_end(family_code, mean, level, upper):
    """A point beyond the bound (or the domain's end) on the requested side, at unit level ``level``."""
    if family_code == _BERNOULLI:
        return 1.0 if upper else 0.0
    if family_code == _POISSON:
        return 2.0 * (level + mean) if upper else 0.0
    return mean * np.exp(level + 1.0) if upper else mean / (2.0 * (level + 1.0))


@kernel
def _bisection_divergence(family_code, mean, constant, q):
    """:math:`d_1(\\hat\\mu, q)` as the bisection evaluates it (``constant``: its terms in the mean alone)."""
    if family_code == _BERNOULLI:
        return constant - _xlogy(mean, q) - _xlogy(1.0 - mean, 1.0 - q)
    if family_code == _POISSON:
        return q + constant - _xlogy(mean, q)
    return mean / q - 1.0 - np.log(mean / q)


@kernel
def _kl_bound(family_code, mean, level, upper, scale):
    """One KL bound of :func:`~allocopt.algorithms.engine.confidence_bounds.kl_bound` (upper if ``upper``) at ``level``:
    Gaussian (``family_code`` 0) in closed form with ``scale`` :math:`2\\sigma^2`, the others by the same bisection
    in the same order at the unit level ``scale * level`` (``scale``: the dispersion).

    The bisection stops early only at a fixed point (a step that leaves the bracket as it was leaves it so at
    every later step: the step is a function of the bracket), so it returns the number of the 62 numpy steps."""
    if family_code == _GAUSSIAN:
        radius = np.sqrt(scale * level)
        return mean + radius if upper else mean - radius
    level = scale * level
    outer = _outer_end(family_code, mean, level, upper)
    # the bound is the outer end where the divergence to it is within the level (a Bernoulli mean of 0 and its lower
    # bound: d(mean, end) is 0 at a mean on the domain's end and +inf at any other)
    if family_code == _BERNOULLI:
        if mean == outer and 0.0 <= level:
            return outer
    elif _families.unit_divergence(_PAIR_CODES[family_code], mean, outer) <= level:
        return outer
    if family_code == _BERNOULLI:
        constant = _xlogy(mean, mean) + _xlogy(1.0 - mean, 1.0 - mean)
    else:
        constant = _xlogy(mean, mean) - mean
    geometric = family_code == _EXPONENTIAL
    feasible, infeasible = mean, outer
    for _ in range(BISECTION_STEPS):
        middle = np.sqrt(feasible * infeasible) if geometric else 0.5 * (feasible + infeasible)
        if _bisection_divergence(family_code, mean, constant, middle) <= level:
            if middle == feasible:
                break
            feasible = middle
        else:
            if middle == infeasible:
                break
            infeasible = middle
    return feasible


# replaced by its compiled version by compile_bounds (compiled callers use it by this module attribute)
kl_bound = _kl_bound


def compile_bounds() -> None:
    """Compile :func:`kl_bound` (once per process; numba's cache keeps the machine code between processes)."""
    _families._kernels()
    compile_kernels()
