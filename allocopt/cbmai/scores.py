"""Elimination scores of SFSR: intersection value (6) and Lagrangian (8).

Both are functions of the arm set ``X`` still in play and of the means (empirical ones inside the
algorithms); here they are computed for the instance's means and for any ``arms = X``.

Intersection value (6)
    ``f^IV_a = max { mu_X^T x : x a BFS of (A_X, b) whose basis contains a }`` (``-inf`` if none).
    At a degenerate BFS an arm can be basic at value zero and so inherit the basis's value. The default
    follows (6) literally; ``strict=True`` only counts the BFSs in which ``x_a > 0`` (beyond the feasibility
    tolerance).

Lagrangian (8)
    ``f^L_a = (mu_X - A_X^T lambda*)_a`` for an optimal ``lambda*`` of the dual ``min {b^T lambda : A_X^T lambda >=
    mu_X}``, i.e. minus the reduced cost; ``-inf`` for every arm when the dual is unbounded (the restricted
    primal is infeasible). Scores are ``<= 0``, and ``0`` on the optimal support.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validation import as_bool
from ..exceptions import SolverError
from .bases import FEASIBILITY_TOL, SINGULAR_TOL, BasisLayout, BasisValues, checked_evaluation
from .problem import CBMAIProblem

__all__ = ["iv_scores", "lagrangian_scores", "iv_scores_from_bases"]


def iv_scores_from_bases(evaluated: BasisValues, layout: BasisLayout, *, strict: bool = False,
                         feasibility_tol: float = FEASIBILITY_TOL) -> np.ndarray:
    """Scores (6) of every column of ``layout`` from evaluated bases (batched over leading axes).

    Returns an array of shape ``(..., n)``: the largest value of a feasible basis containing the column
    (with ``strict``: in which the column's coordinate is ``> feasibility_tol`` on the weighted scale), and
    ``-inf`` when there is none.
    """
    batch_shape = evaluated.values.shape[:-1]
    if layout.n_bases == 0:
        return np.full(batch_shape + (layout.n_columns,), -np.inf)
    basis_value = np.where(evaluated.feasible, evaluated.values, -np.inf)[..., None, :]
    if strict:
        assert evaluated.slot_weighted_x is not None, "strict scores need bases evaluated with diagnostics"
        slot_value = np.where(evaluated.slot_weighted_x > feasibility_tol, basis_value, -np.inf)
    else:
        slot_value = np.broadcast_to(basis_value, evaluated.slot_x.shape)
    flat = np.reshape(slot_value, batch_shape + (-1,))  # slot-major: index i * C + c
    return np.max(flat[..., layout.membership], axis=-1)


def iv_scores(
    problem: CBMAIProblem,
    arms: Any = None,
    strict: bool = False,
    *,
    singular_tol: float = SINGULAR_TOL,
    feasibility_tol: float = FEASIBILITY_TOL,
) -> np.ndarray:
    """Intersection-value scores (6) of every column in ``arms`` (true and virtual arms).

    .. math::

        f^{IV}_a = \\max\\{\\mu_X^T x : x \\text{ a BFS of } (A_X, b) \\text{ with basis } J \\ni a\\}

    over ``X = arms``; ``-inf`` when no feasible basis contains ``a``. For ``L = 1`` it is the reward at
    which the segment from arm ``a`` to another arm (or the slack's horizontal line) meets the cost bound
    (Figure 1 of the paper).

    Parameters
    ----------
    problem : CBMAIProblem
    arms : sequence of int, optional
        The remaining set ``X`` (columns ``0..K+L-1``; slacks are ``K..K+L-1``). Default: all columns.
    strict : bool, default False
        Only count BFSs with ``x_a > 0`` (beyond ``feasibility_tol``); differs from (6) at degenerate BFSs.
    singular_tol, feasibility_tol : float
        See :func:`enumerate_bases`.

    Returns
    -------
    ndarray, shape (len(arms),)
        Scores in the (sorted) order of ``arms``.

    Examples
    --------
    Arm 0 costs exactly the bound, so the BFS of basis {arm 0, arm 1} is degenerate (``p_1 = 0``): arm 1 and
    the slack inherit arm 0's value under (6) but not under the strict variant.

    >>> import allocopt
    >>> problem = allocopt.CBMAIProblem([1.0, 0.3], [[1.0, 0.5]], [1.0])
    >>> allocopt.iv_scores(problem).tolist()
    [1.0, 1.0, 1.0]
    >>> allocopt.iv_scores(problem, strict=True).tolist()
    [1.0, 0.3, 0.3]
    """
    strict = as_bool(strict, "iv_scores", "strict")
    table = checked_evaluation(problem, arms, "iv_scores", singular_tol, feasibility_tol)
    scores = iv_scores_from_bases(table.evaluated, table.layout, strict=strict, feasibility_tol=feasibility_tol)
    return scores[:table.n_free]


def lagrangian_scores(
    problem: CBMAIProblem,
    arms: Any = None,
    *,
    method: str = "enumerate",
    solver: str | None = None,
    singular_tol: float = SINGULAR_TOL,
    feasibility_tol: float = FEASIBILITY_TOL,
    **options: Any,
) -> np.ndarray:
    """Lagrangian scores (8) of every column in ``arms``: ``(mu_X - A_X^T lambda*)_a``.

    ``lambda*`` is the certified dual solution returned by :func:`solve_cbmai` with ``method`` on the LP restricted
    to ``X = arms`` (for ``"enumerate"``: the dual of the first dual-feasible optimal basis, which makes the
    scores deterministic at degenerate optima; for the solvers: the dual of the certified basis their point snaps
    to). Scores are ``<= 0`` up to rounding, ``0`` on the support, and ``-inf`` for every arm when the restricted
    LP is infeasible (its dual is unbounded).

    Parameters
    ----------
    problem : CBMAIProblem
    arms : sequence of int, optional
        The remaining set ``X`` (at least one column). Default: all ``K + L`` columns.
    method : {"enumerate", "highs", "pulp"}
        How the dual is obtained.
    solver : {"highs", "cbc"}, optional
        Only for ``method="pulp"``.
    singular_tol, feasibility_tol : float
        See :func:`solve_cbmai`.
    **options
        Further options of the method (:func:`~allocopt.cbmai.solve.method_options`), e.g. ``verbose``.

    Returns
    -------
    ndarray, shape (len(arms),)

    Raises
    ------
    SolverError
        When the LP's answer could not be certified (status "not_certified" of :func:`solve_cbmai`).

    Examples
    --------
    >>> import allocopt
    >>> problem = allocopt.CBMAIProblem([1.0, 0.2, 0.1], [[2.0, 0.0, 0.5]], [1.0])
    >>> allocopt.lagrangian_scores(problem).round(6).tolist()
    [0.0, 0.0, -0.3, -0.4]
    """
    from .solve import _checked_call, _solve

    call = _checked_call("lagrangian_scores", problem, method, arms, solver, singular_tol, feasibility_tol,
                         options)
    result = _solve(problem, call, diagnose=False)
    subset = np.asarray(result.arms, dtype=int)
    if result.status == "infeasible":
        return np.full(subset.size, -np.inf)
    if result.status != "optimal":
        raise SolverError(f"lagrangian_scores(method={call.method!r}): the LP restricted to the arms "
                          f"{subset.tolist()} could not be certified: {result.message}")
    return np.negative(result.reduced_costs[subset]) + 0.0  # "+ 0.0" turns -0.0 into 0.0
