"""``solve_cbmai``: the CBMAI LP by basis enumeration, HiGHS (scipy) or PuLP, with one result type."""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple

import numpy as np

from .._dispatch import MethodRegistry
from .._result import Result
from .._validation import as_bool, as_choice, fail
from ..exceptions import SolverError
from . import _enumerate
from ._methods import MethodSolution
from ._pulp import PULP_SOLVERS
from .bases import (FEASIBILITY_TOL, SINGULAR_TOL, VALUE_TOL, ExtendedSystem, check_problem, check_tolerances,
                    evaluate_subset, extended_system, weighted_values)
from .certificate import LPCertificate, Verdict, certify_infeasible, certify_optimal, residuals
from .problem import CBMAIProblem, arm_label, as_arm_subset

__all__ = ["CBMAI_METHODS", "CBMAI_STATUSES", "METHODS", "Assumption1Report", "CBMAIResult", "solve_cbmai",
           "check_assumption_1", "method_options"]

METHODS = MethodRegistry("solve_cbmai", {
    "enumerate": "allocopt.cbmai._enumerate",
    "highs": "allocopt.cbmai._highs",
    "pulp": "allocopt.cbmai._pulp",
})
"""Method name -> private module defining ``OPTIONS`` and ``solve(problem, subset, *, singular_tol,
feasibility_tol, **options)`` (see :mod:`allocopt.cbmai._methods`)."""
CBMAI_METHODS: tuple[str, ...] = METHODS.names

ENUMERATION_BASIS_LIMIT = 2_000_000
"""Largest number of bases ``solve_cbmai`` enumerates on its own: for the Assumption 1 diagnostics, and as the
fallback when the answer of "highs" or "pulp" fails the certificate."""

DIAGNOSTIC_BASIS_LIMIT = ENUMERATION_BASIS_LIMIT
"""Largest number of bases enumerated for the Assumption 1 diagnostics (the same limit)."""

CBMAI_STATUSES = ("optimal", "infeasible", "not_certified")
"""The statuses of :class:`CBMAIResult`."""

_DUAL_RULES = {
    "enumerate": "lambda = A_B^-T mu_B for the first optimal basis B (lexicographic order) that is dual feasible",
    "highs": "lambda = A_B^-T mu_B for the certified basis B that HiGHS's point snaps to",
    "pulp": "lambda = A_B^-T mu_B for the certified basis B that the PuLP solver's point snaps to",
}
_FALLBACK_RULE = "lambda = A_B^-T mu_B for the enumeration's basis B (the method's answer failed the certificate)"


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
    status : {"optimal", "infeasible", "not_certified"}
        Every status is certified by the one certificate of :mod:`allocopt.cbmai.certificate`, whatever the
        method: "optimal" means a basis that is primal and dual feasible relative to the magnitudes of each row
        and column (its vertex and dual are :attr:`x` and :attr:`duals`); "infeasible" means a Farkas ray proved
        it, or (enumeration) no basis is feasible. When the method's own answer fails the certificate the
        enumeration's answer is reported instead (:attr:`certificate_failure` says why), if the instance has at
        most ``ENUMERATION_BASIS_LIMIT`` bases; otherwise the status is "not_certified" (NaN answer, the reason in
        :attr:`message`).
    success : bool
        ``status == "optimal"`` (also available as :attr:`optimal`).
    message : str
        What the method did (bases enumerated, solver status, fallback).
    method : {"enumerate", "highs", "pulp"}
    time : float
        Seconds spent in the method, its certificate and any fallback (diagnostics excluded). ``solve_time`` is a
        deprecated alias.
    support : tuple of int
        ``supp(x*)``: true arms ``a`` and slacks reported as ``K + l``; empty when infeasible.
    basis : tuple of int
        The certified optimal basis (``L+1`` columns) containing the support, whose dual is :attr:`duals`; it can
        include slacks outside ``arms`` (pinned at zero, for subsets without a basis of their own). Empty unless
        optimal.
    p : ndarray, shape (K,)
        The best mixed arm (NaN unless optimal).
    slack : ndarray, shape (L,)
        ``cbar - c p``.
    x : ndarray, shape (K+L,)
        ``(p, slack)``.
    value : float
        ``r^T p`` (``-inf`` when infeasible, NaN when not certified).
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
    certificate_failure : str
        Empty when the method's own answer passed the certificate; otherwise why it did not (the answer
        reported is then the enumeration's, or the status is "not_certified").
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
    certificate_failure: str = ""

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
    ({'solver': None, 'verbose': False}, {'verbose': False})
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
        * ``"highs"``: :func:`scipy.optimize.linprog` with HiGHS on the equilibrated LP.
        * ``"pulp"``: PuLP with the solver ``solver`` (``"highs"`` or ``"cbc"``; default: HiGHS if available).

        Whatever the method, the answer passes the certificate of :mod:`allocopt.cbmai.certificate` (an optimum
        snapped to a primal and dual feasible basis, infeasibility proven by a Farkas ray) or is replaced by the
        enumeration's (see :attr:`CBMAIResult.status`).
    arms : sequence of int, optional
        Restrict the LP to these columns (true arms ``0..K-1``, slacks ``K..K+L-1``; removing a slack makes
        its constraint an equality); at least one. Default: all.
    solver : {"highs", "cbc"}, optional
        Only for ``method="pulp"``.
    singular_tol, feasibility_tol : float
        Enumeration and certificate tolerances (see :func:`enumerate_bases`); ``feasibility_tol`` also decides
        which coordinates of ``x`` count as nonzero in :attr:`CBMAIResult.support`.
    diagnose : bool, default True
        Compute the Assumption 1 diagnostics (by enumeration).
    **options
        Further options of the method (see :func:`method_options`), for example ``verbose=True`` to let HiGHS
        or the PuLP solver print its log (nothing is written to stdout or stderr otherwise); unknown options are
        an error.

    Returns
    -------
    CBMAIResult
        Status "optimal", "infeasible" (the empty support) or "not_certified"; degenerate or non-unique optima
        are reported in :attr:`CBMAIResult.assumption_1`, not raised.

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
    call = _checked_call("solve_cbmai", problem, method, arms, solver, singular_tol, feasibility_tol, options)
    return _solve(problem, call, as_bool(diagnose, "solve_cbmai", "diagnose"))


class _Call(NamedTuple):
    """The validated arguments of one solve."""

    method: str
    implementation: Callable[..., MethodSolution]
    subset: np.ndarray
    options: dict[str, Any]
    singular_tol: float
    feasibility_tol: float


def _checked_call(func: str, problem: Any, method: Any, arms: Any, solver: Any, singular_tol: Any,
                  feasibility_tol: Any, options: dict[str, Any]) -> _Call:
    """Validate the arguments shared by :func:`solve_cbmai` and the scores built on it, naming ``func``."""
    check_problem(problem, func)
    method = METHODS.check_method(method, func)
    singular_tol, feasibility_tol = check_tolerances(func, singular_tol, feasibility_tol)
    if solver is not None:
        if method != "pulp":
            fail(func, "solver", "None unless method='pulp'", solver)
        as_choice(solver, func, "solver", PULP_SOLVERS)
        options = dict(options, solver=solver)
    if "verbose" in options:
        options = dict(options, verbose=as_bool(options["verbose"], func, "verbose"))
    method, implementation = METHODS.resolve(method, options, func)
    subset = as_arm_subset(arms, problem, func)
    return _Call(method, implementation, subset, options, singular_tol, feasibility_tol)


def _certify(system: ExtendedSystem, solution: MethodSolution, call: _Call) -> Verdict:
    """The certificate's verdict on a method's answer (the one judge of every method)."""
    tolerances = {"singular_tol": call.singular_tol, "feasibility_tol": call.feasibility_tol}
    if solution.status == "optimal" and solution.x is not None:
        return certify_optimal(system, solution.x, solution.duals, solution.positions, exhaustive=solution.exhaustive,
                               **tolerances)
    if solution.status == "infeasible":
        verdict = certify_infeasible(system, solution.farkas_ray)
        if solution.exhaustive and not verdict.certified:  # no basis is feasible: that is the proof
            return Verdict("infeasible")
        return verdict
    return Verdict("not_certified", reason=solution.message)


def _run(problem: CBMAIProblem, call: _Call, system: ExtendedSystem) -> tuple[MethodSolution, Verdict, str]:
    """Run the method and judge its answer; fall back to the enumeration when the answer fails the certificate.
    Returns the solution reported, its verdict and why the method's own answer was rejected ("" if it was not)."""
    try:
        solution = call.implementation(problem, call.subset, singular_tol=call.singular_tol,
                                       feasibility_tol=call.feasibility_tol, **call.options)
    except SolverError as error:  # no answer at all: judged like an uncertified one
        solution = MethodSolution("not_certified", None, None, str(error))
    verdict = _certify(system, solution, call)
    if verdict.certified or call.method == "enumerate":
        return solution, verdict, ""
    rejected = verdict.reason
    note = solution.message if solution.status == "not_certified" else \
        f"{solution.message}; that answer failed the certificate: {rejected}"
    if basis_layout_size(system.column_ids.size, problem.n_costs + 1) > ENUMERATION_BASIS_LIMIT:
        message = f"{note} (more than {ENUMERATION_BASIS_LIMIT} bases: no fallback to the enumeration)"
        return solution._replace(status="not_certified", message=message), verdict, rejected
    fallback = _enumerate.solve(problem, call.subset, singular_tol=call.singular_tol,
                                feasibility_tol=call.feasibility_tol)
    message = f"{note}; the enumeration's answer is reported: {fallback.message}"
    return fallback._replace(message=message), _certify(system, fallback, call), rejected


def _solve(problem: CBMAIProblem, call: _Call, diagnose: bool) -> CBMAIResult:
    """Solve, certify and build the result (the arguments are validated)."""
    subset = call.subset
    system = extended_system(problem, subset)
    start = time.perf_counter()
    solution, verdict, rejected = _run(problem, call, system)
    elapsed = time.perf_counter() - start
    report = None
    if diagnose and basis_layout_size(subset.size, problem.n_costs + 1) <= DIAGNOSTIC_BASIS_LIMIT:
        report = _assumption_1(problem, subset, call.singular_tol, call.feasibility_tol, VALUE_TOL)
    dual_rule = _FALLBACK_RULE if rejected and verdict.certified else _DUAL_RULES[call.method]
    common: dict[str, Any] = dict(method=call.method, time=elapsed, assumption_1=report,
                                  arms=tuple(int(a) for a in subset), dual_rule=dual_rule, certificate_failure=rejected)
    if verdict.status == "optimal":
        return _optimal_result(problem, system, verdict, solution.message, call.feasibility_tol, common)
    nan = np.full(problem.n_columns, np.nan)
    if verdict.status == "infeasible":
        status, value, message = "infeasible", -np.inf, solution.message
        certificate = LPCertificate(np.nan, np.nan, np.nan, np.nan, np.nan, farkas_ray=verdict.farkas_ray)
    else:
        status, value, message = "not_certified", np.nan, solution.message
        if verdict.reason not in message:
            message = f"{message}; not certified: {verdict.reason}"
        certificate = LPCertificate(np.nan, np.nan, np.nan, np.nan, np.nan)
    return CBMAIResult(status=status, message=message, support=(), basis=(), p=nan[:problem.n_arms].copy(),
                       slack=nan[problem.n_arms:].copy(), x=nan.copy(), value=value,
                       duals=np.full(problem.n_costs + 1, np.nan), reduced_costs=nan.copy(), certificate=certificate,
                       **common)


def _optimal_result(problem: CBMAIProblem, system: ExtendedSystem, verdict: Verdict, message: str,
                    feasibility_tol: float, common: dict[str, Any]) -> CBMAIResult:
    """The result of a certified optimum: the basis's vertex and dual, zero reduced costs on the basis."""
    assert verdict.x is not None and verdict.duals is not None and verdict.positions is not None
    matrix, rhs, objective = problem.standard_form()
    subset, duals = system.subset, verdict.duals
    columns = system.columns[:, :system.n_free]
    x = np.zeros(problem.n_columns)
    x[subset] = verdict.x
    reduced = matrix.T @ duals - objective
    basis = system.column_ids[verdict.positions]
    reduced[basis] = 0.0  # A_B^T lambda = mu_B holds by construction: drop the rounding on the basis
    support = subset[_support(verdict.x, columns, rhs, feasibility_tol)]
    certificate = residuals(columns, rhs, system.objective[:system.n_free], verdict.x, duals, verdict)
    for array in (x, duals, reduced):
        array.setflags(write=False)
    return CBMAIResult(status="optimal", message=message, support=tuple(int(j) for j in support),
                       basis=tuple(sorted(int(j) for j in basis)), p=x[:problem.n_arms], slack=x[problem.n_arms:],
                       x=x, value=float(objective @ x), duals=duals, reduced_costs=reduced,
                       certificate=certificate, **common)


def basis_layout_size(n_columns: int, size: int) -> int:
    """``C(n_columns, size)``, the number of bases, without building them."""
    from math import comb

    return comb(n_columns, size)
