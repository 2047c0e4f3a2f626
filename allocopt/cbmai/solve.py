"""``solve_cbmai``: the CBMAI LP by basis enumeration, HiGHS (scipy) or PuLP, with one result type."""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .._dispatch import MethodRegistry
from .._result import Result
from .._validation import as_choice, fail
from ..exceptions import SolverError
from ._pulp import PULP_SOLVERS
from .bases import (FEASIBILITY_TOL, SINGULAR_TOL, VALUE_TOL, check_problem, check_tolerances, dual_violation,
                    evaluate_subset, weighted_values)
from .certificate import LPCertificate, certify, farkas_ray
from .problem import CBMAIProblem, arm_label, as_arm_subset

__all__ = ["CBMAI_METHODS", "METHODS", "Assumption1Report", "CBMAIResult", "solve_cbmai", "check_assumption_1",
           "method_options"]

METHODS = MethodRegistry("solve_cbmai", {
    "enumerate": "allocopt.cbmai._enumerate",
    "highs": "allocopt.cbmai._highs",
    "pulp": "allocopt.cbmai._pulp",
})
"""Method name -> private module defining ``OPTIONS`` and ``solve(problem, subset, *, singular_tol,
feasibility_tol, **options)`` (see :mod:`allocopt.cbmai._methods`)."""
CBMAI_METHODS: tuple[str, ...] = METHODS.names

DIAGNOSTIC_BASIS_LIMIT = 2_000_000
"""Largest number of bases enumerated for the Assumption 1 diagnostics of the "highs"/"pulp" methods."""

_CERTIFICATE_TOL = 1e-7
"""Largest relative dual infeasibility an "optimal" answer may carry (:func:`~allocopt.cbmai.bases.dual_violation`)."""

_DUAL_RULES = {
    "enumerate": "lambda = A_B^-T mu_B for the first optimal basis B (lexicographic order) that is dual feasible",
    "highs": "HiGHS's dual solution (linprog marginals with the minimisation sign undone)",
    "pulp": "the PuLP solver's constraint multipliers (pi), sign-checked against the dual objective",
}


@dataclass(frozen=True)
class Assumption1Report:
    """Does the LP satisfy Assumption 1 (a unique optimum with exactly ``L+1`` nonzero coordinates)?

    Computed from the enumeration of all bases, whatever the solver method.

    Attributes
    ----------
    holds : bool
        Feasible, unique optimum and exactly ``L+1`` nonzeros.
    feasible : bool
    unique_optimum : bool
        Exactly one optimal basic feasible solution (vertex); then the optimum is unique.
    n_nonzeros : int
        Nonzero coordinates of the (first) optimal vertex (0 when infeasible).
    full_support : bool
        ``n_nonzeros == L + 1`` (a non-degenerate optimal vertex).
    degenerate : bool
        The optimal vertex has fewer than ``L+1`` nonzeros (several bases describe it).
    n_optimal_bases, n_optimal_vertices : int
        Feasible bases attaining the optimal value, and the distinct points they give.
    optimal_bases : tuple of tuple of int
        Those bases (column indices).
    failures : tuple of str
        A sentence for each part of the assumption that fails (empty when it holds).
    """

    holds: bool
    feasible: bool
    unique_optimum: bool
    n_nonzeros: int
    full_support: bool
    degenerate: bool
    n_optimal_bases: int
    n_optimal_vertices: int
    optimal_bases: tuple[tuple[int, ...], ...]
    failures: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class CBMAIResult(Result):
    """The solution of the CBMAI LP (3), possibly restricted to a subset of columns.

    The core fields (:class:`~allocopt._result.Result`) come first; ``success`` is ``status == "optimal"``.

    Attributes
    ----------
    status : {"optimal", "infeasible"}
    success : bool
        ``status == "optimal"`` (also available as :attr:`optimal`).
    message : str
        What the method did (bases enumerated, solver status, polishing).
    method : {"enumerate", "highs", "pulp"}
    time : float
        Seconds spent in the method (diagnostics excluded). ``solve_time`` is a deprecated alias.
    support : tuple of int
        ``supp(x*)``: true arms ``a`` and slacks reported as ``K + l``; empty when infeasible.
    basis : tuple of int
        An optimal basis containing the support (``L+1`` columns) whose dual is :attr:`duals`; empty when
        infeasible (or when a solver returned a non-basic point).
    p : ndarray, shape (K,)
        The best mixed arm (NaN when infeasible).
    slack : ndarray, shape (L,)
        ``cbar - c p``.
    x : ndarray, shape (K+L,)
        ``(p, slack)``.
    value : float
        ``r^T p`` (``-inf`` when infeasible).
    duals : ndarray, shape (L+1,)
        An optimal solution ``lambda`` of the dual ``min {b^T lambda : A_X^T lambda >= mu_X}``; the rule that
        picks it when it is not unique is in :attr:`dual_rule`. NaN when infeasible (the dual is unbounded).
    reduced_costs : ndarray, shape (K+L,)
        ``A^T lambda - mu`` for every column (``>= 0`` on the columns of ``arms`` at the optimum; zero on the
        support). The Lagrangian score (8) of a column is ``-reduced_costs``.
    certificate : LPCertificate
        Residuals of the optimality conditions (or a Farkas ray for an infeasible LP).
    assumption_1 : Assumption1Report or None
        Diagnostics of Assumption 1 (None when the instance has more than ``DIAGNOSTIC_BASIS_LIMIT`` bases).
    arms : tuple of int
        The columns the LP was restricted to.
    dual_rule : str
        How :attr:`duals` was chosen.
    """

    SUCCESS_STATUSES: ClassVar[frozenset[str]] = frozenset({"optimal"})

    support: tuple[int, ...]
    basis: tuple[int, ...]
    p: np.ndarray
    slack: np.ndarray
    x: np.ndarray
    value: float
    duals: np.ndarray
    reduced_costs: np.ndarray
    certificate: LPCertificate
    assumption_1: Assumption1Report | None
    arms: tuple[int, ...]
    dual_rule: str

    @property
    def optimal(self) -> bool:
        """``status == "optimal"`` (the same as :attr:`success`)."""
        return self.status == "optimal"

    @property
    def solve_time(self) -> float:
        """Deprecated alias of :attr:`time` (removed in the next release)."""
        warnings.warn("CBMAIResult.solve_time is deprecated; use CBMAIResult.time", DeprecationWarning, stacklevel=2)
        return self.time

    def support_labels(self, n_arms: int | None = None) -> list[str]:
        """The support as ``"arm a"`` / ``"slack l"`` strings."""
        n_arms = self.p.shape[0] if n_arms is None else n_arms
        return [arm_label(column, n_arms) for column in self.support]


def _support(x: np.ndarray, matrix: np.ndarray, rhs: np.ndarray, feasibility_tol: float) -> np.ndarray:
    """Columns whose share ``x_j u_j`` in the rows they enter exceeds ``feasibility_tol`` (see
    :func:`~allocopt.cbmai.bases.weighted_values`)."""
    return np.flatnonzero(weighted_values(matrix, rhs, x) > feasibility_tol)


def _complete_basis(matrix: np.ndarray, support: np.ndarray, reduced: np.ndarray) -> np.ndarray | None:
    """Extend ``support`` to ``L+1`` linearly independent columns, adding zero-reduced-cost columns first."""
    size = matrix.shape[0]
    if support.size > size:
        return None
    chosen = list(support)
    order = np.lexsort((np.arange(matrix.shape[1]), np.abs(reduced)))
    for column in order:
        if len(chosen) == size:
            break
        if column in chosen:
            continue
        trial = chosen + [int(column)]
        if np.linalg.matrix_rank(matrix[:, trial]) == len(trial):
            chosen = trial
    return np.sort(np.array(chosen)) if len(chosen) == size else None


def check_assumption_1(problem: CBMAIProblem, arms: Any = None, *, singular_tol: float = SINGULAR_TOL,
                       feasibility_tol: float = FEASIBILITY_TOL, value_tol: float = VALUE_TOL
                       ) -> Assumption1Report:
    """Diagnose Assumption 1 for ``problem`` (restricted to ``arms``) by enumerating every basis.

    Two optimal bases give the same vertex when their full ``x`` vectors agree within ``feasibility_tol``
    (on the scale of :func:`enumerate_bases`); values tie when within ``value_tol * max(1, |v*|)``.

    Examples
    --------
    >>> import allocopt
    >>> problem = allocopt.CBMAIProblem([1.0, 1.0], [[0.5, 0.5]], [1.0])  # two identical arms
    >>> report = allocopt.cbmai.check_assumption_1(problem)
    >>> report.holds, report.unique_optimum, report.n_optimal_vertices
    (False, False, 2)
    """
    func = "check_assumption_1"
    singular_tol, feasibility_tol = check_tolerances(func, singular_tol, feasibility_tol)
    subset = as_arm_subset(arms, problem, func)
    return _assumption_1(problem, subset, singular_tol, feasibility_tol, value_tol)


def _assumption_1(problem: CBMAIProblem, subset: np.ndarray, singular_tol: float, feasibility_tol: float,
                  value_tol: float) -> Assumption1Report:
    table = evaluate_subset(problem, subset, singular_tol, feasibility_tol)
    layout, evaluated = table.layout, table.evaluated
    size = problem.n_costs + 1
    masked = np.where(evaluated.feasible, evaluated.values, -np.inf)
    best = float(np.max(masked, initial=-np.inf))
    if not np.isfinite(best):
        return Assumption1Report(False, False, False, 0, False, False, 0, 0, (),
                                 ("the LP is infeasible: no basis is feasible",))
    optimal = np.flatnonzero(masked >= best - value_tol * max(1.0, abs(best)))
    points = np.zeros((optimal.size, table.column_ids.size))
    weighted = np.zeros_like(points)
    rows = np.arange(optimal.size)[:, None]
    points[rows, layout.combos[optimal]] = evaluated.x[optimal]
    weighted[rows, layout.combos[optimal]] = evaluated.weighted_x[optimal]
    distinct: list[int] = []
    for row in range(optimal.size):
        if all(np.max(np.abs(weighted[row] - weighted[other])) > feasibility_tol for other in distinct):
            distinct.append(row)
    n_nonzeros = int(np.sum(weighted[0] > feasibility_tol))
    unique = len(distinct) == 1
    full_support = n_nonzeros == size
    bases = tuple(tuple(sorted(int(column) for column in table.column_ids[layout.combos[index]]))
                  for index in optimal)
    failures = []
    if not unique:
        failures.append(f"several optimal solutions: {len(distinct)} optimal vertices with value {best:.12g} "
                        f"(optimal bases {list(bases)})")
    if not full_support:
        failures.append(f"degenerate optimum: the optimal vertex has {n_nonzeros} nonzero coordinates, "
                        f"not L+1 = {size} (it is described by the bases {list(bases)})")
    return Assumption1Report(unique and full_support, True, unique, n_nonzeros, full_support,
                             n_nonzeros < size, int(optimal.size), len(distinct), bases, tuple(failures))


def method_options(method: str) -> dict[str, Any]:
    """The options ``solve_cbmai(method=...)`` accepts, with their defaults.

    Examples
    --------
    >>> method_options("pulp"), method_options("highs")
    ({'solver': None}, {})
    """
    return METHODS.method_options(method)


def solve_cbmai(
    problem: CBMAIProblem,
    method: str = "enumerate",
    *,
    arms: Any = None,
    solver: str | None = None,
    singular_tol: float = SINGULAR_TOL,
    feasibility_tol: float = FEASIBILITY_TOL,
    diagnose: bool = True,
    **options: Any,
) -> CBMAIResult:
    """Solve the CBMAI LP ``max {r^T p : c p <= cbar, 1^T p = 1, p >= 0}`` in its standard form (3).

    Parameters
    ----------
    problem : CBMAIProblem
    method : {"enumerate", "highs", "pulp"}
        * ``"enumerate"``: evaluate every basis (:func:`enumerate_bases`) and take the best feasible one; the
          dual is ``lambda = A_B^{-T} mu_B`` of the first optimal basis (lexicographic order) that is dual
          feasible, a deterministic choice when the dual is not unique.
        * ``"highs"``: :func:`scipy.optimize.linprog` with ``method="highs"``.
        * ``"pulp"``: PuLP with the solver ``solver`` (``"highs"`` or ``"cbc"``; default: HiGHS if available).
    arms : sequence of int, optional
        Restrict the LP to these columns (true arms ``0..K-1``, slacks ``K..K+L-1``; removing a slack makes
        its constraint an equality). Default: all.
    solver : {"highs", "cbc"}, optional
        Only for ``method="pulp"``.
    singular_tol, feasibility_tol : float
        Enumeration tolerances (see :func:`enumerate_bases`); ``feasibility_tol`` also decides which
        coordinates of ``x`` count as nonzero in :attr:`CBMAIResult.support`.
    diagnose : bool, default True
        Compute the Assumption 1 diagnostics (by enumeration).
    **options
        Further options of the method (see :func:`method_options`); unknown options are an error.

    Returns
    -------
    CBMAIResult
        Status "optimal" or "infeasible" (the empty support); degenerate or non-unique optima are reported
        in :attr:`CBMAIResult.assumption_1`, not raised.

    Examples
    --------
    Two arms and one cost: the best mix puts weight 1/2 on each arm and the cost constraint binds.

    >>> import allocopt
    >>> problem = allocopt.CBMAIProblem([1.0, 0.2], [[2.0, 0.0]], [1.0])
    >>> result = allocopt.solve_cbmai(problem)
    >>> result.status, result.support, result.p.round(3).tolist(), round(result.value, 6)
    ('optimal', (0, 1), [0.5, 0.5], 0.6)
    >>> result.duals.round(6).tolist()  # lambda for the cost row and for the row of ones
    [0.4, 0.2]
    >>> result.assumption_1.holds
    True
    """
    func = "solve_cbmai"
    check_problem(problem, func)
    method = METHODS.check_method(method)
    singular_tol, feasibility_tol = check_tolerances(func, singular_tol, feasibility_tol)
    if solver is not None:
        if method != "pulp":
            fail(func, "solver", "None unless method='pulp'", solver)
        as_choice(solver, func, "solver", PULP_SOLVERS)
        options = dict(options, solver=solver)
    method, implementation = METHODS.resolve(method, options)
    subset = as_arm_subset(arms, problem, func)
    matrix, rhs, objective = problem.standard_form()
    columns = matrix[:, subset]
    start = time.perf_counter()
    status, x_sub, duals, message, positions = implementation(problem, subset, singular_tol=singular_tol,
                                                              feasibility_tol=feasibility_tol, **options)
    elapsed = time.perf_counter() - start
    report = None
    if diagnose and basis_layout_size(subset.size, problem.n_costs + 1) <= DIAGNOSTIC_BASIS_LIMIT:
        report = _assumption_1(problem, subset, singular_tol, feasibility_tol, VALUE_TOL)
    n_columns, n_arms = problem.n_columns, problem.n_arms
    if status == "infeasible":
        nan = np.full(n_columns, np.nan)
        certificate = LPCertificate(np.nan, np.nan, np.nan, np.nan, np.nan, farkas_ray=farkas_ray(columns, rhs))
        return CBMAIResult(status="infeasible", message=message, method=method, time=elapsed, support=(), basis=(),
                           p=nan[:n_arms].copy(), slack=nan[n_arms:].copy(), x=nan.copy(), value=-np.inf,
                           duals=np.full(problem.n_costs + 1, np.nan), reduced_costs=nan.copy(),
                           certificate=certificate, assumption_1=report, arms=tuple(int(a) for a in subset),
                           dual_rule=_DUAL_RULES[method])
    x = np.zeros(n_columns)
    x[subset] = x_sub
    reduced = matrix.T @ duals - objective
    support_positions = _support(x_sub, columns, rhs, feasibility_tol)
    if positions is None:
        positions = _complete_basis(columns, support_positions, reduced[subset])
    else:  # enumeration: lambda = A_B^-T mu_B, so the basis's reduced costs are zero by construction
        reduced[subset[positions]] = 0.0
    basis = () if positions is None else tuple(int(subset[j]) for j in positions)
    certificate = certify(columns, rhs, objective[subset], x_sub, duals)
    violation = dual_violation(columns, objective[subset], duals)
    if violation > _CERTIFICATE_TOL:  # never call "optimal" what the dual certificate refutes
        raise SolverError(f"solve_cbmai(method={method!r}) could not certify its answer: the dual solution violates "
                          f"dual feasibility by {violation:.3g} relative to the magnitudes involved "
                          f"(tolerance {_CERTIFICATE_TOL:g}); {message}")
    for array in (x, duals, reduced):
        array.setflags(write=False)
    return CBMAIResult(status="optimal", message=message, method=method, time=elapsed,
                       support=tuple(int(subset[j]) for j in support_positions), basis=basis, p=x[:n_arms],
                       slack=x[n_arms:], x=x, value=float(objective @ x), duals=duals, reduced_costs=reduced,
                       certificate=certificate, assumption_1=report, arms=tuple(int(a) for a in subset),
                       dual_rule=_DUAL_RULES[method])


def basis_layout_size(n_columns: int, size: int) -> int:
    """``C(n_columns, size)``, the number of bases, without building them."""
    from math import comb

    return comb(n_columns, size)
