"""Exact references for the CBMAI differential tests, independent of allocopt's machinery.

* :func:`exact_optimum` solves ``max {r^T p : c p <= cbar, 1^T p = 1, p >= 0}`` (restricted to a column subset)
  by vertex enumeration in the space of ``p`` with exact rational arithmetic (:class:`fractions.Fraction`, which
  represents every float input exactly): a vertex is the unique solution of ``1^T p = 1`` and ``K - 1`` active
  constraints among ``p_a = 0`` and ``c_l p = cbar_l``, kept when it satisfies every constraint (the equalities
  of the columns left out included). The feasible set is a polytope in the simplex, so when it is nonempty it
  has a vertex and the optimum is attained at one. No tolerance is involved.
* :func:`random_wide_problem` and friends generate the instance classes that broke: cost rows spanning many
  decades, subsets without a basis, identical cost columns, ``K = 1``.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np

import allocopt


def _solve_exact(matrix: list[list[Fraction]], rhs: list[Fraction]) -> list[Fraction] | None:
    """Gaussian elimination over the rationals; None when the square system is singular."""
    size = len(rhs)
    rows = [row[:] + [value] for row, value in zip(matrix, rhs)]
    for column in range(size):
        pivot = next((row for row in range(column, size) if rows[row][column] != 0), None)
        if pivot is None:
            return None
        rows[column], rows[pivot] = rows[pivot], rows[column]
        lead = rows[column][column]
        for row in range(size):
            if row != column and rows[row][column] != 0:
                factor = rows[row][column] / lead
                rows[row] = [a - factor * b for a, b in zip(rows[row], rows[column])]
    return [rows[row][size] / rows[row][row] for row in range(size)]


def exact_optimum(problem: allocopt.CBMAIProblem, arms=None) -> Fraction | None:
    """The exact optimal value of the LP restricted to the columns ``arms`` (true arms and slacks ``K + l``);
    None when it is infeasible. A slack outside ``arms`` turns its constraint into an equality."""
    n_arms, n_costs = problem.n_arms, problem.n_costs
    arms = set(range(n_arms + n_costs)) if arms is None else {int(a) for a in arms}
    rewards = [Fraction(float(v)) for v in problem.rewards]
    costs = [[Fraction(float(v)) for v in row] for row in problem.costs]
    bounds = [Fraction(float(v)) for v in problem.bounds]
    unit = [[Fraction(int(i == j)) for j in range(n_arms)] for i in range(n_arms)]
    # constraints a^T p (=|<=) b: ("zero", a) for p_a >= 0, ("cost", l) for c_l p <= cbar_l
    forced = [("zero", a) for a in range(n_arms) if a not in arms]
    forced += [("cost", l) for l in range(n_costs) if n_arms + l not in arms]
    optional = [("zero", a) for a in range(n_arms) if a in arms]
    optional += [("cost", l) for l in range(n_costs) if n_arms + l in arms]

    def row_of(kind, index):
        return (unit[index], Fraction(0)) if kind == "zero" else (costs[index], bounds[index])

    best = None
    for chosen in itertools.combinations(forced + optional, n_arms - 1):
        matrix = [[Fraction(1)] * n_arms] + [row_of(*item)[0] for item in chosen]
        rhs = [Fraction(1)] + [row_of(*item)[1] for item in chosen]
        p = _solve_exact(matrix, rhs)
        if p is None or any(v < 0 for v in p):
            continue
        spent = [sum(c * v for c, v in zip(costs[l], p)) for l in range(n_costs)]
        if any(spent[l] > bounds[l] for l in range(n_costs)):
            continue
        if any((p[index] != 0) if kind == "zero" else (spent[index] != bounds[index]) for kind, index in forced):
            continue
        value = sum(r * v for r, v in zip(rewards, p))
        best = value if best is None or value > best else best
    return best


def random_wide_problem(rng: np.random.Generator, *, decades: float = 12.0, n_arms: int | None = None,
                        n_costs: int | None = None) -> allocopt.CBMAIProblem:
    """Costs ``10^u`` with ``u`` uniform over ``decades`` decades centred on 1 (so a row spans up to
    ``10^decades``), some entries zero, rewards uniform on [0, 1], bounds drawn on the same log scale or as an
    exact mix of the arm costs (a feasible instance whose optimum sits on small costs)."""
    n_arms = int(rng.integers(1, 6)) if n_arms is None else n_arms
    n_costs = int(rng.integers(1, 3)) if n_costs is None else n_costs
    half = decades / 2
    costs = 10.0 ** rng.uniform(-half, half, size=(n_costs, n_arms))
    costs[rng.random(costs.shape) < 0.1] = 0.0
    if rng.random() < 0.5:
        bounds = 10.0 ** rng.uniform(-half, half, size=n_costs)
    else:
        bounds = np.array([float(np.min(row)) * rng.uniform(1.0, 3.0) for row in costs])
    return allocopt.CBMAIProblem(rng.uniform(0.0, 1.0, size=n_arms), costs, bounds)


def random_dyadic_problem(rng: np.random.Generator, *, n_arms: int | None = None, n_costs: int | None = None,
                          duplicate: bool = False) -> allocopt.CBMAIProblem:
    """Costs and bounds on the dyadic grid {0, 1/4, ..., 2} (exact in binary, so ties and zero slacks are exact):
    degenerate vertices, bounds met exactly by single arms, and (with ``duplicate``) identical cost columns."""
    n_arms = int(rng.integers(1, 6)) if n_arms is None else n_arms
    n_costs = int(rng.integers(1, 3)) if n_costs is None else n_costs
    costs = rng.integers(0, 9, size=(n_costs, n_arms)) / 4.0
    if duplicate and n_arms >= 2:
        source, target = rng.choice(n_arms, size=2, replace=False)
        costs[:, target] = costs[:, source]
    bounds = costs[:, int(rng.integers(n_arms))].copy() if rng.random() < 0.5 else rng.integers(0, 9, n_costs) / 4.0
    rewards = rng.integers(0, 9, size=n_arms) / 8.0
    return allocopt.CBMAIProblem(rewards, costs, bounds)


def random_arm_subset(rng: np.random.Generator, problem: allocopt.CBMAIProblem) -> list[int]:
    """A random nonempty subset of the columns that lacks at least one slack when possible."""
    n_arms, n_columns = problem.n_arms, problem.n_columns
    arms = [a for a in range(n_arms) if rng.random() < 0.6] or [int(rng.integers(n_arms))]
    slacks = [s for s in range(n_arms, n_columns) if rng.random() < 0.4]
    if len(slacks) == problem.n_costs:
        slacks = slacks[1:]
    return sorted(arms + slacks)


def _basic_solution(rewards, costs, bounds, columns, n_arms):
    """``(x, value)`` of the basis ``columns`` of the standard form, by ``numpy.linalg.solve`` (None if singular)."""
    n_costs = costs.shape[0]
    matrix = np.zeros((n_costs + 1, len(columns)))
    objective = np.zeros(len(columns))
    for position, column in enumerate(columns):
        if column < n_arms:
            matrix[:n_costs, position] = costs[:, column]
            matrix[n_costs, position] = 1.0
            objective[position] = rewards[column]
        else:
            matrix[column - n_arms, position] = 1.0
    if np.linalg.cond(matrix) > 1e12:
        return None, None
    x = np.linalg.solve(matrix, np.append(bounds, 1.0))
    return x, float(objective @ x)


def one_unknown_gap(problem: allocopt.CBMAIProblem, support, basis, sigma_r: float, sigma_c: float,
                    radius: float = 4.0, points: int = 1201) -> float:
    """``Delta_J^2`` (9) for ``L = 1`` and one unknown arm (arm 0), by a direct one-dimensional search.

    Only ``(r_0, c_0)`` can move. For a fixed perturbed cost ``t`` both basic solutions are fixed and the value
    condition is linear in ``r~_0`` with coefficient ``delta = x^J_0 - x^{I*}_0``, so the cheapest reward move is
    ``max(0, -g) / |delta|``; ``G(t) = (t - c_0)^2 / sigma_c^2 + move^2 / sigma_r^2`` is searched on a grid of
    ``[c_0 - radius, c_0 + radius]``, every grid minimum and every feasibility boundary refined (bounded Brent
    and bisection). Returns ``inf`` when no ``t`` of the range is feasible."""
    from scipy.optimize import minimize_scalar

    n_arms = problem.n_arms
    rewards, costs, bounds = problem.rewards, problem.costs, problem.bounds
    cost_0 = float(costs[0, 0])

    def weight_of_arm_0(x, columns):
        return float(x[list(columns).index(0)]) if 0 in columns else 0.0

    def value(t: float) -> float:
        moved = costs.copy()
        moved[0, 0] = t
        x_basis, value_basis = _basic_solution(rewards, moved, bounds, basis, n_arms)
        x_support, value_support = _basic_solution(rewards, moved, bounds, support, n_arms)
        if x_basis is None or x_support is None or min(x_basis.min(), x_support.min()) < -1e-13:
            return np.inf
        gap = value_basis - value_support
        delta = weight_of_arm_0(x_basis, basis) - weight_of_arm_0(x_support, support)
        if gap >= 0:
            move = 0.0
        elif delta == 0:
            return np.inf
        else:
            move = gap / delta
        return (t - cost_0) ** 2 / sigma_c**2 + move**2 / sigma_r**2

    grid = np.linspace(cost_0 - radius, cost_0 + radius, points)
    values = np.array([value(float(t)) for t in grid])
    best = float(np.min(values))
    finite = np.isfinite(values)
    for index in range(points):
        if not finite[index]:
            continue
        left, right = max(index - 1, 0), min(index + 1, points - 1)
        if values[index] <= values[left] and values[index] <= values[right]:
            refined = minimize_scalar(lambda t: min(value(t), 1e100), bounds=(float(grid[left]), float(grid[right])),
                                      method="bounded", options={"xatol": 1e-13})
            best = min(best, float(refined.fun))
        for neighbour in (left, right):  # a feasibility boundary between two grid points: bisect to it
            if not finite[neighbour]:
                inside, outside = float(grid[index]), float(grid[neighbour])
                for _ in range(80):
                    middle = 0.5 * (inside + outside)
                    if np.isfinite(value(middle)):
                        inside = middle
                    else:
                        outside = middle
                best = min(best, value(inside))
    return best


def witness_violation(problem: allocopt.CBMAIProblem, support, basis, rewards, costs) -> float:
    """Largest violation of the constraints of (9) at the perturbed means, by ``numpy.linalg.solve`` (``inf``
    when a basis matrix is singular): ``I*`` and ``J`` feasible, ``J``'s value at least ``I*``'s."""
    n_arms = problem.n_arms
    x_support, value_support = _basic_solution(rewards, costs, problem.bounds, support, n_arms)
    x_basis, value_basis = _basic_solution(rewards, costs, problem.bounds, basis, n_arms)
    if x_support is None or x_basis is None:
        return np.inf
    return float(max(-x_support.min(), -x_basis.min(), value_support - value_basis))


def random_one_unknown_problem(rng: np.random.Generator, n_arms: int = 3) -> allocopt.CBMAIProblem:
    """``L = 1``, arm 0 unknown and the others known: rewards in [0, 1], costs in [0.1, 1.6], bound 1."""
    return allocopt.CBMAIProblem(rng.uniform(0.0, 1.0, n_arms), rng.uniform(0.1, 1.6, (1, n_arms)), [1.0],
                                 n_unknown=1)
