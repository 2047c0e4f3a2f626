r"""Compiled (numba) kernels of the engine's Gaussian hot path, each the twin of a pure numpy function.

Two kernels loop over the replications of a batch (shape (R, K)) and do, row by row, exactly the floating-point
operations of their numpy twins, in the same order, so that they return bit-identical numbers:

* :func:`gaussian_glr` is the Gaussian branch of :func:`allocopt.algorithms.stopping.glr_statistic` (the
  Chernoff statistic, the empirical top-k and the pair attaining the minimum);
* :func:`gaussian_kkt_ts_arms` is the Gaussian branch of :meth:`allocopt.algorithms.KKTTS.select_batch` (the
  posterior sample, its top-k, the pair of minimal cost with the random tie-break, and the coin);
* :func:`gaussian_kkt_tracking` is the Gaussian branch of :func:`allocopt.topk._tracking.kkt_tracking_batch`
  (a fixed number of KKT-Tracking iterations, Wang, Yang, You 2022, Algorithm 3, on every row), the solver
  DT-TS calls at every step for every replication;
* :func:`gap_index_sets` is the numpy body of :func:`allocopt.algorithms.ugape.gap_indices` for a batch (UGapE's
  gap indices and the set :math:`J_t` of the k smallest), for every family (it reads only the bounds).

Why compiled: the numpy form builds a (R, k, K-k) grid and about forty (R, K) temporaries per step; with
K = 20 a row costs a few microseconds of memory traffic and call overhead, while the loops below touch each
number once (``benchmarks/engine_speed.py`` measures both in one run). The Gaussian family is the hot case (Wang, Yang,
You 2022, Section 5); the other families keep the numpy path, whose general pair kernel is shared with the
top-k layer.

The twins agree bit for bit because both evaluate, per arm, :math:`w_a = N_a/\sigma_a^2` and
:math:`v_a = 1/w_a`, and per pair :math:`0.5\,(\theta_i - \theta_j)^2 / (v_i + v_j)` with IEEE double
operations (no fast-math, so no reassociation or fused multiply-add), and both take the top-k of a row as the
first k entries of a stable sort by decreasing value: arm ``a`` is in the top-k when fewer than k arms have a
larger value or an equal value and a smaller index. A tie across the boundary then has gap 0 and cost 0, the
value the numpy twin assigns it explicitly. The tests compare the twins on many random states, with ties.

:func:`compiled_kernels` switches the kernels off (for instance to time the numpy twins); without numba the
numpy path runs.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._numba import AVAILABLE, compile_once, compiled_enabled, compiled_kernels

__all__ = ["AVAILABLE", "compiled_enabled", "compiled_kernels", "GaussianGLR", "gaussian_glr",
           "gaussian_kkt_ts_arms", "gaussian_kkt_tracking", "GapIndexSets", "gap_index_sets", "ugape_choice"]


# The compiled kernels, built on first use (numba is imported, and the machine code loaded from numba's cache or
# compiled, only when a Gaussian batch needs them). The row kernels call _split_top_k, _glr_row, _gap_index_row,
# _pick_tied, _ugape_choice_row, _row_minima, _tracking_work and _kkt_tracking_lanes by their global names: they
# are compiled first (the callers after their callees).
_kernels = compile_once(
    globals(),
    rebind=("_split_top_k", "_glr_row", "_gap_index_row", "_pick_tied", "_ugape_choice_row", "_row_minima",
            "_tracking_work", "_kkt_tracking_lanes"),
    kernels={"glr": "_glr_rows", "kkt_ts": "_kkt_ts_rows", "kkt_tracking": "_kkt_tracking_rows",
             "gap_indices": "_gap_index_rows", "ugape_choice": "_ugape_choice_rows"})


def _split_top_k(values, k, top, bottom, best_values, best_arms, member):
    """Write the top-k arms of one row of ``values`` into ``top`` and the others into ``bottom``, each in
    increasing arm order: the set of the first k entries of a stable sort by decreasing value.

    The k best (value, arm) seen so far are kept in decreasing order of value; a later arm enters only with a
    strictly larger value than the k-th, so among equal values the smaller arm index stays ahead, as in a stable
    sort. ``best_values``, ``best_arms`` (length k) and ``member`` (length K) are work arrays.
    """
    n_arms = values.shape[0]
    size = 0
    for arm in range(n_arms):
        value = values[arm]
        if size == k:
            if not value > best_values[k - 1]:
                continue
            position = k - 1
        else:
            position = size
            size += 1
        while position > 0 and best_values[position - 1] < value:
            best_values[position] = best_values[position - 1]
            best_arms[position] = best_arms[position - 1]
            position -= 1
        best_values[position] = value
        best_arms[position] = arm
    member[:] = False
    for position in range(k):
        member[best_arms[position]] = True
    n_top = 0
    n_bottom = 0
    for arm in range(n_arms):
        if member[arm]:
            top[n_top] = arm
            n_top += 1
        else:
            bottom[n_bottom] = arm
            n_bottom += 1


def _glr_row(counts, means, dispersion, k, top, bottom, inverse, best_values, best_arms, member, mean_bottom,
             inverse_bottom, cost):
    """The Gaussian Chernoff statistic of one run (``counts``, ``means`` of shape (K,)): writes its stable top-k and
    other arms into ``top`` and ``bottom`` and returns the value, the top arm and the bottom arm of the first pair
    attaining it in row-major order. The other arguments are work arrays."""
    n_arms = means.shape[0]
    n_bottom = n_arms - k
    for arm in range(n_arms):
        inverse[arm] = 1.0 / (counts[arm] / dispersion[arm])
    _split_top_k(means, k, top, bottom, best_values, best_arms, member)
    for j in range(n_bottom):
        mean_bottom[j] = means[bottom[j]]
        inverse_bottom[j] = inverse[bottom[j]]
    best = np.inf
    best_top = top[0]
    best_bottom = 0
    for i in range(k):
        arm_top = top[i]
        mean_top = means[arm_top]
        inverse_top = inverse[arm_top]
        for j in range(n_bottom):  # the stable split gives mean_top >= mean_bottom: a tie has gap 0, cost 0
            gap = mean_top - mean_bottom[j]
            cost[j] = 0.5 * (gap * gap) / (inverse_top + inverse_bottom[j])
        for j in range(n_bottom):  # the first minimum in row-major order, as numpy's argmin
            if cost[j] < best:
                best, best_top, best_bottom = cost[j], arm_top, j
    return best, best_top, bottom[best_bottom]


def _glr_rows(counts, means, dispersion, k, value, top, bottom, pair_top, pair_bottom):
    n_rows, n_arms = means.shape
    n_bottom = n_arms - k
    inverse = np.empty(n_arms)
    best_values, best_arms, member = np.empty(k), np.empty(k, dtype=np.int64), np.empty(n_arms, dtype=np.bool_)
    mean_bottom, inverse_bottom, cost = np.empty(n_bottom), np.empty(n_bottom), np.empty(n_bottom)
    for row in range(n_rows):
        value[row], pair_top[row], pair_bottom[row] = _glr_row(counts[row], means[row], dispersion, k, top[row],
                                                               bottom[row], inverse, best_values, best_arms, member,
                                                               mean_bottom, inverse_bottom, cost)


def _kkt_ts_rows(counts, sums, dispersion, k, normal_quantiles, tie_uniforms, coin_uniforms, arms):
    n_rows, n_arms = counts.shape
    n_bottom = n_arms - k
    n_pairs = k * n_bottom
    theta, inverse = np.empty(n_arms), np.empty(n_arms)
    top, bottom = np.empty(k, dtype=np.int64), np.empty(n_bottom, dtype=np.int64)
    best_values, best_arms, member = np.empty(k), np.empty(k, dtype=np.int64), np.empty(n_arms, dtype=np.bool_)
    theta_bottom, inverse_bottom, cost = np.empty(n_bottom), np.empty(n_bottom), np.empty(n_pairs)
    for row in range(n_rows):
        # 1. theta~ from the posterior, by inversion: sums/counts + sqrt(variance/counts) * ndtri(u)
        for arm in range(n_arms):
            count = counts[row, arm]
            theta[arm] = sums[row, arm] / count + np.sqrt(dispersion[arm] / count) * normal_quantiles[row, arm]
            inverse[arm] = 1.0 / (count / dispersion[arm])
        # 2. its top-k and the other arms
        _split_top_k(theta, k, top, bottom, best_values, best_arms, member)
        for j in range(n_bottom):
            theta_bottom[j] = theta[bottom[j]]
            inverse_bottom[j] = inverse[bottom[j]]
        # 3. the pair costs, and one of the minimal pairs uniformly at random (allocopt._rng.random_candidate)
        for i in range(k):
            theta_top, inverse_top = theta[top[i]], inverse[top[i]]
            for j in range(n_bottom):
                gap = theta_top - theta_bottom[j]
                cost[i * n_bottom + j] = 0.5 * (gap * gap) / (inverse_top + inverse_bottom[j])
        best = np.inf
        for pair in range(n_pairs):
            if cost[pair] < best:
                best = cost[pair]
        n_candidates = 0
        for pair in range(n_pairs):
            if cost[pair] == best:
                n_candidates += 1
        pick = min(int(tie_uniforms[row] * n_candidates), n_candidates - 1)
        chosen = 0
        for pair in range(n_pairs):
            if cost[pair] == best:
                if pick == 0:
                    chosen = pair
                    break
                pick -= 1
        # 4. pull the top arm with probability h = v_i / (v_i + v_j), else the other
        arm_top, arm_bottom = top[chosen // n_bottom], bottom[chosen % n_bottom]
        inverse_top, inverse_bottom_arm = inverse[arm_top], inverse[arm_bottom]
        h = inverse_top / (inverse_top + inverse_bottom_arm)
        arms[row] = arm_top if coin_uniforms[row] < h else arm_bottom


def _row_minima(cost, lane, i, n_bottom, row_best, row_arg, row_second):
    """The first minimum of row ``i`` of lane ``lane`` of ``cost`` (strictly smaller than +inf; column 0 when
    there is none) and the smallest value of the other columns (``row_second``, +inf when there is none)."""
    best = np.inf
    second = np.inf
    arg = 0
    for j in range(n_bottom):
        value = cost[lane, i, j]
        if value < best:
            second = best
            best, arg = value, j
        elif value < second:
            second = value
    row_best[lane, i] = best
    row_arg[lane, i] = arg
    row_second[lane, i] = second


TRACKING_LANES = 4
"""Rows that the compiled KKT-Tracking kernel iterates side by side (changes speed, never values)."""


def _kkt_tracking_rows(theta, dispersion, top, bottom, iterations, lanes, psi):
    # the operations of TrackingIterations (allocopt.topk._tracking) for Gaussian arms on the unnormalised
    # iterates u_t = t psi_t, in the same order: the pair costs 0.5 gap^2 / (1/w_i + 1/w_j) with w = u / sigma^2,
    # the first minimal pair in row-major order, pair_terms and sampling_function_top at the chosen pair only,
    # then u_i += h, u_j += 1 - h. The iterates are kept in top/bottom order (u_top, u_bottom).
    # Incremental: only arm i (row i of the cost grid) and arm j (column j) change, so only their costs are
    # recomputed (by the same operations, so every cost equals the numpy twin's bit for bit), and every cost can
    # only grow from one iteration to the next after the second (u_i and u_j grow, and IEEE division and
    # addition are monotone). Each row of the grid keeps its first minimum and the smallest value of its other
    # columns (a lower bound of them while they grow). A row other than i whose minimum was at column j keeps
    # it when the new cost there is below that bound; otherwise the row is "stale": its entry is the bound, a
    # lower bound of the whole row. The first minimal pair in row-major order is the first row of smallest
    # entry, rescanned (and the choice repeated) while that row is stale: a row whose exact minimum is at most
    # every other row's lower bound, ties to the smaller row, is the first minimal row.
    # Lanes: ``lanes`` rows are iterated side by side, phase by phase; each iteration of a row is a chain of
    # dependent divisions, and the chains of different rows overlap in the processor. Each row's operations are
    # those of the row alone, in the same order.
    n_rows = theta.shape[0]
    work = _tracking_work(lanes, top.shape[1], bottom.shape[1])
    rows = np.empty(lanes, dtype=np.int64)
    for first_row in range(0, n_rows, lanes):
        n_lanes = min(lanes, n_rows - first_row)
        for lane in range(n_lanes):
            rows[lane] = first_row + lane
        _kkt_tracking_lanes(theta, dispersion, top, bottom, rows, n_lanes, iterations, work, psi)


def _tracking_work(lanes, k, n_bottom):
    """The work arrays of :func:`_kkt_tracking_lanes` for ``lanes`` rows side by side."""
    return (np.empty((lanes, k, n_bottom)), np.empty((lanes, k, n_bottom)), np.empty((lanes, k)),
            np.empty((lanes, k)), np.empty((lanes, k), dtype=np.int64), np.zeros((lanes, k), dtype=np.bool_),
            np.empty((lanes, k)), np.empty((lanes, n_bottom)), np.empty((lanes, k)), np.empty((lanes, n_bottom)),
            np.empty((lanes, k)), np.empty((lanes, n_bottom)), np.empty((lanes, k)), np.empty((lanes, n_bottom)),
            np.empty(lanes, dtype=np.int64), np.empty(lanes, dtype=np.int64), np.empty(lanes))


def _kkt_tracking_lanes(theta, dispersion, top, bottom, rows, n_lanes, iterations, work, psi):
    """KKT-Tracking on the rows ``rows[:n_lanes]`` of ``theta``, ``dispersion``, ``top``, ``bottom``, side by side
    (lane ``l`` runs row ``rows[l]``), into the same rows of ``psi``; ``work`` is :func:`_tracking_work`'s."""
    n_arms = theta.shape[1]
    k, n_bottom = top.shape[1], bottom.shape[1]
    (half_square, cost, row_best, row_second, row_arg, stale, u_top, u_bottom, variance_top, variance_bottom,
     inverse_top, inverse_bottom, precision_top, precision_bottom, chosen_top, chosen_bottom, h) = work
    # half_square: 0.5 * (gap * gap), the same at every iteration; precision_*: 1 / sigma^2, as pair_terms' weights
    for lane in range(n_lanes):
        row = rows[lane]
        for i in range(k):
            variance_top[lane, i] = dispersion[row, top[row, i]]
            precision_top[lane, i] = 1.0 / variance_top[lane, i]
            u_top[lane, i] = 1.0 / n_arms
            for j in range(n_bottom):
                gap = theta[row, top[row, i]] - theta[row, bottom[row, j]]
                half_square[lane, i, j] = 0.5 * (gap * gap)
        for j in range(n_bottom):
            variance_bottom[lane, j] = dispersion[row, bottom[row, j]]
            precision_bottom[lane, j] = 1.0 / variance_bottom[lane, j]
            u_bottom[lane, j] = 1.0 / n_arms
    for t in range(1, iterations + 1):
        if t <= 2:  # psi_0 (t = 1), and u_1 after the reset of u_0 to 0 (t = 2): every cost
            for lane in range(n_lanes):
                for i in range(k):
                    inverse_top[lane, i] = 1.0 / (u_top[lane, i] / variance_top[lane, i])
                for j in range(n_bottom):
                    inverse_bottom[lane, j] = 1.0 / (u_bottom[lane, j] / variance_bottom[lane, j])
                for i in range(k):
                    inverse_i = inverse_top[lane, i]
                    for j in range(n_bottom):
                        cost[lane, i, j] = half_square[lane, i, j] / (inverse_i + inverse_bottom[lane, j])
                    _row_minima(cost, lane, i, n_bottom, row_best, row_arg, row_second)
                    stale[lane, i] = False
        for lane in range(n_lanes):  # the first minimal pair
            while True:
                best = np.inf
                best_i = 0
                for i in range(k):
                    if row_best[lane, i] < best:
                        best, best_i = row_best[lane, i], i
                if not stale[lane, best_i]:
                    break
                _row_minima(cost, lane, best_i, n_bottom, row_best, row_arg, row_second)
                stale[lane, best_i] = False
            chosen_top[lane] = best_i
            chosen_bottom[lane] = row_arg[lane, best_i]
        for lane in range(n_lanes):
            row = rows[lane]
            best_i, best_j = chosen_top[lane], chosen_bottom[lane]
            # pair_terms at the chosen pair, with w = u * (1 / sigma^2) (Gaussian unit_confidence_pair)
            psi_i, psi_j = u_top[lane, best_i], u_bottom[lane, best_j]
            inverse_i, inverse_j = precision_top[lane, best_i], precision_bottom[lane, best_j]
            w_i, w_j = psi_i * inverse_i, psi_j * inverse_j
            total = w_i + w_j
            if total <= 0:
                share_i = 0.5
                share_j = 0.5
            else:
                share_i = w_i / total
                share_j = w_j / total
            gap = theta[row, top[row, best_i]] - theta[row, bottom[row, best_j]]
            spread_i, spread_j = share_j * gap, -share_i * gap
            divergence_i = 0.5 * spread_i * spread_i
            divergence_j = 0.5 * spread_j * spread_j
            pair_cost = w_i * divergence_i + w_j * divergence_j
            # sampling_function_top: psi_i dC/dpsi_i / C, its limits at zero cost, clipped to [0, 1]
            if pair_cost > 0:
                h_top = psi_i * (divergence_i * inverse_i) / pair_cost
            elif psi_i > 0:
                h_top = 0.5 if psi_j > 0 else 0.0
            else:
                h_top = 1.0 if psi_j > 0 else 0.5
            h[lane] = min(max(h_top, 0.0), 1.0)
        if t == 1:  # u_0 = 0: psi_0 only chose the first pair
            u_top[:] = 0.0
            u_bottom[:] = 0.0
        for lane in range(n_lanes):
            u_top[lane, chosen_top[lane]] += h[lane]
            u_bottom[lane, chosen_bottom[lane]] += 1.0 - h[lane]
        if t >= 2:  # the costs of row best_i and column best_j (t = 1: all of them, at the next iteration)
            for lane in range(n_lanes):
                best_i, best_j = chosen_top[lane], chosen_bottom[lane]
                inverse_top[lane, best_i] = 1.0 / (u_top[lane, best_i] / variance_top[lane, best_i])
                inverse_bottom[lane, best_j] = 1.0 / (u_bottom[lane, best_j] / variance_bottom[lane, best_j])
            for lane in range(n_lanes):
                best_i = chosen_top[lane]
                inverse_i = inverse_top[lane, best_i]
                for j in range(n_bottom):
                    cost[lane, best_i, j] = half_square[lane, best_i, j] / (inverse_i + inverse_bottom[lane, j])
            for lane in range(n_lanes):
                _row_minima(cost, lane, chosen_top[lane], n_bottom, row_best, row_arg, row_second)
                stale[lane, chosen_top[lane]] = False
            for lane in range(n_lanes):
                best_i, best_j = chosen_top[lane], chosen_bottom[lane]
                inverse_j = inverse_bottom[lane, best_j]
                for i in range(k):
                    if i != best_i:
                        value = half_square[lane, i, best_j] / (inverse_top[lane, i] + inverse_j)
                        cost[lane, i, best_j] = value
                        if not stale[lane, i] and row_arg[lane, i] == best_j:
                            if value < row_second[lane, i]:  # still the row's unique, so first, minimum
                                row_best[lane, i] = value
                            else:
                                stale[lane, i] = True
                                row_best[lane, i] = row_second[lane, i]
    # psi_N = u_N / N (psi_0, uniform, when no iteration ran)
    norm = iterations if iterations > 0 else 1
    for lane in range(n_lanes):
        row = rows[lane]
        for i in range(k):
            psi[row, top[row, i]] = u_top[lane, i] / norm
        for j in range(n_bottom):
            psi[row, bottom[row, j]] = u_bottom[lane, j] / norm


def _gap_index_row(upper, lower, k, index, chosen, others, best_values, best_arms, member, top_scratch,
                   bottom_scratch, negated):
    """UGapE's gap indices of one run (bounds of shape (K,)) into ``index``, J_t into ``chosen`` and the other arms
    into ``others``; returns B_{J_t}. The other arguments are work arrays."""
    # B_a = (k-th largest U among the other arms) - L_a: the (k+1)-th largest U for the arms of the stable
    # top-k of U (the first k of a stable sort by decreasing U, as np.argsort(-U, kind="stable")), the k-th
    # otherwise; J_t = the k smallest B_a, ties to the smaller arm (the stable top-k of -B)
    n_arms = upper.shape[0]
    _split_top_k(upper, k + 1, top_scratch, bottom_scratch, best_values, best_arms, member)
    kth, next_value = best_values[k - 1], best_values[k]
    member[:] = False
    for position in range(k):
        member[best_arms[position]] = True
    for arm in range(n_arms):
        index[arm] = (next_value if member[arm] else kth) - lower[arm]
        negated[arm] = -index[arm]
    _split_top_k(negated, k, chosen, others, best_values, best_arms, member)
    largest = index[chosen[0]]
    for position in range(1, k):
        if index[chosen[position]] > largest:
            largest = index[chosen[position]]
    return largest


def _gap_index_rows(upper, lower, k, index, chosen, others, chosen_index):
    n_rows, n_arms = upper.shape
    best_values, best_arms = np.empty(k + 1), np.empty(k + 1, dtype=np.int64)
    member = np.empty(n_arms, dtype=np.bool_)
    top_scratch, bottom_scratch = np.empty(k + 1, dtype=np.int64), np.empty(n_arms, dtype=np.int64)
    negated = np.empty(n_arms)
    for row in range(n_rows):
        chosen_index[row] = _gap_index_row(upper[row], lower[row], k, index[row], chosen[row], others[row],
                                           best_values, best_arms, member, top_scratch, bottom_scratch, negated)


def _pick_tied(arms, values, largest, uniform):
    """The arm of ``arms`` of largest (``largest``) or smallest value; ties as allocopt._rng.random_candidate:
    the floor(u c)-th of the c tied arms, in the order of ``arms``."""
    extreme = values[arms[0]]
    for position in range(1, arms.shape[0]):
        extreme = max(extreme, values[arms[position]]) if largest else min(extreme, values[arms[position]])
    count = 0
    for position in range(arms.shape[0]):
        count += values[arms[position]] == extreme
    pick = min(int(uniform * count), max(count - 1, 0))
    for position in range(arms.shape[0]):
        if values[arms[position]] == extreme:
            if pick == 0:
                return arms[position]
            pick -= 1
    return arms[0]


def _ugape_choice_row(others, upper, chosen, lower, radius, uniform_u, uniform_l, uniform_pair):
    """UGapE's arm of one run: u_t = argmax of U over the others, l_t = argmin of L over J_t, then the one of larger
    radius (ties: l_t first, u_t second, as the numpy pick of the pair (l_t, u_t))."""
    u_arm = _pick_tied(others, upper, True, uniform_u)
    l_arm = _pick_tied(chosen, lower, False, uniform_l)
    radius_l, radius_u = radius[l_arm], radius[u_arm]
    if radius_l == radius_u:
        return l_arm if int(uniform_pair * 2) == 0 else u_arm
    return l_arm if radius_l > radius_u else u_arm


def _ugape_choice_rows(others, upper, chosen, lower, radius, uniforms, arms):
    for row in range(others.shape[0]):
        arms[row] = _ugape_choice_row(others[row], upper[row], chosen[row], lower[row], radius[row], uniforms[row, 0],
                                      uniforms[row, 1], uniforms[row, 2])


class GaussianGLR(NamedTuple):
    """The fields of :class:`allocopt.algorithms.stopping.GLRStatistic`, from the compiled kernel."""

    value: np.ndarray
    top: np.ndarray
    bottom: np.ndarray
    pair_top: np.ndarray
    pair_bottom: np.ndarray


def gaussian_glr(dispersion: np.ndarray, counts: np.ndarray, means: np.ndarray, k: int) -> GaussianGLR:
    r"""The Gaussian Chernoff statistic of a batch (``counts``, ``means`` of shape (R, K)), compiled.

    Twin of the numpy branch of :func:`allocopt.algorithms.stopping.glr_statistic` (same numbers, bit for bit).

    Examples
    --------
    Two arms of variance 1 pulled 4 and 2 times with means 1 and 0: :math:`Z = 1/(2 (1/4 + 1/2)) = 2/3`.

    >>> glr = gaussian_glr(np.ones(2), np.array([[4, 2]]), np.array([[1.0, 0.0]]), 1)
    >>> round(float(glr.value[0]), 12), glr.top.tolist(), glr.bottom.tolist()
    (0.666666666667, [[0]], [[1]])
    """
    n_rows, n_arms = means.shape
    value = np.empty(n_rows)
    top = np.empty((n_rows, k), dtype=np.int64)
    bottom = np.empty((n_rows, n_arms - k), dtype=np.int64)
    pair_top = np.empty(n_rows, dtype=np.int64)
    pair_bottom = np.empty(n_rows, dtype=np.int64)
    _kernels()["glr"](counts, np.asarray(means, dtype=float), np.asarray(dispersion, dtype=float), k, value, top,
                      bottom, pair_top, pair_bottom)
    return GaussianGLR(value, top, bottom, pair_top, pair_bottom)


def gaussian_kkt_ts_arms(dispersion: np.ndarray, counts: np.ndarray, sums: np.ndarray, k: int,
                         normal_quantiles: np.ndarray, tie_uniforms: np.ndarray,
                         coin_uniforms: np.ndarray) -> np.ndarray:
    r"""KKT-TS's arms for a batch of Gaussian runs, compiled (twin of the numpy branch of
    :meth:`allocopt.algorithms.KKTTS.select_batch`).

    ``normal_quantiles`` are :math:`\Phi^{-1}(u)` of the step's K posterior uniforms (shape (R, K)); the
    posterior sample is ``sums/counts + sqrt(dispersion/counts) * normal_quantiles``.

    Examples
    --------
    Arm 0 is far ahead of arms 1 and 2 (k = 1); the pair (0, 1) is closest and, with equal counts and
    variances, :math:`h = 1/2`: a coin of 0.3 pulls arm 0 and one of 0.7 arm 1.

    >>> counts, sums = np.array([[10, 10, 10]] * 2), np.array([[10.0, 5.0, 0.0]] * 2)
    >>> gaussian_kkt_ts_arms(np.full(3, 0.25), counts, sums, 1, np.zeros((2, 3)), np.full(2, 0.5),
    ...                      np.array([0.3, 0.7])).tolist()
    [0, 1]
    """
    arms = np.empty(counts.shape[0], dtype=np.int64)
    _kernels()["kkt_ts"](counts, np.asarray(sums, dtype=float), np.asarray(dispersion, dtype=float), k,
                         normal_quantiles, np.ascontiguousarray(tie_uniforms), np.ascontiguousarray(coin_uniforms),
                         arms)
    return arms


def gaussian_kkt_tracking(theta: np.ndarray, dispersion: np.ndarray, top: np.ndarray, bottom: np.ndarray,
                          iterations: int) -> np.ndarray:
    r""":math:`\psi_N` after ``iterations`` iterations of KKT-Tracking (Wang, Yang, You 2022, Algorithm 3) on
    every row of ``theta`` (shape (R, K)), Gaussian arms of variances ``dispersion`` (shape (K,) or (R, K)),
    compiled.

    Twin of :func:`allocopt.topk._tracking.kkt_tracking_batch` for the Gaussian family (same numbers, bit for
    bit): at iteration :math:`t` the pair :math:`(i_t, j_t)` of minimal
    :math:`C_{ij} = (\theta_i - \theta_j)^2 / (2(\sigma_i^2/\psi_i + \sigma_j^2/\psi_j))` (the first in
    row-major order over ``top`` x ``bottom``), then :math:`\psi_t = \frac{t-1}{t}\psi_{t-1} +
    \frac{1}{t}(h_{i;j} e_i + h_{j;i} e_j)` with :math:`h_{i;j} = \psi_i \partial_{\psi_i} C_{ij} / C_{ij}`,
    run in the unnormalised form :math:`u_t = t\,\psi_t = u_{t-1} + h_{i;j} e_i + h_{j;i} e_j` of the numpy twin
    (:math:`C` is 1-homogeneous and :math:`h` 0-homogeneous, so the pairs and :math:`h` are those of the
    normalised form in exact arithmetic): only the :math:`K - 1` pair costs that touch arms :math:`i` and
    :math:`j` are recomputed at each iteration, and each row of the cost grid keeps its first minimum.

    Examples
    --------
    Two arms of equal variance: the optimal allocation is (1/2, 1/2), and one iteration from the uniform
    allocation already reaches it (:math:`h = 1/2`).

    >>> psi = gaussian_kkt_tracking(np.array([[1.0, 0.0]]), np.ones(2), np.array([[0]]), np.array([[1]]), 1)
    >>> psi.tolist()
    [[0.5, 0.5]]
    """
    theta = np.ascontiguousarray(theta, dtype=float)
    psi = np.empty(theta.shape)
    dispersion = np.ascontiguousarray(np.broadcast_to(np.asarray(dispersion, dtype=float), theta.shape))
    _kernels()["kkt_tracking"](theta, dispersion, np.ascontiguousarray(top, dtype=np.int64),
                               np.ascontiguousarray(bottom, dtype=np.int64), int(iterations), TRACKING_LANES, psi)
    return psi


class GapIndexSets(NamedTuple):
    """UGapE's gap indices :math:`B_a`, the set :math:`J_t`, the other arms and :math:`B_{J_t}` of a batch."""

    gap_index: np.ndarray
    chosen: np.ndarray
    others: np.ndarray
    chosen_index: np.ndarray


def gap_index_sets(upper: np.ndarray, lower: np.ndarray, k: int) -> GapIndexSets:
    r"""UGapE's gap indices of a batch of runs (bounds ``upper``, ``lower`` of shape (R, K)), compiled.

    :math:`B_a = \max^{(k)}_{i \ne a} U_i - L_a`; :math:`J_t` the k arms of smallest :math:`B_a` (ties to the
    smaller arm) in increasing arm order, the other arms in increasing order, and
    :math:`B_{J_t} = \max_{a \in J_t} B_a` (Gabillon, Ghavamzadeh, Lazaric 2012). Twin of the numpy body of
    :func:`allocopt.algorithms.ugape.gap_indices` (same numbers, bit for bit).

    Examples
    --------
    Three arms, k = 1: :math:`U = (3, 2, 1)`, :math:`L = (1, 0, -1)`; arm 0 sees the second largest U (2),
    the others the largest (3): :math:`B = (1, 3, 4)`, so :math:`J_t = \{0\}`.

    >>> sets = gap_index_sets(np.array([[3.0, 2.0, 1.0]]), np.array([[1.0, 0.0, -1.0]]), 1)
    >>> sets.gap_index.tolist(), sets.chosen.tolist(), sets.others.tolist(), sets.chosen_index.tolist()
    ([[1.0, 3.0, 4.0]], [[0]], [[1, 2]], [1.0])
    """
    upper = np.ascontiguousarray(upper, dtype=float)
    n_rows, n_arms = upper.shape
    index = np.empty((n_rows, n_arms))
    chosen = np.empty((n_rows, k), dtype=np.int64)
    others = np.empty((n_rows, n_arms - k), dtype=np.int64)
    chosen_index = np.empty(n_rows)
    _kernels()["gap_indices"](upper, np.ascontiguousarray(lower, dtype=float), k, index, chosen, others,
                              chosen_index)
    return GapIndexSets(index, chosen, others, chosen_index)


def ugape_choice(others: np.ndarray, upper: np.ndarray, chosen: np.ndarray, lower: np.ndarray, radius: np.ndarray,
                 uniforms: np.ndarray) -> np.ndarray:
    r"""UGapE's arm of a batch: :math:`u_t = \arg\max_{a \notin J_t} U_a`, :math:`l_t = \arg\min_{a \in J_t} L_a`,
    then the one of the two with the larger radius :math:`\beta` (Gabillon, Ghavamzadeh, Lazaric 2012), compiled.

    Twin of the numpy body of :meth:`allocopt.algorithms.UGapE.select_batch` (three calls of
    :func:`allocopt.algorithms.lucb._pick`: ties broken by :func:`allocopt._rng.random_candidate` with
    ``uniforms[:, 0]``, ``uniforms[:, 1]`` and ``uniforms[:, 2]``; same arms).

    Examples
    --------
    Arms 0, 1 in :math:`J_t`; :math:`U` over the others (2, 3) is largest at arm 3, :math:`L` over :math:`J_t`
    smallest at arm 1, and arm 3's radius is the larger:

    >>> ugape_choice(np.array([[2, 3]]), np.array([[0.0, 0.0, 0.4, 0.5]]), np.array([[0, 1]]),
    ...              np.array([[0.3, 0.2, 0.0, 0.0]]), np.array([[0.1, 0.1, 0.1, 0.2]]),
    ...              np.array([[0.5, 0.5, 0.5]])).tolist()
    [3]
    """
    arms = np.empty(others.shape[0], dtype=np.int64)
    _kernels()["ugape_choice"](np.ascontiguousarray(others, dtype=np.int64), np.ascontiguousarray(upper, dtype=float),
                               np.ascontiguousarray(chosen, dtype=np.int64), np.ascontiguousarray(lower, dtype=float),
                               np.ascontiguousarray(radius, dtype=float), np.ascontiguousarray(uniforms, dtype=float),
                               arms)
    return arms
