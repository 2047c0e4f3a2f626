"""Independent checks of the CBMAI hardness gaps that other packages (and allocopt's tests) can run.

They deliberately avoid allocopt's own machinery: basic solutions come from ``numpy.linalg.solve`` on the
perturbed standard form, and the basis gap (9) is searched for directly in the space of perturbed means.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..cbmai.problem import CBMAIProblem

__all__ = ["perturbed_basic_solution", "gap_constraint_violation", "direct_gap_search"]


def perturbed_basic_solution(problem: CBMAIProblem, rewards: np.ndarray, costs: np.ndarray,
                             basis: Sequence[int], max_condition: float = 1e10
                             ) -> tuple[np.ndarray | None, float | None]:
    """``(x_J, mu_J^T x_J)`` of ``basis`` for the means ``(rewards, costs)``; ``(None, None)`` when ``A_J`` has
    a condition number above ``max_condition``."""
    matrix, rhs, _ = problem.with_means(rewards, costs).standard_form()
    sub = matrix[:, list(basis)]
    if np.linalg.cond(sub) > max_condition:
        return None, None
    x = np.linalg.solve(sub, rhs)
    objective = np.concatenate([np.asarray(rewards, dtype=float), np.zeros(problem.n_costs)])
    return x, float(objective[list(basis)] @ x)


def gap_constraint_violation(problem: CBMAIProblem, support: Sequence[int], basis: Sequence[int],
                             rewards: np.ndarray, costs: np.ndarray) -> float | None:
    """Largest violation of the constraints of (9) at ``(rewards, costs)``: ``I*`` feasible, ``J`` feasible,
    ``J``'s value at least ``I*``'s (``<= 0`` when they hold; None when a basis matrix is singular)."""
    x_support, value_support = perturbed_basic_solution(problem, rewards, costs, support)
    x_basis, value_basis = perturbed_basic_solution(problem, rewards, costs, basis)
    if x_support is None or x_basis is None:
        return None
    assert value_support is not None and value_basis is not None  # (None exactly with x)
    return float(max(-x_support.min(), -x_basis.min(), value_support - value_basis))


def direct_gap_search(problem: CBMAIProblem, support: Sequence[int], basis: Sequence[int], sigma_r: float,
                      sigma_c: float, starts: int, rng: np.random.Generator, spread: float = 0.2) -> float:
    """An upper bound on ``Delta_J^2`` (9): SLSQP on the weighted distance in the space of the perturbed means
    of the unknown arms of ``J`` and ``I*``, with the constraints of (9) evaluated by ``numpy.linalg.solve``,
    from ``starts`` random starts around the true means. Returns ``inf`` when no start ends feasible."""
    from scipy.optimize import minimize

    n_costs, unknown = problem.n_costs, problem.n_unknown
    columns = sorted({int(a) for a in list(support) + list(basis) if a < unknown})
    origin = np.concatenate([problem.rewards[columns], problem.costs[:, columns].ravel()])
    weights = np.concatenate([np.full(len(columns), sigma_r**-2), np.full(n_costs * len(columns), sigma_c**-2)])

    def unpack(theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        rewards, costs = problem.rewards.copy(), problem.costs.copy()
        rewards[columns] = theta[:len(columns)]
        costs[:, columns] = theta[len(columns):].reshape(n_costs, len(columns))
        return rewards, costs

    def constraints(theta: np.ndarray) -> np.ndarray:
        rewards, costs = unpack(theta)
        x_support, value_support = perturbed_basic_solution(problem, rewards, costs, support)
        x_basis, value_basis = perturbed_basic_solution(problem, rewards, costs, basis)
        if x_support is None or x_basis is None:
            return -np.ones(2 * (n_costs + 1) + 1)
        assert value_support is not None and value_basis is not None  # (None exactly with x)
        return np.concatenate([x_support, x_basis, [value_basis - value_support]])

    best = np.inf
    for _ in range(starts):
        start = origin + rng.normal(scale=spread, size=origin.size)
        result = minimize(lambda theta: float(weights @ (theta - origin) ** 2), start, method="SLSQP",
                          constraints=[{"type": "ineq", "fun": constraints}], options={"maxiter": 300})
        if np.all(constraints(result.x) >= -1e-9):
            best = min(best, float(weights @ (result.x - origin) ** 2))
    return best
