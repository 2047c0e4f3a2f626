r"""Theorem 3.4's double star for many Gaussian instances at once (the vectorised path of
:func:`~allocopt.topk.batch.solve_topk_batch`).

For Gaussian arms :math:`C_{ij}(\psi) = \Delta_{ij}^2 / (2(x_i + x_j))` with :math:`x_a = \sigma_a^2/\psi_a` and
:math:`\Delta_{ij} = \theta_i - \theta_j`. On the double star (:math:`i_k` joined to every bottom arm,
:math:`j_1` to every top arm) the homogeneous edge equations :math:`C_e = 1` make every :math:`x_a` affine in
the split :math:`x_{i_k} = s`, :math:`x_{j_1} = t`, :math:`s + t = a := \Delta_{i_k j_1}^2/2`:

.. math::
    x_j = t + (a_j - a) \ (j \in J), \qquad x_i = s + (b_i - a) \ (i \in I), \qquad
    a_j = \Delta_{i_k j}^2/2, \quad b_i = \Delta_{i j_1}^2/2,

where the offsets :math:`a_j - a = (\theta_{j_1} - \theta_j)(2\theta_{i_k} - \theta_j - \theta_{j_1})/2` and
:math:`b_i - a = (\theta_i - \theta_{i_k})(\theta_i + \theta_{i_k} - 2\theta_{j_1})/2` are formed without
cancellation. Writing :math:`s = a/(1 + e^{-y})`, :math:`t = a/(1 + e^{y})` keeps both ends accurate; the
component balance of Proposition 3.3,

.. math::
    h(y) = \log \sum_{i \in I} \sigma_i^2 / x_i^2 - \log \sum_{j \in J} \sigma_j^2 / x_j^2 = 0,

is strictly decreasing in :math:`y` and asymptotically linear at both ends, so a safeguarded Newton
iteration on all instances at once converges to machine precision in a few steps. The same code serves one
instance (the exact solver's fast path, R = 1) and many (:func:`~allocopt.topk.batch.solve_topk_batch`):
it works on means sorted within each row, top then bottom, so that every step is one numpy operation on
an (R, K) array. Peeling the leaves gives
the multipliers (:math:`\nu_e = 1/\partial_{\text{leaf}} C_e`, then the hub :math:`j_1`'s equation; their
nonnegativity is Theorem 3.4's condition (14)); a vectorised all-pairs check gives
:math:`\Gamma(\psi)`, and the per-arm sums of the multiplier-weighted cost derivatives the certified upper
bound of :mod:`allocopt.topk.certificate`. Instances whose double star is not optimal are reported so that
the caller solves them one by one.


The compiled twin.

:func:`star_kernel` loops over the rows of a batch and does, row by row, exactly the floating-point
operations of the numpy twin ``_double_star_numpy``, in the same order, so that both return bit-identical
numbers: every sum runs left to right (the numpy twin sums with ``cumsum``), minima and maxima propagate NaN
as numpy's do, ``exp`` and ``log`` are the C library's in both, and there is no fast-math (no reassociation,
no fused multiply-add). The tests compare the twins on many random rows (common and per-arm variances, near
ties at the boundary, k = 1 and k = K - 1).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..._numba import compile_once, compiled_enabled
from ..certificate import scalar_certified_gap
from . import groups as _groups
from .groups import merge_ties, spread_star
from .star import double_star_edges

__all__ = ["DoubleStarBatch", "DoubleStarInstance", "gaussian_double_star", "gaussian_double_star_instance", "MAX_NEWTON"]

_EPS = np.finfo(float).eps


# a row is handed back to the general solver when a pair outside the double star costs less than the star's
# smallest edge by more than this (relatively) or a multiplier is negative beyond rounding
_FEASIBILITY = 1e-10


_NEGATIVE_MULTIPLIER = 1e-12


_NO_START = np.zeros(1)  # the compiled kernel's start argument when there is none (not read)


MAX_NEWTON = 60
"""Newton steps of the balance at most (:func:`gaussian_double_star`, :func:`gaussian_forest`)."""


class DoubleStarBatch(NamedTuple):
    r"""Double-star solutions, in each row's sorted order (top arms by decreasing mean, then bottom arms).

    Attributes
    ----------
    psi : ndarray, shape (R, K)
        Allocations, normalised to the simplex.
    value, bound : ndarray, shape (R,)
        :math:`\Gamma(\psi)` over all pairs and the certified upper bound :math:`U(\mu, \psi)`.
    stationarity, complementarity : ndarray, shape (R,)
        The relative KKT residuals of :class:`~allocopt.topk.certificate.Certificate`.
    multipliers : ndarray, shape (R, K - 1)
        Normalised multipliers of the star's edges: column ``c < K-k`` is the edge (i_k, c-th bottom arm),
        column ``K-k+r`` the edge (r-th top arm, j_1), ``r < k-1``.
    accepted : ndarray of bool, shape (R,)
        Rows whose double star passed the exact checks (multipliers nonnegative, every pair feasible); the
        others must be solved otherwise.
    """

    psi: np.ndarray
    value: np.ndarray
    bound: np.ndarray
    stationarity: np.ndarray
    complementarity: np.ndarray
    multipliers: np.ndarray
    accepted: np.ndarray


def _sequential_sum(values: np.ndarray) -> np.ndarray:
    """Sums along the last axis, left to right (``cumsum(...)[..., -1]``; 0 for no terms): the summation order
    of the compiled twin, so that both round alike."""
    if values.shape[-1] == 0:
        return np.zeros(values.shape[:-1])
    return np.cumsum(values, axis=-1)[..., -1]


def _balance_rows(offset, variance, k, a, start, max_newton):
    """The balance roots y of all rows by safeguarded Newton, vectorised over rows; a row stops moving once
    its step is at rounding level (the compiled twin's per-row loop ends there)."""
    n_rows = offset.shape[0]
    y = np.zeros((n_rows, 1)) if start is None else np.asarray(start, dtype=float).reshape(n_rows, 1).copy()
    lower = np.full((n_rows, 1), -np.inf)
    upper = np.full((n_rows, 1), np.inf)
    active = np.ones((n_rows, 1), dtype=bool)
    for _ in range(max_newton):
        with np.errstate(over="ignore"):
            s = a / (1.0 + np.exp(-y))
            t = a / (1.0 + np.exp(y))
        x_top, x_bottom = offset[:, :k] + s, offset[:, k:] + t
        terms_top, terms_bottom = variance[:, :k] / (x_top * x_top), variance[:, k:] / (x_bottom * x_bottom)
        top_sum, bottom_sum = _sequential_sum(terms_top)[:, None], _sequential_sum(terms_bottom)[:, None]
        top_slope = _sequential_sum(terms_top / x_top)[:, None]
        bottom_slope = _sequential_sum(terms_bottom / x_bottom)[:, None]
        residual = np.log(top_sum / bottom_sum)
        # dh/dy = -2 (s t / a) (sum_I terms/x / P + sum_J terms/x / Q)
        derivative = -2.0 * (s * t / a) * (top_slope / top_sum + bottom_slope / bottom_sum)
        lower = np.where(active & (residual > 0), y, lower)
        upper = np.where(active & (residual < 0), y, upper)
        candidate = y - residual / derivative
        inside = (candidate > lower) & (candidate < upper)
        with np.errstate(invalid="ignore"):  # safeguard: bisection (or a unit move)
            fallback = np.where(np.isfinite(lower) & np.isfinite(upper), 0.5 * (lower + upper),
                                np.where(np.isfinite(lower), lower + 4.0, upper - 4.0))
        candidate = np.where(inside, candidate, fallback)
        converged = (np.abs(candidate - y) <= 4 * _EPS * np.maximum(1.0, np.abs(y))) | (residual == 0)
        y = np.where(active & (residual != 0), candidate, y)
        active &= ~converged
        if not active.any():
            break
    return y


def _double_star_numpy(theta: np.ndarray, variance: np.ndarray, k: int, start: np.ndarray | None,
                       max_newton: int) -> DoubleStarBatch:
    """The numpy twin of the compiled kernel (same operations in the same order; see the module docstring)."""
    n_rows, n_arms = theta.shape
    n_bottom = n_arms - k
    layout = _star_layout(k, n_arms)
    is_top = layout.is_top
    # The solution is invariant under theta -> (theta - c)/b and sigma^2 -> sigma^2/b^2 (the costs depend on
    # (theta_i - theta_j)^2 / sigma^2 only): solve on the instance with boundary gap 1 and theta_{j_1} = 0, so
    # that no intermediate over- or underflows whatever the scale of the means.
    scale = theta[:, k - 1:k] - theta[:, k:k + 1]
    theta = (theta - theta[:, k:k + 1]) / scale
    variance = np.broadcast_to(variance, theta.shape) / scale / scale
    worst_top, best_bottom = theta[:, k - 1:k], theta[:, k:k + 1]
    boundary = worst_top - best_bottom  # (R, 1), positive
    a = 0.5 * boundary * boundary
    # x_a = (s or t) + offset_a, offsets formed from differences of means (no cancellation)
    distance = (theta - np.where(is_top, worst_top, best_bottom)) * layout.sign
    offset = 0.5 * distance * (distance + 2.0 * boundary)
    y = _balance_rows(offset, variance, k, a, start, max_newton)
    with np.errstate(over="ignore"):
        s = a / (1.0 + np.exp(-y))
        t = a / (1.0 + np.exp(y))
    psi = variance / (offset + np.where(is_top, s, t))
    psi = psi / _sequential_sum(psi)[:, None]
    weight = psi / variance  # effective weights w = psi / sigma^2
    # every pair: C_ij = Delta^2 w_i w_j / (2 (w_i + w_j)), rows top arms, columns bottom arms
    w_top, w_bottom = weight[:, :k, None], weight[:, None, k:]
    difference = (theta[:, :k, None] - theta[:, None, k:]).reshape(n_rows, -1)
    total = (w_top + w_bottom).reshape(n_rows, -1)
    costs = 0.5 * difference * difference * (w_top * w_bottom).reshape(n_rows, -1) / total
    value = costs.min(axis=1)
    # the star's edges (column order of `multipliers`): costs and derivatives
    # dC_ij/dpsi_i = (Delta w_j / (w_i + w_j))^2 / (2 sigma_i^2), and symmetrically for j
    edge_costs = costs[:, layout.flat]
    ratio = difference[:, layout.flat] / total[:, layout.flat]
    half_inverse = 0.5 / variance
    top_factor, bottom_factor = ratio * weight[:, layout.edge_bottom], ratio * weight[:, layout.edge_top]
    grad_top = top_factor * top_factor * half_inverse[:, layout.edge_top]
    grad_bottom = bottom_factor * bottom_factor * half_inverse[:, layout.edge_bottom]
    # peeling: every edge but (i_k, j_1) ends at a leaf (nu = 1 / derivative there); then j_1's equation
    nu = 1.0 / np.where(layout.leaf_is_top, grad_top, grad_bottom)
    nu[:, 0] = (1.0 - _sequential_sum(nu[:, n_bottom:] * grad_bottom[:, n_bottom:])) / grad_bottom[:, 0]
    nonnegative = nu[:, 0] >= -_NEGATIVE_MULTIPLIER * nu.max(axis=1)
    nu[:, 0] = np.where(nu[:, 0] < 0.0, 0.0, nu[:, 0])
    mu = nu / _sequential_sum(nu)[:, None]
    # per-arm sums of mu_p dC_p/dpsi_a (the certificate's upper bound), in sorted order, each in edge order:
    # i_k's over the edges (i_k, j), j_1's over (i_k, j_1) then the spokes; every other arm has one edge
    top_terms, bottom_terms = mu * grad_top, mu * grad_bottom
    sums = np.empty((n_rows, n_arms))
    sums[:, :k - 1] = top_terms[:, n_bottom:]
    sums[:, k - 1] = _sequential_sum(top_terms[:, :n_bottom])
    sums[:, k] = _sequential_sum(np.concatenate([bottom_terms[:, :1], bottom_terms[:, n_bottom:]], axis=1))
    sums[:, k + 1:] = bottom_terms[:, 1:n_bottom]
    bound = sums.max(axis=1)
    feasible = value >= (1.0 - _FEASIBILITY) * edge_costs.min(axis=1)
    accepted = nonnegative & feasible & (value > 0) & np.isfinite(bound)
    scale = np.where(value > 0, value, np.inf)
    stationarity = np.abs(sums - value[:, None]).max(axis=1) / scale
    complementarity = (_sequential_sum(mu * edge_costs) - value) / scale
    return DoubleStarBatch(psi=psi, value=value, bound=bound, stationarity=stationarity,
                           complementarity=complementarity, multipliers=mu, accepted=accepted)


def gaussian_double_star(theta: np.ndarray, variance: np.ndarray, k: int, start: np.ndarray | None = None,
                         max_newton: int = MAX_NEWTON) -> DoubleStarBatch:
    """Solve and check the double star of every row (the compiled kernel where numba is available, else its
    numpy twin; both give the same numbers bit for bit).

    Parameters
    ----------
    theta : ndarray, shape (R, K)
        Means sorted within each row: the k top arms by decreasing mean, then the bottom arms by decreasing
        mean (so ``theta[:, k-1] > theta[:, k]``).
    variance : ndarray, shape (R, K), (K,) or (1,)
        Variances in the same order (one common variance as shape (1,)).
    k : int
    start : ndarray, shape (R,), optional
        Starting split ``y = log(x_{i_k} / x_{j_1})`` (for example from a previous allocation); 0 otherwise.
    """
    theta = np.ascontiguousarray(theta, dtype=float)
    variance = np.asarray(variance, dtype=float)
    if variance.ndim == 1:
        variance = variance[None, :]
    kernel = star_kernel()
    if kernel is None:
        return _double_star_numpy(theta, variance, k, start, max_newton)
    n_rows, n_arms = theta.shape
    has_start = start is not None
    starts = np.broadcast_to(np.asarray(start, dtype=float).reshape(-1), (n_rows,)) if has_start else _NO_START
    psi, mu = np.empty((n_rows, n_arms)), np.empty((n_rows, n_arms - 1))
    # (four separate arrays: unpacking one (4, R) array into its rows costs more than the allocations)
    value, bound, stationarity, complementarity = np.empty(n_rows), np.empty(n_rows), np.empty(n_rows), np.empty(n_rows)
    accepted = np.empty(n_rows, dtype=np.bool_)
    kernel(theta, np.ascontiguousarray(variance), k, np.ascontiguousarray(starts), has_start, max_newton,
           _FEASIBILITY, _NEGATIVE_MULTIPLIER, psi, mu, value, bound, stationarity, complementarity, accepted)
    return DoubleStarBatch(psi=psi, value=value, bound=bound, stationarity=stationarity,
                           complementarity=complementarity, multipliers=mu, accepted=accepted)


class DoubleStarInstance(NamedTuple):
    """The double star of one instance (:func:`gaussian_double_star_instance`), in the arms' own order.

    Attributes
    ----------
    psi : ndarray, shape (K,)
        The allocation, normalised to the simplex, in the arms' order.
    multipliers : ndarray, shape (K - 1,)
        The star's normalised multipliers, in the edge order of :class:`DoubleStarBatch`.
    value, bound, stationarity, complementarity : float
        As in :class:`DoubleStarBatch`.
    accepted : bool
        Whether the double star passed the exact checks.
    smallest_multiplier : float
        The smallest of ``multipliers`` (NaN if one is NaN).
    """

    psi: np.ndarray
    multipliers: np.ndarray
    value: float
    bound: float
    stationarity: float
    complementarity: float
    accepted: bool
    smallest_multiplier: float


def gaussian_double_star_instance(theta: np.ndarray, order: np.ndarray, variance: np.ndarray, k: int,
                                  start: float | None = None, max_newton: int = MAX_NEWTON) -> DoubleStarInstance:
    """:func:`gaussian_double_star` on one instance given in its arms' order, ``order`` listing the arms as the
    rows of :func:`gaussian_double_star` are sorted (top arms then bottom arms, each by decreasing mean: the
    :attr:`~allocopt.topk.TopKProblem.order` of a problem), with the allocation returned in the arms' order:
    one compiled call (the sort and the scatter inside it) where numba is available, else the numpy twin.
    The same numbers either way, and the same as the batch's row.

    Parameters
    ----------
    theta, variance : ndarray, shape (K,)
        Means and per-arm variances, in the arms' order.
    order : ndarray of int, shape (K,)
    k : int
    start : float, optional
        Starting split, as for :func:`gaussian_double_star`.

    Examples
    --------
    >>> import numpy as np
    >>> theta, variance = np.array([0.2, 1.0, 0.6, 0.8, 0.0]), np.full(5, 0.25)
    >>> star = gaussian_double_star_instance(theta, np.array([1, 3, 2, 0, 4]), variance, 2)
    >>> batch = gaussian_double_star(theta[[1, 3, 2, 0, 4]][None, :], variance[:1], 2)
    >>> bool(star.accepted), bool(np.array_equal(star.psi[[1, 3, 2, 0, 4]], batch.psi[0]))
    (True, True)
    """
    kernel = star_instance_kernel()
    if kernel is None:
        star = _double_star_numpy(theta[order][None, :], variance[order][None, :], k,
                                  None if start is None else np.array([start]), max_newton)
        psi = np.empty(theta.shape[0])
        psi[order] = star.psi[0]
        multipliers = star.multipliers[0]
        return DoubleStarInstance(psi, multipliers, float(star.value[0]), float(star.bound[0]),
                                  float(star.stationarity[0]), float(star.complementarity[0]),
                                  bool(star.accepted[0]), float(np.min(multipliers)))
    n_arms = theta.shape[0]
    psi, multipliers = np.empty(n_arms), np.empty(n_arms - 1)
    value, bound, stationarity, complementarity, accepted, smallest = kernel(
        theta, order, variance, k, 0.0 if start is None else start, start is not None, max_newton, _FEASIBILITY,
        _NEGATIVE_MULTIPLIER, psi, multipliers)
    return DoubleStarInstance(psi, multipliers, value, bound, stationarity, complementarity, accepted == 1.0,
                              smallest)


@dataclass(frozen=True)
class _StarLayout:
    """Index data of the double star for given (k, K), in sorted order (shared by every call)."""

    is_top: np.ndarray
    sign: np.ndarray
    flat: np.ndarray  # positions of the edges in the flattened k x (K-k) cost matrix
    edge_top: np.ndarray  # arm (sorted position) at the top end of each edge
    edge_bottom: np.ndarray
    leaf_is_top: np.ndarray  # whether the edge's leaf is its top end (the spokes (i, j_1))


@functools.lru_cache(maxsize=64)
def _star_layout(k: int, n_arms: int) -> _StarLayout:
    rows, cols = double_star_edges(k, n_arms)
    n_edges = n_arms - 1
    is_top = np.arange(n_arms) < k
    layout = _StarLayout(is_top=is_top, sign=np.where(is_top, 1.0, -1.0), flat=rows * (n_arms - k) + cols,
                         edge_top=rows, edge_bottom=k + cols, leaf_is_top=np.arange(n_edges) >= n_arms - k)
    for array in (layout.is_top, layout.sign, layout.flat, layout.edge_top, layout.edge_bottom, layout.leaf_is_top):
        array.setflags(write=False)
    return layout


# ------------------------------------------------------------------------------- the compiled twin
def star_kernel():
    """The compiled row kernel (built on first use), or ``None`` when the compiled kernels are off or numba is
    unavailable (the caller then runs the numpy twin)."""
    if not compiled_enabled():
        return None
    return _kernel()


_STAR = compile_once(globals(), rebind=("_balance_root", "_pairs_minimum", "_arm_sums", "_smallest", "_largest_deviation",
                                    "_gaussian_star_rows"), kernels={"star": "_gaussian_star_rows", "instance": "_star_instance"})
# compiled at the first tie only
_TIED = compile_once(globals(), needs=(_STAR, _groups.TIE_KERNELS),
                     shared=((_groups, ("merge_ties", "spread_star")),), rebind=("scalar_certified_gap",),
                     kernels={"tied": "_tied_instance"})


def _kernel():
    return _STAR()["star"]


def star_instance_kernel():
    """The compiled kernel on one instance in its arms' order, ``_star_instance(theta, order, dispersion, k,
    start, has_start, max_newton, feasibility, negative_multiplier, psi, mu) -> (value, bound, stationarity,
    complementarity, accepted, smallest multiplier)`` (built on first use), or ``None`` as :func:`star_kernel`:
    the row kernel on the arms sorted as ``order`` (top arms then bottom arms, each by decreasing mean, as
    :attr:`~allocopt.topk.TopKProblem.order`), writing ``psi`` (shape (K,)) in the arms' order and the star's
    multipliers ``mu`` (shape (K - 1,)), and returning the scalars as a tuple of floats (numba boxes it far
    faster than new arrays). The same numbers as sorting, calling :func:`star_kernel` and scattering in
    Python."""
    if star_kernel() is None:
        return None
    return _STAR()["instance"]


def _star_instance(theta, order, dispersion, k, start, has_start, max_newton, feasibility, negative_multiplier, psi,
                   mu):
    n_arms = theta.shape[0]
    sorted_theta = np.empty((1, n_arms))
    sorted_variance = np.empty((1, n_arms))
    for position in range(n_arms):
        sorted_theta[0, position] = theta[order[position]]
        sorted_variance[0, position] = dispersion[order[position]]
    starts = np.empty(1)
    starts[0] = start
    star_psi = np.empty((1, n_arms))
    value, bound, stationarity, complementarity = np.empty(1), np.empty(1), np.empty(1), np.empty(1)
    accepted = np.empty(1, dtype=np.bool_)
    _gaussian_star_rows(sorted_theta, sorted_variance, k, starts, has_start, max_newton, feasibility, negative_multiplier,
               star_psi, mu.reshape((1, n_arms - 1)), value, bound, stationarity, complementarity, accepted)
    for position in range(n_arms):
        psi[order[position]] = star_psi[0, position]
    smallest = np.inf
    for edge in range(n_arms - 1):  # NaN propagates, as numpy's min
        if mu[edge] < smallest or mu[edge] != mu[edge]:
            smallest = mu[edge]
        if smallest != smallest:
            break
    return value[0], bound[0], stationarity[0], complementarity[0], 1.0 if accepted[0] else 0.0, smallest


def tied_star_instance_kernel():
    """The compiled kernel on one instance with tied means, ``_tied_instance(theta, order, dispersion, k, start,
    has_start, max_newton, feasibility, negative_multiplier, relative_error, psi, rows, cols, values) ->
    (accepted, value, bound, gap, stationarity, complementarity, n_pairs)`` (built at its first use), or
    ``None`` as :func:`star_kernel`: the tied arms merged into groups
    (:func:`~allocopt.topk._exact.groups.merge_ties`), the row kernel on the groups, the multipliers zero to
    rounding dropped, and the answer expanded to the arms (:func:`~allocopt.topk._exact.groups.spread_star`,
    written as :func:`allocopt.topk._exact.star.tied_star_instance_kernel` writes it), with the certified gap
    (the members' largest degree plus one rounding term, for the division by :math:`n_g`). Not accepted (and
    nothing written) when no two arms tie or tied arms differ in variance."""
    if star_kernel() is None:
        return None
    return _TIED()["tied"]


def _tied_instance(theta, order, dispersion, k, start, has_start, max_newton, feasibility, negative_multiplier,
                   relative_error, psi, rows, cols, values):
    n_arms = theta.shape[0]
    group_theta, group_variance = np.empty((1, n_arms)), np.empty((1, n_arms))
    first, count = np.empty(n_arms, dtype=np.int64), np.empty(n_arms, dtype=np.int64)
    n_groups, n_top = merge_ties(theta, order, dispersion, k, group_theta[0], group_variance[0], first, count)
    if n_groups < 2 or n_groups == n_arms:
        return 0.0, np.nan, np.nan, np.nan, np.nan, np.nan, 0.0
    starts = np.empty(1)
    starts[0] = start
    group_psi, mu = np.empty((1, n_groups)), np.empty((1, n_groups - 1))
    value, bound, stationarity, complementarity = np.empty(1), np.empty(1), np.empty(1), np.empty(1)
    accepted = np.empty(1, dtype=np.bool_)
    _gaussian_star_rows(group_theta[:, :n_groups].copy(), group_variance[:, :n_groups].copy(), n_top, starts,
                        has_start, max_newton, feasibility, negative_multiplier, group_psi, mu, value, bound,
                        stationarity, complementarity, accepted)
    if not accepted[0]:
        return 0.0, np.nan, np.nan, np.nan, np.nan, np.nan, 0.0
    keep = np.empty(n_groups - 1, dtype=np.bool_)
    kept = np.empty(n_groups - 1)
    n_kept = 0
    for edge in range(n_groups - 1):  # a multiplier exactly zero (Theorem 3.4's condition (14) with equality)
        keep[edge] = mu[0, edge] > 0
        if keep[edge]:
            kept[n_kept] = mu[0, edge]
            n_kept += 1
    n_pairs, degree = spread_star(order, k, n_top, n_groups, first, count, group_psi[0], kept, keep, psi, rows, cols,
                                  values)
    gap = scalar_certified_gap(bound[0], value[0], relative_error, degree + 1)
    return 1.0, value[0], bound[0], gap, stationarity[0], complementarity[0], float(n_pairs)


def _balance_root(offset, var, k, a, y, max_newton, limit):
    # the balance root y of the double star by safeguarded Newton from y (the numpy twin's steps)
    n_arms = offset.shape[0]
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
    return y


def _pairs_minimum(mean, weight, k):
    # Gamma over every pair (NaN propagates, as numpy's min)
    n_arms = mean.shape[0]
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
    return value


def _arm_sums(mu, grad_top, grad_bottom, k, sums):
    # per-arm sums of mu_p dC_p/dpsi_a, each in edge order, into sums; returns their maximum (NaN propagates)
    n_edges = mu.shape[0]
    n_bottom = n_edges + 1 - k
    n_arms = n_edges + 1
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
    return bound


def _smallest(values):
    # the smallest of values (NaN propagates, as numpy's min)
    smallest = np.inf
    for index in range(values.shape[0]):
        if values[index] < smallest or values[index] != values[index]:
            smallest = values[index]
        if smallest != smallest:
            break
    return smallest


def _largest_deviation(sums, value):
    # the largest |sums[a] - value| (NaN propagates, as numpy's max)
    worst = -np.inf
    for arm in range(sums.shape[0]):
        deviation = abs(sums[arm] - value)
        if deviation > worst or deviation != deviation:
            worst = deviation
        if worst != worst:
            break
    return worst


def _gaussian_star_rows(theta, variance, k, start, has_start, max_newton, feasibility, negative_multiplier, psi_out, mu_out,
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
        y = _balance_root(offset, var, k, a, start[row] if has_start else 0.0, max_newton, limit)
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
        value = _pairs_minimum(mean, weight, k)
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
        bound = _arm_sums(mu, grad_top, grad_bottom, k, sums)
        feasible = value >= (1.0 - feasibility) * _smallest(edge_cost)
        accepted_out[row] = nonnegative and feasible and value > 0 and math.isfinite(bound)
        value_scale = value if value > 0 else np.inf
        worst = _largest_deviation(sums, value)
        slack = 0.0
        for edge in range(n_edges):
            term = mu[edge] * edge_cost[edge]
            slack = term if edge == 0 else slack + term
        value_out[row] = value
        bound_out[row] = bound
        stationarity_out[row] = worst / value_scale
        complementarity_out[row] = (slack - value) / value_scale
