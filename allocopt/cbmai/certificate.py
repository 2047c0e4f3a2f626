"""The optimality certificate of the CBMAI LP, shared by every method and every test.

For the primal ``max {mu^T x : A x = b, x >= 0}`` and its dual ``min {b^T lambda : A^T lambda >= mu}``, a pair
``(x, lambda)`` is optimal exactly when

* ``A x = b`` and ``x >= 0`` (primal feasibility),
* ``d = A^T lambda - mu >= 0`` (dual feasibility; ``d`` are the reduced costs of the minimisation convention),
* ``x_j d_j = 0`` for every column (complementary slackness), equivalently ``b^T lambda = mu^T x``.

An infeasible primal is certified by a Farkas vector ``y`` with ``A^T y >= 0`` and ``b^T y < 0`` (a direction in
which the dual objective decreases without bound).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["LPCertificate", "certify", "orient_duals", "farkas_ray"]


@dataclass(frozen=True)
class LPCertificate:
    """Residuals of the optimality conditions (all ``>= 0``; NaN when they do not apply).

    Attributes
    ----------
    primal_residual : float
        ``||A x - b||_inf``.
    primal_infeasibility : float
        ``max(0, -min_j x_j)``.
    dual_infeasibility : float
        ``max(0, -min_j (A^T lambda - mu)_j)``.
    complementarity : float
        ``max_j |x_j (A^T lambda - mu)_j|``.
    duality_gap : float
        ``|b^T lambda - mu^T x|``.
    farkas_ray : ndarray or None
        For an infeasible LP, ``y`` with ``A^T y >= 0`` and ``b^T y = -1`` (None otherwise).
    """

    primal_residual: float
    primal_infeasibility: float
    dual_infeasibility: float
    complementarity: float
    duality_gap: float
    farkas_ray: np.ndarray | None = None

    def max_violation(self) -> float:
        """The largest residual (NaN for an infeasible LP)."""
        return float(max(self.primal_residual, self.primal_infeasibility, self.dual_infeasibility,
                         self.complementarity, self.duality_gap))

    def certifies(self, tol: float = 1e-8) -> bool:
        """True when every residual is at most ``tol`` (or, for an infeasible LP, the Farkas ray checks out)."""
        if self.farkas_ray is not None:
            return True
        return bool(self.max_violation() <= tol)


def certify(matrix: np.ndarray, rhs: np.ndarray, objective: np.ndarray, x: np.ndarray,
            duals: np.ndarray) -> LPCertificate:
    """Residuals of the optimality conditions for ``(x, lambda)`` (see the module notes)."""
    reduced = matrix.T @ duals - objective
    return LPCertificate(
        primal_residual=float(np.max(np.abs(matrix @ x - rhs))),
        primal_infeasibility=float(max(0.0, -np.min(x, initial=0.0))),
        dual_infeasibility=float(max(0.0, -np.min(reduced, initial=0.0))),
        complementarity=float(np.max(np.abs(x * reduced), initial=0.0)),
        duality_gap=float(abs(rhs @ duals - objective @ x)),
    )


def orient_duals(candidate: np.ndarray, matrix: np.ndarray, rhs: np.ndarray, objective: np.ndarray,
                 value: float) -> np.ndarray:
    """Return ``candidate`` or ``-candidate``, whichever is the dual solution of the maximisation.

    Solvers report multipliers with different sign conventions (scipy's marginals are derivatives of the
    minimisation it solves; PuLP's HiGHS interface flips the sign of a maximisation). The right sign gives
    ``b^T lambda = mu^T x`` and ``A^T lambda >= mu``; the score below compares both signs on both criteria, which
    also settles the case ``value = 0`` where the dual objective alone cannot.
    """
    scale = max(1.0, abs(value), float(np.max(np.abs(objective), initial=0.0)))

    def badness(lam: np.ndarray) -> float:
        gap = abs(rhs @ lam - value)
        infeasibility = max(0.0, -float(np.min(matrix.T @ lam - objective, initial=0.0)))
        return (gap + infeasibility) / scale

    return candidate if badness(candidate) <= badness(-candidate) else -candidate


def farkas_ray(matrix: np.ndarray, rhs: np.ndarray) -> np.ndarray | None:
    """A vector ``y`` with ``A^T y >= 0`` and ``b^T y = -1``, or None if there is none (the LP is feasible).

    Found by HiGHS as ``min ||y||_1`` over that polyhedron (an LP in ``y = y+ - y-``).
    """
    from scipy.optimize import linprog

    n_rows = matrix.shape[0]
    cost = np.ones(2 * n_rows)
    upper = np.hstack([-matrix.T, matrix.T])  # -(A^T y) <= 0
    equality = np.hstack([rhs, -rhs])[None, :]
    result = linprog(cost, A_ub=upper, b_ub=np.zeros(matrix.shape[1]), A_eq=equality, b_eq=[-1.0],
                     bounds=(0, None), method="highs")
    if result.status != 0:
        return None
    return result.x[:n_rows] - result.x[n_rows:]
