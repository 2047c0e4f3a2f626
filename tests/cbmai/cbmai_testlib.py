"""Helpers shared by the CBMAI tests: random instances and independent (brute-force) reference computations.

The reference computations deliberately avoid allocopt's enumeration engine: they loop over
``itertools.combinations`` and call ``numpy.linalg.solve`` on each basis.
"""

from __future__ import annotations

import itertools

import numpy as np

import allocopt


def random_problem(rng: np.random.Generator, *, n_costs: int | None = None, n_arms: int | None = None,
                   infeasible_share: float = 0.2) -> allocopt.CBMAIProblem:
    """A random instance: costs uniform on [0, 1]; bounds usually inside the cost range, and with probability
    ``infeasible_share`` below every arm's cost in some row (so the LP is infeasible)."""
    n_costs = int(rng.integers(1, 4)) if n_costs is None else n_costs
    n_arms = int(rng.integers(1, 8)) if n_arms is None else n_arms
    costs = rng.uniform(0.0, 1.0, size=(n_costs, n_arms))
    rewards = rng.normal(size=n_arms)
    bounds = rng.uniform(0.2, 0.9, size=n_costs)
    if rng.random() < infeasible_share:
        row = int(rng.integers(n_costs))
        bounds[row] = costs[row].min() - rng.uniform(0.01, 0.3)
    return allocopt.CBMAIProblem(rewards, costs, bounds)


def brute_force_bases(problem: allocopt.CBMAIProblem, columns=None, rcond: float = 1e-12):
    """Every basis of the given columns with its BFS, by ``numpy.linalg.solve`` (independent of allocopt)."""
    matrix, rhs, objective = problem.standard_form()
    columns = range(problem.n_columns) if columns is None else columns
    rows = []
    for basis in itertools.combinations(sorted(columns), problem.n_costs + 1):
        sub = matrix[:, list(basis)]
        singular = np.linalg.cond(sub) > 1 / rcond
        x = None if singular else np.linalg.solve(sub, rhs)
        rows.append((basis, x, None if x is None else float(objective[list(basis)] @ x)))
    return rows


def brute_force_optimum(problem: allocopt.CBMAIProblem, columns=None, tol: float = 1e-9) -> float:
    """Best value over feasible bases (``-inf`` when none), by brute force."""
    values = [value for _, x, value in brute_force_bases(problem, columns) if x is not None and np.all(x >= -tol)]
    return max(values, default=-np.inf)


def table_1_problem(name: str) -> allocopt.CBMAIProblem:
    """D1P, D2P or D3P of the paper's Table 1 (Appendix C)."""
    return allocopt.CBMAIProblem.from_reference(name)
