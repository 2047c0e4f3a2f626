r"""Compiled (numba) twin of the Gaussian double star (:mod:`allocopt.topk._batch_gaussian`).

:func:`star_kernel` loops over the rows of a batch and does, row by row, exactly the floating-point
operations of the numpy twin ``_double_star_numpy``, in the same order, so that both return bit-identical
numbers: every sum runs left to right (the numpy twin sums with ``cumsum``), minima and maxima propagate NaN
as numpy's do, ``exp`` and ``log`` are the C library's in both, and there is no fast-math (no reassociation,
no fused multiply-add). The tests compare the twins on many random rows (common and per-arm variances, near
ties at the boundary, k = 1 and k = K - 1).

Why compiled: the exact solver's fast path solves one Gaussian instance per call (Track-and-Stop calls it at
every step) and :func:`~allocopt.topk.batch.solve_topk_batch` many; in numpy the double star of one K = 20
instance is about sixty array operations on arrays of twenty numbers, dominated by call overhead, while the
loops below touch each number a few times.

The kernel follows :func:`allocopt.algorithms._compiled.compiled_enabled` (the engine's switch, also used to
time the numpy twins); without numba the numpy twin runs.
"""

from __future__ import annotations

import math
import threading
from typing import Any

import numpy as np

__all__ = ["star_kernel"]

_EPS = float(np.finfo(float).eps)
_KERNELS: dict[str, Any] = {}
_SWITCH: dict[str, Any] = {}
_LOCK = threading.Lock()


def star_kernel():
    """The compiled row kernel (built on first use), or ``None`` when the compiled kernels are off or numba is
    unavailable (the caller then runs the numpy twin)."""
    switch = _SWITCH.get("enabled")
    if switch is None:  # imported on first use: allocopt.algorithms imports the top-k layer
        from ..algorithms._compiled import compiled_enabled

        switch = _SWITCH["enabled"] = compiled_enabled
    if not switch():
        return None
    return _kernel()


def _kernel():
    if not _KERNELS:
        with _LOCK:
            if not _KERNELS:
                import numba

                # error_model="numpy": IEEE division (inf, nan) as in numpy, without Python's exceptions
                _KERNELS["star"] = numba.njit(cache=True, nogil=True, error_model="numpy")(_star_rows)
    return _KERNELS["star"]


def _star_rows(theta, variance, k, start, has_start, max_newton, feasibility, negative_multiplier, psi_out, mu_out,
               value_out, bound_out, stationarity_out, complementarity_out, accepted_out):
    n_rows, n_arms = theta.shape
    n_bottom = n_arms - k
    n_edges = n_arms - 1
    variance_rows, variance_cols = variance.shape
    mean = np.empty(n_arms)
    var = np.empty(n_arms)
    offset = np.empty(n_arms)
    weight = np.empty(n_arms)
    psi = np.empty(n_arms)
    sums = np.empty(n_arms)
    grad_top = np.empty(n_edges)
    grad_bottom = np.empty(n_edges)
    edge_cost = np.empty(n_edges)
    nu = np.empty(n_edges)
    mu = np.empty(n_edges)
    limit = 4 * _EPS
    for row in range(n_rows):
        # the instance with boundary gap 1 and theta_{j_1} = 0 (the numpy twin's scaling)
        scale = theta[row, k - 1] - theta[row, k]
        base = theta[row, k]
        for arm in range(n_arms):
            mean[arm] = (theta[row, arm] - base) / scale
            v = variance[row if variance_rows > 1 else 0, arm if variance_cols > 1 else 0]
            var[arm] = v / scale / scale
        worst_top, best_bottom = mean[k - 1], mean[k]
        boundary = worst_top - best_bottom
        a = 0.5 * boundary * boundary
        for arm in range(n_arms):
            if arm < k:
                distance = (mean[arm] - worst_top) * 1.0
            else:
                distance = (mean[arm] - best_bottom) * -1.0
            offset[arm] = 0.5 * distance * (distance + 2.0 * boundary)
        # the balance root y by safeguarded Newton
        y = start[row] if has_start else 0.0
        lower, upper = -np.inf, np.inf
        for _ in range(max_newton):
            s = a / (1.0 + math.exp(-y))
            t = a / (1.0 + math.exp(y))
            top_sum = top_slope = bottom_sum = bottom_slope = 0.0
            for arm in range(n_arms):
                if arm < k:
                    x = offset[arm] + s
                else:
                    x = offset[arm] + t
                term = var[arm] / (x * x)
                slope = term / x
                if arm == 0 or arm == k:  # the first term of a sum is the sum so far (cumsum)
                    if arm == 0:
                        top_sum, top_slope = term, slope
                    else:
                        bottom_sum, bottom_slope = term, slope
                elif arm < k:
                    top_sum += term
                    top_slope += slope
                else:
                    bottom_sum += term
                    bottom_slope += slope
            residual = math.log(top_sum / bottom_sum)
            derivative = -2.0 * (s * t / a) * (top_slope / top_sum + bottom_slope / bottom_sum)
            if residual > 0:
                lower = y
            if residual < 0:
                upper = y
            candidate = y - residual / derivative
            if not (candidate > lower and candidate < upper):
                if math.isfinite(lower) and math.isfinite(upper):
                    candidate = 0.5 * (lower + upper)
                elif math.isfinite(lower):
                    candidate = lower + 4.0
                else:
                    candidate = upper - 4.0
            magnitude = abs(y)
            if not magnitude >= 1.0:  # np.maximum(1.0, |y|): NaN stays NaN
                magnitude = 1.0 if magnitude == magnitude else magnitude
            converged = abs(candidate - y) <= limit * magnitude or residual == 0
            if residual != 0:
                y = candidate
            if converged:
                break
        s = a / (1.0 + math.exp(-y))
        t = a / (1.0 + math.exp(y))
        total = 0.0
        for arm in range(n_arms):
            psi[arm] = var[arm] / (offset[arm] + (s if arm < k else t))
            total = psi[arm] if arm == 0 else total + psi[arm]
        for arm in range(n_arms):
            psi[arm] = psi[arm] / total
            weight[arm] = psi[arm] / var[arm]
            psi_out[row, arm] = psi[arm]
        # Gamma over every pair (NaN propagates, as numpy's min)
        value = np.inf
        for top in range(k):
            for bottom in range(k, n_arms):
                difference = mean[top] - mean[bottom]
                cost = 0.5 * difference * difference * (weight[top] * weight[bottom]) / (weight[top] + weight[bottom])
                if cost < value or cost != cost:
                    value = cost
                if value != value:
                    break
            if value != value:
                break
        # the star's edges: (i_k, j) for every bottom j, then (i, j_1) for the other top arms
        largest_nu = -np.inf
        for edge in range(n_edges):
            if edge < n_bottom:
                top, bottom = k - 1, k + edge
            else:
                top, bottom = edge - n_bottom, k
            difference = mean[top] - mean[bottom]
            pair_total = weight[top] + weight[bottom]
            edge_cost[edge] = 0.5 * difference * difference * (weight[top] * weight[bottom]) / pair_total
            ratio = difference / pair_total
            top_factor, bottom_factor = ratio * weight[bottom], ratio * weight[top]
            grad_top[edge] = top_factor * top_factor * (0.5 / var[top])
            grad_bottom[edge] = bottom_factor * bottom_factor * (0.5 / var[bottom])
            nu[edge] = 1.0 / (grad_top[edge] if edge >= n_bottom else grad_bottom[edge])
        inflow = 0.0
        for edge in range(n_bottom, n_edges):
            term = nu[edge] * grad_bottom[edge]
            inflow = term if edge == n_bottom else inflow + term
        nu[0] = (1.0 - inflow) / grad_bottom[0]
        for edge in range(n_edges):
            if nu[edge] > largest_nu or nu[edge] != nu[edge]:
                largest_nu = nu[edge]
            if largest_nu != largest_nu:
                break
        nonnegative = nu[0] >= -negative_multiplier * largest_nu
        if nu[0] < 0.0:
            nu[0] = 0.0
        nu_total = 0.0
        for edge in range(n_edges):
            nu_total = nu[edge] if edge == 0 else nu_total + nu[edge]
        for edge in range(n_edges):
            mu[edge] = nu[edge] / nu_total
            mu_out[row, edge] = mu[edge]
        # per-arm sums of mu_p dC_p/dpsi_a, each in edge order
        for top in range(k - 1):
            sums[top] = mu[n_bottom + top] * grad_top[n_bottom + top]
        hub = 0.0
        for edge in range(n_bottom):
            term = mu[edge] * grad_top[edge]
            hub = term if edge == 0 else hub + term
        sums[k - 1] = hub
        hub = mu[0] * grad_bottom[0]
        for edge in range(n_bottom, n_edges):
            hub = hub + mu[edge] * grad_bottom[edge]
        sums[k] = hub
        for bottom in range(1, n_bottom):
            sums[k + bottom] = mu[bottom] * grad_bottom[bottom]
        bound = -np.inf
        for arm in range(n_arms):
            if sums[arm] > bound or sums[arm] != sums[arm]:
                bound = sums[arm]
            if bound != bound:
                break
        smallest_edge = np.inf
        for edge in range(n_edges):
            if edge_cost[edge] < smallest_edge or edge_cost[edge] != edge_cost[edge]:
                smallest_edge = edge_cost[edge]
            if smallest_edge != smallest_edge:
                break
        feasible = value >= (1.0 - feasibility) * smallest_edge
        accepted_out[row] = nonnegative and feasible and value > 0 and math.isfinite(bound)
        value_scale = value if value > 0 else np.inf
        worst = -np.inf
        for arm in range(n_arms):
            deviation = abs(sums[arm] - value)
            if deviation > worst or deviation != deviation:
                worst = deviation
            if worst != worst:
                break
        slack = 0.0
        for edge in range(n_edges):
            term = mu[edge] * edge_cost[edge]
            slack = term if edge == 0 else slack + term
        value_out[row] = value
        bound_out[row] = bound
        stationarity_out[row] = worst / value_scale
        complementarity_out[row] = (slack - value) / value_scale

