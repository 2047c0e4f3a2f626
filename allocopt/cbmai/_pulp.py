"""The CBMAI LP through PuLP: the only module of allocopt that imports :mod:`pulp`.

The model is built with the PuLP 3.3 API that survives into PuLP 4 (``prob.add_variable``,
``LpConstraint`` objects, ``prob.constraints()`` as a list), so no deprecation warning is raised by the
modelling calls. The solver is always chosen explicitly:

* ``"highs"``: PuLP's HiGHS interface (through ``highspy``, a dependency of allocopt);
* ``"cbc"``: ``COIN_CMD`` when a CBC executable is on the PATH, else PuLP's bundled ``PULP_CBC_CMD``, which
  PuLP 3.3 deprecates; its ``DeprecationWarning`` is suppressed here and nowhere else. CBC runs as a separate
  process whose solution PuLP reads back from a text file with 8 significant digits, so its values and
  multipliers are accurate to about ``1e-8`` (HiGHS returns them in full double precision).

The multipliers PuLP reports (``constraint.pi``) follow each solver's own sign convention (the HiGHS
interface flips the sign of a maximisation, CBC does not), so the dual is oriented by
:func:`~allocopt.cbmai.certificate.orient_duals` (dual objective equal to the primal value, dual feasibility).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..exceptions import MissingDependencyError, SolverError
from ._methods import MethodSolution
from .bases import polish_vertex
from .certificate import orient_duals
from .problem import CBMAIProblem

__all__ = ["OPTIONS", "solve", "PULP_SOLVERS", "solve_with_pulp", "available_pulp_solvers"]

PULP_SOLVERS = ("highs", "cbc")

OPTIONS: dict[str, Any] = {"solver": None}
"""``solver``: "highs" or "cbc" (default None: HiGHS when PuLP can run it, else CBC)."""


def _import_pulp():
    try:
        import pulp
    except ImportError as error:  # pragma: no cover - pulp is a dependency
        raise MissingDependencyError("solve_cbmai(method='pulp') needs PuLP: pip install pulp") from error
    return pulp


def _make_solver(pulp, name: str):
    if name == "highs":
        solver = pulp.HiGHS(msg=False)
        return solver if solver.available() else None
    coin = pulp.COIN_CMD(msg=False)
    if coin.available():
        return coin
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"pulp(\..*)?")
        bundled = pulp.PULP_CBC_CMD(msg=False)
    return bundled if bundled.available() else None


def available_pulp_solvers() -> tuple[str, ...]:
    """The names in :data:`PULP_SOLVERS` that PuLP can run on this machine."""
    pulp = _import_pulp()
    return tuple(name for name in PULP_SOLVERS if _make_solver(pulp, name) is not None)


def solve_with_pulp(matrix: np.ndarray, rhs: np.ndarray, objective: np.ndarray, solver: str | None = None
                    ) -> tuple[str, np.ndarray | None, np.ndarray | None, str]:
    """Solve the standard form with PuLP; returns ``(status, x, duals, message)``.

    ``solver=None`` picks "highs" when available, else "cbc".
    """
    pulp = _import_pulp()
    names = PULP_SOLVERS if solver is None else (solver,)
    backend, chosen = None, None
    for name in names:
        backend = _make_solver(pulp, name)
        if backend is not None:
            chosen = name
            break
    if backend is None:
        raise MissingDependencyError(f"solve_cbmai(method='pulp'): no PuLP solver among {names} is available")
    model = pulp.LpProblem("cbmai", pulp.LpMaximize)
    variables = [model.add_variable(f"x{j}", lowBound=0) for j in range(matrix.shape[1])]
    model += pulp.LpAffineExpression([(var, float(coef)) for var, coef in zip(variables, objective)])
    for row in range(matrix.shape[0]):
        terms = [(variables[j], float(matrix[row, j])) for j in np.flatnonzero(matrix[row])]
        model.addConstraint(pulp.LpConstraint(pulp.LpAffineExpression(terms), sense=pulp.LpConstraintEQ,
                                              rhs=float(rhs[row]), name=f"row{row}"))
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"pulp(\..*)?")
        status = model.solve(backend)
    label = pulp.LpStatus[status]
    message = f"PuLP with {chosen} ({type(backend).__name__}): {label}"
    if status == pulp.LpStatusInfeasible:
        return "infeasible", None, None, message
    if status != pulp.LpStatusOptimal:
        raise SolverError(f"solve_cbmai(method='pulp'): {message}")
    x = np.array([var.varValue if var.varValue is not None else 0.0 for var in variables], dtype=float)
    multipliers = np.array([constraint.pi for constraint in model.constraints()], dtype=float)
    duals = orient_duals(multipliers, matrix, rhs, objective, float(objective @ x))
    return "optimal", x, duals, message


def solve(problem: CBMAIProblem, subset: np.ndarray, *, singular_tol: float, feasibility_tol: float,
          solver: str | None = None) -> MethodSolution:
    """``solve_cbmai(method="pulp")``: :func:`solve_with_pulp` on the columns ``subset``, its optimum polished to
    the vertex of its ``L+1`` largest coordinates when that vertex is optimal."""
    matrix, rhs, objective = problem.standard_form()
    columns, costs = matrix[:, subset], objective[subset]
    status, x, duals, message = solve_with_pulp(columns, rhs, costs, solver)
    if status == "optimal" and x is not None and duals is not None:
        x, duals, polished = polish_vertex(columns, rhs, costs, x, duals, feasibility_tol)
        if polished:
            message += "; polished to the vertex of its L+1 largest coordinates"
    return MethodSolution(status, x, duals, message)
