r"""Compiled (numba) run loop of DT-TS on Gaussian arms stopped by the Chernoff statistic, fixed confidence.

DT-TS (:class:`allocopt.algorithms.DTTS`, Wang, Yang, You 2022, Appendix C.2, Algorithm 4) solves, at every step of
every replication, the allocation problem of a posterior sample by 100 iterations of KKT-Tracking (Algorithm 3). The
compiled tracking kernel (:func:`allocopt.algorithms._compiled.gaussian_kkt_tracking`) does that in a few
microseconds; what the engine's numpy step loop adds around it (the Chernoff statistic, the posterior sample, its
top-k, the tracking arg max, and the Python and numpy calls of each step) cost as much again on Figure 1's
instance. :func:`run_dt_ts_rows` runs the same steps in one compiled loop and hands back only what the engine
records, so the records are bit-identical to the numpy loop's:

* **the same statistic and records** as the compiled loop of uniform sampling
  (:mod:`allocopt.algorithms._compiled_uniform`): :math:`Z_t` by the Chernoff kernel's row function
  (:func:`allocopt.algorithms._compiled._glr_row`) on the means ``sums / counts``, compared with
  :math:`\beta(t, \delta)` from a table filled by the threshold in numpy
  (:func:`~allocopt.algorithms._compiled_uniform.threshold_table`); a level crossed for the first time records
  :math:`t` and the empirical top-k, the sample cap records the open levels, not stopped (the row function
  :func:`allocopt.algorithms._compiled_loop.glr_check_row` that every loop stopped by the Chernoff statistic
  shares).
* **the same step.** The posterior sample :math:`\tilde\theta_a = S_a/N_a + \sqrt{\sigma_a^2/N_a}\,\Phi^{-1}(u_a)`
  (the quantiles :math:`\Phi^{-1}(u)` computed by ``scipy.special.ndtri`` in numpy when a row's uniforms are
  drawn, as :func:`allocopt.algorithms.statistics.posterior_sample` computes them); its top-k by the stable split
  (:func:`allocopt.algorithms._compiled._split_top_k`); a sample tied across the boundary, or a non-finite or
  negative allocation, keeps the previous allocation and counts a fallback; otherwise KKT-Tracking by the
  tracking kernel's lane function (:func:`allocopt.algorithms._compiled._kkt_tracking_lanes`, the operations of
  :func:`~allocopt.algorithms._compiled.gaussian_kkt_tracking`); then the arm of largest :math:`t\psi_a - N_a`,
  ties broken as :func:`allocopt._rng.random_candidate` with the step's last uniform
  (:func:`allocopt.algorithms._compiled._pick_tied`).
* **the same randomness.** K + 1 policy uniforms per step from each row's policy stream, read in order; rewards
  from the engine's :class:`~allocopt.algorithms.rewards.RewardStreams` buffers.

The loop keeps :data:`LANES` rows side by side: each step of the rows in the lanes solves their samples together
(the tracking kernel's chains of divisions overlap in the processor; a row's numbers are its own whatever its
lane). A row leaves the compiled code at the start of a step (more uniforms, a longer threshold table) or before
its pull (a reward buffer), in both cases before its state changes: the step is computed again, with the same
numbers, when the row comes back. :func:`allocopt.algorithms._compiled_loop.drive_rows` supplies what it needs.

The tests run the engine with this loop and with the numpy loop (``compiled_kernels(False)``) and compare every
record and the solver diagnostics.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from .._numba import compile_once
from . import _compiled, _compiled_loop
from ._compiled_loop import RUNNING, RowRecords, SolverRows, drive_rows, empty_records
from ._compiled_uniform import threshold_table

__all__ = ["run_dt_ts_rows", "drive_glr_rows", "LANES", "UNIFORM_STEPS"]

UNIFORM_STEPS = 256
"""Steps of policy uniforms (K + 1 each) drawn per refill of a row (changes speed, never values)."""
LANES = 4
"""Rows whose steps the loop computes side by side (changes speed, never values)."""

# the compiled row functions once _kernel() has run
_split_top_k = _compiled._split_top_k
_tracking_work = _compiled._tracking_work
_kkt_tracking_lanes = _compiled._kkt_tracking_lanes
_pick_tied = _compiled._pick_tied
glr_work = _compiled_loop.glr_work
glr_check_row = _compiled_loop.glr_check_row
pull_arm = _compiled_loop.pull_arm


def _dt_ts_rows(rows, k, max_samples, iterations, lanes, dispersion, counts, sums, t, selects, buffer, position,
                uniforms, quantiles, uniform_position, rates, done, times, recommendations, stopped, status, need, psi,
                fallbacks, calls):
    n_pending = rows.shape[0]
    n_arms = counts.shape[1]
    n_bottom = n_arms - k
    per_step = n_arms + 1
    glr = glr_work(n_arms, k)
    tracking = _tracking_work(lanes, k, n_bottom)
    best_values, best_arms, member = np.empty(k), np.empty(k, dtype=np.int64), np.empty(n_arms, dtype=np.bool_)
    lane_row = np.full(lanes, -1, dtype=np.int64)
    lane_theta, lane_psi = np.empty((lanes, n_arms)), np.empty((lanes, n_arms))
    lane_dispersion = np.empty((lanes, n_arms))
    for lane in range(lanes):
        lane_dispersion[lane, :] = dispersion
    lane_top, lane_bottom = np.empty((lanes, k), dtype=np.int64), np.empty((lanes, n_bottom), dtype=np.int64)
    lane_ok = np.zeros(lanes, dtype=np.bool_)
    solved = np.empty(lanes, dtype=np.int64)
    lag = np.empty(n_arms)
    arms = np.arange(n_arms)
    next_pending = 0
    while True:
        # 1-3 for each lane's row (a new row where the lane is free), then 1. the posterior sample and its top-k
        n_solved = 0
        n_active = 0
        for lane in range(lanes):
            while True:
                if lane_row[lane] < 0:
                    if next_pending >= n_pending:
                        break
                    lane_row[lane] = rows[next_pending]
                    next_pending += 1
                    status[lane_row[lane]] = RUNNING
                row = lane_row[lane]
                state = glr_check_row(row, k, max_samples, -1, dispersion, counts, sums, t, rates, done, times,
                                      recommendations, stopped, need, uniforms, uniform_position, per_step, glr)
                if state == RUNNING:
                    break
                status[row] = state
                lane_row[lane] = -1
            if lane_row[lane] < 0:
                continue
            n_active += 1
            row = lane_row[lane]
            first = uniform_position[row]
            for arm in range(n_arms):
                count = counts[row, arm]
                lane_theta[lane, arm] = (sums[row, arm] / count
                                         + np.sqrt(dispersion[arm] / count) * quantiles[row, first + arm])
            _split_top_k(lane_theta[lane], k, lane_top[lane], lane_bottom[lane], best_values, best_arms, member)
            lowest_top = np.inf
            for i in range(k):
                lowest_top = min(lowest_top, lane_theta[lane, lane_top[lane, i]])
            highest_bottom = -np.inf
            for j in range(n_bottom):
                highest_bottom = max(highest_bottom, lane_theta[lane, lane_bottom[lane, j]])
            lane_ok[lane] = lowest_top > highest_bottom  # a unique top-k
            if lane_ok[lane]:
                solved[n_solved] = lane
                n_solved += 1
        if n_active == 0:
            break
        # 2. psi_t by KKT-Tracking for the lanes whose sample has a unique top-k
        if n_solved:
            _kkt_tracking_lanes(lane_theta, lane_dispersion, lane_top, lane_bottom, solved, n_solved, iterations,
                                tracking, lane_psi)
        # 3. the arm whose count lags its target the most, and its reward
        for lane in range(lanes):
            row = lane_row[lane]
            if row < 0:
                continue
            fresh = lane_ok[lane]
            if fresh:
                for arm in range(n_arms):
                    value = lane_psi[lane, arm]
                    if not (np.isfinite(value) and value >= 0):
                        fresh = False
            target = lane_psi[lane] if fresh else psi[row]
            for arm in range(n_arms):
                lag[arm] = t[row] * target[arm] - counts[row, arm]
            chosen = _pick_tied(arms, lag, True, uniforms[row, uniform_position[row] + n_arms])
            if not pull_arm(row, chosen, buffer, position, sums, counts, t, selects, status, need):
                lane_row[lane] = -1
                continue
            if fresh:
                psi[row, :] = lane_psi[lane]
            else:
                fallbacks[row] += 1
            calls[row] += 1
            uniform_position[row] += per_step


# _compiled and _compiled_loop compile their row functions first, which the loop calls by their names
_COMPILED = compile_once(globals(), needs=(_compiled._kernels, _compiled_loop.compiled_row_functions),
                         shared=((_compiled, ("_split_top_k", "_tracking_work", "_kkt_tracking_lanes", "_pick_tied")),
                                 (_compiled_loop, _compiled_loop.ROW_FUNCTIONS)),
                         kernels={"rows": "_dt_ts_rows"})


def _kernel():
    return _COMPILED()["rows"]


def run_dt_ts_rows(k: int, dispersion: np.ndarray, iterations: int, checkpoints: np.ndarray, threshold,
                   max_samples: int, counts: np.ndarray, sums: np.ndarray, t: np.ndarray, rewards,
                   policy_generators) -> RowRecords:
    r"""Run every row of a batch of Gaussian runs of DT-TS with ``iterations`` KKT-Tracking iterations per step,
    from the engine's state after the initial pulls, until the Chernoff statistic exceeds the threshold at every
    level ``checkpoints`` or the sample cap; ``counts``, ``sums`` and ``t`` are updated in place.

    Parameters
    ----------
    k : int
    dispersion : ndarray, shape (K,)
        The arms' variances.
    iterations : int
        KKT-Tracking iterations per step (at least 1).
    checkpoints : ndarray, shape (C,)
        The confidence levels.
    threshold : callable
        :math:`\beta(t, \delta)`, elementwise over numpy arrays.
    max_samples, counts, sums, t, rewards, policy_generators
        The sample cap and the batch's state and streams, as every compiled run loop takes them
        (:mod:`allocopt.algorithms._compiled_loop`).

    Returns
    -------
    RowRecords
        With the diagnostics ``solver_fallbacks`` and ``solver_calls`` of each row.

    Examples
    --------
    >>> from allocopt import TopKProblem
    >>> from allocopt.algorithms import identify
    >>> from allocopt.algorithms._compiled import compiled_kernels
    >>> problem = TopKProblem([1.0, 0.6, 0.5, 0.0], k=2, variance=0.25)
    >>> fast = identify(problem, "dt-ts", delta=0.1, n_runs=2, rng=3)  # through run_dt_ts_rows
    >>> with compiled_kernels(False):  # the engine's numpy loop
    ...     slow = identify(problem, "dt-ts", delta=0.1, n_runs=2, rng=3)
    >>> bool(np.array_equal(fast.stopping_times, slow.stopping_times))
    True
    """
    kernel = _kernel()
    n_rows, n_arms = counts.shape
    records = empty_records(n_rows, checkpoints.shape[0], k)
    done = np.zeros((n_rows, checkpoints.shape[0]), dtype=np.bool_)
    dispersion = np.ascontiguousarray(dispersion, dtype=float)
    solver = SolverRows.start(n_rows, n_arms)  # DTTS.init_state: uniform before the first solve
    quantiles = np.empty((n_rows, UNIFORM_STEPS * (n_arms + 1)))

    def run(pending, uniforms, uniform_position, rates, status, need):
        kernel(pending, k, max_samples, int(iterations), LANES, dispersion, counts, sums, t, records.selects,
               rewards.buffer, rewards.position, uniforms, quantiles, uniform_position, rates, done, records.times,
               records.recommendations, records.stopped, status, need, solver.psi, solver.fallbacks, solver.calls)

    drive_glr_rows(run, threshold, checkpoints, t, quantiles, rewards, policy_generators)
    return records._replace(diagnostics=solver.diagnostics())


def drive_glr_rows(run, threshold, checkpoints: np.ndarray, t: np.ndarray, quantiles: np.ndarray, rewards,
                   policy_generators) -> None:
    """:func:`~allocopt.algorithms._compiled_loop.drive_rows` for a loop stopped by the Chernoff statistic whose
    rows read their uniforms and their normal quantiles (``quantiles``, shape (R, uniforms per refill), the
    ``scipy.special.ndtri`` of the uniforms, refilled with them): ``run`` is the loop's kernel call."""
    def normal_quantiles(rows, uniforms):
        quantiles[rows] = special.ndtri(uniforms[rows])

    drive_rows(run, threshold_table(threshold, checkpoints, int(t.max(initial=1)) + 1),
               lambda largest: threshold_table(threshold, checkpoints, largest), quantiles.shape[0],
               quantiles.shape[1], rewards, policy_generators, on_uniforms=normal_quantiles)
