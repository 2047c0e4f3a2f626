r"""All-pairs scans of the cost matrix without materialising it: chunked, with a cheap lower bound.

The exact solver and the certificate need :math:`\min_{i \in I, j \in J} C_{ij}(\psi)` and the pairs below a
threshold for up to :math:`k(K-k) \approx 2.5 \cdot 10^7` pairs. The scan runs over blocks of top rows (about
``chunk_pairs`` pairs each). For non-Gaussian families every divergence satisfies
:math:`d_1(x, y) \ge (x-y)^2 / (2\bar V)` with :math:`\bar V = \max V_1` between the two means
(:meth:`~allocopt.families.ExponentialFamily.unit_variance_bound`), hence

.. math::
    C_{ij}(\psi),\ B_{ij}(\psi) \ \ge\ \frac{(\theta_i - \theta_j)^2}{2\bar V_{ij}} \frac{w_i w_j}{w_i + w_j},

a closed form that costs a few operations per pair; the exact (logarithmic) costs are evaluated only where
the bound falls below the threshold. When both kinds of cost are harmonic
(:meth:`~allocopt.families.ExponentialFamily.harmonic_costs`: Gaussian arms) the bound is the cost itself,
evaluated exactly everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


__all__ = ["PairScan", "scan_pairs", "CHUNK_PAIRS"]

CHUNK_PAIRS = 1 << 21


@dataclass(frozen=True)
class PairScan:
    """Result of :func:`scan_pairs`.

    ``minimum`` is the smallest cost over all pairs (exact), at pair ``(argmin_row, argmin_col)``;
    ``rows, cols, costs`` list the pairs with cost below the threshold (at most ``limit`` of them, the
    smallest), positions in the top/bottom orders of the scanned problem.
    """

    minimum: float
    argmin_row: int
    argmin_col: int
    rows: np.ndarray
    cols: np.ndarray
    costs: np.ndarray


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
    """
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
            variance = family.unit_variance_bound(np.minimum(top_theta, theta_bottom[None, :]),
                                                  np.maximum(top_theta, theta_bottom[None, :]))
            total = top_w + w_bottom[None, :]
            with np.errstate(divide="ignore", invalid="ignore"):
                bound = (top_theta - theta_bottom[None, :]) ** 2 / (2.0 * variance) * (top_w * w_bottom[None, :]) / total
            bound = np.where(total > 0, bound, 0.0)
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
    if listed_costs:
        rows, cols, costs = (np.concatenate(listed_rows), np.concatenate(listed_cols), np.concatenate(listed_costs))
        if costs.size > limit:
            keep = np.argpartition(costs, limit - 1)[:limit]
            rows, cols, costs = rows[keep], cols[keep], costs[keep]
    else:
        rows = cols = np.zeros(0, dtype=int)
        costs = np.zeros(0)
    return PairScan(best, best_row, best_col, rows, cols, costs)
