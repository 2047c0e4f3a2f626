"""Exact references for the CBMAI differential tests, independent of allocopt's machinery.

* :func:`exact_optimum` solves ``max {r^T p : c p <= cbar, 1^T p = 1, p >= 0}`` (restricted to a column subset)
  by vertex enumeration in the space of ``p`` with exact rational arithmetic (:class:`fractions.Fraction`, which
  represents every float input exactly): a vertex is the unique solution of ``1^T p = 1`` and ``K - 1`` active
  constraints among ``p_a = 0`` and ``c_l p = cbar_l``, kept when it satisfies every constraint (the equalities
  of the columns left out included). The feasible set is a polytope in the simplex, so when it is nonempty it
  has a vertex and the optimum is attained at one. No tolerance is involved.
* :func:`exact_optimum_by_bases` computes the same value by a second exact route (basic solutions of the standard
  form by Cramer's rule in integer arithmetic), 30 times cheaper at ``K = 8, L = 3``; the two are checked against
  each other in the differential tests.
* :func:`random_wide_problem` and friends generate the instance classes that broke: cost rows spanning many
  decades, subsets without a basis, identical cost columns, ``K = 1``.
* :func:`judge_result` and :func:`judge_lagrangian` list what is wrong with an answer of ``solve_cbmai`` (any
  backend) or with Lagrangian scores, given the exact optimum; :class:`Tally` counts them per backend.
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


def _integer_determinant(matrix: list[list[int]]) -> int:
    """Exact determinant of a square integer matrix (Bareiss' fraction-free elimination: every division is exact)."""
    rows = [row[:] for row in matrix]
    size, sign, previous = len(rows), 1, 1
    for k in range(size - 1):
        if rows[k][k] == 0:
            swap = next((i for i in range(k + 1, size) if rows[i][k] != 0), None)
            if swap is None:
                return 0
            rows[k], rows[swap], sign = rows[swap], rows[k], -sign
        for i in range(k + 1, size):
            for j in range(k + 1, size):
                rows[i][j] = (rows[i][j] * rows[k][k] - rows[i][k] * rows[k][j]) // previous
        previous = rows[k][k]
    return sign * rows[size - 1][size - 1]


def _integer_rows(rows: list[list[float]]) -> list[list[int]]:
    """Each row multiplied by the power of two that makes all its (binary floating-point) entries integers."""
    result = []
    for row in rows:
        ratios = [Fraction(value) for value in row]
        scale = max(ratio.denominator for ratio in ratios)  # denominators of floats are powers of two
        result.append([int(ratio * scale) for ratio in ratios])
    return result


def exact_optimum_by_bases(problem: allocopt.CBMAIProblem, arms=None) -> Fraction | None:
    """:func:`exact_optimum` by a second exact route, much cheaper for ``K`` of 6 and more: the basic solutions of
    the standard form ``A x = b`` over *all* ``K + L`` columns, by Cramer's rule in integer arithmetic.

    The restricted feasible set ``{x : A x = b, x >= 0, x_j = 0 for j not in arms}`` is a face of the full
    polytope ``{A x = b, x >= 0}``; ``A`` has full row rank ``L + 1`` (the slack columns and an arm column), so
    every vertex of the face is a basic feasible solution of some basis of ``A`` that vanishes outside ``arms``,
    and the optimum (attained at a vertex when the face is nonempty) is the best such solution. Each row of
    ``[A | b]`` is scaled by a power of two to integers (the solutions do not change), so
    ``x_i = det(A_B with column i replaced by b) / det(A_B)`` is a ratio of exact integer determinants."""
    n_arms, n_costs = problem.n_arms, problem.n_costs
    n_columns = n_arms + n_costs
    keep = set(range(n_columns)) if arms is None else {int(a) for a in arms}
    matrix, rhs, objective = problem.standard_form()
    rows = _integer_rows([list(map(float, matrix[row])) + [float(rhs[row])] for row in range(n_costs + 1)])
    mu = [Fraction(float(value)) for value in objective]
    best = None
    for basis in itertools.combinations(range(n_columns), n_costs + 1):
        square = [[row[j] for j in basis] for row in rows]
        determinant = _integer_determinant(square)
        if determinant == 0:
            continue
        numerators = []
        for slot in range(n_costs + 1):
            replaced = [row[:slot] + [source[n_columns]] + row[slot + 1:] for row, source in zip(square, rows)]
            numerators.append(_integer_determinant(replaced))
        if any(numerator * determinant < 0 for numerator in numerators):
            continue
        if any(numerator != 0 for j, numerator in zip(basis, numerators) if j not in keep):
            continue
        value = sum(mu[j] * numerator for j, numerator in zip(basis, numerators)) / determinant
        best = value if best is None or value > best else best
    return best


def random_wide_problem(rng: np.random.Generator, *, decades: float = 12.0, n_arms: int | None = None,
                        n_costs: int | None = None, signed_rewards: bool = False) -> allocopt.CBMAIProblem:
    """Costs ``10^u`` with ``u`` uniform over ``decades`` decades centred on 1 (so a row spans up to
    ``10^decades``), some entries zero, rewards uniform on [0, 1] (standard normal with ``signed_rewards``),
    bounds drawn on the same log scale or as an exact mix of the arm costs (a feasible instance whose optimum
    sits on small costs)."""
    n_arms = int(rng.integers(1, 6)) if n_arms is None else n_arms
    n_costs = int(rng.integers(1, 3)) if n_costs is None else n_costs
    half = decades / 2
    costs = 10.0 ** rng.uniform(-half, half, size=(n_costs, n_arms))
    costs[rng.random(costs.shape) < 0.1] = 0.0
    if rng.random() < 0.5:
        bounds = 10.0 ** rng.uniform(-half, half, size=n_costs)
    else:
        bounds = np.array([float(np.min(row)) * rng.uniform(1.0, 3.0) for row in costs])
    rewards = rng.standard_normal(n_arms) if signed_rewards else rng.uniform(0.0, 1.0, size=n_arms)
    return allocopt.CBMAIProblem(rewards, costs, bounds)


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


# ---------------------------------------------------------------------------------------------------------
# judging the answers of every backend against the exact optimum
# ---------------------------------------------------------------------------------------------------------
TOL = 1e-9
"""Relative tolerance of the judges below (values, costs, reduced costs)."""


def point_problems(problem, arms, result) -> list[str]:
    """Independent checks of the point and dual returned for an optimal answer."""
    problems = []
    p = result.p
    arms = set(arms)
    if np.min(p) < -1e-12 or abs(np.sum(p) - 1.0) > 1e-12 or any(p[a] != 0 for a in range(problem.n_arms)
                                                                  if a not in arms):
        problems.append(f"p = {p.tolist()} is not a distribution on the arms of {sorted(arms)}")
    spent = problem.costs @ p
    scale = np.abs(problem.costs) @ np.abs(p) + np.abs(problem.bounds)
    for row in range(problem.n_costs):
        excess = spent[row] - problem.bounds[row]
        equality = problem.n_arms + row not in arms
        if excess > TOL * scale[row] or (equality and excess < -TOL * scale[row]):
            problems.append(f"cost row {row}: c p = {spent[row]!r} against the bound {problem.bounds[row]!r}")
    matrix, rhs, objective = problem.standard_form()
    columns = sorted(arms)
    reduced = matrix[:, columns].T @ result.duals - objective[columns]
    involved = (np.abs(matrix[:, columns]).T @ np.abs(result.duals) + np.abs(objective[columns])
                + np.max(np.abs(objective[columns])))
    if np.any(reduced < -TOL * involved):
        problems.append(f"dual infeasible: reduced costs {reduced.tolist()}")
    return problems


def solver_backends() -> tuple[tuple[str, str, dict], ...]:
    """``(label, method, options)`` of every backend of ``solve_cbmai``: the enumeration, HiGHS, and PuLP with
    each solver it can run on this machine."""
    from allocopt.cbmai._pulp import available_pulp_solvers

    pulp = tuple((f"pulp-{solver}", "pulp", {"solver": solver}) for solver in available_pulp_solvers())
    return (("enumerate", "enumerate", {}), ("highs", "highs", {})) + pulp


class Tally:
    """Answers judged and wrong answers, per backend (``label``) and per score built on a backend."""

    def __init__(self) -> None:
        self.tried: dict[str, int] = {}
        self.wrong: dict[str, int] = {}
        self.not_certified: dict[str, int] = {}
        self.fallbacks: dict[str, int] = {}
        self.failures: list[str] = []

    def record(self, label: str, problems: list[str], result=None) -> None:
        """Count one answer (``result``: the CBMAIResult judged, if any) and keep its problems."""
        self.tried[label] = self.tried.get(label, 0) + 1
        self.wrong[label] = self.wrong.get(label, 0) + bool(problems)
        uncertified = result is not None and result.status == "not_certified"
        self.not_certified[label] = self.not_certified.get(label, 0) + uncertified
        fallback = result is not None and bool(getattr(result, "certificate_failure", ""))
        self.fallbacks[label] = self.fallbacks.get(label, 0) + fallback
        self.failures += problems

    @property
    def judged(self) -> int:
        return sum(self.tried.values())

    def table(self) -> str:
        return "\n".join(f"{label:>24}: {self.tried[label]:6d} tried, {self.wrong[label]:4d} wrong, "
                         f"{self.not_certified[label]:4d} not certified, {self.fallbacks[label]:4d} answered by "
                         f"the enumeration" for label in sorted(self.tried))


def judge_result(problem, columns, exact, result, tag) -> list[str]:
    """Disagreements of one ``solve_cbmai`` answer with the exact optimum (None: infeasible)."""
    if result.status == "not_certified":
        return []  # no claim is made (counted apart: the backends fall back to the enumeration before this)
    if exact is None:
        return [] if result.status == "infeasible" else [f"{tag}: status {result.status} value {result.value!r}, "
                                                         f"exact: infeasible"]
    if result.status != "optimal":
        return [f"{tag}: status {result.status}, exact optimum {float(exact)!r}"]
    failures = []
    if abs(result.value - float(exact)) > TOL * max(1.0, abs(float(exact))):
        failures.append(f"{tag}: value {result.value!r}, exact {float(exact)!r}")
    dual_value = float(np.append(problem.bounds, 1.0) @ result.duals)
    if abs(dual_value - float(exact)) > 1e-7 * max(1.0, abs(float(exact))):
        failures.append(f"{tag}: dual objective {dual_value!r}, exact {float(exact)!r}")
    return failures + [f"{tag}: {message}" for message in point_problems(problem, columns, result)]


def judge_lagrangian(problem, columns, exact, scores, tag) -> list[str]:
    """(8) is minus the reduced costs of an optimal dual: ``<= 0`` with ``0`` reached; ``-inf`` when infeasible."""
    if exact is None:
        return [] if np.all(scores == -np.inf) else [f"{tag}: finite scores {scores.tolist()} on an infeasible LP"]
    rounding = TOL * max(1.0, float(np.max(np.abs(problem.rewards))))  # reduced costs of tied columns
    if not (abs(np.max(scores)) <= rounding and np.all(np.isfinite(scores))):
        return [f"{tag}: Lagrangian scores {scores.tolist()}"]
    return []
