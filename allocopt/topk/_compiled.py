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

The kernel follows :func:`allocopt._numba.compiled_enabled` (the engine's switch, also used to
time the numpy twins); without numba the numpy twin runs.
"""

from __future__ import annotations

import math
import numpy as np

from .._numba import compile_once, compiled_enabled

__all__ = ["star_kernel", "star_instance_kernel"]

_EPS = float(np.finfo(float).eps)


def star_kernel():
    """The compiled row kernel (built on first use), or ``None`` when the compiled kernels are off or numba is
    unavailable (the caller then runs the numpy twin)."""
    if not compiled_enabled():
        return None
    return _kernel()


_STAR = compile_once(globals(), rebind=("_star_rows",), kernels={"star": "_star_rows", "instance": "_star_instance"})
# both iteration loops call the helpers by their global names: they are compiled first
_ITERATIONS = compile_once(globals(), rebind=("_gaussian_pair", "_certify_iterate"),
                           kernels={"tracking": "_tracking_gaussian", "fwga": "_fwga_gaussian"})


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
    _star_rows(sorted_theta, sorted_variance, k, starts, has_start, max_newton, feasibility, negative_multiplier,
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


def tracking_kernel():
    """The compiled Gaussian KKT-Tracking loop (built on first use), or ``None`` as :func:`star_kernel`."""
    return _iteration_kernel("tracking")


def fwga_kernel():
    """The compiled Gaussian FWGA loop (built on first use), or ``None`` as :func:`star_kernel`."""
    return _iteration_kernel("fwga")


def _iteration_kernel(name: str):
    if star_kernel() is None:
        return None
    return _ITERATIONS()[name]


def _tracking_gaussian(theta_top, theta_bottom, inverse_top, inverse_bottom, top, bottom, dispersion, iterations,
                       tol, relative_error, rounding_allowance, terms, cumulative, psi, counts, values, bounds):
    """KKT-Tracking on one Gaussian instance with the certified gap of every iterate: the twin of
    ``TrackingIterations.step`` (R = 1, unnormalised iterates ``cumulative`` :math:`u_t = t\\psi_t`) followed by
    ``TrackingIterations.terms`` at :math:`\\psi_t = u_t/t` (written to ``psi``), ``GapRecorder.record`` and
    ``GapRecorder.certified_gap``, operation for operation. Returns the number of iterations run (it stops
    early once the certified gap is at most ``tol`` times the value)."""
    n_top, n_bottom = theta_top.shape[0], theta_bottom.shape[0]
    n_arms = psi.shape[0]
    weight = np.empty(n_arms)
    top_sums = np.empty(n_top)
    bottom_sums = np.empty(n_bottom)
    pair = np.zeros(2, dtype=np.int64)  # (the certificate's argmin, not used: the step takes its own)
    allowance_rate = relative_error if relative_error > rounding_allowance else rounding_allowance
    term_count = terms if terms > 1 else 1
    for t in range(1, iterations + 1):
        # the pair of minimal cost (first in row-major order): 0.5 gap^2 / (1/w_i + 1/w_j)
        for arm in range(n_arms):
            weight[arm] = cumulative[arm] / dispersion[arm]
        best, best_row, best_col = np.inf, 0, 0
        first = True
        for row in range(n_top):
            w_top = weight[top[row]]
            for col in range(n_bottom):
                gap = theta_top[row] - theta_bottom[col]
                cost = 0.5 * (gap * gap) / (1.0 / w_top + 1.0 / weight[bottom[col]])
                if first or cost < best or (cost != cost and best == best):
                    best, best_row, best_col = cost, row, col
                    first = False
        i, j = top[best_row], bottom[best_col]
        psi_i, psi_j = cumulative[i], cumulative[j]
        w_i, w_j = psi_i * inverse_top[best_row], psi_j * inverse_bottom[best_col]
        divergence_top, divergence_bottom = _gaussian_pair(theta_top[best_row], theta_bottom[best_col], w_i, w_j)
        cost = w_i * divergence_top + w_j * divergence_bottom
        if cost > 0:
            h_top = psi_i * (divergence_top * inverse_top[best_row]) / cost
        elif psi_i > 0:
            h_top = 0.5 if psi_j > 0 else 0.0
        else:
            h_top = 1.0 if psi_j > 0 else 0.5
        if h_top < 0.0:
            h_top = 0.0
        elif h_top > 1.0:
            h_top = 1.0
        if t == 1:  # u_0 = 0: psi_0 only chose the first pair
            for arm in range(n_arms):
                cumulative[arm] = 0.0
        cumulative[i] += h_top
        cumulative[j] += 1.0 - h_top
        for arm in range(n_arms):
            psi[arm] = cumulative[arm] / t
        counts[best_row, best_col] += 1.0
        # the certificate of the new iterate: Gamma and the per-arm sums of counts * dC/dpsi (left to right)
        value, largest = _certify_iterate(theta_top, theta_bottom, inverse_top, inverse_bottom, top, bottom,
                                          dispersion, psi, counts, weight, top_sums, bottom_sums, pair)
        bound = largest / t
        values[t - 1] = value
        bounds[t - 1] = bound
        if value > 0:
            allowance = allowance_rate * (abs(bound) + abs(value)) + term_count * _EPS * abs(bound)
            difference = bound - value
            gap_certified = (difference if not difference < 0.0 else 0.0) + allowance
            if gap_certified <= tol * value:
                return t
    return iterations


def _gaussian_pair(theta_top, theta_bottom, w_top, w_bottom):
    """The unit divergences of both ends of a pair to its infimum point: the twin of ``pair_terms`` (its shares)
    with ``Gaussian.unit_confidence_pair``."""
    total = w_top + w_bottom
    if total <= 0:
        share_top = share_bottom = 0.5
    else:
        share_top, share_bottom = w_top / total, w_bottom / total
    gap = theta_top - theta_bottom
    spread_top, spread_bottom = share_bottom * gap, -share_top * gap
    return 0.5 * spread_top * spread_top, 0.5 * spread_bottom * spread_bottom


def _certify_iterate(theta_top, theta_bottom, inverse_top, inverse_bottom, top, bottom, dispersion, psi, mu,
                     weight, top_sums, bottom_sums, rows_out):
    """Gamma of ``psi``, the bound of ``mu`` (unnormalised: the caller divides) and the first pair of minimal
    cost in row-major order (written to ``rows_out``): the twin of ``TopKProblem.pair_terms`` on the grid and
    ``GapRecorder.record`` (sums left to right)."""
    n_top, n_bottom = theta_top.shape[0], theta_bottom.shape[0]
    for arm in range(psi.shape[0]):
        weight[arm] = psi[arm] / dispersion[arm]
    value = np.inf
    first = True
    for row in range(n_top):
        w_top = weight[top[row]]
        for col in range(n_bottom):
            w_bottom = weight[bottom[col]]
            divergence_top, divergence_bottom = _gaussian_pair(theta_top[row], theta_bottom[col], w_top, w_bottom)
            cost = w_top * divergence_top + w_bottom * divergence_bottom
            if first or cost < value or (cost != cost and value == value):  # numpy's argmin and min
                value = cost
                rows_out[0], rows_out[1] = row, col
                first = False
            top_term = mu[row, col] * (divergence_top * inverse_top[row])
            bottom_term = mu[row, col] * (divergence_bottom * inverse_bottom[col])
            top_sums[row] = top_term if col == 0 else top_sums[row] + top_term
            bottom_sums[col] = bottom_term if row == 0 else bottom_sums[col] + bottom_term
    largest_top = top_sums[0]
    for row in range(1, n_top):
        if top_sums[row] > largest_top or (top_sums[row] != top_sums[row] and largest_top == largest_top):
            largest_top = top_sums[row]
    largest_bottom = bottom_sums[0]
    for col in range(1, n_bottom):
        if bottom_sums[col] > largest_bottom or (bottom_sums[col] != bottom_sums[col]
                                                 and largest_bottom == largest_bottom):
            largest_bottom = bottom_sums[col]
    return value, (largest_bottom if largest_bottom > largest_top else largest_top)  # Python's max(top, bottom)


def _fwga_gaussian(theta_top, theta_bottom, inverse_top, inverse_bottom, top, bottom, dispersion, iterations,
                   horizon_factor, tol, relative_error, rounding_allowance, terms, psi, u, mu, values, bounds):
    """FWGA on one Gaussian instance with the certified gap of every iterate: the twin of the numpy loop of
    :func:`allocopt.topk._fwga.solve` (pair terms, simplex projection, records), operation for operation.
    Returns the number of iterations run."""
    n_top, n_bottom = theta_top.shape[0], theta_bottom.shape[0]
    n_arms = psi.shape[0]
    weight = np.empty(n_arms)
    top_sums = np.empty(n_top)
    bottom_sums = np.empty(n_bottom)
    pair = np.zeros(2, dtype=np.int64)
    ordered = np.empty(n_arms)
    allowance_rate = relative_error if relative_error > rounding_allowance else rounding_allowance
    term_count = terms if terms > 1 else 1
    _certify_iterate(theta_top, theta_bottom, inverse_top, inverse_bottom, top, bottom, dispersion, psi, mu,
                     weight, top_sums, bottom_sums, pair)
    for t in range(1, iterations + 1):
        row, col = pair[0], pair[1]
        alpha = 2.0 / (t + 1)
        for r in range(n_top):
            for c in range(n_bottom):
                mu[r, c] *= 1.0 - alpha
        mu[row, col] += alpha
        # the gradient of the chosen pair's cost at u (TopKProblem.pair_terms on one pair: w = u / phi as
        # u * (1/phi))
        i, j = top[row], bottom[col]
        divergence_top, divergence_bottom = _gaussian_pair(theta_top[row], theta_bottom[col],
                                                           u[i] * inverse_top[row], u[j] * inverse_bottom[col])
        step = t / horizon_factor
        u[i] += step * (divergence_top * inverse_top[row])
        u[j] += step * (divergence_bottom * inverse_bottom[col])
        # Euclidean projection onto the simplex (the twin of project_to_simplex)
        for arm in range(n_arms):
            ordered[arm] = -u[arm]
        ordered.sort()
        running = 0.0
        rho = n_arms - 1
        found = False
        shift = 0.0
        last_excess = 0.0
        for position in range(n_arms):
            value_here = -ordered[position]
            running = value_here if position == 0 else running + value_here
            excess = running - 1.0
            if value_here * (position + 1) > excess:
                rho, last_excess, found = position, excess, True
        if not found:
            running = 0.0
            for position in range(n_arms):
                running = -ordered[position] if position == 0 else running + -ordered[position]
            last_excess = running - 1.0
        shift = last_excess / (rho + 1)
        for arm in range(n_arms):
            projected = u[arm] - shift
            u[arm] = projected if not projected < 0.0 else 0.0
            psi[arm] = (1.0 - alpha) * psi[arm] + alpha * u[arm]
        value, largest = _certify_iterate(theta_top, theta_bottom, inverse_top, inverse_bottom, top, bottom,
                                          dispersion, psi, mu, weight, top_sums, bottom_sums, pair)
        bound = largest / 1.0
        values[t - 1] = value
        bounds[t - 1] = bound
        if value > 0:
            allowance = allowance_rate * (abs(bound) + abs(value)) + term_count * _EPS * abs(bound)
            difference = bound - value
            if (difference if not difference < 0.0 else 0.0) + allowance <= tol * value:
                return t
    return iterations
