r"""Log-barrier interior-point method for the reduced homogeneous problem over a set of candidate pairs.

.. math::
    \min_\psi\ n^\top\psi - \tau \sum_{p \in P} \log(C_p(\psi) - 1),

followed for decreasing :math:`\tau` (a feasible start comes from homogeneity: scale any positive
allocation until every candidate cost is at least 2). Each centring step is a damped Newton step with the
Hessian :math:`\tau\sum_p [\nabla C_p\nabla C_p^\top/s_p^2 - \nabla^2 C_p/s_p]`, :math:`s_p = C_p - 1`
(positive definite: the costs are concave), solved through the dense Schur complement onto the smaller side
(the same-side blocks are diagonal) or, for a sparse set of candidate pairs on a large instance, by a sparse
factorisation of the whole matrix, whose off-diagonal pattern is the candidate graph. At the central point for :math:`\tau` the duality gap is :math:`|P|\tau` and
:math:`\nu_p = \tau/s_p` are dual estimates. The exact solver uses it only to find the binding forest when
its active-set pivots do not; the answer is then polished exactly on that forest.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from scipy.linalg import cho_factor, cho_solve

from ..._threads import single_blas_thread
from .._scan import PairScan
from .checks import Checker
from .forest import spanning_forest
from .groups import Reduced
from .star import double_star_edges

__all__ = ["BarrierPoint", "barrier_path", "BarrierRound", "barrier_forest", "grown"]

# below this fraction of all pairs (and above 256 groups on the smaller side) the Newton systems are sparse
_SPARSE_FRACTION = 0.05


# a point resumed on a grown set of pairs is scaled until every cost is at least 1 + _REENTRY times its relative
# duality gap: the new pairs' slacks are then of the size of the binding pairs' slacks on the path
_REENTRY = 10.0


# above this scale factor the path is started afresh from the (scaled) point instead
_REENTRY_LIMIT = 1.1


@dataclass(frozen=True)
class BarrierPoint:
    psi: np.ndarray
    nu: np.ndarray
    relative_gap: float
    newton_steps: int


def _newton_step(reduced: Reduced, terms, rows, cols, slack, tau, gradient, ordering: dict | None = None):
    """Solve H step = -gradient, H = sum_p tau_p [grad C_p grad C_p^T / s_p^2 - hess C_p / s_p] (``tau`` one
    number, or one per pair: the barrier parameter times the pair's weight).

    Every pair couples one top and one bottom group, so the top-top and bottom-bottom blocks of H are
    diagonal. For a sparse set of candidate pairs on a large instance H is factorised as it is, sparse (its
    off-diagonal pattern is the candidate graph, near a monotone forest at the optimum), with a minimum-degree
    order; otherwise the larger side's block is eliminated and the Schur complement, a dense symmetric positive
    definite matrix of the smaller side's size, is factorised by Cholesky. ``ordering`` (a dict) keeps the
    sparse factorisation's fill-reducing order between steps on the same pairs (:func:`_sparse_newton_step`).
    """
    top, bottom = reduced.top_groups[rows], reduced.bottom_groups[cols]
    inverse = 1.0 / slack
    outer = tau * inverse * inverse
    curvature = tau * inverse
    diagonal = np.bincount(top, weights=outer * terms.grad_top**2 - curvature * terms.hess_top,
                           minlength=reduced.n_groups)
    diagonal += np.bincount(bottom, weights=outer * terms.grad_bottom**2 - curvature * terms.hess_bottom,
                            minlength=reduced.n_groups)
    cross = outer * terms.grad_top * terms.grad_bottom - curvature * terms.hess_cross
    if rows.shape[0] <= _SPARSE_FRACTION * reduced.n_top * reduced.n_bottom and min(reduced.n_top,
                                                                                     reduced.n_bottom) > 256:
        # candidate pairs (column generation) on a large instance: H itself is sparse, its pattern the candidate
        # graph (top groups x bottom groups); it is factorised whole with a fill-reducing order (a Schur
        # complement onto one side would join every partner of a large-side group into a dense clique)
        return _sparse_newton_step(reduced, top, bottom, diagonal, cross, gradient, ordering)
    if reduced.n_top <= reduced.n_bottom:
        small_groups, large_groups, small_index, large_index = reduced.top_groups, reduced.bottom_groups, rows, cols
    else:
        small_groups, large_groups, small_index, large_index = reduced.bottom_groups, reduced.top_groups, cols, rows
    large_diagonal = diagonal[large_groups]
    rhs_large = gradient[large_groups]
    # every pair appears once: the coupling matrix is a scatter (bincount is much faster than np.add.at)
    coupling = np.bincount(small_index * large_groups.size + large_index, weights=cross,
                           minlength=small_groups.size * large_groups.size).reshape(small_groups.size,
                                                                                   large_groups.size)
    scaled = coupling / large_diagonal
    schur = np.diag(diagonal[small_groups]) - scaled @ coupling.T
    rhs = -gradient[small_groups] + scaled @ rhs_large
    if not (np.all(np.isfinite(schur)) and np.all(np.isfinite(rhs))):
        # the system overflowed (allocations spanning the floating-point range): no step; the caller stops
        return np.full(reduced.n_groups, np.nan)
    try:
        small_step = cho_solve(cho_factor(schur, check_finite=False), rhs, check_finite=False)
    except (np.linalg.LinAlgError, ValueError):
        small_step = np.linalg.lstsq(schur, rhs, rcond=None)[0]
    back = coupling.T @ small_step
    step = np.empty(reduced.n_groups)
    step[small_groups] = small_step
    step[large_groups] = (-rhs_large - back) / large_diagonal
    return step


def _sparse_newton_step(reduced: Reduced, top, bottom, diagonal, cross, gradient, ordering: dict | None = None):
    """Solve H step = -gradient with H sparse: ``diagonal`` on the diagonal and ``cross`` at (top, bottom) and
    (bottom, top); NaN when the system overflowed or is singular (the caller stops).

    The minimum-degree order is computed by the first factorisation and kept in ``ordering`` (the pattern of H is
    the same at every step on the same pairs); later steps factorise H permuted by it in the natural order, the
    same elimination without computing the order again (the order took 0.1-0.5 s of each 0.1-0.7 s
    factorisation at 10^4 groups, the numeric factorisation 10-25 ms)."""
    from scipy.sparse import csc_matrix
    from scipy.sparse.linalg import splu

    if not (np.all(np.isfinite(diagonal)) and np.all(np.isfinite(cross)) and np.all(np.isfinite(gradient))):
        return np.full(reduced.n_groups, np.nan)
    groups = np.arange(reduced.n_groups)
    hessian = csc_matrix((np.concatenate([diagonal, cross, cross]),
                          (np.concatenate([groups, top, bottom]), np.concatenate([groups, bottom, top]))),
                         shape=(reduced.n_groups, reduced.n_groups))
    # symmetric positive definite: pivots on the diagonal
    options = {"SymmetricMode": True}
    try:
        if ordering is not None and "order" in ordering:
            order = ordering["order"]
            factor = splu(hessian[order][:, order].tocsc(), permc_spec="NATURAL", diag_pivot_thresh=0.0,
                          options=options)
            step = np.empty(reduced.n_groups)
            step[order] = factor.solve(-gradient[order])
            return step
        # minimum degree order on the pattern of H
        factor = splu(hessian, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0, options=options)
    except RuntimeError:  # exactly singular
        return np.full(reduced.n_groups, np.nan)
    if ordering is not None:
        ordering["order"] = np.argsort(factor.perm_c)  # perm_c[j]: the position of column j
    return factor.solve(-gradient)


def _reentry_scale(reduced: Reduced, resume: "BarrierPoint", rows, cols) -> float:
    """The factor that makes every cost of the pairs at least 1 + _REENTRY times the point's relative gap."""
    reentry = 1.0 + _REENTRY * max(resume.relative_gap, 1e-6)
    return max(1.0, reentry / float(np.min(reduced.terms(resume.psi, rows, cols, compiled=True).cost)))


def _barrier_value(reduced, psi, rows, cols, tau, weights):
    costs = reduced.terms(psi, rows, cols, compiled=True).cost
    if np.any(costs <= 1.0) or np.any(psi <= 0):
        return np.inf
    return float(reduced.multiplicity @ psi - tau * np.sum(weights * np.log(costs - 1.0)))


def barrier_path(reduced: Reduced, rows: np.ndarray, cols: np.ndarray, psi_start: np.ndarray,
                 target_gap: float = 1e-10, max_newton: int = 400, reduction: float = 0.2,
                 centring: float = 0.05, resume: "BarrierPoint | None" = None,
                 weights: np.ndarray | None = None) -> BarrierPoint:
    r"""Follow the central path until the duality gap is below ``target_gap`` times the objective; ``resume``
    continues from an earlier point of the same path instead of starting over (on the same pairs, or on a
    grown set of pairs, scaled to be strictly feasible for them). ``weights`` (positive, one per pair, mean 1)
    weight the pairs' logarithms, :math:`-\tau\sum_p w_p\log s_p`: every weighted path leads to the optimum,
    and on it :math:`\nu_p s_p = \tau w_p`, so weights proportional to estimates of the optimal multipliers give
    every binding pair a slack of order :math:`\tau` however far apart the multipliers are. The dense Schur
    complements are factorised with one BLAS thread (:func:`allocopt._threads.single_blas_thread`)."""
    pair_weights = np.ones(rows.shape[0]) if weights is None else np.asarray(weights, dtype=float)
    with single_blas_thread():
        return _barrier_path(reduced, rows, cols, psi_start, target_gap, max_newton, reduction, centring, resume,
                             pair_weights)


def _barrier_path(reduced, rows, cols, psi_start, target_gap, max_newton, reduction, centring, resume, weights):
    multiplicity = reduced.multiplicity
    n_pairs = rows.shape[0]
    if resume is not None and resume.psi.shape == psi_start.shape and resume.nu.shape[0] == n_pairs:
        psi = resume.psi.copy()
        tau = resume.relative_gap * float(multiplicity @ psi) / n_pairs * reduction
    elif resume is not None and resume.psi.shape == psi_start.shape and _reentry_scale(reduced, resume, rows,
                                                                                        cols) <= _REENTRY_LIMIT:
        # the same path on a grown set of pairs (column generation) whose new pairs are violated only slightly:
        # the point, scaled up until they are strictly feasible too (homogeneity), and the same barrier
        # parameter (a point scaled further is far from the central point of that parameter: the path is
        # started afresh from it instead)
        psi = resume.psi * _reentry_scale(reduced, resume, rows, cols)
        tau = resume.relative_gap * float(multiplicity @ resume.psi) / resume.nu.shape[0]
    else:
        psi = np.maximum(np.asarray(psi_start, dtype=float), 1e-300)
        psi = psi * (2.0 / np.min(reduced.terms(psi, rows, cols, compiled=True).cost))
        tau = float(multiplicity @ psi) / n_pairs
    steps = 0
    top, bottom = reduced.top_groups[rows], reduced.bottom_groups[cols]
    ordering: dict = {}  # the sparse factorisations' order, for these pairs
    while steps < max_newton:
        for _ in range(50):
            terms = reduced.terms(psi, rows, cols, second_order=True, compiled=True)
            slack = terms.cost - 1.0
            inverse = weights / slack
            gradient = multiplicity - tau * (np.bincount(top, weights=inverse * terms.grad_top, minlength=psi.size)
                                             + np.bincount(bottom, weights=inverse * terms.grad_bottom,
                                                           minlength=psi.size))
            step = _newton_step(reduced, terms, rows, cols, slack, tau * weights, gradient, ordering)
            steps += 1
            decrement = float(-gradient @ step)
            # the barrier function is tau times a self-concordant one, so decrement / tau is the invariant
            # Newton decrement; approximate centring is enough to follow the path
            if not np.isfinite(decrement) or decrement <= centring * tau:
                break
            # backtracking line search on the barrier function, staying strictly feasible
            current = _barrier_value(reduced, psi, rows, cols, tau, weights)
            length = 1.0
            negative = step < 0
            if np.any(negative):
                length = min(1.0, 0.99 * float(np.min(-psi[negative] / step[negative])))
            while length > 1e-12:
                candidate = psi + length * step
                value = _barrier_value(reduced, candidate, rows, cols, tau, weights)
                if value <= current - 0.25 * length * decrement:
                    break
                length *= 0.5
            else:
                break
            psi = candidate
            if steps >= max_newton:
                break
        objective = float(multiplicity @ psi)
        if n_pairs * tau <= target_gap * objective:
            break
        tau *= reduction
    slack = reduced.terms(psi, rows, cols, compiled=True).cost - 1.0
    nu = tau * weights / slack
    return BarrierPoint(psi=psi, nu=nu, relative_gap=n_pairs * tau / float(multiplicity @ psi), newton_steps=steps)


# ------------------------------------------------------------- the binding forest located by the barrier
# barrier rounds after the first: the binding pairs are those whose slack is at most this factor times the median
# slack of the n_groups - 1 smallest (see _small_slacks)
_SLACK_SPREAD = 1e4


# duality gap of the barrier during column generation (the pair set only has to contain the binding pairs)
_GENERATION_GAP = 1e-4


# ... and while more pairs than groups are violated (the point then only guides the choice of the next pairs)
_FIRST_GENERATION_GAP = 1e-2


# column generation: the cheapest partners of every group in the first candidate set, and the most violated
# partners of every group added per round
_PARTNERS = 4


_PARTNERS_ADDED = 16


class BarrierRound(NamedTuple):
    """The pairs the barrier ran on and the point it reached (continued by the next round)."""

    rows: np.ndarray
    cols: np.ndarray
    point: BarrierPoint


class _BarrierForest(NamedTuple):
    """The binding forest located by a barrier round, the allocation to start its passes at, and the round."""

    rows: np.ndarray
    cols: np.ndarray
    psi: np.ndarray
    round: BarrierRound


@np.errstate(all="ignore")  # see _Search.run: the points it returns are checked the same way
def barrier_forest(reduced: Reduced, checker: Checker, psi: np.ndarray, barrier_pairs: int, round_index: int,
                    previous: BarrierRound | None = None) -> _BarrierForest:
    """Binding forest located by the barrier method over all pairs or, above ``barrier_pairs`` pairs, over
    candidate pairs grown by column generation; ``psi`` selects the first candidates (pairs of small cost at a
    good allocation) and starts the column generation's path (the path over all pairs starts from the uniform
    allocation); ``previous`` is the previous round, whose path is continued."""
    n_pairs = reduced.n_top * reduced.n_bottom
    target_gap = 10.0 ** (-8 - 2 * round_index)
    start = np.ones(reduced.n_groups)
    resume = previous.point if previous is not None else None
    if previous is not None:
        rows, cols = previous.rows, previous.cols
    elif n_pairs <= barrier_pairs:
        rows, cols = np.divmod(np.arange(n_pairs), reduced.n_bottom)
    else:
        rows, cols = _candidate_pairs(reduced, checker, psi, barrier_pairs)
    if previous is None and rows.shape[0] < n_pairs:
        # column generation at a loose duality gap: the barrier point is feasible for the candidates (costs
        # >= 1 on the homogeneous scale); the most violated pairs outside them (a few per group) are added and
        # the path continues from that point, until no pair is violated; then it is followed to the target
        # (at a looser gap while many pairs are violated: the point is only a guide to the next pairs)
        point = barrier_path(reduced, rows, cols, psi, target_gap=_FIRST_GENERATION_GAP)
        for _ in range(50):
            violated = checker.scan_below(point.psi, 1.0, limit=max(64 * reduced.n_groups, 4096))
            if violated.costs.size == 0 and point.relative_gap <= _GENERATION_GAP:
                break
            gap = _FIRST_GENERATION_GAP if violated.costs.size > reduced.n_groups else _GENERATION_GAP
            rows, cols = grown(reduced, rows, cols, violated, _PARTNERS_ADDED)
            point = barrier_path(reduced, rows, cols, point.psi, target_gap=gap, resume=point)
        resume = point
    weights = None
    if previous is not None:  # (module docstring of _barrier: binding pairs' slacks of order tau)
        estimate = np.maximum(previous.point.nu, 1e-12 * float(np.max(previous.point.nu)))
        weights = estimate / float(np.mean(estimate))
    point = barrier_path(reduced, rows, cols, start, target_gap=target_gap, resume=resume, weights=weights)
    # a forest has at most n_groups - 1 edges: the multipliers are compared with the (n_groups - 1)-th largest,
    # so that one pair at rounding-level slack (a huge tau / slack) cannot hide all the others
    edges = min(reduced.n_groups - 1, point.nu.size)
    reference = np.partition(point.nu, point.nu.size - edges)[point.nu.size - edges]
    nu_weights = point.nu / reference
    active = nu_weights >= 1e-5
    if weights is not None:
        active &= _small_slacks(reduced, rows, cols, point, edges)
    forest_rows, forest_cols = spanning_forest(reduced, rows[active], cols[active], nu_weights[active])
    return _BarrierForest(forest_rows, forest_cols, point.psi, BarrierRound(rows, cols, point))


def _small_slacks(reduced: Reduced, rows, cols, point: BarrierPoint, edges: int) -> np.ndarray:
    r"""The pairs of a point on a path weighted by the previous round's multipliers whose slack is at most
    ``_SLACK_SPREAD`` times the median slack of the ``edges`` smallest. On that path every binding pair's slack is
    of order :math:`\tau` (its weight estimates its multiplier) while a non-binding pair keeps its slack at the
    optimum. On the unweighted path (the first round) the slack of a binding pair is :math:`\tau/\nu_p`, and on
    heteroscedastic Gaussian instances whose variances span ten decades the binding pairs' multipliers span as
    many: their slacks mix with those of non-binding pairs, and the forest chosen by the multipliers alone joined
    two binding trees by a non-binding pair, whose forest system had no positive solution."""
    slack = reduced.terms(point.psi, rows, cols).cost - 1.0
    smallest = np.partition(slack, edges - 1)[:edges]
    return slack <= _SLACK_SPREAD * float(np.median(smallest))


def _candidate_pairs(reduced: Reduced, checker: Checker, psi: np.ndarray, limit: int):
    """The double star and, for every group, its ``_PARTNERS`` cheapest partners at ``psi`` among the pairs
    within a factor 2 of the smallest cost (at most ``limit`` pairs listed)."""
    minimum = checker.scan_below(psi, None).minimum
    scan = checker.scan_below(psi, 2.0 * minimum, limit=limit)
    double_rows, double_cols = double_star_edges(reduced.n_top, reduced.n_groups)
    return grown(reduced, double_rows, double_cols, scan, _PARTNERS)


def grown(reduced: Reduced, rows, cols, scan: PairScan, partners: int):
    """The pairs (rows, cols) and, of the pairs listed by ``scan``, the ``partners`` cheapest of every top group
    and of every bottom group (a few per group: the binding forest has at most two edges per group on
    average, and a global cut of the cheapest pairs would give some groups hundreds and others none)."""
    keep = np.zeros(scan.costs.shape[0], dtype=bool)
    for side in (scan.rows, scan.cols):
        order = np.lexsort((scan.costs, side))
        ranked = side[order]
        first = np.searchsorted(ranked, ranked)  # position of each group's cheapest pair in the sorted order
        keep[order[np.arange(order.shape[0]) - first < partners]] = True
    pairs = np.unique(np.stack([np.concatenate([rows, scan.rows[keep]]),
                                np.concatenate([cols, scan.cols[keep]])], axis=1), axis=0)
    return pairs[:, 0], pairs[:, 1]
