r"""Compiled (numba) run loop of uniform sampling stopped by the Chernoff statistic, fixed confidence: Gaussian arms,
and the families with a compiled pair kernel (Bernoulli, Poisson, exponential).

Uniform sampling (:class:`allocopt.algorithms.Uniform`) is the baseline of Wang, Yang, You (2022, Figure 1) whose
runs are the longest (about :math:`7 \cdot 10^4` pulls at :math:`\delta = 10^{-3}` on its instance), and each pull is a
step of the engine: the numpy step loop spends a few microseconds of Python and numpy calls per replication-step
for well under a microsecond of arithmetic. :func:`run_uniform_rows` runs the same steps replication by
replication in a compiled loop and hands back only what the engine records, so the records are bit-identical to
the numpy loop's:

* **the same statistic.** Each step computes :math:`Z_t` of the row by the compiled Chernoff kernel's row function
  (:func:`allocopt.algorithms._compiled._glr_row`, the one :func:`~allocopt.algorithms._compiled.gaussian_glr`
  runs on a batch; for the other families the row function of :mod:`allocopt.algorithms._compiled_family_glr` on
  the stable top-k of :func:`allocopt.algorithms._compiled._split_top_k`) on the means ``sums / counts``, and
  compares it with :math:`\beta(t, \delta)` read from a table
  that the threshold object fills in numpy (``threshold(t, delta)`` over :math:`t = 1, 2, \dots` and the
  confidence levels, elementwise as the engine calls it), so the logarithms are numpy's.
* **the same records.** A level whose threshold :math:`Z_t` exceeds for the first time records :math:`t` and the
  empirical top-k (in increasing arm order); at the sample cap the open levels record :math:`t` and the top-k, not
  stopped; the number of steps is counted as the engine counts them.
* **the same randomness.** The pull is a least-pulled arm, the :math:`\lfloor uc \rfloor`-th of the :math:`c` of
  them in arm order (:func:`allocopt._rng.random_candidate`'s rule, by the compiled row function
  :func:`allocopt.algorithms._compiled._pick_tied`), with one uniform per step from the row's policy stream;
  rewards are read from the engine's :class:`~allocopt.algorithms.rewards.RewardStreams` buffers. The loop leaves
  the compiled code, before changing a row's state, when the row needs a reward buffer, more uniforms or a longer
  threshold table (:func:`allocopt.algorithms._compiled_loop.drive_rows` supplies them).

The tests run the engine with this loop and with the numpy loop (``compiled_kernels(False)``) and compare the
records.
"""

from __future__ import annotations

import numpy as np

from .._numba import compile_once
from . import _compiled, _compiled_loop
from ._compiled_loop import RUNNING, RowRecords, drive_rows, empty_records

__all__ = ["run_uniform_rows", "threshold_table"]

UNIFORM_STEPS = 4096
"""Policy uniforms drawn per refill of a row (changes speed, never values)."""
FIRST_TABLE_SIZE = 1 << 14
"""Entries of a new threshold table (doubled as needed)."""

# the compiled row functions of _compiled_loop and _compiled once _kernel() has run
_pick_tied = _compiled._pick_tied
glr_work = _compiled_loop.glr_work
glr_check_row = _compiled_loop.glr_check_row
pull_arm = _compiled_loop.pull_arm


def _uniform_rows(rows, k, max_samples, family_code, dispersion, counts, sums, t, selects, buffer, position, uniforms,
                  uniform_position, rates, done, times, recommendations, stopped, status, need):
    n_arms = counts.shape[1]
    glr = glr_work(n_arms, k)
    arms = np.arange(n_arms)
    for row in rows:
        status[row] = RUNNING
        while True:
            # 1-3. the Chernoff statistic, the records, done or capped (and a uniform for the step)
            state = glr_check_row(row, k, max_samples, family_code, dispersion, counts, sums, t, rates, done, times,
                                  recommendations, stopped, need, uniforms, uniform_position, 1, glr)
            if state != RUNNING:
                status[row] = state
                break
            # 4. a least-pulled arm, the floor(u c)-th of the c of them (random_candidate), and its reward
            chosen = _pick_tied(arms, counts[row], False, uniforms[row, uniform_position[row]])
            if not pull_arm(row, chosen, buffer, position, sums, counts, t, selects, status, need):
                break
            uniform_position[row] += 1


# _compiled_loop compiles the row functions (and, first, those of _compiled, _pick_tied among them, and of
# _compiled_family_glr): the loop calls them by their names
_COMPILED = compile_once(globals(), needs=(_compiled_loop.compiled_row_functions,),
                         shared=((_compiled_loop, _compiled_loop.ROW_FUNCTIONS), (_compiled, ("_pick_tied",))),
                         kernels={"rows": "_uniform_rows"})


def _kernel():
    return _COMPILED()["rows"]


def threshold_table(threshold, checkpoints: np.ndarray, largest: int) -> np.ndarray:
    r""":math:`\beta(t, \delta_c)` for :math:`t = 0, \dots, T - 1` (row 0 NaN) and the levels ``checkpoints``, with
    :math:`T` a power of two above ``largest`` (at least :data:`FIRST_TABLE_SIZE`): the threshold called on the
    float pull counts and the levels, elementwise, as the engine calls it.

    Examples
    --------
    >>> from allocopt.algorithms.stopping import HeuristicThreshold
    >>> table = threshold_table(HeuristicThreshold(), np.array([0.1, 0.01]), 10)
    >>> bool(table[1, 0] == np.log(1.0 / 0.1)), table.shape[1]
    (True, 2)
    """
    size = max(FIRST_TABLE_SIZE, 1 << int(largest).bit_length())
    pulls = np.arange(1, size, dtype=np.int64)[:, None].astype(float)
    values = np.broadcast_to(np.asarray(threshold(pulls, checkpoints[None, :]), dtype=float), (size - 1,
                                                                                              checkpoints.shape[0]))
    return np.concatenate([np.full((1, checkpoints.shape[0]), np.nan), values])


def run_uniform_rows(k: int, dispersion: np.ndarray, checkpoints: np.ndarray, threshold, max_samples: int,
                     counts: np.ndarray, sums: np.ndarray, t: np.ndarray, rewards, policy_generators,
                     family_code: int = -1) -> RowRecords:
    r"""Run every row of a batch of Gaussian runs (or runs of a family with a compiled pair kernel) of uniform
    sampling, from the engine's state after the initial
    pulls, until the Chernoff statistic exceeds the threshold at every level ``checkpoints`` or the sample cap;
    ``counts``, ``sums`` and ``t`` are updated in place.

    Parameters
    ----------
    k : int
    dispersion : ndarray, shape (K,)
        The arms' variances.
    checkpoints : ndarray, shape (C,)
        The confidence levels.
    threshold : callable
        :math:`\beta(t, \delta)`, elementwise over numpy arrays.
    max_samples, counts, sums, t, rewards, policy_generators
        The sample cap and the batch's state and streams, as every compiled run loop takes them
        (:mod:`allocopt.algorithms._compiled_loop`).
    family_code : int, default -1
        -1 for Gaussian arms (closed-form costs), else the number of the family's compiled confidence pair kernel
        (:func:`allocopt._compiled_families.kernel_code`): the statistic of
        :mod:`allocopt.algorithms._compiled_family_glr`.

    Examples
    --------
    >>> from allocopt import TopKProblem
    >>> from allocopt.algorithms import identify
    >>> from allocopt.algorithms._compiled import compiled_kernels
    >>> problem = TopKProblem([1.0, 0.6, 0.5, 0.0], k=2, variance=0.25)
    >>> fast = identify(problem, "uniform", delta=(0.1, 0.01), n_runs=5, rng=3)  # through run_uniform_rows
    >>> with compiled_kernels(False):  # the engine's numpy loop
    ...     slow = identify(problem, "uniform", delta=(0.1, 0.01), n_runs=5, rng=3)
    >>> bool(np.array_equal(fast.stopping_times, slow.stopping_times))
    True
    """
    kernel = _kernel()
    n_rows, n_check = counts.shape[0], checkpoints.shape[0]
    records = empty_records(n_rows, n_check, k)
    done = np.zeros((n_rows, n_check), dtype=np.bool_)
    dispersion = np.ascontiguousarray(dispersion, dtype=float)

    def run(pending, uniforms, uniform_position, rates, status, need):
        kernel(pending, k, max_samples, family_code, dispersion, counts, sums, t, records.selects, rewards.buffer,
               rewards.position, uniforms, uniform_position, rates, done, records.times, records.recommendations, records.stopped,
               status, need)

    drive_rows(run, threshold_table(threshold, checkpoints, int(t.max(initial=1)) + 1),
               lambda largest: threshold_table(threshold, checkpoints, largest), n_rows, UNIFORM_STEPS, rewards,
               policy_generators)
    return records
