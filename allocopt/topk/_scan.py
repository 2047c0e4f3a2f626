r"""All-pairs scans of the cost matrix without materialising it: chunked, with a cheap lower bound.

The exact solver and the certificate need :math:`\min_{i \in I, j \in J} C_{ij}(\psi)` and the pairs below a
threshold for up to :math:`k(K-k) \approx 2.5 \cdot 10^7` pairs. The scan runs over blocks of top rows (about
``chunk_pairs`` pairs each). For non-Gaussian families every divergence satisfies
:math:`d_1(x, y) \ge (x-y)^2 / (2\bar V)` with :math:`\bar V = \max V_1` between the two means
(:meth:`~allocopt.families.ExponentialFamily.unit_variance_bound`), hence

.. math::
    C_{ij}(\psi),\ B_{ij}(\psi) \ \ge\ \frac{(\theta_i - \theta_j)^2}{2\bar V_{ij}} \frac{w_i w_j}{w_i + w_j},

a closed form that costs a few operations per pair; the exact (logarithmic) costs are evaluated only where
the bound falls below the threshold. The bound is formed as :math:`\tfrac12 r^2\, w_i (w_j/(w_i + w_j))` with
:math:`r = |\theta_i - \theta_j| / \sqrt{\bar V}` (:meth:`~allocopt.families.ExponentialFamily.unit_deviation_bound`),
whose factors stay within the floating-point range wherever the bound does, and it is used only where every
factor and the bound are normal floating-point numbers (:func:`trusted`): a bound that overflows, underflows
or is not a number (means near the ends of the range) prunes nothing. When both kinds of cost are harmonic
(:meth:`~allocopt.families.ExponentialFamily.harmonic_costs`: Gaussian arms) the bound is the cost itself,
evaluated exactly everywhere. Above ``BLOCK_PAIRS`` pairs the same bound is taken over blocks of consecutive
means at once (:func:`_scan_blocks`), so that block pairs far from the smallest cost are never evaluated.

Examples
--------
>>> import numpy as np
>>> from allocopt import TopKProblem
>>> problem = TopKProblem([0.9, 0.8, 0.3, 0.1], 2, variance=0.25)
>>> psi = np.full(4, 0.25)
>>> value, scan = problem.minimum_cost(psi, threshold=1.0)  # (0.8 - 0.3)^2 / (2 (0.25/0.25 + 0.25/0.25))
>>> round(value, 12), (scan.argmin_row, scan.argmin_col), scan.rows.size
(0.0625, (1, 0), 4)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

__all__ = ["PairScan", "scan_pairs", "trusted", "BOUND_MARGIN", "CHUNK_PAIRS", "BLOCK_PAIRS", "BLOCK"]

CHUNK_PAIRS = 1 << 21


# above this many pairs the scan works on blocks of BLOCK x BLOCK pairs of consecutive means, bounded as a whole
BLOCK_PAIRS = 1 << 20


BLOCK = 64


# the lower bounds are compared with a margin of rounding: a bound that equals a cost (Gaussian arms) can
# exceed it by a few ulps
BOUND_MARGIN = 1.0 - 1e-9


# the blocks are used only when, after the first batch, at most this fraction of the pairs remains to evaluate
_BLOCKS_WORTHWHILE = 0.2


@dataclass(frozen=True)
class PairScan:
    """Result of :func:`scan_pairs`.

    ``minimum`` is the smallest cost over all pairs (exact), at pair ``(argmin_row, argmin_col)``;
    ``rows, cols, costs`` list the pairs with cost below the threshold (at most ``limit`` of them, the
    smallest), positions in the top/bottom orders of the scanned problem. ``every_pair`` is False for the
    exact solver's envelope checks (:mod:`allocopt.topk._exact.checks`), whose minimum no certificate relies on.
    """

    minimum: float
    argmin_row: int
    argmin_col: int
    rows: np.ndarray
    cols: np.ndarray
    costs: np.ndarray
    every_pair: bool = True


_TINY = float(np.finfo(float).tiny)


def trusted(x):
    """Whether ``x`` is a normal floating-point number, positive and finite (elementwise for arrays; plain
    comparisons, so that the compiled scans share it): the closed-form pair bounds are used only where each of
    their factors is, since a factor that overflowed, underflowed into the subnormal range (where rounding is
    no longer relative) or is not a number would make the bound exceed the cost."""
    return (x >= _TINY) & (x <= 1.7976931348623157e308)


def _pair_bound(family, gap, w_top, w_bottom, low, high):
    r"""The closed-form lower bound :math:`\tfrac12 (|\theta_i-\theta_j|/\sqrt{\bar V})^2\, w_i (w_j/(w_i+w_j))`,
    broadcasting, with ``gap`` :math:`= |\theta_i - \theta_j|` and :math:`\bar V` the largest :math:`V_1` on
    [``low``, ``high``], less the margin of rounding; 0 (the pair is always evaluated) where a factor or the
    bound is not a normal floating-point number (:func:`trusted`: no weight, a gap of zero, or means near the
    ends of the range)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        deviation = family.unit_deviation_bound(low, high)
        ratio = gap / deviation
        half_square = 0.5 * ratio * ratio
        harmonic = w_top * (w_bottom / (w_top + w_bottom))
        bound = half_square * harmonic
    usable = trusted(deviation) & trusted(half_square) & trusted(harmonic) & trusted(bound)
    return np.where(usable, bound * BOUND_MARGIN, 0.0)


def scan_pairs(evaluate, family, theta_top, theta_bottom, w_top, w_bottom, threshold: float | None,
               limit: int = 1_000_000, chunk_pairs: int = CHUNK_PAIRS) -> PairScan:
    """Scan every (top, bottom) pair.

    Parameters
    ----------
    evaluate : callable
        ``evaluate(rows, cols) -> costs`` for arrays of positions (broadcasting), the exact costs.
    family : ExponentialFamily
    theta_top, theta_bottom, w_top, w_bottom : ndarray
        Means and effective weights (allocation over dispersion) of the top and bottom sides, in the order of
        the positions.
    threshold : float or None
        Pairs with exact cost below it are listed. The minimum is exact when it is below the threshold;
        otherwise every pair is at least the threshold and the minimum reported is the smallest cost
        evaluated. With ``None`` the threshold follows the running minimum, which makes the minimum exact
        (nothing is listed).
    limit : int
        At most this many pairs are listed (the ones of smallest cost).

    Above ``BLOCK_PAIRS`` pairs the scan runs on blocks (:func:`_scan_blocks`) and the minimum it reports is
    always exact.
    """
    if theta_top.shape[0] * theta_bottom.shape[0] > BLOCK_PAIRS:
        return _scan_blocks(evaluate, family, theta_top, theta_bottom, w_top, w_bottom, threshold, limit,
                            chunk_pairs)
    return _scan_chunks(evaluate, family, theta_top, theta_bottom, w_top, w_bottom, threshold, limit, chunk_pairs)


def _scan_chunks(evaluate, family, theta_top, theta_bottom, w_top, w_bottom, threshold, limit, chunk_pairs):
    """:func:`scan_pairs` over blocks of top rows, each against every bottom arm."""
    n_top, n_bottom = theta_top.shape[0], theta_bottom.shape[0]
    rows_per_chunk = max(1, chunk_pairs // max(n_bottom, 1))
    # harmonic costs of both kinds (V_1 constant): the bound is the cost, for whichever kind evaluate computes
    exact_everywhere = family.harmonic_costs("confidence") and family.harmonic_costs("budget")
    best, best_row, best_col = np.inf, -1, -1
    listed_rows, listed_cols, listed_costs = [], [], []
    for start in range(0, n_top, rows_per_chunk):
        stop = min(n_top, start + rows_per_chunk)
        if exact_everywhere:
            costs = evaluate(np.arange(start, stop)[:, None], np.arange(n_bottom)[None, :])
            flat = int(np.argmin(costs))
            candidate_rows, candidate_cols = np.nonzero(costs < (threshold if threshold is not None else -np.inf))
            candidate_costs = costs[candidate_rows, candidate_cols]
            row, col = divmod(flat, n_bottom)
            chunk_best = float(costs[row, col])
            candidate_rows = candidate_rows + start
            row += start
        else:
            top_theta, top_w = theta_top[start:stop, None], w_top[start:stop, None]
            bound = _pair_bound(family, np.abs(top_theta - theta_bottom[None, :]), top_w, w_bottom[None, :],
                                np.minimum(top_theta, theta_bottom[None, :]), np.maximum(top_theta, theta_bottom[None, :]))
            # always evaluate the pair of smallest bound, so that the running minimum is finite
            flat = int(np.argmin(bound))
            row, col = divmod(flat, n_bottom)
            if threshold is None:
                best_here = float(evaluate(np.array([row + start]), np.array([col]))[0])
                cutoff = min(best, best_here)
            else:
                cutoff = threshold
            suspect = bound < cutoff
            suspect.flat[flat] = True
            candidate_rows, candidate_cols = np.nonzero(suspect)
            costs = evaluate(candidate_rows + start, candidate_cols)
            position = int(np.argmin(costs))
            chunk_best = float(costs[position])
            row, col = int(candidate_rows[position]) + start, int(candidate_cols[position])
            below = costs < (threshold if threshold is not None else -np.inf)
            candidate_rows, candidate_cols, candidate_costs = candidate_rows[below] + start, candidate_cols[below], costs[below]
        if chunk_best < best:
            best, best_row, best_col = chunk_best, row, col
        if candidate_costs.size:
            listed_rows.append(candidate_rows)
            listed_cols.append(candidate_cols)
            listed_costs.append(candidate_costs)
    return _listed(best, best_row, best_col, listed_rows, listed_cols, listed_costs, limit)


def _listed(best, best_row, best_col, listed_rows, listed_cols, listed_costs, limit) -> PairScan:
    """The scan's result from its running minimum and the lists of pairs below the threshold (the ``limit``
    smallest kept)."""
    if listed_costs:
        rows, cols, costs = (np.concatenate(listed_rows), np.concatenate(listed_cols), np.concatenate(listed_costs))
        if costs.size > limit:
            keep = np.argpartition(costs, limit - 1)[:limit]
            rows, cols, costs = rows[keep], cols[keep], costs[keep]
    else:
        rows = cols = np.zeros(0, dtype=int)
        costs = np.zeros(0)
    return PairScan(best, best_row, best_col, rows, cols, costs)


class _Blocks(NamedTuple):
    """One side cut into blocks of consecutive means (in decreasing order): ``order`` sorts the side,
    ``starts`` and ``sizes`` delimit the blocks in that order; ``low``, ``high`` are each block's extreme
    means and ``weight`` its smallest effective weight."""

    order: np.ndarray
    starts: np.ndarray
    sizes: np.ndarray
    low: np.ndarray
    high: np.ndarray
    weight: np.ndarray


def _blocks(theta: np.ndarray, w: np.ndarray, size: int) -> _Blocks:
    order = np.argsort(-theta, kind="stable")
    starts = np.arange(0, theta.shape[0], size)
    sizes = np.diff(np.append(starts, theta.shape[0]))
    sorted_theta, sorted_w = theta[order], w[order]
    return _Blocks(order, starts, sizes, np.minimum.reduceat(sorted_theta, starts),
                   np.maximum.reduceat(sorted_theta, starts), np.minimum.reduceat(sorted_w, starts))


def _scan_blocks(evaluate, family, theta_top, theta_bottom, w_top, w_bottom, threshold, limit, chunk_pairs,
                 size: int = BLOCK) -> PairScan:
    r""":func:`scan_pairs` on blocks. Each side is sorted by mean and cut into blocks of ``size`` consecutive
    arms; for a block pair, :math:`|\theta_i - \theta_j|` is at least the distance between the blocks' ranges
    of means, :math:`\bar V` at most the largest :math:`V_1` over the union of the ranges, and
    :math:`w_iw_j/(w_i+w_j)` (increasing in both weights) at least its value at the blocks' smallest weights, so
    the closed-form bound of the module docstring holds for the whole block at once. Block pairs are evaluated
    in increasing order of their bound, and only while the bound is below the larger of the threshold and the
    running minimum: the minimum is exact and every pair below the threshold is listed. At the allocations
    the solver meets, which grow toward the boundary (Wang, Yang, You 2022, Proposition 3.2), the pairs near
    the smallest cost lie along a monotone band of blocks, so most block pairs are never evaluated."""
    exact_everywhere = family.harmonic_costs("confidence") and family.harmonic_costs("budget")
    top, bottom = _blocks(theta_top, w_top, size), _blocks(theta_bottom, w_bottom, size)
    distance = np.maximum(np.maximum(top.low[:, None] - bottom.high[None, :], bottom.low[None, :] - top.high[:, None]),
                          0.0)
    block_bound = _pair_bound(family, distance, top.weight[:, None], bottom.weight[None, :],
                              np.minimum(top.low[:, None], bottom.low[None, :]),
                              np.maximum(top.high[:, None], bottom.high[None, :])).ravel()
    by_bound = np.argsort(block_bound, kind="stable")
    sorted_bounds = block_bound[by_bound]
    block_pairs = (top.sizes[:, None] * bottom.sizes[None, :]).ravel()[by_bound]
    cumulative = np.cumsum(block_pairs)
    n_bottom_blocks = bottom.starts.shape[0]
    best, best_row, best_col = np.inf, -1, -1
    listed_rows: list = []
    listed_cols: list = []
    listed_costs: list = []
    position = 0
    while position < by_bound.shape[0]:
        cutoff = best if threshold is None else max(threshold, best)
        if not sorted_bounds[position] < cutoff:
            break
        below_cutoff = cumulative[int(np.searchsorted(sorted_bounds, cutoff)) - 1]
        if position > 0 and below_cutoff > _BLOCKS_WORTHWHILE * cumulative[-1]:
            # most pairs are near the cutoff (tight clusters at their optimum): the bounds do not prune, and the
            # row chunks evaluate the same pairs faster (broadcasting instead of gathering every pair)
            return _scan_chunks(evaluate, family, theta_top, theta_bottom, w_top, w_bottom, threshold, limit,
                                chunk_pairs)
        # the next block pairs of bound below the cutoff, about chunk_pairs pairs (at least one block pair; the
        # first batch smaller, to learn the minimum before deciding whether the blocks prune)
        done = cumulative[position - 1] if position else 0
        batch = chunk_pairs if position else chunk_pairs // 8
        end = max(position + 1, min(int(np.searchsorted(cumulative, done + batch, side="right")),
                                    int(np.searchsorted(sorted_bounds, cutoff, side="left"))))
        top_block, bottom_block = np.divmod(by_bound[position:end], n_bottom_blocks)
        counts = block_pairs[position:end]
        owner = np.repeat(np.arange(counts.shape[0]), counts)
        offset = np.arange(owner.shape[0]) - np.repeat(np.cumsum(counts) - counts, counts)
        width = bottom.sizes[bottom_block][owner]
        rows = top.order[top.starts[top_block][owner] + offset // width]
        cols = bottom.order[bottom.starts[bottom_block][owner] + offset % width]
        position = end
        if not exact_everywhere:  # the pair bound first, the exact (logarithmic) costs where it is below the cutoff
            theta_i, theta_j = theta_top[rows], theta_bottom[cols]
            suspect = _pair_bound(family, np.abs(theta_i - theta_j), w_top[rows], w_bottom[cols], np.minimum(theta_i, theta_j),
                                  np.maximum(theta_i, theta_j)) < cutoff
            rows, cols = rows[suspect], cols[suspect]
            if rows.shape[0] == 0:
                continue
        costs = evaluate(rows, cols)
        smallest = int(np.argmin(costs))
        if costs[smallest] < best:
            best, best_row, best_col = float(costs[smallest]), int(rows[smallest]), int(cols[smallest])
        if threshold is not None:
            below = costs < threshold
            if below.any():
                listed_rows.append(rows[below])
                listed_cols.append(cols[below])
                listed_costs.append(costs[below])
    return _listed(best, best_row, best_col, listed_rows, listed_cols, listed_costs, limit)
