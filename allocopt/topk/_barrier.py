r"""Log-barrier interior-point method for the reduced homogeneous problem over a set of candidate pairs.

.. math::
    \min_\psi\ n^\top\psi - \tau \sum_{p \in P} \log(C_p(\psi) - 1),

followed for decreasing :math:`\tau` (a feasible start comes from homogeneity: scale any positive
allocation until every candidate cost is at least 2). Each centring step is a damped Newton step with the
Hessian :math:`\tau\sum_p [\nabla C_p\nabla C_p^\top/s_p^2 - \nabla^2 C_p/s_p]`, :math:`s_p = C_p - 1`
(positive definite: the costs are concave), solved through the Schur complement onto the smaller side (the
same-side blocks are diagonal). At the central point for :math:`\tau` the duality gap is :math:`|P|\tau` and
:math:`\nu_p = \tau/s_p` are dual estimates. The exact solver uses it only to find the binding forest when
its active-set pivots do not; the answer is then polished exactly on that forest.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import cho_factor, cho_solve

from .._threads import single_blas_thread
from ._groups import Reduced

__all__ = ["BarrierPoint", "barrier_path"]

# below this fraction of all pairs (and above 256 groups on the smaller side) the Newton systems are sparse
_SPARSE_FRACTION = 0.05


@dataclass(frozen=True)
class BarrierPoint:
    psi: np.ndarray
    nu: np.ndarray
    relative_gap: float
    newton_steps: int


def _newton_step(reduced: Reduced, terms, rows, cols, slack, tau, gradient):
    """Solve H step = -gradient, H = tau sum_p [grad C_p grad C_p^T / s_p^2 - hess C_p / s_p].

    Every pair couples one top and one bottom group, so the top-top and bottom-bottom blocks of H are
    diagonal; the bottom (or top, whichever side is larger) block is eliminated and the Schur complement, a
    symmetric positive definite matrix of the smaller side's size, is factorised: densely by Cholesky, or,
    for a sparse set of candidate pairs on a large instance, by a sparse LU factorisation.
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
    if reduced.n_top <= reduced.n_bottom:
        small_groups, large_groups, small_index, large_index = reduced.top_groups, reduced.bottom_groups, rows, cols
    else:
        small_groups, large_groups, small_index, large_index = reduced.bottom_groups, reduced.top_groups, cols, rows
    large_diagonal = diagonal[large_groups]
    rhs_large = gradient[large_groups]
    if rows.shape[0] > _SPARSE_FRACTION * small_groups.size * large_groups.size or small_groups.size <= 256:
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
    else:
        # candidate pairs (column generation) on a large instance: the coupling is sparse, and so is the Schur
        # complement when each large-side group has few partners; a sparse LU factorisation replaces the dense
        # Cholesky, whose cubic cost would dominate
        from scipy.sparse import csr_matrix, diags
        from scipy.sparse.linalg import splu

        coupling = csr_matrix((cross, (small_index, large_index)), shape=(small_groups.size, large_groups.size))
        scaled = coupling @ diags(1.0 / large_diagonal)
        schur = (diags(diagonal[small_groups]) - scaled @ coupling.T).tocsc()
        rhs = -gradient[small_groups] + scaled @ rhs_large
        if not (np.all(np.isfinite(schur.data)) and np.all(np.isfinite(rhs))):
            return np.full(reduced.n_groups, np.nan)
        small_step = splu(schur).solve(rhs)
        back = coupling.T @ small_step
    step = np.empty(reduced.n_groups)
    step[small_groups] = small_step
    step[large_groups] = (-rhs_large - back) / large_diagonal
    return step


def _barrier_value(reduced, psi, rows, cols, tau):
    costs = reduced.terms(psi, rows, cols).cost
    if np.any(costs <= 1.0) or np.any(psi <= 0):
        return np.inf
    return float(reduced.multiplicity @ psi - tau * np.sum(np.log(costs - 1.0)))


def barrier_path(reduced: Reduced, rows: np.ndarray, cols: np.ndarray, psi_start: np.ndarray,
                 target_gap: float = 1e-10, max_newton: int = 400, reduction: float = 0.2,
                 centring: float = 0.05, resume: "BarrierPoint | None" = None) -> BarrierPoint:
    """Follow the central path until the duality gap is below ``target_gap`` times the objective; ``resume``
    continues from an earlier point of the same path (same pairs) instead of starting over. The dense Schur
    complements are factorised with one BLAS thread (:func:`allocopt._threads.single_blas_thread`)."""
    with single_blas_thread():
        return _barrier_path(reduced, rows, cols, psi_start, target_gap, max_newton, reduction, centring, resume)


def _barrier_path(reduced, rows, cols, psi_start, target_gap, max_newton, reduction, centring, resume):
    multiplicity = reduced.multiplicity
    n_pairs = rows.shape[0]
    if resume is not None and resume.psi.shape == psi_start.shape and resume.nu.shape[0] == n_pairs:
        psi = resume.psi.copy()
        tau = resume.relative_gap * float(multiplicity @ psi) / n_pairs * reduction
    else:
        psi = np.maximum(np.asarray(psi_start, dtype=float), 1e-300)
        psi = psi * (2.0 / np.min(reduced.terms(psi, rows, cols).cost))
        tau = float(multiplicity @ psi) / n_pairs
    steps = 0
    top, bottom = reduced.top_groups[rows], reduced.bottom_groups[cols]
    while steps < max_newton:
        for _ in range(50):
            terms = reduced.terms(psi, rows, cols, second_order=True)
            slack = terms.cost - 1.0
            inverse = 1.0 / slack
            gradient = multiplicity - tau * (np.bincount(top, weights=inverse * terms.grad_top, minlength=psi.size)
                                             + np.bincount(bottom, weights=inverse * terms.grad_bottom,
                                                           minlength=psi.size))
            step = _newton_step(reduced, terms, rows, cols, slack, tau, gradient)
            steps += 1
            decrement = float(-gradient @ step)
            # the barrier function is tau times a self-concordant one, so decrement / tau is the invariant
            # Newton decrement; approximate centring is enough to follow the path
            if not np.isfinite(decrement) or decrement <= centring * tau:
                break
            # backtracking line search on the barrier function, staying strictly feasible
            current = _barrier_value(reduced, psi, rows, cols, tau)
            length = 1.0
            negative = step < 0
            if np.any(negative):
                length = min(1.0, 0.99 * float(np.min(-psi[negative] / step[negative])))
            while length > 1e-12:
                candidate = psi + length * step
                value = _barrier_value(reduced, candidate, rows, cols, tau)
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
    slack = reduced.terms(psi, rows, cols).cost - 1.0
    nu = tau / slack
    return BarrierPoint(psi=psi, nu=nu, relative_gap=n_pairs * tau / float(multiplicity @ psi), newton_steps=steps)
