r"""The compiled loops of FWGA and KKT-Tracking on Gaussian arms, each with the certified gap of every iterate: the
twins of the numpy loops of :mod:`allocopt.topk._iterative.fwga` and :mod:`allocopt.topk._iterative.kkt_tracking`
(the same operations in the same order)."""

from __future__ import annotations

import numpy as np

from ..._numba import compile_once, compiled_enabled

__all__ = ["tracking_kernel", "fwga_kernel"]

_EPS = float(np.finfo(float).eps)


# both iteration loops call the helpers by their global names: they are compiled first
_ITERATIONS = compile_once(globals(), rebind=("_gaussian_pair", "_certify_iterate"),
                           kernels={"tracking": "_tracking_gaussian", "fwga": "_fwga_gaussian"})


def tracking_kernel():
    """The compiled Gaussian KKT-Tracking loop (built on first use), or ``None`` as :func:`star_kernel`."""
    return _iteration_kernel("tracking")


def fwga_kernel():
    """The compiled Gaussian FWGA loop (built on first use), or ``None`` as :func:`star_kernel`."""
    return _iteration_kernel("fwga")


def _iteration_kernel(name: str):
    if not compiled_enabled():
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
    :func:`allocopt.topk._iterative.fwga.solve` (pair terms, simplex projection, records), operation for operation.
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
