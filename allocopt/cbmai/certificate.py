"""The certificate of the CBMAI LP: one judge for the answer of every method.

For the primal ``max {mu^T x : A x = b, x >= 0}`` and its dual ``min {b^T lambda : A^T lambda >= mu}``, a pair
``(x, lambda)`` is optimal exactly when

* ``A x = b`` and ``x >= 0`` (primal feasibility),
* ``d = A^T lambda - mu >= 0`` (dual feasibility; ``d`` are the reduced costs of the minimisation convention),
* ``x_j d_j = 0`` for every column (complementary slackness), equivalently ``b^T lambda = mu^T x``.

An infeasible primal is certified by a Farkas vector ``y`` with ``A^T y >= 0`` and ``b^T y < 0`` (a direction in
which the dual objective decreases without bound).

How an answer is certified
--------------------------
Every method's answer (the enumeration's, HiGHS's, PuLP's with any solver) goes through the same two checks,
which are the enumeration's own tests (:mod:`allocopt.cbmai.bases`), judged on the magnitudes that enter each
row and so invariant under any scaling of rows and columns:

* **optimal** (:func:`certify_optimal`): the point is *snapped* to a basis ``B``. The columns are ordered: the
  support (shares ``x_j u_j`` above the tolerance, largest first), the slack columns pinned at zero (subsets
  without a basis), then the others by increasing relative reduced cost of the solver's dual. A vertex (at most
  ``L + 1`` nonzeros) is tried with the bases that contain its support, completed from the columns that follow
  (its own bases: at a degenerate vertex they differ by their duals); a point inside an optimal face (more
  nonzeros, as interior-point methods return) with the bases of its first ``L + 3`` columns. The candidates are
  evaluated by :func:`~allocopt.cbmai.bases.evaluate_bases` (cancellation-ratio singularity screen, vertex
  from the minors of each row, componentwise relative feasibility) and the best-valued feasible one whose dual
  ``lambda = A_B^{-T} mu_B`` satisfies ``A_j^T lambda - mu_j >= -tol (|A_j|^T |lambda| + |mu_j| + |mu|_inf)`` on
  every column of the LP, with a gap bound (:func:`gap_bound`: every feasible ``x`` has ``0 <= x_j <= u_j``, so the
  optimum exceeds ``b^T lambda`` by at most ``sum_j u_j max(0, -d_j)``) of at most ``VALUE_TOL max(1, |value|)``,
  is the certificate. A primal feasible basis with a feasible dual is optimal (complementary slackness holds by
  construction, so ``b^T lambda = mu^T x``), whatever the solver's own point was worth; its vertex and dual
  replace the solver's. (The relative dual tolerance alone would pass a reduced cost of ``-2e-11`` on a slack
  that can reach ``100``: a vertex ``2e-9`` below the optimum.) The enumeration's own basis needs no gap bound:
  its optimality rests on every basis.
* **infeasible** (:func:`certify_infeasible`): a Farkas ray ``y`` (the solver's, or one computed on the
  equilibrated system) must prove that the LP, with its data taken as exact numbers, has no feasible point:
  every feasible ``x`` has ``p`` in the simplex and slacks ``s_l = cbar_l - c_l p <= cbar_l - min_a c_{l,a}``,
  i.e. ``0 <= x_j <= u_j``, so ``b^T y = (A^T y)^T x >= -sum_j u_j max(0, -(A^T y)_j)``. With ``g = A^T y`` and
  ``b^T y`` computed in floating point (each within ``gamma |A_j|^T |y|`` and ``gamma |b|^T |y|`` of the exact
  sums, ``gamma = 4 (L + 4) eps`` bounding the rounding of ``L + 1`` products and sums), the LP is certified
  infeasible when ``b^T y + gamma |b|^T |y| + sum_j u_j max(0, gamma |A_j|^T |y| - g_j) < 0``: then the exact
  ``b^T y`` is below the smallest value ``(A^T y)^T x`` can take. No tolerance is involved: the proof is about
  the exact LP.

An answer that passes neither is not certified (:attr:`Verdict.reason` says why); :func:`solve_cbmai` then
falls back to the enumeration or reports ``"not_certified"``.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from math import comb

import numpy as np

from ._scaling import equilibrate
from .bases import (VALUE_TOL, ExtendedSystem, basis_duals, basis_layout, dual_violation, evaluate_bases,
                    weighted_values)

__all__ = ["LPCertificate", "Verdict", "certify_optimal", "certify_infeasible", "gap_bound", "residuals",
           "orient_duals", "farkas_ray"]

SNAP_EXTRA_COLUMNS = 2
"""Columns beyond ``L + 1`` among which a solver's point is snapped to a basis (``C(L+3, L+1)`` bases)."""

SNAP_COMPLETIONS = 64
"""Most completions of a degenerate support (fewer than ``L + 1`` nonzeros) tried as bases."""


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
        For an infeasible LP, ``y`` with ``A^T y >= 0`` and ``b^T y = -1`` (None otherwise, or when no ray passed
        the check of :func:`certify_infeasible`; the enumeration's verdict then rests on every basis).
    relative_primal_infeasibility : float
        ``max(0, -min_j x_j u_j)``: the largest negative share of a coordinate in the rows it enters, the measure
        on which the certificate judges ``x >= 0`` (see :mod:`allocopt.cbmai.bases`).
    relative_dual_infeasibility : float
        ``max_j -d_j / (|A_j|^T |lambda| + |mu_j| + |mu|_inf)`` (0 when dual feasible), the measure on which the
        certificate judges ``A^T lambda >= mu``.
    gap_bound : float
        A bound on how far the optimum can exceed the value (:func:`gap_bound`; 0 for an exactly dual feasible
        ``lambda``).

    The absolute residuals are in the units of the data: with cost rows of magnitude ``1e8`` a correct answer can
    have ``primal_residual`` near ``1e-8``; the relative measures do not depend on the scaling.
    """

    primal_residual: float
    primal_infeasibility: float
    dual_infeasibility: float
    complementarity: float
    duality_gap: float
    farkas_ray: np.ndarray | None = None
    relative_primal_infeasibility: float = np.nan
    relative_dual_infeasibility: float = np.nan
    gap_bound: float = np.nan

    def max_violation(self) -> float:
        """The largest absolute residual (NaN for an infeasible LP)."""
        return float(max(self.primal_residual, self.primal_infeasibility, self.dual_infeasibility,
                         self.complementarity, self.duality_gap))

    def certifies(self, tol: float = 1e-8) -> bool:
        """True when every absolute residual is at most ``tol`` (or, for an infeasible LP, a Farkas ray is given)."""
        if self.farkas_ray is not None:
            return True
        return bool(self.max_violation() <= tol)


@dataclass(frozen=True)
class Verdict:
    """What the certificate made of one answer.

    Attributes
    ----------
    status : {"optimal", "infeasible", "not_certified"}
    x : ndarray or None
        The certified vertex over the LP's columns (optimal only).
    duals : ndarray or None
        Its basis dual ``A_B^{-T} mu_B`` (optimal only).
    positions : ndarray of int or None
        The certified basis ``B`` as positions in the extended columns (optimal only).
    farkas_ray : ndarray or None
        The checked ray (infeasible only; None when infeasibility rests on the enumeration).
    reason : str
        Why the answer is not certified (empty otherwise).
    relative_primal_infeasibility, relative_dual_infeasibility, gap_bound : float
        The measures judged (NaN when they do not apply).
    """

    status: str
    x: np.ndarray | None = None
    duals: np.ndarray | None = None
    positions: np.ndarray | None = None
    farkas_ray: np.ndarray | None = None
    reason: str = ""
    relative_primal_infeasibility: float = np.nan
    relative_dual_infeasibility: float = np.nan
    gap_bound: float = np.nan

    @property
    def certified(self) -> bool:
        """``status`` is "optimal" or "infeasible"."""
        return self.status in ("optimal", "infeasible")


def _snap_order(system: ExtendedSystem, x: np.ndarray, duals: np.ndarray | None, feasibility_tol: float
                ) -> np.ndarray:
    """Columns in the order a basis is built from them: support by decreasing share, pinned slacks, then the
    others by increasing relative reduced cost of ``duals`` (by decreasing share without a dual)."""
    shares = weighted_values(system.columns, system.rhs, x)
    group = np.where(shares > feasibility_tol, 0, np.where(system.pinned, 1, 2))
    secondary = -shares
    if duals is not None and np.all(np.isfinite(duals)):
        reduced = system.columns.T @ duals - system.objective
        involved = np.abs(system.columns).T @ np.abs(duals) + np.abs(system.objective)
        involved += np.max(np.abs(system.objective), initial=0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            relative = np.where(involved > 0, np.abs(reduced) / np.where(involved > 0, involved, 1.0), 0.0)
        secondary = np.where(group == 2, relative, secondary)
    return np.lexsort((np.arange(x.size), secondary, group))


def _completions(order: np.ndarray, n_support: int, size: int) -> np.ndarray:
    """Bases made of the ``n_support`` first columns of ``order`` and ``size - n_support`` of the following ones,
    taken from as many of them as keeps the count at most :data:`SNAP_COMPLETIONS`."""
    missing = size - n_support
    rest = order[n_support:]
    if missing == 0 or rest.size < missing:
        return order[None, :size] if missing == 0 else np.zeros((0, size), dtype=int)
    reach = missing
    while reach < rest.size and comb(reach + 1, missing) <= SNAP_COMPLETIONS:
        reach += 1
    picks = rest[np.array(list(itertools.combinations(range(reach), missing)), dtype=int)]
    return np.concatenate([np.broadcast_to(order[:n_support], (picks.shape[0], n_support)), picks], axis=1)


def _candidate_bases(system: ExtendedSystem, x: np.ndarray, duals: np.ndarray | None, feasibility_tol: float
                     ) -> np.ndarray:
    """The bases to try, as rows of sorted positions: when the point has at most ``L + 1`` nonzeros (a vertex),
    the bases that contain all of them (the bases of that vertex, which differ by their duals at a degenerate
    vertex), completed from the columns that follow in :func:`_snap_order`; otherwise (a point inside an optimal
    face, as interior-point methods return) every basis of its first ``L + 1 + SNAP_EXTRA_COLUMNS`` columns."""
    size = system.columns.shape[0]
    order = _snap_order(system, x, duals, feasibility_tol)
    n_support = int(np.sum(weighted_values(system.columns, system.rhs, x) > feasibility_tol))
    if n_support <= size:
        combos = _completions(order, n_support, size)
    elif order.size >= size:
        first = order[:min(order.size, size + SNAP_EXTRA_COLUMNS)]
        combos = first[basis_layout(first.size, size).combos]
    else:
        combos = np.zeros((0, size), dtype=int)
    return np.sort(combos, axis=1)


def _first_certified(system: ExtendedSystem, combos: np.ndarray, *, singular_tol: float, feasibility_tol: float,
                     exhaustive: bool = False) -> tuple[Verdict | None, str]:
    """The first of the bases ``combos`` (the feasible ones by decreasing value) that is primal feasible with a
    feasible dual and a gap bound of at most ``VALUE_TOL max(1, |value|)`` (not required when ``exhaustive``), as a
    Verdict; or None and why none is."""
    size = system.columns.shape[0]
    if combos.shape[0] == 0:
        return None, f"fewer than L+1 = {size} columns to form a basis"
    evaluated = evaluate_bases(np.moveaxis(system.columns[:, combos], 1, 0), system.objective[combos],
                               system.rhs[:-1], basis_layout(size, size), singular_tol=singular_tol,
                               feasibility_tol=feasibility_tol, pinned=system.pinned[combos])
    feasible = np.flatnonzero(evaluated.feasible[:, 0])
    smallest, widest = np.inf, np.inf
    for index in feasible[np.argsort(-evaluated.values[feasible, 0], kind="stable")]:
        basis = combos[index]
        try:
            lam = basis_duals(system.columns, system.objective, basis)
        except np.linalg.LinAlgError:
            continue
        violation = dual_violation(system.columns, system.objective, lam, ~system.pinned)
        value = float(evaluated.values[index, 0])
        gap = gap_bound(system, lam)
        if violation <= feasibility_tol and (exhaustive or gap <= VALUE_TOL * max(1.0, abs(value))):
            vertex = np.zeros(system.column_ids.size)
            vertex[basis] = evaluated.x[index, 0]
            shares = evaluated.weighted_x[index, 0]
            return Verdict("optimal", x=vertex[:system.n_free], duals=lam, positions=basis,
                           relative_primal_infeasibility=float(max(0.0, -np.min(shares))),
                           relative_dual_infeasibility=violation, gap_bound=gap), ""
        smallest = min(smallest, violation)
        widest = min(widest, gap / max(1.0, abs(value)) if violation <= feasibility_tol else np.inf)
    if feasible.size == 0:
        return None, (f"none of the {combos.shape[0]} candidate bases is primal feasible (relative tolerance "
                      f"{feasibility_tol:g})")
    if np.isfinite(widest):
        return None, (f"the primal feasible candidate bases with a feasible dual leave a gap: the optimum may exceed "
                      f"the value by {widest:.3g} relative (> {VALUE_TOL:g})")
    return None, (f"none of the {feasible.size} primal feasible candidate bases has a feasible dual (smallest "
                  f"relative dual violation {smallest:.3g} > {feasibility_tol:g})")


def certify_optimal(system: ExtendedSystem, x: np.ndarray, duals: np.ndarray | None = None,
                    positions: np.ndarray | None = None, *, singular_tol: float, feasibility_tol: float,
                    exhaustive: bool = False) -> Verdict:
    """Snap an optimal answer to a basis and certify it (module notes); ``x`` and ``duals`` are the method's point
    over the LP's columns and its dual (a hint: only used to order the columns), ``positions`` a basis to try
    first (positions in ``system``'s columns; the enumeration's choice, kept when it passes). The other candidates
    are tried by decreasing value; the first primal feasible one with a feasible dual and a gap bound
    (:func:`gap_bound`) of at most ``VALUE_TOL max(1, |value|)`` is the certificate. With ``exhaustive``
    (``positions`` is the best feasible basis of all, the enumeration's), that basis needs no gap bound: its
    optimality rests on every basis.

    Examples
    --------
    A HiGHS-like point with rounding noise is replaced by the exact vertex of its basis:

    >>> import numpy as np, allocopt
    >>> from allocopt.cbmai.bases import extended_system
    >>> problem = allocopt.CBMAIProblem([1.0, 0.2], [[2.0, 0.0]], [1.0])
    >>> system = extended_system(problem, np.arange(3))
    >>> verdict = certify_optimal(system, np.array([0.5 + 1e-12, 0.5, 0.0]), singular_tol=1e-11,
    ...                           feasibility_tol=1e-9)
    >>> verdict.status, verdict.x.tolist(), verdict.duals.round(12).tolist()
    ('optimal', [0.5, 0.5, 0.0], [0.4, 0.2])
    """
    if positions is not None:
        verdict, _ = _first_certified(system, np.sort(np.asarray(positions, dtype=int))[None, :],
                                      singular_tol=singular_tol, feasibility_tol=feasibility_tol,
                                      exhaustive=exhaustive)
        if verdict is not None:
            return verdict
    point = np.zeros(system.column_ids.size)
    point[:system.n_free] = np.where(np.isfinite(x), x, 0.0)
    verdict, reason = _first_certified(system, _candidate_bases(system, point, duals, feasibility_tol),
                                       singular_tol=singular_tol, feasibility_tol=feasibility_tol)
    if verdict is not None:
        return verdict
    return Verdict("not_certified", reason=f"the point does not snap to a certified basis: {reason}")


def _variable_bounds(system: ExtendedSystem) -> np.ndarray:
    """``u_j >= x_j`` on every feasible point, for the LP's columns: 1 for an arm (``1^T p = 1``; arms are the
    columns with a 1 in the last row), and ``max(0, cbar_l - min_a c_{l,a})`` over the LP's arms (rounded up) for
    the slack of row ``l``."""
    columns = system.columns[:, :system.n_free]
    n_costs = columns.shape[0] - 1
    arms = columns[n_costs] != 0
    bounds = np.ones(columns.shape[1])
    smallest = np.min(columns[:n_costs, arms], axis=1, initial=np.inf)
    for position in np.flatnonzero(~arms):
        row = int(np.argmax(np.abs(columns[:n_costs, position])))
        if np.isfinite(smallest[row]):  # without arms no point is feasible (1^T p = 1): any bound will do
            bounds[position] = max(0.0, float(system.rhs[row] - smallest[row])) * (1.0 + 4.0 * np.finfo(float).eps)
        else:
            bounds[position] = abs(float(system.rhs[row]))
    return bounds


def _rounding(system: ExtendedSystem) -> float:
    """``gamma = 4 (L + 4) eps``: bounds the relative rounding of the sums of ``L + 1`` products below."""
    return 4.0 * (system.columns.shape[0] + 3) * float(np.finfo(float).eps)


def gap_bound(system: ExtendedSystem, duals: np.ndarray) -> float:
    """A bound on ``v* - b^T lambda``, how far the optimum ``v*`` can exceed the dual value of ``lambda``:
    ``sum_j u_j max(0, -d_j - gamma (|A_j|^T |lambda| + |mu_j|))`` over the LP's columns, ``d = A^T lambda - mu``.

    For every feasible ``x``, ``mu^T x = b^T lambda - d^T x <= b^T lambda + sum_j max(0, -d_j) u_j``; the
    allowance ``gamma (...)`` removes the rounding of ``d_j`` itself, so that an exactly dual feasible ``lambda``
    gets the bound 0.
    """
    columns = system.columns[:, :system.n_free]
    objective = system.objective[:system.n_free]
    reduced = columns.T @ duals - objective
    allowance = _rounding(system) * (np.abs(columns).T @ np.abs(duals) + np.abs(objective))
    return float(_variable_bounds(system) @ np.maximum(-reduced - allowance, 0.0))


def certify_infeasible(system: ExtendedSystem, ray: np.ndarray | None = None) -> Verdict:
    """Prove that the LP has no feasible point by a Farkas ray (module notes): ``ray`` when given and valid, else
    one computed by :func:`farkas_ray` on the equilibrated system, then on the system as given.

    Examples
    --------
    Every mix of the two arms costs at least 2e-6 > 1e-6 (rows of magnitude 1e6 and 1e-6 side by side):

    >>> import numpy as np, allocopt
    >>> from allocopt.cbmai.bases import extended_system
    >>> problem = allocopt.CBMAIProblem([0.0, 1.0], [[1e6, 2e-6]], [1e-6])
    >>> verdict = certify_infeasible(extended_system(problem, np.arange(3)))
    >>> verdict.status, verdict.farkas_ray.tolist()  # y = (1, -2e-6) / 1e-6: A^T y = (1e12, 0, 1e6) >= 0, b^T y = -1
    ('infeasible', [1000000.0, -2.0])
    """
    columns = system.columns[:, :system.n_free]
    bounds = _variable_bounds(system)
    gamma = _rounding(system)

    def rays():
        if ray is not None:
            yield np.asarray(ray, dtype=float)
        yield farkas_ray(columns, system.rhs, equilibrated=True)
        yield farkas_ray(columns, system.rhs, equilibrated=False)

    best = np.inf
    for candidate in rays():
        if candidate is None or not np.all(np.isfinite(candidate)) or not np.any(candidate):
            continue
        magnitude = np.abs(candidate)
        reach = columns.T @ candidate
        proof = float(system.rhs @ candidate + gamma * (np.abs(system.rhs) @ magnitude)
                      + bounds @ np.maximum(gamma * (np.abs(columns).T @ magnitude) - reach, 0.0))
        if proof < 0:
            return Verdict("infeasible", farkas_ray=candidate / -float(system.rhs @ candidate))
        best = min(best, proof / float(np.abs(system.rhs) @ magnitude + bounds @ (np.abs(columns).T @ magnitude)))
    reason = "no Farkas ray was found"
    if np.isfinite(best):
        reason = (f"no Farkas ray proves infeasibility: the best leaves b^T y + sum_j u_j max(0, -A_j^T y) at "
                  f"{best:.3g} of the magnitudes involved, not below 0 after rounding")
    return Verdict("not_certified", reason=reason)


def residuals(matrix: np.ndarray, rhs: np.ndarray, objective: np.ndarray, x: np.ndarray, duals: np.ndarray,
              verdict: Verdict | None = None) -> LPCertificate:
    """Residuals of the optimality conditions for ``(x, lambda)`` (see the module notes), with the relative
    measures of ``verdict``."""
    reduced = matrix.T @ duals - objective
    return LPCertificate(
        primal_residual=float(np.max(np.abs(matrix @ x - rhs))),
        primal_infeasibility=float(max(0.0, -np.min(x, initial=0.0))),
        dual_infeasibility=float(max(0.0, -np.min(reduced, initial=0.0))),
        complementarity=float(np.max(np.abs(x * reduced), initial=0.0)),
        duality_gap=float(abs(rhs @ duals - objective @ x)),
        relative_primal_infeasibility=np.nan if verdict is None else verdict.relative_primal_infeasibility,
        relative_dual_infeasibility=np.nan if verdict is None else verdict.relative_dual_infeasibility,
        gap_bound=np.nan if verdict is None else verdict.gap_bound,
    )


def orient_duals(candidate: np.ndarray, matrix: np.ndarray, rhs: np.ndarray, objective: np.ndarray,
                 value: float) -> np.ndarray:
    """Return ``candidate`` or ``-candidate``, whichever is the dual solution of the maximisation.

    Solvers report multipliers with different sign conventions (scipy's marginals are derivatives of the
    minimisation it solves; PuLP's HiGHS interface flips the sign of a maximisation). The right sign gives
    ``b^T lambda = mu^T x`` and ``A^T lambda >= mu``; the score below compares both signs on both criteria, which
    also settles the case ``value = 0`` where the dual objective alone cannot. (The oriented dual only guides
    :func:`certify_optimal`, which certifies a basis dual of its own.)
    """
    scale = max(1.0, abs(value), float(np.max(np.abs(objective), initial=0.0)))

    def badness(lam: np.ndarray) -> float:
        gap = abs(rhs @ lam - value)
        infeasibility = max(0.0, -float(np.min(matrix.T @ lam - objective, initial=0.0)))
        return (gap + infeasibility) / scale

    return candidate if badness(candidate) <= badness(-candidate) else -candidate


def farkas_ray(matrix: np.ndarray, rhs: np.ndarray, *, equilibrated: bool = True) -> np.ndarray | None:
    """A vector ``y`` with ``A^T y >= 0`` and ``b^T y = -1`` as HiGHS finds it, or None if it finds none.

    Found by :func:`scipy.optimize.linprog` as ``min ||y'||_1`` over ``{(R A C)^T y' >= 0, (R b)^T y' = -1}``, the
    equilibrated system of :mod:`allocopt.cbmai._scaling` (``y = R y'``; without ``equilibrated``, ``R = C = I``).
    The answer is a candidate: :func:`certify_infeasible` decides whether it proves anything.
    """
    from scipy.optimize import linprog

    if equilibrated:
        scaling = equilibrate(matrix, rhs)
        scaled, scaled_rhs, _ = scaling.apply(matrix, rhs, np.zeros(matrix.shape[1]))
    else:
        scaled, scaled_rhs = matrix, rhs
    n_rows = matrix.shape[0]
    upper = np.hstack([-scaled.T, scaled.T])  # -(A^T y) <= 0
    equality = np.hstack([scaled_rhs, -scaled_rhs])[None, :]
    result = linprog(np.ones(2 * n_rows), A_ub=upper, b_ub=np.zeros(matrix.shape[1]), A_eq=equality, b_eq=[-1.0],
                     bounds=(0, None), method="highs")
    if result.status != 0:
        return None
    ray = result.x[:n_rows] - result.x[n_rows:]
    return ray * scaling.rows if equilibrated else ray
