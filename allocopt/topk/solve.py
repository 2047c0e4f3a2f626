r"""``solve_topk``: one entry point, ``method=`` dispatch, one certified result type.

Methods (each in its own private module):

* ``"exact"`` (default) - active set of binding forests solved to machine precision, :mod:`allocopt.topk._exact`;
* ``"cvxpy"`` - the convex model in CVXPY (verification oracle), :mod:`allocopt.topk._cvx`;
* ``"fwga"`` - Frank-Wolfe gradient ascent, Algorithm 1 of the paper, :mod:`allocopt.topk._iterative.fwga`;
* ``"kkt-tracking"`` - Algorithm 3 of the paper, :mod:`allocopt.topk._iterative.kkt_tracking`.
"""

from __future__ import annotations

from typing import Any

from .._dispatch import MethodRegistry
from ..exceptions import InvalidArgumentError
from .problem import TopKProblem, restored_cost, scaled_bound
from .result import TopKResult

__all__ = ["solve_topk", "characteristic_time", "TOPK_METHODS", "DEFAULT_METHOD", "method_options"]

# method name -> private module implementing `solve(problem, kind, **options)` and `OPTIONS`
METHODS = MethodRegistry("solve_topk", {
    "exact": "allocopt.topk._exact._routing",
    "cvxpy": "allocopt.topk._cvx",
    "fwga": "allocopt.topk._iterative.fwga",
    "kkt-tracking": "allocopt.topk._iterative.kkt_tracking",
})
TOPK_METHODS: tuple[str, ...] = METHODS.names
DEFAULT_METHOD = "exact"


def method_options(method: str) -> dict[str, Any]:
    """The options accepted by ``method`` with their defaults."""
    return METHODS.method_options(method)


def solve_topk(problem: TopKProblem, method: str = DEFAULT_METHOD, kind: str = "confidence",
               **options: Any) -> TopKResult:
    r"""Solve the top-k optimal allocation problem :math:`\max_{\psi \in \Sigma_K} \min_{i, j} C_{ij}(\psi)`.

    Parameters
    ----------
    problem : TopKProblem
        The instance.
    method : str
        One of :data:`TOPK_METHODS`. Options of each method: :func:`method_options`.
    kind : {"confidence", "budget"}
        Costs :math:`C_{ij}` (fixed confidence, problem (5)/(17)) or :math:`B_{ij}` (fixed budget, (11)).
    **options
        Method options, for example ``iterations=`` for ``"fwga"`` and ``"kkt-tracking"``, ``tol=`` (the
        certified relative gap below which the status is ``"optimal"``) for all.

    Returns
    -------
    TopKResult
        Allocation, value, multipliers, certified gap, status, history (iterative methods) and timing.

    Examples
    --------
    >>> from allocopt import TopKProblem, solve_topk
    >>> problem = TopKProblem([0.51, 0.5, 0, -0.01, -0.092], k=2, variance=0.25)
    >>> result = solve_topk(problem, method="cvxpy")
    >>> result.psi.round(4)
    array([0.2185, 0.2371, 0.2185, 0.2026, 0.1232])
    >>> round(result.value, 4), result.gap < 1e-8
    (0.0568, True)
    """
    if not isinstance(problem, TopKProblem):
        raise InvalidArgumentError(
            f"The 'problem' parameter of solve_topk must be a TopKProblem. Got {type(problem).__name__} instead.")
    method = METHODS.check_method(method)
    kind = problem.check_kind(kind, "solve_topk")
    method, implementation = METHODS.resolve(method, options)
    scaled, exponent = problem.cost_normalisation()
    result = implementation(scaled, kind, **options)
    value = restored_cost(result.value, exponent, problem, "solve_topk")
    if scaled is problem:
        return result
    return _scaled_back(result, problem, exponent, value)


def _scaled_back(result: TopKResult, problem: TopKProblem, exponent: int, value: float) -> TopKResult:
    """The result of the scaled instance (costs times 2^-exponent) as a result of ``problem``, whose value
    (:func:`~allocopt.topk.problem.restored_cost`) is ``value``."""
    import dataclasses

    import numpy as np

    from .result import IterationHistory

    history = result.history
    if history is not None:
        with np.errstate(over="ignore", under="ignore"):
            history = IterationHistory(iteration=history.iteration, value=np.ldexp(history.value, exponent),
                                       upper_bound=scaled_bound(history.upper_bound, exponent),
                                       gap=scaled_bound(history.gap, exponent))
    forest = None if result.forest is None else result.forest.rescaled(exponent)
    message = f"{result.message} (solved with the costs scaled by 2**{-exponent})".strip()
    return dataclasses.replace(result, problem=problem, value=value,
                               upper_bound=float(scaled_bound(result.upper_bound, exponent)),
                               gap=float(scaled_bound(result.gap, exponent)), history=history, forest=forest,
                               message=message)


def characteristic_time(problem: TopKProblem, method: str = DEFAULT_METHOD, kind: str = "confidence",
                        **options: Any) -> float:
    r"""The characteristic time :math:`T^* = 1/\Gamma^*` (or :math:`1/\Gamma_B^*` for ``kind="budget"``).

    Computed as :math:`1/\Gamma(\psi)` for the allocation returned by :func:`solve_topk`, which is an upper
    bound on :math:`T^*` within the result's certified relative gap.
    """
    return solve_topk(problem, method=method, kind=kind, **options).characteristic_time
