r"""Compiled (numba) run loop of Track-and-Stop on Gaussian arms: D-tracking, the exact solver at every step, stopped
by the Chernoff statistic, fixed confidence.

Track-and-Stop (:class:`allocopt.algorithms.TrackAndStop`; Garivier and Kaufmann 2016, with the top-k allocation of
Wang, Yang, You 2022) solves the allocation problem at the empirical means at every step of every replication. In
the engine's numpy step loop that is one call of :func:`allocopt.solve_topk_batch` on the active rows (its compiled
double star of Theorem 3.4 and the certificate), then D-tracking in numpy: on Figure 1's instance about five CPU
microseconds per replication-step, mostly the numpy and Python calls around the arithmetic.
:func:`run_track_and_stop_rows` runs the same steps replication by replication in one compiled loop and hands back
only what the engine records, so the records are bit-identical to the numpy loop's:

* **the same statistic and records** as the compiled loops of uniform sampling, DT-TS and BTS
  (:func:`allocopt.algorithms._compiled_loop.glr_check_row`).
* **the same allocation.** The means ``sums / counts`` in :func:`~allocopt.solve_topk_batch`'s order (stable,
  decreasing); a row whose k-th and (k+1)-th largest means tie (or with a mean that is not finite) is an invalid
  instance there, so the rule keeps its previous allocation and counts a fallback. Otherwise the double star of
  the sorted row by the batch's own compiled row kernel (:func:`allocopt.topk._compiled._star_rows`, the kernel of
  :func:`~allocopt.topk._batch_gaussian.gaussian_double_star`, with the batch's arguments: no start, the same
  Newton limit and checks), its certified gap by the certificate's own formula
  (:func:`allocopt.topk.certificate.scalar_certified_gap`) and the batch's acceptance (gap at most ``tol`` times
  :math:`\Gamma(\psi)`; an accepted but uncertified double star is a fallback, as the batch reports it
  ``"not_certified"``); the allocation in arm order, checked finite and nonnegative and divided by its sum taken
  as numpy's ``sum`` takes it (:func:`allocopt.algorithms._compiled_bts.numpy_sum`), as
  :func:`~allocopt.algorithms.track_and_stop.solve_allocations` normalises it.
* **a hand-back where the double star is not accepted.** The batch then solves the row on the forests its active
  set pivots to, or one by one: that row leaves the compiled code before its state changes (status
  :data:`NEED_SOLVE`), :func:`run_track_and_stop_rows` solves all such rows with
  :func:`~allocopt.algorithms.track_and_stop.solve_allocations` itself (the numpy loop's call; its rows do not
  depend on the other rows of the batch) and the row resumes its step with that answer. On Figure 1's instance
  about one step in a thousand and a half is handed back.
* **the same tracking.** With :math:`U_t = \{a : N_a < \sqrt t - K/2\}`, the least-pulled arm of :math:`U_t` if it
  is not empty, else the arm of largest :math:`t\hat\psi_a - N_a`, ties broken as
  :func:`allocopt._rng.random_candidate` with the step's uniform (:func:`allocopt.algorithms._compiled._pick_tied`).
* **the same randomness.** One policy uniform per step from each row's policy stream, read in order; rewards from
  the engine's :class:`~allocopt.algorithms.rewards.RewardStreams` buffers.

A row also leaves the compiled code at the start of a step (more uniforms, a longer threshold table) or before its
pull (a reward buffer), before its state changes; :func:`allocopt.algorithms._compiled_loop.drive_rows` supplies
what it needs and the step is computed again, with the same numbers, when the row comes back.

The tests run the engine with this loop and with the numpy loop (``compiled_kernels(False)``) and compare every
record and the solver diagnostics.
"""

from __future__ import annotations

import numpy as np

from ..topk import kernels as _topk_kernels
from ..topk import certificate as _certificate
from ..topk.certificate import ROUNDING_ALLOWANCE
from .._numba import compile_once
from ..topk.kernels import FEASIBILITY as _FEASIBILITY, NEGATIVE_MULTIPLIER as _NEGATIVE_MULTIPLIER
from ..topk.kernels import NO_START as _NO_START, MAX_NEWTON
from . import _compiled, _compiled_bts, _compiled_loop
from ._compiled_loop import RUNNING, RowRecords, SolverRows, drive_rows, empty_records
from ._compiled_uniform import threshold_table

__all__ = ["run_track_and_stop_rows", "NEED_SOLVE", "UNIFORM_STEPS"]

UNIFORM_STEPS = 4096
"""Policy uniforms (one per step) drawn per refill of a row (changes speed, never values)."""
NEED_SOLVE = 6
"""Status of a row whose double star is not accepted: its allocation is computed by the numpy solver (after the
statuses of :mod:`allocopt.algorithms._compiled_loop`)."""
SOLVED, FALLBACK, HAND_BACK = range(3)

# the compiled row functions once _kernel() has run
glr_work = _compiled_loop.glr_work
glr_check_row = _compiled_loop.glr_check_row
pull_arm = _compiled_loop.pull_arm
numpy_sum = _compiled_bts.numpy_sum
_pick_tied = _compiled._pick_tied
_star_rows = _topk_kernels.gaussian_star_rows
scalar_certified_gap = _certificate.scalar_certified_gap


def _exact_allocation(means, dispersion, k, tol, order, work_theta, work_variance, star_psi, mu, value, bound,
                      stationarity, complementarity, accepted, out):
    """``solve_topk_batch``'s answer for one row of Gaussian means, as :func:`solve_allocations` turns it into an
    allocation: :data:`SOLVED` (``out`` the normalised allocation in arm order), :data:`FALLBACK` (the row is not
    ``ok``: an invalid instance, an uncertified double star, or a non-finite or negative allocation) or
    :data:`HAND_BACK` (the double star is not accepted: the batch solves the row otherwise)."""
    n_arms = means.shape[0]
    for arm in range(n_arms):
        if not (means[arm] > -np.inf and means[arm] < np.inf):  # outside the family's domain
            return FALLBACK
    # argsort(-means, kind="stable"): insertion sort, equal means keep the arm order
    for arm in range(n_arms):
        position = arm
        while position > 0 and means[order[position - 1]] < means[arm]:
            order[position] = order[position - 1]
            position -= 1
        order[position] = arm
    if not means[order[k - 1]] > means[order[k]]:  # no unique top-k set
        return FALLBACK
    for position in range(n_arms):
        work_theta[0, position] = means[order[position]]
        work_variance[0, position] = dispersion[order[position]]
    _star_rows(work_theta, work_variance, k, _NO_START, False, MAX_NEWTON, _FEASIBILITY, _NEGATIVE_MULTIPLIER,
               star_psi, mu, value, bound, stationarity, complementarity, accepted)
    if not accepted[0]:
        return HAND_BACK
    if not scalar_certified_gap(bound[0], value[0], ROUNDING_ALLOWANCE, 1) <= tol * value[0]:
        return FALLBACK
    for position in range(n_arms):
        psi = star_psi[0, position]
        if not (np.isfinite(psi) and psi >= 0):
            return FALLBACK
        out[order[position]] = psi
    total = numpy_sum(out, 0, n_arms)
    for arm in range(n_arms):
        out[arm] = out[arm] / total
    return SOLVED


def _track_and_stop_rows(rows, k, max_samples, tol, dispersion, counts, sums, t, selects, buffer, position, uniforms,
                         uniform_position, rates, done, times, recommendations, stopped, status, need, psi, fallbacks,
                         calls, handed, handed_ok, handed_psi):
    n_arms = counts.shape[1]
    glr = glr_work(n_arms, k)
    means, target, lag = np.empty(n_arms), np.empty(n_arms), np.empty(n_arms)
    order, forced = np.empty(n_arms, dtype=np.int64), np.empty(n_arms, dtype=np.int64)
    work_theta, work_variance, star_psi = np.empty((1, n_arms)), np.empty((1, n_arms)), np.empty((1, n_arms))
    mu = np.empty((1, n_arms - 1))
    value, bound, stationarity, complementarity = np.empty(1), np.empty(1), np.empty(1), np.empty(1)
    accepted = np.empty(1, dtype=np.bool_)
    arms = np.arange(n_arms)
    half_arms = n_arms / 2
    for row in rows:
        status[row] = RUNNING
        while True:
            # 1-3. the Chernoff statistic, the records, done or capped
            state = glr_check_row(row, k, max_samples, -1, dispersion, counts, sums, t, rates, done, times,
                                  recommendations, stopped, need, uniforms, uniform_position, 1, glr)
            if state != RUNNING:
                status[row] = state
                break
            # 4. the allocation at the empirical means (or the numpy solver's, after a hand-back)
            if handed[row]:
                fresh = handed_ok[row]
                for arm in range(n_arms):
                    target[arm] = handed_psi[row, arm]
            else:
                for arm in range(n_arms):
                    means[arm] = sums[row, arm] / counts[row, arm]
                verdict = _exact_allocation(means, dispersion, k, tol, order, work_theta, work_variance, star_psi,
                                            mu, value, bound, stationarity, complementarity, accepted, target)
                if verdict == HAND_BACK:
                    status[row] = NEED_SOLVE
                    break
                fresh = verdict == SOLVED
            if not fresh:
                for arm in range(n_arms):
                    target[arm] = psi[row, arm]
            # 5. D-tracking: a least-pulled under-sampled arm, else the largest t psi_a - N_a
            n_forced = 0
            floor = np.sqrt(t[row]) - half_arms
            for arm in range(n_arms):
                if counts[row, arm] < floor:
                    forced[n_forced] = arm
                    n_forced += 1
            uniform = uniforms[row, uniform_position[row]]
            if n_forced:
                chosen = _pick_tied(forced[:n_forced], counts[row], False, uniform)
            else:
                for arm in range(n_arms):
                    lag[arm] = t[row] * target[arm] - counts[row, arm]
                chosen = _pick_tied(arms, lag, True, uniform)
            if not pull_arm(row, chosen, buffer, position, sums, counts, t, selects, status, need):
                break
            if fresh:
                psi[row, :] = target
            else:
                fallbacks[row] += 1
            calls[row] += 1
            handed[row] = False
            uniform_position[row] += 1


def _bind_star_kernel() -> None:
    """The batch solver's compiled double-star kernel under the name the loop calls it by."""
    globals()["_star_rows"] = _topk_kernels.gaussian_star_rows_kernel()


# the row functions of _compiled_loop (and, through it, of _compiled), _compiled_bts's numpy_sum and the batch
# solver's double star are compiled first: the loop calls them by their names
_COMPILED = compile_once(globals(), needs=(_compiled_loop.compiled_row_functions, _compiled_bts._kernel,
                                           _bind_star_kernel),
                         shared=((_compiled_loop, _compiled_loop.ROW_FUNCTIONS), (_compiled, ("_pick_tied",)),
                                 (_compiled_bts, ("numpy_sum",))),
                         rebind=("scalar_certified_gap", "_exact_allocation"),
                         kernels={"rows": "_track_and_stop_rows"})


def _kernel():
    return _COMPILED()["rows"]


def run_track_and_stop_rows(context, tol: float, checkpoints: np.ndarray, threshold, max_samples: int,
                            counts: np.ndarray, sums: np.ndarray, t: np.ndarray, rewards,
                            policy_generators) -> RowRecords:
    r"""Run every row of a batch of Gaussian runs of Track-and-Stop (D-tracking, the exact solver with relative gap
    ``tol`` at every step), from the engine's state after the initial pulls, until the Chernoff statistic exceeds
    the threshold at every level ``checkpoints`` or the sample cap; ``counts``, ``sums`` and ``t`` are updated in
    place.

    Parameters
    ----------
    context : RuleContext
        K, k, the Gaussian family and the arms' variances (``context.dispersion``, shape (K,)).
    tol : float
        The exact solver's certified relative gap (``solve_topk_batch``'s ``tol``).
    checkpoints, threshold
        As for :func:`~allocopt.algorithms._compiled_dt_ts.run_dt_ts_rows`.
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
    >>> fast = identify(problem, "track-and-stop", delta=0.1, n_runs=3, rng=3)  # through run_track_and_stop_rows
    >>> with compiled_kernels(False):  # the engine's numpy loop
    ...     slow = identify(problem, "track-and-stop", delta=0.1, n_runs=3, rng=3)
    >>> bool(np.array_equal(fast.stopping_times, slow.stopping_times))
    True
    """
    from .track_and_stop import solve_allocations

    kernel = _kernel()
    n_rows, n_arms = counts.shape
    k = context.k
    records = empty_records(n_rows, checkpoints.shape[0], k)
    done = np.zeros((n_rows, checkpoints.shape[0]), dtype=np.bool_)
    dispersion = np.ascontiguousarray(context.dispersion, dtype=float)
    solver = SolverRows.start(n_rows, n_arms)  # TrackAndStop.init_state: uniform before the first solve
    handed = np.zeros(n_rows, dtype=np.bool_)
    handed_ok = np.zeros(n_rows, dtype=np.bool_)
    handed_psi = np.full((n_rows, n_arms), np.nan)
    options = {"tol": tol}

    def run(pending, uniforms, uniform_position, rates, status, need):
        solve = pending[status[pending] == NEED_SOLVE]
        if solve.size:  # the rows whose double star was not accepted: the numpy loop's solve
            new_psi, ok, _ = solve_allocations(context, sums[solve] / counts[solve], "exact", options,
                                               np.full(solve.size, None, dtype=object))
            handed[solve], handed_ok[solve], handed_psi[solve] = True, ok, new_psi
        kernel(pending, k, max_samples, float(tol), dispersion, counts, sums, t, records.selects, rewards.buffer,
               rewards.position, uniforms, uniform_position, rates, done, records.times, records.recommendations,
               records.stopped, status, need, solver.psi, solver.fallbacks, solver.calls, handed, handed_ok,
               handed_psi)

    drive_rows(run, threshold_table(threshold, checkpoints, int(t.max(initial=1)) + 1),
               lambda largest: threshold_table(threshold, checkpoints, largest), n_rows, UNIFORM_STEPS, rewards,
               policy_generators)
    return records._replace(diagnostics=solver.diagnostics())
