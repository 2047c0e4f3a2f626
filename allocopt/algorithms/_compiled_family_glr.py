r"""Compiled Chernoff (GLR) statistic for every family with a compiled pair kernel (Bernoulli, Poisson,
exponential arms): the twin of :func:`allocopt.algorithms.stopping.glr_statistic_numpy` on a batch.

With counts :math:`N_a`, means :math:`\hat\theta_a`, the empirical top-k :math:`\hat I` and the others
:math:`\hat J` (Wang, Yang, You 2022, eq. (22)),

.. math::
    Z_t = \min_{i \in \hat I,\ j \in \hat J} C_{ij}, \qquad C_{ij} = w_i\, d(\hat\theta_i, m_{ij})
    + w_j\, d(\hat\theta_j, m_{ij}), \quad w_a = N_a/\phi_a,

with :math:`C_{ij} = 0` where :math:`\hat\theta_i \le \hat\theta_j` (a tie across the boundary) or where the
cost is NaN (a degenerate pair at the edge of the domain), and the first minimal pair in row-major order over
``top`` x ``bottom`` (``np.argmin``'s). Each pair's cost is the family's compiled
:func:`allocopt._compiled_families.weighted_pair` (the shares :math:`w_a/(w_i + w_j)`, 1/2 each at zero total,
then :math:`w_i d_{top} + w_j d_{bottom}`: the operations of :func:`allocopt.topk._pairs.pair_terms` in the same
order), so the statistic is the numpy one bit for bit wherever the compiled pair kernel is (IEEE arithmetic in
both; see :mod:`allocopt._compiled_families` for the last-ulp caveat of the transcendental functions, which on
this project's machines agree). The tests compare the twins on random batches with ties and means at the ends
of the domain, and the engine's records with the numpy loop's.

Why compiled: on Bernoulli arms (Figure 4 of the experiments) the numpy statistic makes about fifty array
operations per step on a (R, k, K-k) grid, a third of Track-and-Stop's step.
"""

from __future__ import annotations

import numpy as np

from ..families import kernels as _families
from .._numba import compile_once
from ..families import ExponentialFamily
from ._compiled import compiled_enabled

__all__ = ["glr_pair_kernel", "family_glr", "compiled_glr_row"]


def glr_pair_kernel(family: ExponentialFamily):
    """The family's compiled confidence pair kernel when the compiled statistic can run for it, else ``None``
    (harmonic costs - Gaussian arms - have their own closed-form kernel)."""
    if not compiled_enabled() or family.harmonic_costs("confidence"):
        return None
    pair = family.compiled_pair("confidence")
    return pair if pair is not None and _families.kernel_code(pair) is not None else None


# weighted_pair compiled first (called by its global name); the rows call the row function by its global name
_COMPILED = compile_once(globals(), needs=(_families._kernels,), rebind=("_family_glr_row",),
                         kernels={"row": "_family_glr_row", "rows": "_glr_rows"})


def _kernel():
    return _COMPILED()["rows"]


def compiled_glr_row():
    """The compiled row function ``(code, counts, means, dispersion, top, bottom) -> (value, position)`` of one
    run (shapes (K,), (k,), (K-k,)): :math:`Z_t` and the row-major position of its first minimal pair (for the
    compiled run loops that compute the statistic step by step)."""
    return _COMPILED()["row"]


def _family_glr_row(code, counts, means, dispersion, top, bottom):
    k, n_bottom = top.shape[0], bottom.shape[0]
    best = np.inf
    position = 0
    for i in range(k):
        arm_top = top[i]
        theta_top, weight_top = means[arm_top], counts[arm_top] / dispersion[arm_top]
        for j in range(n_bottom):
            arm_bottom = bottom[j]
            theta_bottom = means[arm_bottom]
            cost = 0.0
            if theta_top > theta_bottom:
                cost, _, _ = _families.weighted_pair(code, theta_top, theta_bottom, weight_top,
                                                     counts[arm_bottom] / dispersion[arm_bottom])
                if cost != cost:
                    cost = 0.0
            if cost < best:  # np.argmin: the first minimal entry (entry 0 when every cost is +inf)
                best = cost
                position = i * n_bottom + j
    return best, position


def _glr_rows(code, counts, means, dispersion, top, bottom, value, pair_top, pair_bottom):
    n_bottom = bottom.shape[1]
    for row in range(means.shape[0]):
        value[row], position = _family_glr_row(code, counts[row], means[row], dispersion, top[row], bottom[row])
        pair_top[row] = top[row, position // n_bottom]
        pair_bottom[row] = bottom[row, position % n_bottom]


def family_glr(family: ExponentialFamily, dispersion: np.ndarray, counts: np.ndarray, means: np.ndarray,
               top: np.ndarray, bottom: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    r""":math:`Z_t` and its minimal pair for a batch (``counts``, ``means`` of shape (R, K)) with the empirical
    top-k ``top`` (R, k) and the others ``bottom`` (R, K-k), compiled; ``None`` when the family has no compiled
    pair kernel (or the compiled kernels are off): the caller then runs
    :func:`~allocopt.algorithms.stopping.glr_statistic_numpy`, whose twin this is.

    Returns
    -------
    value, pair_top, pair_bottom : ndarray, shape (R,)

    Examples
    --------
    Two Bernoulli arms pulled 10 times each with means 0.8 and 0.2 (k = 1): :math:`m = 1/2` and
    :math:`Z = 2 \cdot 10\, d(0.8, 0.5) = 20 (0.8 \log 1.6 + 0.2 \log 0.4)`.

    >>> from allocopt.families import Bernoulli
    >>> glr = family_glr(Bernoulli(), np.ones(2), np.array([[10, 10]]), np.array([[0.8, 0.2]]),
    ...                  np.array([[0]]), np.array([[1]]))
    >>> glr is None or bool(abs(glr[0][0] - 20 * (0.8 * np.log(1.6) + 0.2 * np.log(0.4))) < 1e-12)
    True
    """
    pair = glr_pair_kernel(family)
    if pair is None:
        return None
    n_rows = means.shape[0]
    value = np.empty(n_rows)
    pair_top = np.empty(n_rows, dtype=np.int64)
    pair_bottom = np.empty(n_rows, dtype=np.int64)
    _kernel()(_families.kernel_code(pair), np.ascontiguousarray(counts), np.ascontiguousarray(means, dtype=float),
              np.ascontiguousarray(dispersion, dtype=float), np.ascontiguousarray(top, dtype=np.int64),
              np.ascontiguousarray(bottom, dtype=np.int64), value, pair_top, pair_bottom)
    return value, pair_top, pair_bottom
