r"""Compiled (numba) scalar KL confidence bounds, the twins of
:func:`allocopt.algorithms.engine.confidence_bounds.kl_bound` for one arm, shared by the step kernels of KL-Racing
(:mod:`.kl_racing`) and KL-LUCB (:mod:`._lucb_step`).

Gaussian arms (family code 0): :math:`\hat\mu \pm \sqrt{(2\sigma^2)\,\text{level}}`. Bernoulli arms (code 1):
the bisection of ``kl_bound`` with the same midpoints :math:`(f + i)/2` and the same divergence
:math:`H - \hat\mu\log q - (1 - \hat\mu)\log(1 - q)`, :math:`H = \hat\mu\log\hat\mu + (1 - \hat\mu)\log(1 -
\hat\mu)`, with ``scipy.special.xlogy``'s convention :math:`0 \log y = 0`, and the domain's end when the mean is
on it. The logarithm is the C library's here and numpy's there; they agree on this project's machines (see
:mod:`allocopt.families.kernels` for the caveat), and the tests compare the bounds bit for bit.
"""

from __future__ import annotations

import numpy as np

from ..._numba import compile_kernels, kernel
from .confidence_bounds import BISECTION_STEPS

__all__ = ["KL_BOUND_FAMILIES", "kl_bound", "compile_bounds"]

KL_BOUND_FAMILIES = ("gaussian", "bernoulli")
"""The families whose KL bounds are compiled (their codes are their positions here)."""


@kernel
def _xlogy(x, y):
    """:math:`x \\log y`, 0 at :math:`x = 0` (unless :math:`y` is NaN): ``scipy.special.xlogy``."""
    if x == 0.0 and not np.isnan(y):
        return 0.0
    return x * np.log(y)


@kernel
def _kl_bound(family_code, mean, level, upper, twice_variance):
    """One KL bound of :func:`~allocopt.algorithms.engine.confidence_bounds.kl_bound` (upper if ``upper``) at ``level``:
    Gaussian (``family_code`` 0) in closed form, Bernoulli (1) by the same bisection in the same order.

    The bisection stops early only at a fixed point (a step that leaves the bracket as it was leaves it so at
    every later step: the step is a function of the bracket), so it returns the number of the 62 numpy steps."""
    if family_code == 0:
        radius = np.sqrt(twice_variance * level)
        return mean + radius if upper else mean - radius
    outer = 1.0 if upper else 0.0
    # d(mean, outer) is 0 at a mean on the domain's end on that side and +inf otherwise: the bound is the end
    if mean == outer and 0.0 <= level:
        return outer
    complement = 1.0 - mean
    entropy = _xlogy(mean, mean) + _xlogy(complement, complement)
    feasible, infeasible = mean, outer
    for _ in range(BISECTION_STEPS):
        middle = 0.5 * (feasible + infeasible)
        if entropy - _xlogy(mean, middle) - _xlogy(complement, 1.0 - middle) <= level:
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
    compile_kernels()
