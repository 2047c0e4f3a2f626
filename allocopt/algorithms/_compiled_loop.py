r"""What the compiled run loops of the algorithm layer share: the row statuses, their records, the driver that calls
a loop's kernel until every row has stopped or reached the cap, and the compiled row functions that every loop
calls by name (the pull of an arm, the hand-back checks, the step's check of the Chernoff statistic).

The loops are those of uniform sampling (:mod:`._compiled_uniform`), UGapEc (:mod:`._compiled_ugape`), KL-Racing
(:mod:`._compiled_kl_racing`), DT-TS (:mod:`._compiled_dt_ts`), BTS (:mod:`._compiled_bts`) and Track-and-Stop
(:mod:`._compiled_track_and_stop`). A kernel runs the rows it is given replication by replication and leaves the
compiled code for a row, before changing its state, when the row needs something only Python gives: a reward
buffer (:data:`NEED_REWARD`, the arm in ``need``), more policy uniforms (:data:`NEED_UNIFORMS`) or a longer table
of thresholds or exploration rates indexed by the pull count (:data:`NEED_TABLE`, the pull count in ``need``).
:func:`drive_rows` supplies them (:func:`allocopt.algorithms._compiled_lucb.refill_rows` for the first two) and
calls the kernel again on the rows that are still running.

The row functions (:func:`reward_missing`, :func:`add_reward`, :func:`pull_arm`, :func:`table_missing`,
:func:`glr_work`, :func:`glr_check_row`) are plain Python here; :func:`compiled_row_functions` compiles them, and
a loop's own compilation names it among its needs and shares them (copies them into its globals), so that the
loop calls them by their names inside numba.

Every ``run_*_rows`` function of these modules runs a batch from the engine's state after the initial pulls and
takes, besides its rule's own parameters:

max_samples : int
    The sample cap: a row that reaches it without stopping records its open levels, not stopped.
counts, sums : ndarray, shape (R, K)
    int64 counts and float64 sums of the rewards of the R rows (updated in place).
t : ndarray, shape (R,)
    int64 pulls so far (updated in place).
rewards : RewardStreams
    The batch's reward streams (read from their buffers; refilled by them).
policy_generators : list of numpy.random.Generator
    Each row's policy stream (:class:`~allocopt.algorithms.rewards.PolicyStreams`' generators), not yet drawn
    from.

and returns the :class:`RowRecords` of the rows.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np

from .._numba import compile_once
from . import _compiled, _compiled_family_glr
from ._compiled_lucb import refill_rows

__all__ = ["RUNNING", "STOPPED", "CAPPED", "NEED_REWARD", "NEED_UNIFORMS", "NEED_TABLE", "RowRecords",
           "empty_records", "drive_rows", "reward_missing", "add_reward", "pull_arm", "table_missing", "glr_work",
           "glr_check_row", "compiled_row_functions", "ROW_FUNCTIONS", "SolverRows"]

RUNNING, STOPPED, CAPPED, NEED_REWARD, NEED_UNIFORMS, NEED_TABLE = range(6)


class RowRecords(NamedTuple):
    """Per-row records of a compiled run loop (the fields the engine reads from it): the stopping times, the
    recommendations and whether each level stopped before the cap (shapes (R, C), (R, C, k), (R, C)), the
    steps of each row, and the rule's diagnostics per row where it reports some (None otherwise)."""

    times: np.ndarray
    recommendations: np.ndarray
    stopped: np.ndarray
    selects: np.ndarray
    diagnostics: dict[str, np.ndarray] | None = None


class SolverRows(NamedTuple):
    """The per-row state of a loop whose rule solves an allocation problem at every step (DT-TS, Track-and-Stop):
    the allocation the row tracks, shape (R, K), and the counts of solver fallbacks (the previous allocation kept)
    and of solver calls, shape (R,), which the loop reports as its diagnostics."""

    psi: np.ndarray
    fallbacks: np.ndarray
    calls: np.ndarray

    @classmethod
    def start(cls, n_rows: int, n_arms: int) -> SolverRows:
        """The state before the first solve: the uniform allocation (the rules' ``init_state``), no call.

        Examples
        --------
        >>> rows = SolverRows.start(2, 4)
        >>> rows.psi[0].tolist(), rows.calls.tolist()
        ([0.25, 0.25, 0.25, 0.25], [0, 0])
        """
        return cls(np.full((n_rows, n_arms), 1.0 / n_arms), np.zeros(n_rows, dtype=np.int64),
                   np.zeros(n_rows, dtype=np.int64))

    def diagnostics(self) -> dict[str, np.ndarray]:
        """The diagnostics ``solver_fallbacks`` and ``solver_calls`` of each row, as the engine reports them."""
        return {"solver_fallbacks": self.fallbacks, "solver_calls": self.calls}


def empty_records(n_rows: int, n_check: int, k: int) -> RowRecords:
    """Records of ``n_rows`` rows and ``n_check`` levels before the first step (zeros, not stopped).

    Examples
    --------
    >>> empty_records(2, 3, 1).recommendations.shape
    (2, 3, 1)
    """
    return RowRecords(times=np.zeros((n_rows, n_check), dtype=np.int64),
                      recommendations=np.zeros((n_rows, n_check, k), dtype=np.int64),
                      stopped=np.zeros((n_rows, n_check), dtype=np.bool_), selects=np.zeros(n_rows, dtype=np.int64))


def drive_rows(kernel: Callable, table: np.ndarray, grow_table: Callable[[int], np.ndarray], n_rows: int,
               uniforms_per_refill: int, rewards, policy_generators,
               on_uniforms: Callable[[np.ndarray, np.ndarray], None] | None = None) -> None:
    """Call ``kernel(pending, uniforms, uniform_position, table, status, need)`` until no row is running.

    Parameters
    ----------
    kernel : callable
        Runs the rows ``pending``; writes each row's status (:data:`STOPPED`, :data:`CAPPED` or a need) and need.
    table : ndarray
        The table indexed by the pull count that the kernel reads.
    grow_table : callable
        ``grow_table(size)``: a table of more than ``size`` entries.
    n_rows, uniforms_per_refill : int
        The rows of the batch and the policy uniforms drawn per refill of a row.
    rewards : RewardStreams
        The batch's reward streams (refilled by them).
    policy_generators : list of numpy.random.Generator
        Each row's policy stream, not yet drawn from.
    on_uniforms : callable, optional
        ``on_uniforms(rows, uniforms)`` after the uniforms of ``rows`` are refilled (to transform them for the
        kernel, e.g. into normal quantiles).
    """
    status = np.zeros(n_rows, dtype=np.int64)
    need = np.zeros(n_rows, dtype=np.int64)
    uniforms = np.empty((n_rows, uniforms_per_refill))
    uniform_position = np.full(n_rows, uniforms_per_refill, dtype=np.int64)
    pending = np.arange(n_rows, dtype=np.int64)
    while pending.size:
        kernel(pending, uniforms, uniform_position, table, status, need)
        refill_rows(pending, status[pending] == NEED_REWARD, status[pending] == NEED_UNIFORMS, need, rewards,
                    uniforms, uniform_position, policy_generators)
        if on_uniforms is not None and (status[pending] == NEED_UNIFORMS).any():
            on_uniforms(pending[status[pending] == NEED_UNIFORMS], uniforms)
        grow = status[pending] == NEED_TABLE
        if grow.any():
            table = grow_table(int(need[pending[grow]].max()) + 1)
        pending = pending[(status[pending] != STOPPED) & (status[pending] != CAPPED)]


# the compiled row functions of _compiled and _compiled_family_glr once compiled_row_functions() has run
_glr_row = _compiled._glr_row
_split_top_k = _compiled._split_top_k
_family_glr_row = _compiled_family_glr._family_glr_row


def reward_missing(row, arm, buffer, position, status, need):
    """Whether the row has read every reward of ``arm``'s buffer: if so the row is handed back for a refill
    (``status[row]`` :data:`NEED_REWARD`, ``need[row]`` the arm) before its state changes.

    Examples
    --------
    >>> position, status, need = np.array([[2, 0]]), np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64)
    >>> buffer = np.zeros((1, 2, 2))
    >>> reward_missing(0, 1, buffer, position, status, need), reward_missing(0, 0, buffer, position, status, need)
    (False, True)
    >>> int(status[0]) == NEED_REWARD, int(need[0])
    (True, 0)
    """
    if position[row, arm] >= buffer.shape[2]:
        status[row], need[row] = NEED_REWARD, arm
        return True
    return False


def add_reward(row, arm, buffer, position, sums, counts):
    """Add the next reward of ``arm``'s buffer to the row's sum and count (the buffer must hold one).

    Examples
    --------
    >>> buffer = np.array([[[0.5, 2.0]]])
    >>> position, sums, counts = np.array([[1]]), np.array([[1.0]]), np.array([[3]])
    >>> add_reward(0, 0, buffer, position, sums, counts)
    >>> float(sums[0, 0]), int(counts[0, 0]), int(position[0, 0])
    (3.0, 4, 2)
    """
    sums[row, arm] += buffer[row, arm, position[row, arm]]
    position[row, arm] += 1
    counts[row, arm] += 1


def pull_arm(row, arm, buffer, position, sums, counts, t, selects, status, need):
    """One step that pulls ``arm``: its next reward added (:func:`add_reward`), one more pull and one more step;
    or, when its buffer is read to the end, the hand-back of :func:`reward_missing`, nothing changed. Returns
    whether the arm was pulled.

    Examples
    --------
    >>> buffer = np.array([[[0.5], [2.0]]])
    >>> position, sums, counts = np.array([[0, 0]]), np.zeros((1, 2)), np.ones((1, 2), dtype=np.int64)
    >>> t, selects, status, need = (np.array([2]), np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64),
    ...                            np.zeros(1, dtype=np.int64))
    >>> pull_arm(0, 1, buffer, position, sums, counts, t, selects, status, need), sums.tolist(), int(t[0])
    (True, [[0.0, 2.0]], 3)
    >>> pull_arm(0, 1, buffer, position, sums, counts, t, selects, status, need), int(need[0]), int(selects[0])
    (False, 1, 1)
    """
    if reward_missing(row, arm, buffer, position, status, need):
        return False
    add_reward(row, arm, buffer, position, sums, counts)
    t[row] += 1
    selects[row] += 1
    return True


def table_missing(row, t, table, need):
    """Whether the table indexed by the pull count has no entry for the row's pull count: if so ``need[row]`` is
    that pull count (the row is handed back with :data:`NEED_TABLE`).

    Examples
    --------
    >>> t, table, need = np.array([3, 4]), np.zeros(4), np.zeros(2, dtype=np.int64)
    >>> table_missing(0, t, table, need), table_missing(1, t, table, need)
    (False, True)
    >>> need.tolist()
    [0, 4]
    """
    if t[row] >= table.shape[0]:
        need[row] = t[row]
        return True
    return False


def glr_work(n_arms, k):
    """The work arrays of :func:`glr_check_row` for K arms and the top k.

    Examples
    --------
    >>> len(glr_work(4, 1)), glr_work(4, 1)[3].shape
    (10, (3,))
    """
    n_bottom = n_arms - k
    return (np.empty(n_arms), np.empty(n_arms), np.empty(k, dtype=np.int64), np.empty(n_bottom, dtype=np.int64),
            np.empty(k), np.empty(k, dtype=np.int64), np.empty(n_arms, dtype=np.bool_), np.empty(n_bottom),
            np.empty(n_bottom), np.empty(n_bottom))


def glr_check_row(row, k, max_samples, family_code, dispersion, counts, sums, t, rates, done, times,
                  recommendations, stopped, need, uniforms, uniform_position, per_step, work):
    r"""Steps 1-3 of the engine's loop for one row stopped by the Chernoff statistic, and the check that the step
    has its ``per_step`` policy uniforms.

    :math:`Z_t` on the means ``sums / counts``: for Gaussian arms (``family_code`` -1) by the Chernoff kernel's
    row function (:func:`allocopt.algorithms._compiled._glr_row`), for the other families by the row function of
    :mod:`allocopt.algorithms._compiled_family_glr` (number ``family_code``) on the stable top-k of
    :func:`allocopt.algorithms._compiled._split_top_k`; compared with :math:`\beta(t, \delta_c)` read from
    ``rates[t]``. A level crossed for the first time records :math:`t` and the empirical top-k; at the sample
    cap the open levels record :math:`t` and the top-k, not stopped.

    Returns :data:`RUNNING` (the row pulls next), :data:`STOPPED` (every level stopped), :data:`CAPPED` (the open
    levels recorded at the cap), :data:`NEED_TABLE` (``need[row]`` = the pull count the threshold table must
    reach; nothing recorded) or :data:`NEED_UNIFORMS` (fewer than ``per_step`` of the row's uniforms are left:
    the levels crossed at :math:`t` are recorded, and marked done, before the row is handed back).
    """
    means, inverse, top, bottom, best_values, best_arms, member, mean_bottom, inverse_bottom, cost = work
    n_arms = counts.shape[1]
    if table_missing(row, t, rates, need):
        return NEED_TABLE
    for arm in range(n_arms):
        means[arm] = sums[row, arm] / counts[row, arm]
    if family_code < 0:  # Gaussian arms: the closed-form costs
        value = _glr_row(counts[row], means, dispersion, k, top, bottom, inverse, best_values, best_arms, member,
                         mean_bottom, inverse_bottom, cost)[0]
    else:  # the family's compiled pair kernel (_compiled_family_glr), on the stable top-k
        _split_top_k(means, k, top, bottom, best_values, best_arms, member)
        value = _family_glr_row(family_code, counts[row], means, dispersion, top, bottom)[0]
    finished = True
    for check in range(rates.shape[1]):
        if not done[row, check]:
            if value > rates[t[row], check]:
                done[row, check] = True
                stopped[row, check] = True
                times[row, check] = t[row]
                recommendations[row, check, :] = top
            else:
                finished = False
    if finished:
        return STOPPED
    if t[row] >= max_samples:
        for check in range(rates.shape[1]):
            if not done[row, check]:
                times[row, check] = t[row]
                recommendations[row, check, :] = top
        return CAPPED
    if uniform_position[row] + per_step > uniforms.shape[1]:
        return NEED_UNIFORMS
    return RUNNING


ROW_FUNCTIONS = ("reward_missing", "add_reward", "pull_arm", "table_missing", "glr_work", "glr_check_row")
"""The names of the compiled row functions, which a loop shares (``shared=((_compiled_loop, ROW_FUNCTIONS),)``)."""

# _compiled compiles _split_top_k and _glr_row, _compiled_family_glr its row function: the functions here call
# them, and each other, by their names (callees before their callers)
_COMPILED = compile_once(globals(), needs=(_compiled._kernels, _compiled_family_glr.compiled_glr_row),
                         shared=((_compiled, ("_glr_row", "_split_top_k")),
                                 (_compiled_family_glr, ("_family_glr_row",))),
                         rebind=ROW_FUNCTIONS)


def compiled_row_functions() -> None:
    """Compile the row functions (on first use): afterwards the names of :data:`ROW_FUNCTIONS` in this module are
    the compiled functions, for the compiled loops that share them."""
    _COMPILED()
