r"""Compiled (numba) solve of Theorem 3.4's double star for every family with a compiled pair kernel, and the
compiled evaluation of its certificate.

The double star of Wang, Yang, You (2022), Theorem 3.4, joins :math:`i_k` (the worst top arm) to every bottom
arm and :math:`j_1` (the best bottom arm) to every top arm. On it the KKT system of the homogeneous problem
:math:`\min \sum_a \psi_a` subject to :math:`C_e(\psi) \ge 1` (Wang, Yang, You 2022, eq. (65)) reads, in the
effective weights :math:`w_a = \psi_a/\phi_a` (the objective is :math:`\sum_a \phi_a w_a`),

.. math::
    C_e(w) = c \ (e \text{ in the star}), \qquad \sum_{e \ni a} \nu_e\, \partial_{w_a} C_e(w) = \phi_a
    \ (\text{every arm } a).

The costs are 1-homogeneous, so :math:`w_{i_k} = 1` fixes the scale. For a ratio :math:`r = w_{j_1}` the
common cost is :math:`c = C_{i_k j_1}(1, r)`; every other bottom arm's weight solves :math:`C_{i_k j}(1, w_j)
= c` and every other top arm's :math:`C_{i j_1}(w_i, r) = c`. Each is a scalar equation, solved by Newton's
method on :math:`1/C` in the inverse weight :math:`u = 1/w` (the calibrated surrogate of
:mod:`allocopt.topk._exact.forest` for one edge: exact in one step for harmonic costs, and :math:`1/C` is nearly
affine in the inverse weights for the other families, so two or three steps reach the root), started one
Newton step ahead of the weight at the previous ratio: that step needs only the cost and derivative the previous
solve left, and it makes the leaves' solves near the root one or two pair evaluations each. At the first ratio
the leaves start from the double star of a Gaussian surrogate (the family's unit variance at each pair's
midpoint), which saves about one evaluation per leaf. The leaves'
stationarity equations give their multipliers (:math:`\nu = \phi/\partial C`), :math:`j_1`'s equation gives
:math:`\nu_{i_k j_1}`, and :math:`i_k`'s equation is left over: its residual, the *balance* (Proposition A.2), is
a scalar function of :math:`y = \log r` that increases with :math:`y`, whose root is approached by secant steps
until they bracket it (the first step is minus the residual: the balance's slope at the root is near one on
instances of every family, between 0.6 and 5 on random ones; each step is at most twice as long as the one
before) and then found by the Illinois variant of regula falsi. The pair
costs and their derivatives come from the family's compiled kernel
(:meth:`~allocopt.families.ExponentialFamily.compiled_pair`), called by its number
(:func:`allocopt.families.kernels.pair_by_code`).

Nothing here decides optimality: the exact solver (:mod:`allocopt.topk._exact`) returns the double star only
when the certificate below is within its tolerance, and otherwise runs its general active-set path.

The certificate is evaluated by a second kernel that shares nothing with the solve but the pair kernel: it
takes the final allocation :math:`\psi` (on the simplex) and multipliers :math:`\mu` and computes what
:func:`~allocopt.topk.certificate.certify` computes, :math:`\Gamma(\psi) = \min` over all :math:`k(K-k)` pairs,
the per-arm sums :math:`\sum_{p \ni a}\mu_p \partial_{\psi_a} C_p(\psi)` (left to right), their maximum
:math:`U(\mu, \psi)`, the stationarity and the complementarity; the caller adds the evaluation-error allowance
with :func:`~allocopt.topk.certificate.certified_gap`. The tests compare it with ``certify`` on many
instances.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ...families import kernels as _families
from ..._numba import compile_once
from .. import certificate as _certificate_module
from .._scan import BOUND_MARGIN as _BOUND_MARGIN, trusted  # the all-pairs scans' margin of rounding, the bounds' range test
from . import groups as _groups
from .groups import merge_ties, spread_star

__all__ = ["double_star_edges", "StarSolution", "StarCertificate", "solve_star", "star_certificate", "star_kernel", "star_batch_kernel",
           "star_instance_kernel", "tied_star_instance_kernel"]

_EPS = float(np.finfo(float).eps)
# compiled with the kernels below (rebound), as allocopt.algorithms._compiled_track_and_stop compiles it
scalar_certified_gap = _certificate_module.scalar_certified_gap


def double_star_edges(k: int, n_arms: int) -> tuple[np.ndarray, np.ndarray]:
    """Theorem 3.4's double star on k top and ``n_arms - k`` bottom nodes (arms, or tie groups), each side in
    decreasing order of the means: positions (in the top / bottom orders) of its edges, :math:`(i_k, j)` for
    every bottom node, then :math:`(i, j_1)` for the other top nodes (the column order of ``multipliers``).
    The one definition of the double star's edges (the batch, the exact solver and its forest layout)."""
    n_bottom = n_arms - k
    rows = np.concatenate([np.full(n_bottom, k - 1), np.arange(k - 1)])
    cols = np.concatenate([np.arange(n_bottom), np.zeros(k - 1, dtype=int)])
    return rows, cols


class StarSolution(NamedTuple):
    """The double star's allocation (on the simplex, in the order top arms then bottom arms, each by decreasing
    mean), its multipliers (the edge order of ``double_star_edges``, normalised to sum one), whether the
    balance converged, and the balance's relative residual."""

    psi: np.ndarray
    mu: np.ndarray
    converged: bool
    balance_residual: float


class StarCertificate(NamedTuple):
    """:math:`\\Gamma(\\psi)`, :math:`U(\\mu, \\psi)`, stationarity and complementarity, as in
    :class:`~allocopt.topk.certificate.Certificate` (before the evaluation-error allowance)."""

    value: float
    upper_bound: float
    stationarity: float
    complementarity: float


STAR_MAX_ITERATIONS = 100
"""Balance evaluations of the compiled double star at most (the single solve, the batch and the engine)."""


# pair_by_code compiled first; the functions are called by their global names: compiled in this order
_kernels = compile_once(globals(), needs=(_families._kernels,),
                        rebind=("scalar_certified_gap", "_inverse_step", "_leaf_weight", "_leaf_start", "_balance",
                                "_unit_variance", "_surrogate_weights", "_solve_star", "trusted", "_deviation_bound",
                                "_pair_lower_bound",
                                "_certificate", "_star_rows", "_star_batch", "_star_instance"),
                        kernels={"solve": "_solve_star", "certificate": "_certificate", "rows": "_star_rows",
                                 "batch": "_star_batch", "instance": "_star_instance"})


def _inverse_step(z, cost, derivative, target):
    # one Newton step on g(u) = 1/C = 1/target in u = 1/z from the weight z, where the edge's cost is `cost` and
    # its derivative in the leaf's weight `derivative`: u' = u - (1/C - 1/target) / g'(u), with g'(u) =
    # derivative z^2 / C^2 and 1/C - 1/target = (target - C) / (C target) (no cancellation). Returns u'
    slope = derivative * z * z / (cost * cost)
    return 1.0 / z - (target - cost) / (cost * target * slope)


def _leaf_weight(code, theta_top, theta_bottom, other_weight, leaf_is_top, target, start):
    # the leaf's weight z with C(z, other) = target (leaf_is_top) or C(other, z) = target: Newton's method on
    # g(u) = 1/C = 1/target in u = 1/z (the calibrated surrogate of allocopt.topk._exact.forest for one edge: exact in
    # one step for harmonic costs; 1/C is nearly affine in the inverse weights for the other families, so a
    # step or two reaches the root). From either side the step keeps u > 0 where it starts at C > target (u
    # grows); where a step from C < target would leave u > 0, z doubles instead. Returns z and the two
    # derivatives of the edge's cost at the last evaluation (within a few ulps of z: the derivatives are
    # 0-homogeneous functions of the weights, so they are those at z to a few ulps)
    z = start
    derivative_top = derivative_bottom = 0.0
    for _ in range(100):
        if leaf_is_top:
            cost, derivative_top, derivative_bottom = _families.weighted_pair(code, theta_top, theta_bottom, z,
                                                                              other_weight)
            derivative = derivative_top
        else:
            cost, derivative_top, derivative_bottom = _families.weighted_pair(code, theta_top, theta_bottom,
                                                                              other_weight, z)
            derivative = derivative_bottom
        if not (cost > 0 and derivative > 0):
            break
        inverse = _inverse_step(z, cost, derivative, target)
        following = 1.0 / inverse if inverse > 0 else 2.0 * z
        done = abs(following - z) <= 4 * _EPS * following
        z = following
        if done:
            break
    return z, derivative_top, derivative_bottom


def _leaf_start(weight, previous_cost, cost, derivative):
    # the leaf's weight one Newton step (_inverse_step, the step of _leaf_weight) from the weight it had at the
    # previous ratio, for the new common cost: the step needs the cost and derivative at that weight, which the
    # previous solve has left (previous_cost, scaled to the new hub weight for a top leaf, and derivative,
    # 0-homogeneous), so it costs no pair evaluation
    if not (previous_cost > 0 and derivative > 0 and cost > 0):
        return weight
    inverse = _inverse_step(weight, previous_cost, derivative, cost)
    return 1.0 / inverse if inverse > 0 else weight


def _balance(code, theta, dispersion, k, y, weight, nu, leaf_derivative, memory):
    # weights and multipliers of the double star for w_{i_k} = 1, w_{j_1} = exp(y); the relative residual of
    # i_k's stationarity equation (the balance). memory holds the common cost and the ratio of the previous call
    # (memory[2] = 1 once there is one) and leaf_derivative each leaf's derivative there: each leaf's Newton
    # solve starts one step ahead of its previous weight (_leaf_start)
    n_arms = theta.shape[0]
    n_bottom = n_arms - k
    worst_top, best_bottom = k - 1, k
    ratio = math.exp(y)
    weight[worst_top] = 1.0
    weight[best_bottom] = ratio
    target, root_gradient, hub_gradient = _families.weighted_pair(code, theta[worst_top], theta[best_bottom], 1.0, ratio)
    remembered = memory[2] == 1.0
    previous_target, previous_ratio = memory[0], memory[1]
    inflow_root = 0.0
    for j in range(1, n_bottom):  # bottom leaves, edge j: (i_k, j)
        arm = k + j
        start = weight[arm]
        if remembered:
            start = _leaf_start(start, previous_target, target, leaf_derivative[arm])
        weight[arm], gradient_root, gradient_leaf = _leaf_weight(code, theta[worst_top], theta[arm], 1.0, False,
                                                                 target, start)
        leaf_derivative[arm] = gradient_leaf
        nu[j] = dispersion[arm] / gradient_leaf
        inflow_root += nu[j] * gradient_root
    inflow_hub = 0.0
    for i in range(k - 1):  # top leaves, edge n_bottom + i: (i, j_1)
        start = weight[i]
        if remembered:  # C is 1-homogeneous: C(z r / r', r) = C(z, r') r / r'
            scale = ratio / previous_ratio
            start = _leaf_start(start * scale, previous_target * scale, target, leaf_derivative[i])
        weight[i], gradient_leaf, gradient_hub = _leaf_weight(code, theta[i], theta[best_bottom], ratio, True,
                                                              target, start)
        leaf_derivative[i] = gradient_leaf
        nu[n_bottom + i] = dispersion[i] / gradient_leaf
        inflow_hub += nu[n_bottom + i] * gradient_hub
    memory[0], memory[1], memory[2] = target, ratio, 1.0
    nu[0] = (dispersion[best_bottom] - inflow_hub) / hub_gradient
    inflow_root += nu[0] * root_gradient
    return (inflow_root - dispersion[worst_top]) / (dispersion[worst_top] + abs(inflow_root))


def _surrogate_weights(code, theta, k, y, weight):
    # first weights of the leaves for w_{i_k} = 1, w_{j_1} = exp(y): the double star of the Gaussian surrogate,
    # whose cost of a pair is D w_i w_j / (w_i + w_j) with D = (theta_i - theta_j)^2 / (2 V) and V the family's
    # unit variance at the pair's midpoint; a leaf whose surrogate equation has no positive root keeps weight one
    n_arms = theta.shape[0]
    worst_top, best_bottom = k - 1, k
    ratio = math.exp(y)
    gap = theta[worst_top] - theta[best_bottom]
    target = gap * gap / (2.0 * _unit_variance(code, 0.5 * (theta[worst_top] + theta[best_bottom]))) * (
        ratio / (1.0 + ratio))
    for arm in range(n_arms):
        weight[arm] = 1.0
    weight[best_bottom] = ratio
    for arm in range(best_bottom + 1, n_arms):  # D z / (1 + z) = target
        gap = theta[worst_top] - theta[arm]
        scale = gap * gap / (2.0 * _unit_variance(code, 0.5 * (theta[worst_top] + theta[arm])))
        if scale > target:
            weight[arm] = target / (scale - target)
    for arm in range(worst_top):  # D z r / (z + r) = target
        gap = theta[arm] - theta[best_bottom]
        scale = gap * gap / (2.0 * _unit_variance(code, 0.5 * (theta[arm] + theta[best_bottom]))) * ratio
        if scale > target:
            weight[arm] = target * ratio / (scale - target)


def _solve_star(code, theta, dispersion, k, start, max_iterations, weight, nu, out):
    n_arms = theta.shape[0]
    _surrogate_weights(code, theta, k, start, weight)
    leaf_derivative = np.empty(n_arms)
    memory = np.zeros(3)
    tolerance = 4 * _EPS
    # secant steps on the balance in y = log(w_{j_1} / w_{i_k}) until they bracket its root (the balance increases
    # with y; its slope at the root is near one, so the first step is -residual), each step at most twice as long
    # as the one before
    previous = start
    residual_previous = _balance(code, theta, dispersion, k, previous, weight, nu, leaf_derivative, memory)
    y, residual = previous, residual_previous
    converged = abs(residual) <= tolerance
    bracketed = False
    evaluations = 1
    if not converged and residual == residual:
        step = -residual
        while evaluations < max_iterations:
            y = previous + step
            residual = _balance(code, theta, dispersion, k, y, weight, nu, leaf_derivative, memory)
            evaluations += 1
            if abs(residual) <= tolerance or not residual == residual:
                converged = abs(residual) <= tolerance
                break
            if (residual > 0) != (residual_previous > 0):
                bracketed = True
                break
            slope = (residual - residual_previous) / step
            limit = 2.0 * abs(step)
            step = -residual / slope if slope > 0 else -math.copysign(limit, residual)
            if not abs(step) <= limit:
                step = math.copysign(limit, step)
            previous, residual_previous = y, residual
    if bracketed:
        # Illinois regula falsi on the bracket [low, high] (residuals of opposite signs)
        low, residual_low, high, residual_high = previous, residual_previous, y, residual
        side = 0
        while evaluations < max_iterations:
            y = (low * residual_high - high * residual_low) / (residual_high - residual_low)
            if not (y > min(low, high) and y < max(low, high)):
                y = 0.5 * (low + high)
            residual = _balance(code, theta, dispersion, k, y, weight, nu, leaf_derivative, memory)
            evaluations += 1
            if abs(residual) <= tolerance or abs(high - low) <= tolerance * max(1.0, abs(y)):
                converged = True
                break
            if (residual > 0) == (residual_high > 0):
                high, residual_high = y, residual
                if side == 1:
                    residual_low *= 0.5
                side = 1
            else:
                low, residual_low = y, residual
                if side == -1:
                    residual_high *= 0.5
                side = -1
    # (the weights and nu are those of the last evaluation, at the final y)
    out[0] = 1.0 if converged else 0.0
    out[1] = abs(residual)


def _unit_variance(code, mean):
    # the unit variance function of the family whose pair kernel is numbered `code`
    # (ExponentialFamily.unit_variance; allocopt.families.kernels._CODES)
    if code == 0:  # Gaussian
        return 1.0
    if code <= 2:  # Bernoulli
        return mean * (1.0 - mean)
    if code <= 4:  # Poisson
        return mean
    return mean * mean  # exponential (and gamma)


def _deviation_bound(code, low, high):
    # the square root of the largest unit variance function value between two means
    # (ExponentialFamily.unit_deviation_bound of the family whose pair kernel is numbered `code`,
    # allocopt.families.kernels._CODES), nan where the variance is not a normal number (then no bound is used)
    if code == 0:  # Gaussian
        return 1.0
    if code <= 4:
        if code <= 2:  # Bernoulli
            if low <= 0.5 and high >= 0.5:
                variance = 0.25
            else:
                variance = max(low * (1.0 - low), high * (1.0 - high))
        else:  # Poisson
            variance = max(low, high)
        return math.sqrt(variance) if trusted(variance) else np.nan
    return max(low, high)  # exponential (and gamma): V_1(z) = z^2


def _pair_lower_bound(code, theta_top, theta_bottom, w_top, w_bottom):
    # a closed-form lower bound on the cost of a pair (theta_top > theta_bottom) at effective weights w. The cost
    # is w_i d_i + w_j d_j at the pair's meeting point x (the pair kernels' point, between the means), with
    # - Poisson arms, confidence: x = s_i theta_i + s_j theta_j (s = w / (w_i + w_j)), d_a = x u(theta_a / x),
    #   u(t) = t log t - t + 1 = integral of log v from 1 to t;
    # - exponential arms, confidence: the same x, d_a = f(theta_a / x), f(t) = t - 1 - log t = integral of
    #   (v - 1) / v from 1 to t;
    # - exponential arms, budget: x = 1 / (s_i / theta_i + s_j / theta_j), d_a = f(x / theta_a).
    # Above 1, log v >= (v - 1) / v >= (v - 1) / t, so u(t), f(t) >= (t - 1)^2 / (2 t); below 1, -log v >= 1 - v
    # and (1 - v) / v >= 1 - v, so u(t), f(t) >= (1 - t)^2 / 2. Other families and kinds: the bound of the
    # all-pairs scans (allocopt.topk._scan), (theta_i - theta_j)^2 / (2 Vbar) * w_i w_j / (w_i + w_j) with
    # Vbar the largest unit variance between the means. Each is formed from ratios of the means and the weights'
    # harmonic term h = w_i (w_j / (w_i + w_j)) = w_i s_j = w_j s_i, and returned only where every factor and the
    # bound are normal numbers (_allpairs.trusted); 0 otherwise (the pair is evaluated)
    gap = theta_top - theta_bottom
    total = w_top + w_bottom
    harmonic = w_top * (w_bottom / total)
    if not trusted(harmonic):
        return 0.0
    if code == 3 or code == 5:
        point = (w_top * theta_top + w_bottom * theta_bottom) / total
        above = (w_bottom / total) * gap  # theta_i - x
        below = (w_top / total) * gap  # x - theta_j
        if code == 3:  # w_i above^2 / theta_i + w_j below^2 / x = h gap (above / theta_i + below / x)
            first, second = above / theta_top, below / point
            factor = gap
        else:  # w_i above^2 / (x theta_i) + w_j below^2 / x^2 = h ((gap / theta_i)(above / x) + (gap / x)(below / x))
            first, second = (gap / theta_top) * (above / point), (gap / point) * (below / point)
            factor = 1.0
        if not (trusted(first) and trusted(second) and trusted(factor)):
            return 0.0
        bound = 0.5 * harmonic * factor * (first + second)
    elif code == 6:
        point = total / (w_top / theta_top + w_bottom / theta_bottom)
        above = (theta_top - point) / theta_top
        below = (point - theta_bottom) / point
        first, second = w_top * above * above, w_bottom * below * (below * (point / theta_bottom))
        if not (trusted(first) and trusted(second)):
            return 0.0
        bound = 0.5 * (first + second)
    else:
        ratio = gap / _deviation_bound(code, theta_bottom, theta_top)
        half_square = 0.5 * ratio * ratio
        if not trusted(half_square):
            return 0.0
        bound = half_square * harmonic
    return bound if trusted(bound) else 0.0


def _certificate(code, theta, dispersion, k, psi, rows, cols, mu, top_sums, bottom_sums, out):
    # Gamma(psi) = min over all pairs at w = psi / phi (TopKProblem.minimum_cost); the arm sums of
    # mu_p d_psi C_p at w = psi * (1 / phi) (TopKProblem.pair_terms on listed pairs), left to right. A pair whose
    # closed-form lower bound (_pair_lower_bound), less the all-pairs scans' margin of rounding, is at least the
    # smallest cost so far is not evaluated: its cost cannot be smaller.
    # The double star's pairs (row i_k and column j_1) come first: they bind at the fast path's answers, so the
    # bounds prune from the start (the minimum is the same in any order). Where both arms' dispersions are one,
    # w = psi / phi and psi * (1 / phi) are the same numbers, so a listed pair of the star reuses the cost and
    # derivatives evaluated there (the same numbers again)
    n_arms = theta.shape[0]
    value = np.inf
    worst_top, best_bottom = k - 1, k
    row_terms = np.empty((n_arms - k, 3))  # (i_k, j) for every bottom arm j
    column_terms = np.empty((k, 3))  # (i, j_1) for every top arm i (row i_k's entry is row_terms[0])
    w_worst = psi[worst_top] / dispersion[worst_top]
    for j in range(best_bottom, n_arms):
        cost, gradient_i, gradient_j = _families.weighted_pair(code, theta[worst_top], theta[j], w_worst,
                                                               psi[j] / dispersion[j])
        row_terms[j - k, 0], row_terms[j - k, 1], row_terms[j - k, 2] = cost, gradient_i, gradient_j
        if cost < value or cost != cost:
            value = cost
    w_best = psi[best_bottom] / dispersion[best_bottom]
    for i in range(worst_top):
        cost, gradient_i, gradient_j = _families.weighted_pair(code, theta[i], theta[best_bottom],
                                                               psi[i] / dispersion[i], w_best)
        column_terms[i, 0], column_terms[i, 1], column_terms[i, 2] = cost, gradient_i, gradient_j
        if cost < value or cost != cost:
            value = cost
    for i in range(worst_top):
        w_i = psi[i] / dispersion[i]
        for j in range(best_bottom + 1, n_arms):
            w_j = psi[j] / dispersion[j]
            if _pair_lower_bound(code, theta[i], theta[j], w_i, w_j) * _BOUND_MARGIN >= value:
                continue
            cost, _, _ = _families.weighted_pair(code, theta[i], theta[j], w_i, w_j)
            if cost < value or cost != cost:
                value = cost
    for i in range(k):
        top_sums[i] = 0.0
    for j in range(n_arms - k):
        bottom_sums[j] = 0.0
    complementarity = 0.0
    for index in range(mu.shape[0]):
        i, j = rows[index], k + cols[index]
        inverse_i, inverse_j = 1.0 / dispersion[i], 1.0 / dispersion[j]
        if dispersion[i] == 1.0 and dispersion[j] == 1.0 and (i == worst_top or j == best_bottom):
            terms = row_terms[j - k] if i == worst_top else column_terms[i]
            cost, gradient_i, gradient_j = terms[0], terms[1], terms[2]
        else:
            cost, gradient_i, gradient_j = _families.weighted_pair(code, theta[i], theta[j], psi[i] * inverse_i,
                                                                   psi[j] * inverse_j)
        top_sums[rows[index]] += mu[index] * (gradient_i * inverse_i)
        bottom_sums[cols[index]] += mu[index] * (gradient_j * inverse_j)
        complementarity += mu[index] * (cost - value)
    bound = -np.inf
    stationarity = 0.0
    for i in range(k):
        bound = max(bound, top_sums[i])
        stationarity = max(stationarity, abs(top_sums[i] - value))
    for j in range(n_arms - k):
        bound = max(bound, bottom_sums[j])
        stationarity = max(stationarity, abs(bottom_sums[j] - value))
    scale = value if value > 0 else np.inf
    out[0] = value
    out[1] = bound
    out[2] = stationarity / scale
    out[3] = complementarity / scale


def _star_rows(code, theta, dispersion, k, start, max_iterations, negative_multiplier, psi, mu, keep, weight,
               top_sums, bottom_sums, out):
    # the fast path of the exact solver in one call: distinct means, the solve, the multipliers' signs (those
    # zero to rounding dropped: keep), and the certificate of the result on the kept pairs. out: accepted,
    # value, bound, stationarity, complementarity, largest arm degree, balance residual
    n_arms = theta.shape[0]
    n_bottom = n_arms - k
    out[0] = 0.0
    for arm in range(1, n_arms):
        if arm != k and not theta[arm] < theta[arm - 1]:
            return
    if not theta[k - 1] > theta[k]:
        return
    info = np.empty(2)
    _solve_star(code, theta, dispersion, k, start, max_iterations, weight, mu, info)
    out[6] = info[1]
    if info[0] != 1.0:
        return
    total = 0.0
    for arm in range(n_arms):
        psi[arm] = dispersion[arm] * weight[arm]
        total += psi[arm]
    largest = 0.0
    nu_total = 0.0
    for edge in range(n_arms - 1):
        largest = max(largest, mu[edge])
        nu_total += mu[edge]
    for arm in range(n_arms):
        psi[arm] /= total
        if not (psi[arm] > 0 and psi[arm] < np.inf):
            return
    n_kept = 0
    for edge in range(n_arms - 1):
        if not (mu[edge] >= -negative_multiplier * largest and mu[edge] < np.inf):
            return
        mu[edge] /= nu_total
        keep[edge] = mu[edge] > 0
        if keep[edge]:
            mu[n_kept] = mu[edge]
            n_kept += 1
    rows = np.empty(n_kept, dtype=np.int64)
    cols = np.empty(n_kept, dtype=np.int64)
    position = 0
    degree_top = np.zeros(k, dtype=np.int64)
    degree_bottom = np.zeros(n_bottom, dtype=np.int64)
    for edge in range(n_arms - 1):
        if keep[edge]:
            # double_star_edges: (i_k, j) for every bottom j, then (i, j_1) for the other top arms
            rows[position] = k - 1 if edge < n_bottom else edge - n_bottom
            cols[position] = edge if edge < n_bottom else 0
            degree_top[rows[position]] += 1
            degree_bottom[cols[position]] += 1
            position += 1
    certificate = np.empty(4)
    _certificate(code, theta, dispersion, k, psi, rows, cols, mu[:n_kept], top_sums, bottom_sums, certificate)
    out[0] = 1.0
    largest_degree = 1
    for index in range(4):  # element by element: a slice assignment compiles numba's shape-mismatch message
        out[1 + index] = certificate[index]
    for arm in range(k):
        largest_degree = max(largest_degree, degree_top[arm])
    for arm in range(n_bottom):
        largest_degree = max(largest_degree, degree_bottom[arm])
    out[5] = largest_degree


def _star_batch(code, theta, dispersion, k, max_iterations, negative_multiplier, psi, mu, keep, out):
    # _star_rows on every row of a batch (rows sorted as _star_rows expects, start 0: no warm start), each row
    # with fresh work arrays as the single call has (the weights start at one)
    n_rows, n_arms = theta.shape
    weight = np.empty(n_arms)
    top_sums = np.empty(k)
    bottom_sums = np.empty(n_arms - k)
    for row in range(n_rows):
        for arm in range(n_arms):
            weight[arm] = 1.0
        _star_rows(code, theta[row], dispersion[row], k, 0.0, max_iterations, negative_multiplier, psi[row],
                   mu[row], keep[row], weight, top_sums, bottom_sums, out[row])


def _star_instance(code, theta, top, bottom, dispersion, start, max_iterations, negative_multiplier, relative_error,
                   psi, mu, keep):
    # _star_rows on one instance given in its arms' order: the arms sorted top then bottom (top and bottom as
    # TopKProblem orders them), fresh work arrays as one call of the fast path allocates them, the allocation
    # written to psi in the arms' order, mu and keep as _star_rows writes them, and the certified gap
    # (allocopt.topk.certificate.scalar_certified_gap with the instance's relative evaluation error). Returns
    # the scalars as a tuple of floats (numba boxes a tuple of floats far faster than new arrays): accepted,
    # value, bound, gap, stationarity, complementarity, balance residual, number of kept multipliers
    k = top.shape[0]
    n_arms = theta.shape[0]
    sorted_theta = np.empty(n_arms)
    sorted_dispersion = np.empty(n_arms)
    for position in range(k):
        sorted_theta[position] = theta[top[position]]
        sorted_dispersion[position] = dispersion[top[position]]
    for position in range(n_arms - k):
        sorted_theta[k + position] = theta[bottom[position]]
        sorted_dispersion[k + position] = dispersion[bottom[position]]
    star_psi = np.empty(n_arms)
    out = np.empty(7)
    weight = np.ones(n_arms)
    _star_rows(code, sorted_theta, sorted_dispersion, k, start, max_iterations, negative_multiplier, star_psi, mu,
               keep, weight, np.empty(k), np.empty(n_arms - k), out)
    if out[0] != 1.0:
        return 0.0, np.nan, np.nan, np.nan, np.nan, np.nan, out[6], 0.0
    for position in range(k):
        psi[top[position]] = star_psi[position]
    for position in range(n_arms - k):
        psi[bottom[position]] = star_psi[k + position]
    n_kept = 0
    for edge in range(n_arms - 1):
        if keep[edge]:
            n_kept += 1
    gap = scalar_certified_gap(out[2], out[1], relative_error, int(out[5]))
    return 1.0, out[1], out[2], gap, out[3], out[4], out[6], float(n_kept)


def _tied_instance(code, theta, order, dispersion, k, start, max_iterations, negative_multiplier, relative_error,
                   psi, rows, cols, values):
    # _star_rows on the tie groups of an instance given in its arms' order (merge_ties; `order` as
    # TopKProblem.order), expanded to the arms (spread_star: psi in the arms' order, the member pairs' positions
    # and multipliers in rows, cols, values), with the certified gap: the groups' degree or the members' (the
    # larger) plus one rounding term, for the division by n_g (as solve_topk_batch allows). Returns the scalars
    # of _star_instance, the number of member pairs last; not accepted when no two arms tie, or tied arms
    # differ in dispersion
    n_arms = theta.shape[0]
    group_theta, group_dispersion = np.empty(n_arms), np.empty(n_arms)
    first, count = np.empty(n_arms, dtype=np.int64), np.empty(n_arms, dtype=np.int64)
    n_groups, n_top = merge_ties(theta, order, dispersion, k, group_theta, group_dispersion, first, count)
    if n_groups < 2 or n_groups == n_arms:
        return 0.0, np.nan, np.nan, np.nan, np.nan, np.nan, np.nan, 0.0
    group_psi, mu, out = np.empty(n_groups), np.empty(n_groups - 1), np.empty(7)
    keep = np.empty(n_groups - 1, dtype=np.bool_)
    _star_rows(code, group_theta[:n_groups], group_dispersion[:n_groups], n_top, start, max_iterations,
               negative_multiplier, group_psi, mu, keep, np.ones(n_groups), np.empty(n_top), np.empty(n_groups - n_top),
               out)
    if out[0] != 1.0:
        return 0.0, np.nan, np.nan, np.nan, np.nan, np.nan, out[6], 0.0
    n_pairs, degree = spread_star(order, k, n_top, n_groups, first, count, group_psi, mu, keep, psi, rows, cols, values)
    gap = scalar_certified_gap(out[2], out[1], relative_error, max(degree, int(out[5])) + 1)
    return 1.0, out[1], out[2], gap, out[3], out[4], out[6], float(n_pairs)


# compiled at the first tie only (the distinct-means kernels first: it calls _star_rows by its global name)
_tied_kernels = compile_once(globals(), needs=(_kernels, _groups.TIE_KERNELS),
                             shared=((_groups, ("merge_ties", "spread_star")),), kernels={"tied": "_tied_instance"})


def _code(pair) -> int:
    code = _families.kernel_code(pair)
    if code is None:
        raise ValueError("not a pair kernel of allocopt.families.kernels")
    return code


def star_kernel():
    """The fast path's compiled kernel ``_star_rows(code, theta, dispersion, k, start, max_iterations,
    negative_multiplier, psi, mu, keep, weight, top_sums, bottom_sums, out)``, with ``code`` the pair kernel's
    number (:func:`allocopt.families.kernels.kernel_code`)."""
    return _kernels()["rows"]


def star_instance_kernel():
    """The fast path's compiled kernel on one instance in its arms' order, ``_star_instance(code, theta, top,
    bottom, dispersion, start, max_iterations, negative_multiplier, relative_error, psi, mu, keep) -> (accepted,
    value, bound, gap, stationarity, complementarity, balance_residual, n_kept)``: :func:`star_kernel` on the
    arms sorted as ``top`` then ``bottom`` (the order of :class:`~allocopt.topk.TopKProblem`), writing the
    allocation ``psi`` (shape (K,)) in the arms' order, and ``mu`` and ``keep`` (shape (K - 1,)) as
    :func:`star_kernel` writes them; it returns a tuple of floats, with the certified gap
    (:func:`~allocopt.topk.certificate.scalar_certified_gap` for the relative evaluation error
    ``relative_error``) and the number of kept multipliers (``mu[:n_kept]``). The same numbers as sorting,
    calling :func:`star_kernel` and scattering in Python, with one call; when it does not accept, ``psi`` is
    not written and the value, bound and gap are NaN."""
    return _kernels()["instance"]


def tied_star_instance_kernel():
    """The fast path's compiled kernel on one instance with tied means, ``_tied_instance(code, theta, order,
    dispersion, k, start, max_iterations, negative_multiplier, relative_error, psi, rows, cols, values) ->
    (accepted, value, bound, gap, stationarity, complementarity, balance_residual, n_pairs)``: the tied arms
    merged into groups (:func:`~allocopt.topk._exact.groups.merge_ties`), :func:`star_kernel` on the groups,
    and the answer expanded to the arms (:func:`~allocopt.topk._exact.groups.spread_star`: ``psi`` in the
    arms' order, the multipliers on the member pairs ``rows[:n_pairs]``, ``cols[:n_pairs]`` (positions in the
    top and bottom orders), ``values[:n_pairs]``, arrays of length k(K - k) at most), with the certified gap.
    Not accepted (and nothing written) when no two arms tie or tied arms differ in dispersion."""
    return _tied_kernels()["tied"]


def star_batch_kernel():
    """The fast path's compiled kernel on many rows, ``_star_batch(code, theta, dispersion, k, max_iterations,
    negative_multiplier, psi, mu, keep, out)``: :func:`star_kernel` on every row of the (R, K) arrays
    ``theta`` and ``dispersion`` (each row sorted top arms then bottom arms, each by decreasing mean), with
    start 0 and fresh work arrays per row, writing row ``r`` of ``psi`` (R, K), ``mu``, ``keep`` (R, K - 1) and
    ``out`` (R, 7): the same numbers as one call of :func:`star_kernel` per row, without a Python call per
    row."""
    return _kernels()["batch"]


def solve_star(pair, theta: np.ndarray, dispersion: np.ndarray, k: int, start: float = 0.0,
               max_iterations: int = 100) -> StarSolution:
    r"""Solve the double star's KKT system (module docstring) with the compiled pair kernel ``pair``.

    ``theta`` and ``dispersion`` (shape (K,)) are in the order top arms then bottom arms, each by decreasing
    mean, with distinct means; ``start`` is a first guess of :math:`\log(w_{j_1}/w_{i_k})`.

    Examples
    --------
    Two Bernoulli arms symmetric about 1/2 share the allocation equally (the costs are symmetric).

    >>> from allocopt.families import Bernoulli
    >>> pair = Bernoulli().compiled_pair("confidence")
    >>> solution = solve_star(pair, np.array([0.8, 0.2]), np.ones(2), 1) if pair is not None else None
    >>> solution is None or bool(np.allclose(solution.psi, 0.5, rtol=0, atol=1e-15))
    True
    """
    theta = np.ascontiguousarray(theta, dtype=float)
    dispersion = np.ascontiguousarray(dispersion, dtype=float)
    n_arms = theta.shape[0]
    weight, nu, out = np.empty(n_arms), np.zeros(n_arms - 1), np.empty(2)
    _kernels()["solve"](_code(pair), theta, dispersion, int(k), float(start), int(max_iterations), weight, nu, out)
    psi = dispersion * weight
    psi /= psi.sum()
    total = nu.sum()
    return StarSolution(psi, nu / total, bool(out[0] == 1.0), float(out[1]))


def star_certificate(pair, theta: np.ndarray, dispersion: np.ndarray, k: int, psi: np.ndarray, rows: np.ndarray,
                     cols: np.ndarray, mu: np.ndarray) -> StarCertificate:
    """:math:`\\Gamma(\\psi)`, :math:`U(\\mu, \\psi)`, stationarity and complementarity of an allocation ``psi``
    (same order as ``theta``) and multipliers ``mu`` on the pairs (``rows``, ``cols``) (positions among the top
    and the bottom arms), with the compiled pair kernel ``pair`` (module docstring)."""
    n_arms = theta.shape[0]
    out = np.empty(4)
    _kernels()["certificate"](_code(pair), np.ascontiguousarray(theta, dtype=float),
                              np.ascontiguousarray(dispersion, dtype=float), int(k),
                              np.ascontiguousarray(psi, dtype=float), np.ascontiguousarray(rows, dtype=np.int64),
                              np.ascontiguousarray(cols, dtype=np.int64), np.ascontiguousarray(mu, dtype=float),
                              np.empty(k), np.empty(n_arms - k), out)
    return StarCertificate(float(out[0]), float(out[1]), float(out[2]), float(out[3]))
