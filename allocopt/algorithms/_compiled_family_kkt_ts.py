r"""Compiled KKT-TS step (Wang, Yang, You 2022, Algorithm 2) for every family with a compiled pair kernel
(Bernoulli, Poisson, exponential arms): the twin of :meth:`allocopt.algorithms.KKTTS.select_batch_numpy` after
the posterior sample.

The posterior sample :math:`\tilde\theta` (by inversion, scipy's incomplete beta or gamma inverses) and its
top-k :math:`\tilde I` (:func:`~allocopt.algorithms.statistics.top_k_order`) are computed as in numpy; the loop
below then does, row by row, what the numpy step does on the (R, k, K-k) grid, in the same order: every pair's
cost :math:`\tilde C_{ij}` at the effective weights :math:`w_a = N_a/\phi_a` by the family's compiled
:func:`allocopt._compiled_families.weighted_pair` (the operations of :func:`allocopt.topk._pairs.pair_terms`),
the minimal pairs in row-major order (none when a cost is NaN, as ``flat == flat.min()``) and the
:math:`\lfloor uc \rfloor`-th of the :math:`c` of them (:func:`allocopt._rng.random_candidate`; pair 0 when
there is none), :math:`h_{i;j} = w_i \partial_{w_i} C_{ij} / C_{ij}` with its limits at zero cost, clipped to
[0, 1] (:func:`allocopt.topk.problem.sampling_function_top`), and :math:`i` if the coin is below :math:`h`, else
:math:`j`. The arms are the numpy step's wherever the compiled pair kernel agrees with the numpy one bit for bit
(see :mod:`allocopt._compiled_families` for the last-ulp caveat of the transcendental functions); the tests
compare the two steps on random batches and the engine's records with and without the kernel.

Why compiled: on Bernoulli arms (Figure 4 of the experiments) the pair grid, the tie-break and :math:`h` make
about sixty array operations per step, half of KKT-TS's step; the posterior sample is most of the rest.
"""

from __future__ import annotations

import numpy as np

from ..families import kernels as _families
from .._numba import compile_once
from ..families import ExponentialFamily
from ._compiled_family_tracking import tracking_pair_kernel
from .statistics import posterior_sample, top_k_order

__all__ = ["family_kkt_ts_arms"]

# weighted_pair compiled first (called by its global name)
_COMPILED = compile_once(globals(), needs=(_families._kernels,), kernels={"rows": "_kkt_ts_rows"})


def _kernel():
    return _COMPILED()["rows"]


def _kkt_ts_rows(code, theta, counts, dispersion, top, bottom, tie_uniforms, coin_uniforms, arms):
    n_rows = theta.shape[0]
    k, n_bottom = top.shape[1], bottom.shape[1]
    n_pairs = k * n_bottom
    cost, grad_top = np.empty(n_pairs), np.empty(n_pairs)
    for row in range(n_rows):
        # the pair costs at theta~ and the effective weights; their minimum (NaN if a cost is NaN)
        smallest = np.inf
        has_nan = False
        for i in range(k):
            arm_top = top[row, i]
            weight_top = counts[row, arm_top] / dispersion[arm_top]
            for j in range(n_bottom):
                arm_bottom = bottom[row, j]
                pair = i * n_bottom + j
                cost[pair], grad_top[pair], _ = _families.weighted_pair(
                    code, theta[row, arm_top], theta[row, arm_bottom], weight_top,
                    counts[row, arm_bottom] / dispersion[arm_bottom])
                if cost[pair] != cost[pair]:
                    has_nan = True
                elif cost[pair] < smallest:
                    smallest = cost[pair]
        # one of the minimal pairs: the floor(u c)-th of the c candidates (pair 0 when there is none)
        n_candidates = 0
        if not has_nan:
            for pair in range(n_pairs):
                n_candidates += cost[pair] == smallest
        pick = min(int(tie_uniforms[row] * n_candidates), max(n_candidates - 1, 0))
        chosen = 0
        for pair in range(n_pairs):
            if not has_nan and cost[pair] == smallest:
                if pick == 0:
                    chosen = pair
                    break
                pick -= 1
        i, j = chosen // n_bottom, chosen % n_bottom
        arm_top, arm_bottom = top[row, i], bottom[row, j]
        weight_top = counts[row, arm_top] / dispersion[arm_top]
        weight_bottom = counts[row, arm_bottom] / dispersion[arm_bottom]
        # h_{i;j} = w_i dC/dw_i / C, its limits at zero cost, clipped to [0, 1] (NaN kept, as np.clip)
        if cost[chosen] > 0:
            h = weight_top * grad_top[chosen] / cost[chosen]
        elif weight_top > 0:
            h = 0.5 if weight_bottom > 0 else 0.0
        else:
            h = 1.0 if weight_bottom > 0 else 0.5
        if h == h:
            h = min(max(h, 0.0), 1.0)
        arms[row] = arm_top if coin_uniforms[row] < h else arm_bottom


def family_kkt_ts_arms(family: ExponentialFamily, kind: str, dispersion: np.ndarray, counts: np.ndarray,
                       sums: np.ndarray, k: int, uniforms: np.ndarray) -> np.ndarray | None:
    r"""KKT-TS's arms for a batch of runs (``counts``, ``sums`` of shape (R, K)) of a family with a compiled pair
    kernel, from the step's K + 2 uniforms per run (K for the posterior sample, the tie-break, the coin);
    ``None`` when the family has none (or the compiled kernels are off): the caller then runs
    :meth:`~allocopt.algorithms.KKTTS.select_batch_numpy`, whose twin this is.

    Examples
    --------
    Arm 0 is far ahead of arms 1 and 2 (k = 1) with equal counts: the pair (0, 1) is the closest, and a coin of 0
    pulls its top arm, a coin just below 1 its bottom arm.

    >>> from allocopt.families import Bernoulli
    >>> counts, sums = np.array([[50, 50, 50]] * 2), np.array([[45.0, 25.0, 5.0]] * 2)
    >>> uniforms = np.array([[0.5, 0.5, 0.5, 0.5, 0.0], [0.5, 0.5, 0.5, 0.5, 1 - 1e-12]])
    >>> arms = family_kkt_ts_arms(Bernoulli(), "confidence", np.ones(3), counts, sums, 1, uniforms)
    >>> arms is None or arms.tolist() == [0, 1]
    True
    """
    pair = tracking_pair_kernel(family, kind)
    if pair is None:
        return None
    n_arms = counts.shape[1]
    theta = posterior_sample(family, dispersion, counts, sums, uniforms[:, :n_arms])
    top, bottom = top_k_order(np.ascontiguousarray(theta, dtype=float), k)
    arms = np.empty(counts.shape[0], dtype=np.int64)
    _kernel()(_families.kernel_code(pair), np.ascontiguousarray(theta, dtype=float), np.ascontiguousarray(counts),
              np.ascontiguousarray(np.broadcast_to(np.asarray(dispersion, dtype=float), (n_arms,))),
              np.ascontiguousarray(top, dtype=np.int64), np.ascontiguousarray(bottom, dtype=np.int64),
              np.ascontiguousarray(uniforms[:, n_arms]), np.ascontiguousarray(uniforms[:, n_arms + 1]), arms)
    return arms
