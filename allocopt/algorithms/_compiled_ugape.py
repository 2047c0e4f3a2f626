r"""Compiled (numba) run loop of UGapEc (Gabillon, Ghavamzadeh, Lazaric 2012), fixed confidence, the twin of the
engine's numpy step loop for it.

In Figure 1 of Wang, Yang, You (2022) UGapE runs one confidence level at a time, with about :math:`10^4` pulls per
run, and each pull is a step of the engine: a few microseconds of Python and numpy calls per replication-step for
well under a microsecond of arithmetic. :func:`run_ugape_rows` runs the same steps replication by replication in
a compiled loop and hands back only what the engine records, so the records are bit-identical to the numpy loop's:

* **the same numbers.** The means are ``sums / counts``, the radius :math:`\sqrt{((2\sigma_a^2)\beta_t)/N_a}` in
  the order of :func:`~allocopt.algorithms.confidence_bounds.subgaussian_radius`, with :math:`\beta_t` read from
  the table of :func:`~allocopt.algorithms._compiled_lucb.rate_table` (numpy's logarithm), and the bounds
  :math:`\hat\mu_a \pm \beta_a`; the gap indices, :math:`J_t` and :math:`B_{J_t}` are those of the compiled row
  function that :func:`~allocopt.algorithms._compiled.gap_index_sets` runs on a batch
  (:func:`allocopt.algorithms._compiled._gap_index_row`).
* **the same steps.** Each step checks :math:`B_{J_t} < \epsilon` (stop, and recommend :math:`J_t`), then the
  sample cap (recommend :math:`J_t`, not stopped), then pulls the arm of
  :func:`~allocopt.algorithms._compiled.ugape_choice`'s row function with the step's three uniforms.
* **the same randomness.** Rewards are read from the engine's :class:`~allocopt.algorithms.rewards.RewardStreams`
  buffers, the three uniforms of a step from the row's policy stream; the loop leaves the compiled code, before
  changing a row's state, when the row needs a reward buffer, more uniforms or a longer rate table
  (:func:`allocopt.algorithms._compiled_loop.drive_rows` supplies them).

The tests run the engine with this loop and with the numpy loop (``compiled_kernels(False)``) and compare the
records.
"""

from __future__ import annotations

import numpy as np

from .._numba import compile_once
from . import _compiled, _compiled_loop
from ._compiled_loop import CAPPED, NEED_TABLE, NEED_UNIFORMS, RUNNING, STOPPED, RowRecords, drive_rows, \
    empty_records
from ._compiled_lucb import rate_table

__all__ = ["run_ugape_rows"]

UNIFORM_STEPS = 4096
"""Steps of policy uniforms drawn per refill of a row (changes speed, never values)."""

_gap_index_row = _compiled._gap_index_row  # the compiled row functions once _kernel() has run
_ugape_choice_row = _compiled._ugape_choice_row
table_missing = _compiled_loop.table_missing
pull_arm = _compiled_loop.pull_arm



def _ugape_rows(rows, k, epsilon, max_samples, twice_variance, counts, sums, t, selects, buffer, position, uniforms,
                uniform_position, rates, times, recommendations, stopped, status, need):
    n_arms = counts.shape[1]
    n_uniforms = uniforms.shape[1]
    radius, upper, lower, index = np.empty(n_arms), np.empty(n_arms), np.empty(n_arms), np.empty(n_arms)
    chosen, others = np.empty(k, dtype=np.int64), np.empty(n_arms - k, dtype=np.int64)
    best_values, best_arms = np.empty(k + 1), np.empty(k + 1, dtype=np.int64)
    member = np.empty(n_arms, dtype=np.bool_)
    top_scratch, bottom_scratch = np.empty(k + 1, dtype=np.int64), np.empty(n_arms, dtype=np.int64)
    negated = np.empty(n_arms)
    for row in rows:
        status[row] = RUNNING
        while True:
            # the bounds, the gap indices, J_t and B_{J_t} at t (UGapE.radius, gap_indices)
            if table_missing(row, t, rates, need):
                status[row] = NEED_TABLE
                break
            beta = rates[t[row]]
            for arm in range(n_arms):
                count = counts[row, arm]
                mean = sums[row, arm] / count
                radius[arm] = np.sqrt(twice_variance[arm] * beta / count)
                upper[arm] = mean + radius[arm]
                lower[arm] = mean - radius[arm]
            chosen_index = _gap_index_row(upper, lower, k, index, chosen, others, best_values, best_arms, member,
                                          top_scratch, bottom_scratch, negated)
            # the stopping rule, then the cap: J_t is recorded either way
            if chosen_index < epsilon or t[row] >= max_samples:
                times[row, 0] = t[row]
                recommendations[row, 0, :] = chosen
                stopped[row, 0] = chosen_index < epsilon
                status[row] = STOPPED if chosen_index < epsilon else CAPPED
                break
            # u_t, l_t and the one of larger radius, with the step's three uniforms (ugape_choice)
            if uniform_position[row] + 3 > n_uniforms:
                status[row] = NEED_UNIFORMS
                break
            place = uniform_position[row]
            arm = _ugape_choice_row(others, upper, chosen, lower, radius, uniforms[row, place],
                                    uniforms[row, place + 1], uniforms[row, place + 2])
            if not pull_arm(row, arm, buffer, position, sums, counts, t, selects, status, need):
                break
            uniform_position[row] += 3


# _compiled and _compiled_loop compile the row functions, which the loop calls by their names
_COMPILED = compile_once(globals(), needs=(_compiled._kernels, _compiled_loop.compiled_row_functions),
                         shared=((_compiled, ("_gap_index_row", "_ugape_choice_row")),
                                 (_compiled_loop, _compiled_loop.ROW_FUNCTIONS)),
                         kernels={"rows": "_ugape_rows"})


def _kernel():
    return _COMPILED()["rows"]


def run_ugape_rows(k: int, epsilon: float, exploration: str, delta: float, variance: np.ndarray, max_samples: int,
                   counts: np.ndarray, sums: np.ndarray, t: np.ndarray, rewards, policy_generators) -> RowRecords:
    r"""Run every row of a batch of UGapEc runs, from the engine's state after the initial pulls, until
    :math:`B_{J_t} < \epsilon` or the sample cap; ``counts``, ``sums`` and ``t`` are updated in place.

    Parameters
    ----------
    k : int
    epsilon : float
        The accuracy of the stopping rule.
    exploration : str
        The exploration rate's name (:func:`~allocopt.algorithms.confidence_bounds.exploration_rate`).
    delta : float
        The confidence level.
    variance : ndarray, shape (K,)
        The arms' sub-Gaussian variances.
    max_samples, counts, sums, t, rewards, policy_generators
        The sample cap and the batch's state and streams, as every compiled run loop takes them
        (:mod:`allocopt.algorithms._compiled_loop`).

    Examples
    --------
    >>> from allocopt import TopKProblem
    >>> from allocopt.algorithms import identify
    >>> from allocopt.algorithms._compiled import compiled_kernels
    >>> problem = TopKProblem([1.0, 0.6, 0.5, 0.0], k=2, variance=0.25)
    >>> fast = identify(problem, "ugape", delta=0.01, n_runs=5, rng=3)  # through run_ugape_rows
    >>> with compiled_kernels(False):  # the engine's numpy loop
    ...     slow = identify(problem, "ugape", delta=0.01, n_runs=5, rng=3)
    >>> bool(np.array_equal(fast.stopping_times, slow.stopping_times))
    True
    """
    kernel = _kernel()
    n_rows, n_arms = counts.shape
    records = empty_records(n_rows, 1, k)
    twice_variance = 2.0 * np.ascontiguousarray(variance, dtype=float)

    def run(pending, uniforms, uniform_position, rates, status, need):
        kernel(pending, k, float(epsilon), max_samples, twice_variance, counts, sums, t, records.selects,
               rewards.buffer, rewards.position, uniforms, uniform_position, rates, records.times,
               records.recommendations, records.stopped, status, need)

    drive_rows(run, rate_table(exploration, delta, n_arms, int(t.max(initial=1)) + 1),
               lambda largest: rate_table(exploration, delta, n_arms, largest), n_rows, UNIFORM_STEPS * 3, rewards,
               policy_generators)
    return records
