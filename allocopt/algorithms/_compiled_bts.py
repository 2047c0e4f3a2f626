r"""Compiled (numba) run loop of BTS on Gaussian arms stopped by the Chernoff statistic, fixed confidence.

BTS (:class:`allocopt.algorithms.BTS`, Wang, Yang, You 2022, Appendix D) costs a few arithmetic operations per
pair of the double star at each step, but the engine's numpy step loop spends several microseconds of numpy calls
per replication-step around them (Figure 1's instance). :func:`run_bts_rows` runs the same steps replication by
replication in one compiled loop and hands back only what the engine records, so the records are bit-identical to
the numpy loop's:

* **the same statistic and records** as the compiled loops of uniform sampling and DT-TS
  (:func:`allocopt.algorithms._compiled_loop.glr_check_row`).
* **the same step**, operation by operation as :meth:`allocopt.algorithms.BTS.select_batch` for Gaussian arms:
  the posterior sample (the quantiles :math:`\Phi^{-1}(u)` by ``scipy.special.ndtri`` in numpy when a row's
  uniforms are drawn); its stable top-k; :math:`\tilde\imath_k` the first smallest of the top arms and
  :math:`\tilde\jmath_1` the first largest of the others; the :math:`K - 1` pairs in
  :func:`~allocopt.algorithms.bts.double_star`'s order with the Gaussian pair terms of
  :func:`allocopt.topk._pairs.pair_terms` at the weights :math:`w_a = N_a/\sigma_a^2` (their compiled twin
  :func:`allocopt._compiled_families.weighted_pair`: the cost :math:`w_i d_i + w_j d_j` and the divergences
  :math:`d_i, d_j`, its derivatives); the first minimal pair by
  :func:`allocopt._rng.random_candidate`'s rule; the balance (16) from the derivative ratios, with the sums taken
  as numpy's ``sum`` takes them (:func:`numpy_sum`: numpy's pairwise summation, which the tests compare with
  ``numpy.sum``); and the sum-of-squares fallback where the ratios are not finite.
* **the same randomness.** K + 1 policy uniforms per step from each row's policy stream; rewards from the engine's
  :class:`~allocopt.algorithms.rewards.RewardStreams` buffers.

A row leaves the compiled code at the start of a step (more uniforms, a longer threshold table) or before its pull
(a reward buffer), in both cases before its state changes (BTS keeps no state but the counts and sums).
"""

from __future__ import annotations

import numpy as np

from ..families import kernels as _families
from .._numba import compile_once
from . import _compiled, _compiled_loop
from ._compiled_dt_ts import drive_glr_rows
from ._compiled_loop import RUNNING, RowRecords, empty_records

__all__ = ["run_bts_rows", "numpy_sum", "UNIFORM_STEPS"]

UNIFORM_STEPS = 256
"""Steps of policy uniforms (K + 1 each) drawn per refill of a row (changes speed, never values)."""

# the compiled row functions once _kernel() has run
_split_top_k = _compiled._split_top_k
_pick_tied = _compiled._pick_tied
glr_work = _compiled_loop.glr_work
glr_check_row = _compiled_loop.glr_check_row
pull_arm = _compiled_loop.pull_arm

GAUSSIAN = _families._CODES.index("_gaussian_pair")
"""The Gaussian pair kernel's number in :func:`allocopt._compiled_families.pair_by_code`."""

PAIRWISE_BLOCK = 128
"""numpy's pairwise summation adds blocks of up to 128 numbers with eight accumulators (PW_BLOCKSIZE)."""


def _block_sum(values, start, count):
    """numpy's pairwise sum of at most :data:`PAIRWISE_BLOCK` numbers (see :func:`numpy_sum`)."""
    if count < 8:
        total = 0.0
        for index in range(start, start + count):
            total += values[index]
        return total
    r0, r1, r2, r3 = values[start], values[start + 1], values[start + 2], values[start + 3]
    r4, r5, r6, r7 = values[start + 4], values[start + 5], values[start + 6], values[start + 7]
    index = 8
    while index < count - count % 8:
        at = start + index
        r0 += values[at]
        r1 += values[at + 1]
        r2 += values[at + 2]
        r3 += values[at + 3]
        r4 += values[at + 4]
        r5 += values[at + 5]
        r6 += values[at + 6]
        r7 += values[at + 7]
        index += 8
    total = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while index < count:
        total += values[start + index]
        index += 1
    return total


def numpy_sum(values, start, count):
    """``numpy.sum(values[start:start + count])`` with numpy's floating-point operations, in numpy's order: fewer
    than 8 numbers one after the other from 0.0; up to :data:`PAIRWISE_BLOCK` with eight interleaved partial sums
    (then the rest one by one); longer blocks split in two (the first half a multiple of 8), each half summed so,
    and the two sums added. The reduction starts from 0.0 (``0.0 + s``, which turns a sum of -0.0 into 0.0).

    The halves are summed with explicit stacks, not by recursion (numba's cache does not reload recursive
    functions reliably). IEEE addition is commutative, so the order in which the two halves are summed does not
    matter, only which numbers each half adds.

    Examples
    --------
    >>> values = np.array([1e16, 1.0, -1e16, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.5])
    >>> bool(numpy_sum(values, 0, 10) == values.sum()), bool(numpy_sum(values, 1, 3) == values[1:4].sum())
    (True, True)
    """
    if count <= PAIRWISE_BLOCK:
        return 0.0 + _block_sum(values, start, count)
    # tasks: (start, count) to sum, or count -1: add the two sums on top of the value stack
    depth = 4 * 64
    task_start = np.empty(depth, dtype=np.int64)
    task_count = np.empty(depth, dtype=np.int64)
    sums = np.empty(depth)
    n_tasks, n_sums = 1, 0
    task_start[0], task_count[0] = start, count
    while n_tasks:
        n_tasks -= 1
        first, size = task_start[n_tasks], task_count[n_tasks]
        if size < 0:
            n_sums -= 1
            sums[n_sums - 1] = sums[n_sums - 1] + sums[n_sums]
        elif size <= PAIRWISE_BLOCK:
            sums[n_sums] = _block_sum(values, first, size)
            n_sums += 1
        else:
            half = size // 2
            half -= half % 8
            task_start[n_tasks], task_count[n_tasks] = 0, -1
            task_start[n_tasks + 1], task_count[n_tasks + 1] = first + half, size - half
            task_start[n_tasks + 2], task_count[n_tasks + 2] = first, half
            n_tasks += 3
    return 0.0 + sums[0]


def _bts_rows(rows, k, max_samples, dispersion, counts, sums, t, selects, buffer, position, uniforms, quantiles,
              uniform_position, rates, done, times, recommendations, stopped, status, need):
    n_arms = counts.shape[1]
    n_bottom = n_arms - k
    n_pairs = n_arms - 1
    per_step = n_arms + 1
    glr = glr_work(n_arms, k)
    top, bottom = np.empty(k, dtype=np.int64), np.empty(n_bottom, dtype=np.int64)
    best_values, best_arms, member = np.empty(k), np.empty(k, dtype=np.int64), np.empty(n_arms, dtype=np.bool_)
    theta, squares = np.empty(n_arms), np.empty(n_arms)
    pair_top, pair_bottom = np.empty(n_pairs, dtype=np.int64), np.empty(n_pairs, dtype=np.int64)
    cost, ratio = np.empty(n_pairs), np.empty(n_pairs)
    star_top = np.empty(max(k - 1, 1))
    gathered_top, gathered_bottom = np.empty(k), np.empty(n_bottom)
    pairs = np.arange(n_pairs)
    for row in rows:
        status[row] = RUNNING
        while True:
            # 1-3. the Chernoff statistic, the records, done or capped
            state = glr_check_row(row, k, max_samples, -1, dispersion, counts, sums, t, rates, done, times,
                                  recommendations, stopped, need, uniforms, uniform_position, per_step, glr)
            if state != RUNNING:
                status[row] = state
                break
            first = uniform_position[row]
            # 1. theta~ and its double star: (i_k, j) for the other arms j, then (i, j_1) for the other top arms i
            for arm in range(n_arms):
                count = counts[row, arm]
                theta[arm] = sums[row, arm] / count + np.sqrt(dispersion[arm] / count) * quantiles[row, first + arm]
            _split_top_k(theta, k, top, bottom, best_values, best_arms, member)
            worst_top = top[0]
            for i in range(1, k):
                if theta[top[i]] < theta[worst_top]:
                    worst_top = top[i]
            best_position = 0
            for j in range(1, n_bottom):
                if theta[bottom[j]] > theta[bottom[best_position]]:
                    best_position = j
            best_bottom = bottom[best_position]
            for j in range(n_bottom):
                pair_top[j], pair_bottom[j] = worst_top, bottom[j]
            pair = n_bottom
            for i in range(k):
                if top[i] != worst_top:
                    pair_top[pair], pair_bottom[pair] = top[i], best_bottom
                    pair += 1
            # 2. the pair costs (pair_terms, Gaussian) and the derivative ratios of the balance (16)
            for pair in range(n_pairs):
                arm_top, arm_bottom = pair_top[pair], pair_bottom[pair]
                value, divergence_top, divergence_bottom = _families.weighted_pair(
                    GAUSSIAN, theta[arm_top], theta[arm_bottom], counts[row, arm_top] / dispersion[arm_top],
                    counts[row, arm_bottom] / dispersion[arm_bottom])
                cost[pair] = 0.0 if np.isnan(value) else value
                ratio[pair] = (divergence_top / dispersion[arm_top]) / (divergence_bottom / dispersion[arm_bottom])
            chosen = _pick_tied(pairs, cost, False, uniforms[row, first + n_arms])
            # 3. the side of the double star that is short: sum_I z < sum_J |z|, else the sums of squares
            z_best_bottom = ratio[best_position]
            for i in range(k - 1):
                star_top[i] = z_best_bottom / ratio[n_bottom + i]
            top_side = 1.0 + numpy_sum(star_top, 0, k - 1)
            bottom_side = numpy_sum(ratio, 0, n_bottom)
            if np.isfinite(top_side) and np.isfinite(bottom_side) and bottom_side > 0:
                pull_top = top_side < bottom_side
            else:
                for arm in range(n_arms):
                    squares[arm] = float(counts[row, arm]) * float(counts[row, arm]) / dispersion[arm]
                for i in range(k):
                    gathered_top[i] = squares[top[i]]
                for j in range(n_bottom):
                    gathered_bottom[j] = squares[bottom[j]]
                pull_top = numpy_sum(gathered_top, 0, k) < numpy_sum(gathered_bottom, 0, n_bottom)
            arm = pair_top[chosen] if pull_top else pair_bottom[chosen]
            if not pull_arm(row, arm, buffer, position, sums, counts, t, selects, status, need):
                break
            uniform_position[row] += per_step


# the row functions of _compiled_loop (and _compiled), and weighted_pair, called by their global names
_COMPILED = compile_once(globals(), needs=(_compiled_loop.compiled_row_functions, _families._kernels),
                         shared=((_compiled_loop, _compiled_loop.ROW_FUNCTIONS),
                                 (_compiled, ("_split_top_k", "_pick_tied"))),
                         rebind=("_block_sum", "numpy_sum"), kernels={"rows": "_bts_rows"})


def _kernel():
    return _COMPILED()["rows"]


def run_bts_rows(k: int, dispersion: np.ndarray, checkpoints: np.ndarray, threshold, max_samples: int,
                 counts: np.ndarray, sums: np.ndarray, t: np.ndarray, rewards, policy_generators) -> RowRecords:
    r"""Run every row of a batch of Gaussian runs of BTS, from the engine's state after the initial pulls, until the
    Chernoff statistic exceeds the threshold at every level ``checkpoints`` or the sample cap; ``counts``, ``sums``
    and ``t`` are updated in place.

    The parameters are those of :func:`~allocopt.algorithms._compiled_dt_ts.run_dt_ts_rows` but ``iterations``.

    Examples
    --------
    >>> from allocopt import TopKProblem
    >>> from allocopt.algorithms import identify
    >>> from allocopt.algorithms._compiled import compiled_kernels
    >>> problem = TopKProblem([1.0, 0.6, 0.5, 0.0], k=2, variance=0.25)
    >>> fast = identify(problem, "bts", delta=(0.1, 0.01), n_runs=5, rng=3)  # through run_bts_rows
    >>> with compiled_kernels(False):  # the engine's numpy loop
    ...     slow = identify(problem, "bts", delta=(0.1, 0.01), n_runs=5, rng=3)
    >>> bool(np.array_equal(fast.stopping_times, slow.stopping_times))
    True
    """
    kernel = _kernel()
    n_rows, n_arms = counts.shape
    records = empty_records(n_rows, checkpoints.shape[0], k)
    done = np.zeros((n_rows, checkpoints.shape[0]), dtype=np.bool_)
    dispersion = np.ascontiguousarray(dispersion, dtype=float)
    quantiles = np.empty((n_rows, UNIFORM_STEPS * (n_arms + 1)))

    def run(pending, uniforms, uniform_position, rates, status, need):
        kernel(pending, k, max_samples, dispersion, counts, sums, t, records.selects, rewards.buffer, rewards.position,
               uniforms, quantiles, uniform_position, rates, done, records.times, records.recommendations,
               records.stopped, status, need)

    drive_glr_rows(run, threshold, checkpoints, t, quantiles, rewards, policy_generators)
    return records
