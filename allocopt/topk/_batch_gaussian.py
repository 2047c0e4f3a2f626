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
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ._compiled import star_instance_kernel, star_kernel

__all__ = ["DoubleStarBatch", "DoubleStarInstance", "ForestBatch", "gaussian_double_star",
           "gaussian_double_star_instance", "gaussian_forest", "double_star_edges"]

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


def double_star_edges(k: int, n_arms: int) -> tuple[np.ndarray, np.ndarray]:
    """Theorem 3.4's double star on k top and ``n_arms - k`` bottom nodes (arms, or tie groups), each side in
    decreasing order of the means: positions (in the top / bottom orders) of its edges, :math:`(i_k, j)` for
    every bottom node, then :math:`(i, j_1)` for the other top nodes (the column order of ``multipliers``).
    The one definition of the double star's edges (the batch, the exact solver and its forest layout)."""
    n_bottom = n_arms - k
    rows = np.concatenate([np.full(n_bottom, k - 1), np.arange(k - 1)])
    cols = np.concatenate([np.arange(n_bottom), np.zeros(k - 1, dtype=int)])
    return rows, cols


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


class ForestBatch(NamedTuple):
    r"""Solutions of many Gaussian instances on one binding forest (each row sorted as for
    :func:`gaussian_double_star`).

    Attributes
    ----------
    psi : ndarray, shape (R, K)
        Allocations, normalised to the simplex.
    value, bound : ndarray, shape (R,)
        :math:`\Gamma(\psi)` over all pairs and the upper bound :math:`U(\mu, \psi)` of the certificate.
    multipliers : ndarray, shape (R, E)
        Normalised multipliers of the forest's edges, in the order given.
    nonnegative, feasible : ndarray of bool, shape (R,)
        Multipliers nonnegative (beyond rounding) and every pair at least the forest's smallest edge cost.
    accepted : ndarray of bool, shape (R,)
        Both, with a positive value and a finite bound: the forest is optimal for the row.
    weakest : ndarray of int, shape (R,)
        The pair of smallest cost, as ``top * (K - k) + (bottom - k)`` (the pair that enters when the row is
        infeasible).
    """

    psi: np.ndarray
    value: np.ndarray
    bound: np.ndarray
    multipliers: np.ndarray
    nonnegative: np.ndarray
    feasible: np.ndarray
    accepted: np.ndarray
    weakest: np.ndarray


def gaussian_forest(theta: np.ndarray, variance: np.ndarray, k: int, edge_top: np.ndarray,
                    edge_bottom: np.ndarray, max_newton: int = MAX_NEWTON) -> ForestBatch | None:
    r"""The KKT solution of every row on one binding forest, in closed form up to one balance per tree.

    On a tree the edge equations :math:`x_i + x_j = \Delta_{ij}^2/2` (homogeneous scale, :math:`x_a =
    \sigma_a^2/\psi_a`) make every :math:`x_a` affine in the root's: :math:`x_a = u + \beta_a` on the root's
    side of the tree's bipartition and :math:`x_a = -u + \beta_a` on the other side, with
    :math:`\beta_{\text{child}} = \Delta_e^2/2 - \beta_{\text{parent}}` down the tree. Stationarity at the
    root is the balance of Proposition 3.3 between the two sides, :math:`\sum_+ \sigma_a^2/x_a^2 =
    \sum_- \sigma_a^2/x_a^2`; with :math:`L = \max_+ (-\beta_a)`, :math:`U = \min_- \beta_a` (the range of
    :math:`u` where every :math:`x_a > 0`), :math:`s = u - L` and :math:`t = U - u` it is the double star's
    balance (:func:`_balance_rows`) with offsets :math:`\beta_a + L` and :math:`\beta_a - U` and
    :math:`s + t = U - L`. The double star (:func:`gaussian_double_star`) is the tree whose offsets are formed
    without any cancellation; this general form serves the forests a few pivots away from it (the exact
    solver's pivots on rows whose double star fails its check). The multipliers follow by peeling the leaves
    up to each root, the certificate as for the double star.

    Parameters
    ----------
    theta, variance : ndarray
        As for :func:`gaussian_double_star` (rows sorted, top arms then bottom arms).
    k : int
    edge_top, edge_bottom : ndarray of int
        The forest's edges as sorted positions (``edge_top < k <= edge_bottom``), covering every arm, each tree
        with a top and a bottom arm.

    Returns
    -------
    ForestBatch or None
        ``None`` when the edges are not such a forest.

    Examples
    --------
    On the double star it is the double star's closed form (Wang, Yang, You (2022), Example 1: variance 1/4,
    k = 2, :math:`\Gamma^* \approx 0.0568`; there the multiplier of :math:`(i_k, j_1)` is zero, Theorem 3.4's
    condition (14) with equality):

    >>> theta = np.array([[0.51, 0.5, 0.0, -0.01, -0.092]])
    >>> rows, cols = double_star_edges(2, 5)
    >>> forest = gaussian_forest(theta, np.array([0.25]), 2, rows, 2 + cols)
    >>> star = gaussian_double_star(theta, np.array([0.25]), 2)
    >>> bool(np.allclose(forest.psi, star.psi, rtol=0, atol=1e-15)), round(float(forest.value[0]), 4)
    (True, 0.0568)
    """
    from ._forest import _bfs_small, tree_levels
    from ._graph import connected_components

    n_rows, n_arms = theta.shape
    edge_top, edge_bottom = np.asarray(edge_top, dtype=int), np.asarray(edge_bottom, dtype=int)
    n_edges = edge_top.shape[0]
    n_components, component = connected_components(n_arms, edge_top, edge_bottom)
    if n_edges != n_arms - n_components:
        return None  # cycles or repeated edges
    is_top = np.arange(n_arms) < k
    if not (np.all(np.bincount(component, weights=is_top, minlength=n_components) > 0)
            and np.all(np.bincount(component, weights=~is_top, minlength=n_components) > 0)):
        return None
    roots = np.array([np.flatnonzero(component == tree)[0] for tree in range(n_components)])
    parent, parent_edge = _bfs_small(n_arms, edge_top, edge_bottom, roots)
    order, _ = tree_levels(parent)
    # the root's side of each tree: the arms on the same side of the top-k boundary as their root
    plus = is_top == is_top[roots[component]]
    variance = np.broadcast_to(variance, theta.shape)
    scale = theta[:, k - 1:k] - theta[:, k:k + 1]  # the instance with boundary gap 1 and theta_{j_1} = 0
    theta = (theta - theta[:, k:k + 1]) / scale
    variance = variance / scale / scale
    edge_difference = theta[:, edge_top] - theta[:, edge_bottom]
    half_square = 0.5 * edge_difference * edge_difference
    beta = np.zeros((n_rows, n_arms))
    for node in order.tolist():
        if parent[node] >= 0:
            beta[:, node] = half_square[:, parent_edge[node]] - beta[:, parent[node]]
    x = np.empty((n_rows, n_arms))
    _solve_trees(x, beta, variance, component, plus, n_components, max_newton)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # rows with x <= 0 are rejected below
        psi = variance / x
        psi = psi / psi.sum(axis=1, keepdims=True)
        weight = psi / variance
        w_top, w_bottom = weight[:, :k, None], weight[:, None, k:]
        difference = theta[:, :k, None] - theta[:, None, k:]
        costs = (0.5 * difference * difference * (w_top * w_bottom) / (w_top + w_bottom)).reshape(n_rows, -1)
        value = costs.min(axis=1)
        weakest = costs.argmin(axis=1)
        # the forest's edges: costs and the derivatives dC/dpsi at both ends
        edge_total = weight[:, edge_top] + weight[:, edge_bottom]
        ratio = edge_difference / edge_total
        edge_costs = 0.5 * edge_difference * ratio * weight[:, edge_top] * weight[:, edge_bottom]
        top_factor, bottom_factor = ratio * weight[:, edge_bottom], ratio * weight[:, edge_top]
        grad_top = top_factor * top_factor * (0.5 / variance[:, edge_top])
        grad_bottom = bottom_factor * bottom_factor * (0.5 / variance[:, edge_bottom])
        # peeling: every non-root arm's stationarity equation gives the multiplier of the edge to its parent
        inflow = np.zeros((n_rows, n_arms))
        nu = np.empty((n_rows, n_edges))
        for node in order[::-1].tolist():
            edge = parent_edge[node]
            if edge < 0:
                continue
            own, far = (grad_top, grad_bottom) if is_top[node] else (grad_bottom, grad_top)
            nu[:, edge] = (1.0 - inflow[:, node]) / own[:, edge]
            inflow[:, parent[node]] += nu[:, edge] * far[:, edge]
        nonnegative = np.all(nu >= -_NEGATIVE_MULTIPLIER * nu.max(axis=1, keepdims=True), axis=1)
        nu = np.maximum(nu, 0.0)
        mu = nu / nu.sum(axis=1, keepdims=True)
        sums = np.zeros((n_rows, n_arms))
        np.add.at(sums.T, edge_top, (mu * grad_top).T)
        np.add.at(sums.T, edge_bottom, (mu * grad_bottom).T)
        bound = sums.max(axis=1)
        feasible = value >= (1.0 - _FEASIBILITY) * edge_costs.min(axis=1)
        accepted = nonnegative & feasible & (value > 0) & np.isfinite(bound) & np.all(x > 0, axis=1)
    return ForestBatch(psi=psi, value=value, bound=bound, multipliers=mu, nonnegative=nonnegative,
                       feasible=feasible, accepted=accepted, weakest=weakest)


@np.errstate(divide="ignore", invalid="ignore", over="ignore")  # rows without a positive solution: NaN, rejected
def _solve_trees(x, beta, variance, component, plus, n_components, max_newton):
    """Each tree's balance (see :func:`gaussian_forest`), writing every arm's :math:`x_a` into ``x``."""
    for tree in range(n_components):
        members = component == tree
        side, other = np.flatnonzero(members & plus), np.flatnonzero(members & ~plus)
        lower = (-beta[:, side]).max(axis=1, keepdims=True)
        upper = beta[:, other].min(axis=1, keepdims=True)
        a = upper - lower
        offset = np.concatenate([beta[:, side] + lower, beta[:, other] - upper], axis=1)
        columns = np.concatenate([side, other])
        y = _balance_rows(offset, variance[:, columns], side.shape[0], a, None, max_newton)
        with np.errstate(over="ignore"):
            s = a / (1.0 + np.exp(-y))
            t = a / (1.0 + np.exp(y))
        x[:, side] = offset[:, :side.shape[0]] + s
        x[:, other] = offset[:, side.shape[0]:] + t
