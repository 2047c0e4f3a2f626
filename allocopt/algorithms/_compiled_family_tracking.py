r"""Compiled KKT-Tracking for every family with a compiled pair kernel (DT-TS's solver on non-Gaussian arms).

:func:`family_kkt_tracking` is the twin of :func:`allocopt.topk._tracking.kkt_tracking_batch` (a fixed number of
KKT-Tracking iterations, Wang, Yang, You 2022, Algorithm 3, on every row of a batch) for a family whose
:meth:`~allocopt.families.ExponentialFamily.compiled_pair` returns a kernel (:mod:`allocopt._compiled_families`):
the loop below does, row by row, the operations of :class:`~allocopt.topk._tracking.TrackingIterations` in the
same order, on the unnormalised iterates :math:`u_t = t\,\psi_t`. At every iteration every pair's cost at the
effective weights :math:`w = u/\phi` (shares :math:`w_a/(w_i + w_j)`, 1/2 each at zero total), the first
minimal pair in row-major order over ``top`` x ``bottom`` (the first NaN if there is one, as ``np.argmin``), and
at that pair the sampling function :math:`h_{i;j} = u_i \partial_{u_i} C_{ij} / C_{ij}` with the weights
:math:`u \cdot (1/\phi)` that the numpy step uses, clipped to [0, 1], then :math:`u_t = u_{t-1} + h e_i +
(1 - h) e_j` (:math:`u_0 = 0` added to; the first pair chosen at the uniform :math:`\psi_0`), and
:math:`\psi_N = u_N / N`.

The two agree bit for bit wherever the compiled pair kernel agrees with the numpy one bit for bit (IEEE
arithmetic in both, no fast-math; see :mod:`allocopt._compiled_families` for the last-ulp caveat of the
transcendental functions); the tests compare the twins on random batches of every family.

Why compiled: on Bernoulli arms the numpy loop spends three quarters of DT-TS's time evaluating the pair
kernel over the full :math:`k(K-k)` grid at each of the 100 iterations, with a few dozen array temporaries
each time; the loop below evaluates each pair once per iteration in registers.
"""

from __future__ import annotations

import numpy as np

from ..families import kernels as _families
from .._numba import compile_once
from ..families import ExponentialFamily
from ._compiled import compiled_enabled

__all__ = ["family_kkt_tracking", "tracking_pair_kernel"]


def tracking_pair_kernel(family: ExponentialFamily, kind: str = "confidence"):
    """The family's compiled pair kernel when the compiled KKT-Tracking can run for it, else ``None``."""
    if not compiled_enabled() or family.harmonic_costs(kind):  # harmonic costs: their own closed-form twin
        return None
    pair = family.compiled_pair(kind)
    return pair if _families.kernel_code(pair) is not None else None


# weighted_pair compiled first (called by its global name)
_COMPILED = compile_once(globals(), needs=(_families._kernels,), kernels={"rows": "_tracking_rows"})


def _kernel():
    return _COMPILED()["rows"]


def _tracking_rows(code, theta, dispersion, top, bottom, iterations, psi):
    n_rows, n_arms = theta.shape
    k, n_bottom = top.shape[1], bottom.shape[1]
    theta_top, theta_bottom = np.empty(k), np.empty(n_bottom)
    dispersion_top, dispersion_bottom = np.empty(k), np.empty(n_bottom)
    psi_top, psi_bottom = np.empty(k), np.empty(n_bottom)
    weight_top, weight_bottom = np.empty(k), np.empty(n_bottom)
    for row in range(n_rows):
        for i in range(k):
            theta_top[i] = theta[row, top[row, i]]
            dispersion_top[i] = dispersion[row, top[row, i]]
            psi_top[i] = 1.0 / n_arms
        for j in range(n_bottom):
            theta_bottom[j] = theta[row, bottom[row, j]]
            dispersion_bottom[j] = dispersion[row, bottom[row, j]]
            psi_bottom[j] = 1.0 / n_arms
        for t in range(1, iterations + 1):
            # costs(): w = u / phi, shares w / (w_i + w_j), cost = w_i d_top + w_j d_bottom; np.argmin's pair
            for i in range(k):
                weight_top[i] = psi_top[i] / dispersion_top[i]
            for j in range(n_bottom):
                weight_bottom[j] = psi_bottom[j] / dispersion_bottom[j]
            best = np.inf
            best_i = 0
            best_j = 0
            found_nan = False
            for i in range(k):
                w_i = weight_top[i]
                for j in range(n_bottom):
                    cost, _, _ = _families.weighted_pair(code, theta_top[i], theta_bottom[j], w_i, weight_bottom[j])
                    if cost != cost:
                        if not found_nan:
                            found_nan = True
                            best_i, best_j = i, j
                    elif not found_nan and cost < best:
                        best, best_i, best_j = cost, i, j
            if not found_nan and best == np.inf:  # every cost +inf: np.argmin's first entry
                best_i, best_j = 0, 0
            # the chosen pair with w = u * (1 / phi) (TrackingIterations.step; psi_i, psi_j hold u_i, u_j)
            psi_i, psi_j = psi_top[best_i], psi_bottom[best_j]
            inverse_i, inverse_j = 1.0 / dispersion_top[best_i], 1.0 / dispersion_bottom[best_j]
            pair_cost, divergence_i, _ = _families.weighted_pair(code, theta_top[best_i], theta_bottom[best_j],
                                                                 psi_i * inverse_i, psi_j * inverse_j)
            # sampling_function_top: psi_i dC/dpsi_i / C, its limits at zero cost, clipped to [0, 1]
            if pair_cost > 0:
                h_top = psi_i * (divergence_i * inverse_i) / pair_cost
            elif psi_i > 0:
                h_top = 0.5 if psi_j > 0 else 0.0
            else:
                h_top = 1.0 if psi_j > 0 else 0.5
            if h_top == h_top:  # np.clip keeps NaN
                h_top = min(max(h_top, 0.0), 1.0)
            if t == 1:  # u_0 = 0: psi_0 only chose the first pair
                psi_top[:] = 0.0
                psi_bottom[:] = 0.0
            psi_top[best_i] += h_top
            psi_bottom[best_j] += 1.0 - h_top
        # psi_N = u_N / N (psi_0, uniform, when no iteration ran)
        norm = iterations if iterations > 0 else 1
        for i in range(k):
            psi[row, top[row, i]] = psi_top[i] / norm
        for j in range(n_bottom):
            psi[row, bottom[row, j]] = psi_bottom[j] / norm


def family_kkt_tracking(family: ExponentialFamily, theta: np.ndarray, dispersion: np.ndarray, top: np.ndarray,
                        bottom: np.ndarray, iterations: int, kind: str = "confidence") -> np.ndarray | None:
    r""":math:`\psi_N` after ``iterations`` KKT-Tracking iterations on every row of ``theta`` (shape (R, K)),
    compiled, for a family with a compiled pair kernel; ``None`` when it has none (or the compiled kernels are
    off): the caller then runs :func:`~allocopt.topk._tracking.kkt_tracking_batch`, whose twin this is.

    Examples
    --------
    Two Bernoulli arms symmetric about 1/2 have the optimal allocation (1/2, 1/2) (the costs are symmetric),
    and the first iteration from the uniform allocation reaches it (to rounding: the two divergences to the
    midpoint are equal mathematically, not necessarily in floating point).

    >>> from allocopt.families import Bernoulli
    >>> psi = family_kkt_tracking(Bernoulli(), np.array([[0.8, 0.2]]), np.ones(2), np.array([[0]]),
    ...                           np.array([[1]]), 1)
    >>> psi is None or bool(np.allclose(psi, 0.5, rtol=0, atol=1e-15))
    True
    """
    pair = tracking_pair_kernel(family, kind)
    if pair is None:
        return None
    theta = np.ascontiguousarray(theta, dtype=float)
    psi = np.empty(theta.shape)
    dispersion = np.ascontiguousarray(np.broadcast_to(np.asarray(dispersion, dtype=float), theta.shape))
    _kernel()(_families.kernel_code(pair), theta, dispersion, np.ascontiguousarray(top, dtype=np.int64),
              np.ascontiguousarray(bottom, dtype=np.int64), int(iterations), psi)
    return psi
