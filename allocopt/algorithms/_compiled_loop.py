r"""What the compiled run loops of uniform sampling (:mod:`._compiled_uniform`), UGapEc (:mod:`._compiled_ugape`)
and KL-Racing (:mod:`._compiled_kl_racing`) share: the row statuses, their records and the driver that calls a
loop's kernel until every row has stopped or reached the cap.

A kernel runs the rows it is given replication by replication and leaves the compiled code for a row, before
changing its state, when the row needs something only Python gives: a reward buffer (:data:`NEED_REWARD`, the arm
in ``need``), more policy uniforms (:data:`NEED_UNIFORMS`) or a longer table of thresholds or exploration rates
indexed by the pull count (:data:`NEED_TABLE`, the pull count in ``need``). :func:`drive_rows` supplies them
(:func:`allocopt.algorithms._compiled_lucb.refill_rows` for the first two) and calls the kernel again on the
rows that are still running.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np

from ._compiled_lucb import refill_rows

__all__ = ["RUNNING", "STOPPED", "CAPPED", "NEED_REWARD", "NEED_UNIFORMS", "NEED_TABLE", "RowRecords",
           "empty_records", "drive_rows"]

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
