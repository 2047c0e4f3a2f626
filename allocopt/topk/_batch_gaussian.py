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
iteration on all instances at once converges to machine precision in a few steps. Peeling the leaves gives
the multipliers (their nonnegativity is Theorem 3.4's condition (14)); a vectorised all-pairs check gives
:math:`\Gamma(\psi)`, and the per-arm sums of the multiplier-weighted cost derivatives the certified upper
bound of :mod:`allocopt.topk.certificate`. Instances whose double star is not optimal are reported so that
the caller solves them one by one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["DoubleStarBatch", "gaussian_double_star"]

_EPS = np.finfo(float).eps
# an instance is handed back to the general solver when a pair other than the double star's is below the
# forest's cost by more than this (relatively) or a multiplier is negative beyond rounding
_FEASIBILITY = 1e-10
_NEGATIVE_MULTIPLIER = 1e-12


@dataclass(frozen=True)
class DoubleStarBatch:
    """Double-star solutions of a batch (rows in the caller's order, arms in the caller's order).

    ``accepted[r]`` says whether row r's double star passed the exact checks (multipliers nonnegative, every
    pair feasible); the other rows must be solved otherwise. ``psi`` is normalised to the simplex; ``value``,
    ``bound`` are :math:`\\Gamma(\\psi)` and :math:`U(\\mu, \\psi)`; ``multipliers`` are on the double star's
    edges, normalised: column ``c < K-k`` is the edge ``(i_k, bottom[c])``, column ``K-k+r`` the edge
    ``(top[r], j_1)`` for ``r < k-1``.
    """

    psi: np.ndarray
    value: np.ndarray
    bound: np.ndarray
    multipliers: np.ndarray
    top: np.ndarray
    bottom: np.ndarray
    accepted: np.ndarray


def _split(y, a):
    """s = a / (1 + e^-y), t = a / (1 + e^y), and ds/dy = s t / a."""
    with np.errstate(over="ignore"):
        s = a / (1.0 + np.exp(-y))
        t = a / (1.0 + np.exp(y))
    return s, t


def gaussian_double_star(theta: np.ndarray, k: int, variance: np.ndarray, warm_psi: np.ndarray | None = None,
                         max_newton: int = 60) -> DoubleStarBatch:
    """Solve the double star of every row of ``theta`` (shape (R, K), unique top-k set in every row) for
    Gaussian arms with per-arm ``variance`` (shape (K,)), checking it exactly.

    ``warm_psi`` (shape (R, K), positive), if given, starts the balance iteration at its split.
    """
    n_rows, n_arms = theta.shape
    rows = np.arange(n_rows)[:, None]
    order = np.argsort(-theta, axis=1, kind="stable")
    top, bottom = order[:, :k], order[:, k:]
    theta_top, theta_bottom = theta[rows, top], theta[rows, bottom]  # (R, k), (R, K-k), decreasing
    var_top, var_bottom = variance[top], variance[bottom]
    worst_top = theta_top[:, -1:]  # theta_{i_k}
    best_bottom = theta_bottom[:, :1]  # theta_{j_1}
    a = 0.5 * (worst_top - best_bottom) ** 2  # (R, 1)
    offset_bottom = 0.5 * (best_bottom - theta_bottom) * (2.0 * worst_top - theta_bottom - best_bottom)
    offset_top = 0.5 * (theta_top - worst_top) * (theta_top + worst_top - 2.0 * best_bottom)
    # start: the warm allocation's split, else the balanced split y = 0
    if warm_psi is not None:
        with np.errstate(divide="ignore", invalid="ignore"):
            s0 = var_top[:, -1] / warm_psi[rows[:, 0], top[:, -1]]
            t0 = var_bottom[:, 0] / warm_psi[rows[:, 0], bottom[:, 0]]
            y = np.log(s0 / t0)
        y = np.where(np.isfinite(y), y, 0.0)[:, None]
    else:
        y = np.zeros((n_rows, 1))
    lower = np.full((n_rows, 1), -np.inf)
    upper = np.full((n_rows, 1), np.inf)
    active = np.ones(n_rows, dtype=bool)
    for _ in range(max_newton):
        s, t = _split(y, a)
        x_top, x_bottom = s + offset_top, t + offset_bottom
        top_terms = var_top / x_top**2
        bottom_terms = var_bottom / x_bottom**2
        top_sum, bottom_sum = top_terms.sum(axis=1, keepdims=True), bottom_terms.sum(axis=1, keepdims=True)
        residual = np.log(top_sum / bottom_sum)
        # dh/dy = (d/ds log P) ds/dy - (d/dt log Q) dt/dy, ds/dy = -dt/dy = s t / a
        rate = s * t / a
        derivative = -2.0 * rate * ((top_terms / x_top).sum(axis=1, keepdims=True) / top_sum
                                    + (bottom_terms / x_bottom).sum(axis=1, keepdims=True) / bottom_sum)
        lower = np.where(residual > 0, y, lower)
        upper = np.where(residual < 0, y, upper)
        step = -residual / derivative
        candidate = y + step
        outside = ~((candidate > lower) & (candidate < upper)) | ~np.isfinite(candidate)
        with np.errstate(invalid="ignore"):  # the midpoint of an unbounded bracket is not used
            bisection = np.where(np.isfinite(lower) & np.isfinite(upper), 0.5 * (lower + upper),
                                 np.where(np.isfinite(lower), lower + 4.0, upper - 4.0))
        candidate = np.where(outside, bisection, candidate)
        moved = np.abs(candidate - y) > 4 * _EPS * np.maximum(1.0, np.abs(y))
        active = (moved & (residual != 0)).ravel()
        y = candidate
        if not active.any():
            break
    s, t = _split(y, a)
    x_top, x_bottom = s + offset_top, t + offset_bottom
    # re-anchor at the computed split: the edge (i_k, j_1) carries s + t, which rounding may move off a
    psi_top, psi_bottom = var_top / x_top, var_bottom / x_bottom
    total = psi_top.sum(axis=1, keepdims=True) + psi_bottom.sum(axis=1, keepdims=True)
    psi_top, psi_bottom = psi_top / total, psi_bottom / total
    weight_top, weight_bottom = psi_top / var_top, psi_bottom / var_bottom  # effective weights w = psi / sigma^2
    # multipliers by peeling (homogeneous scale: C_e = 1 at x; the scale cancels after normalisation):
    # leaf j != j_1: nu = 1 / dC/dpsi_j, leaf i != i_k: nu = 1 / dC/dpsi_i, then j_1's equation
    squared_top = psi_top**2 / var_top  # psi_a^2 / sigma_a^2 on the normalised scale
    squared_bottom = psi_bottom**2 / var_bottom
    nu_bottom = (theta_top[:, -1:] - theta_bottom) ** 2 * squared_bottom / 2.0
    nu_top = (theta_top[:, :-1] - best_bottom) ** 2 * squared_top[:, :-1] / 2.0
    hub_share = 1.0 - squared_top[:, :-1].sum(axis=1) / squared_bottom[:, 0]
    nu_bottom[:, 0] = nu_bottom[:, 0] * hub_share
    multipliers = np.concatenate([nu_bottom, nu_top], axis=1)
    scale = np.abs(multipliers).max(axis=1)
    nonnegative = multipliers.min(axis=1) >= -_NEGATIVE_MULTIPLIER * scale
    multipliers = np.maximum(multipliers, 0.0)
    multipliers = multipliers / multipliers.sum(axis=1, keepdims=True)
    # all pairs: C_ij = Delta^2 w_i w_j / (2 (w_i + w_j))
    difference = theta_top[:, :, None] - theta_bottom[:, None, :]
    wi, wj = weight_top[:, :, None], weight_bottom[:, None, :]
    costs = difference**2 * (wi * wj / (wi + wj)) / 2.0
    value = costs.reshape(n_rows, -1).min(axis=1)
    star_cost = np.concatenate([costs[:, -1, :], costs[:, :-1, 0]], axis=1)
    feasible = value >= (1.0 - _FEASIBILITY) * star_cost.min(axis=1)
    # certified upper bound: max over arms of sum_p mu_p dC_p/dpsi_a, dC_ij/dpsi_i = (Delta w_j / (w_i+w_j))^2/(2 s2_i)
    def derivative_own(delta, w_own, w_other, var_own):
        return (delta * w_other / (w_own + w_other)) ** 2 / (2.0 * var_own)

    edge_top_theta = np.concatenate([np.broadcast_to(theta_top[:, -1:], theta_bottom.shape), theta_top[:, :-1]],
                                    axis=1)
    edge_bottom_theta = np.concatenate([theta_bottom, np.broadcast_to(best_bottom, theta_top[:, :-1].shape)],
                                       axis=1)
    edge_w_top = np.concatenate([np.broadcast_to(weight_top[:, -1:], theta_bottom.shape), weight_top[:, :-1]],
                                axis=1)
    edge_w_bottom = np.concatenate([weight_bottom, np.broadcast_to(weight_bottom[:, :1], theta_top[:, :-1].shape)],
                                   axis=1)
    edge_var_top = np.concatenate([np.broadcast_to(var_top[:, -1:], theta_bottom.shape), var_top[:, :-1]], axis=1)
    edge_var_bottom = np.concatenate([var_bottom, np.broadcast_to(var_bottom[:, :1], theta_top[:, :-1].shape)],
                                     axis=1)
    delta = edge_top_theta - edge_bottom_theta
    grad_top = derivative_own(delta, edge_w_top, edge_w_bottom, edge_var_top) * multipliers
    grad_bottom = derivative_own(delta, edge_w_bottom, edge_w_top, edge_var_bottom) * multipliers
    n_bottom = n_arms - k
    worst_top_sum = grad_top[:, :n_bottom].sum(axis=1)
    best_bottom_sum = grad_bottom[:, 0] + grad_bottom[:, n_bottom:].sum(axis=1)
    others = np.concatenate([grad_bottom[:, 1:n_bottom], grad_top[:, n_bottom:]], axis=1)
    bound = np.maximum(worst_top_sum, best_bottom_sum)
    if others.shape[1]:
        bound = np.maximum(bound, others.max(axis=1))
    psi = np.empty_like(theta)
    psi[rows, top] = psi_top
    psi[rows, bottom] = psi_bottom
    accepted = nonnegative & feasible & np.isfinite(value) & np.isfinite(bound) & (value > 0)
    return DoubleStarBatch(psi=psi, value=value, bound=bound, multipliers=multipliers, top=top, bottom=bottom,
                           accepted=accepted)
