"""Differential tests of the CBMAI layer on the instance classes that used to break.

Every answer is judged against an evaluation written in the test and independent of allocopt's machinery:

* LP values and statuses: exact rational vertex enumeration (``cbmai_exact.exact_optimum``);
* the returned point: ``p >= 0``, ``1^T p = 1`` and the cost rows checked with numpy, relative to the magnitudes
  in each row; the dual: ``A^T lambda >= mu`` relative to its magnitudes, and ``b^T lambda`` equal to the exact
  optimum;
* IV and Lagrangian scores: the largest IV score is the optimum of the restricted LP (the optimal basis contains
  the support), the Lagrangian scores are ``<= 0`` with ``0`` reached, and both are ``-inf`` exactly when the
  restricted LP is infeasible;
* hardness gaps (``L = 1``, one unknown arm): a direct one-dimensional search (``cbmai_exact.one_unknown_gap``)
  and a numpy check that the library's witness satisfies the constraints of (9) at the reported distance.

Classes: cost rows spanning 12 decades, column subsets lacking slacks (degenerate, dyadic data with exact ties),
identical cost columns, ``K = 1``, bases made of known arms and a shared single unknown arm.
"""

from __future__ import annotations

import numpy as np
import pytest

import allocopt
from allocopt.algorithms import sfsr, uslp

from cbmai_exact import (exact_optimum, one_unknown_gap, random_arm_subset, random_dyadic_problem,
                         random_one_unknown_problem, random_wide_problem, witness_violation)

TOL = 1e-9


def _point_problems(problem, arms, result) -> list[str]:
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


def check_lp_case(problem, arms=None, methods=("enumerate",), scores=True) -> list[str]:
    """All disagreements of the library with the exact evaluation on one instance (restricted to ``arms``)."""
    columns = list(range(problem.n_columns)) if arms is None else list(arms)
    exact = exact_optimum(problem, columns)
    failures = []
    for method in methods:
        result = allocopt.solve_cbmai(problem, method, arms=columns, diagnose=False)
        tag = f"{problem!r} arms={columns} method={method}"
        if exact is None:
            if result.status != "infeasible":
                failures.append(f"{tag}: status {result.status} value {result.value!r}, exact: infeasible")
            continue
        if result.status != "optimal":
            failures.append(f"{tag}: status {result.status}, exact optimum {float(exact)!r}")
            continue
        if abs(result.value - float(exact)) > TOL * max(1.0, abs(float(exact))):
            failures.append(f"{tag}: value {result.value!r}, exact {float(exact)!r}")
        dual_value = float(np.append(problem.bounds, 1.0)[[c for c in range(problem.n_costs)] + [problem.n_costs]]
                           @ result.duals)
        if abs(dual_value - float(exact)) > 1e-7 * max(1.0, abs(float(exact))):
            failures.append(f"{tag}: dual objective {dual_value!r}, exact {float(exact)!r}")
        failures += [f"{tag}: {message}" for message in _point_problems(problem, columns, result)]
    if scores:
        iv = allocopt.iv_scores(problem, columns)
        lagrangian = allocopt.lagrangian_scores(problem, columns)
        if exact is None:
            if np.any(iv > -np.inf) or np.any(lagrangian > -np.inf):
                failures.append(f"{problem!r} arms={columns}: finite scores on an infeasible subset")
        else:
            if abs(np.max(iv) - float(exact)) > TOL * max(1.0, abs(float(exact))):
                failures.append(f"{problem!r} arms={columns}: max IV {np.max(iv)!r}, exact {float(exact)!r}")
            rounding = TOL * max(1.0, float(np.max(np.abs(problem.rewards))))  # reduced costs of tied columns
            if not (abs(np.max(lagrangian)) <= rounding and np.all(np.isfinite(lagrangian))):
                failures.append(f"{problem!r} arms={columns}: Lagrangian scores {lagrangian.tolist()}")
    return failures


def run_lp_classes(seed: int, counts: dict[str, int]) -> tuple[int, list[str]]:
    """Run the LP classes; returns (number of judged answers, failures)."""
    rng = np.random.default_rng(seed)
    judged, failures = 0, []
    for index in range(counts["wide"]):  # rows spanning 12 decades, all columns
        methods = ("enumerate",) + (("highs",) if index < counts["wide_highs"] else ()) + (
            ("pulp",) if index < counts["wide_pulp"] else ())
        failures += check_lp_case(random_wide_problem(rng, decades=12.0), methods=methods)
        judged += len(methods) + 2
    for _ in range(counts["subsets"]):  # degenerate subsets lacking slacks, dyadic data with exact ties
        problem = random_dyadic_problem(rng)
        failures += check_lp_case(problem, random_arm_subset(rng, problem), methods=("enumerate", "highs"))
        judged += 4
    for _ in range(counts["identical"]):  # identical cost columns, whole problem and subsets
        problem = random_dyadic_problem(rng, n_arms=int(rng.integers(2, 6)), duplicate=True)
        failures += check_lp_case(problem, methods=("enumerate", "highs"))
        failures += check_lp_case(problem, random_arm_subset(rng, problem), methods=("enumerate",))
        judged += 7
    for _ in range(counts["single"]):  # K = 1, wide and dyadic
        problem = random_wide_problem(rng, n_arms=1) if rng.random() < 0.5 else random_dyadic_problem(rng, n_arms=1)
        failures += check_lp_case(problem, methods=("enumerate", "highs"))
        judged += 4
    return judged, failures


def run_single_arm_algorithms(seed: int, runs: int) -> tuple[int, list[str]]:
    """SFSR (both scores) and USLP with K = 1 on instances whose cost is far from the bound (the empirical verdict
    is then the true one with overwhelming probability: noise sd 0.5 / sqrt(10^4) = 0.005 against a margin >= 0.2)."""
    rng = np.random.default_rng(seed)
    judged, failures = 0, []
    for index in range(runs):
        margin = rng.uniform(0.2, 1.0) * (1 if rng.random() < 0.5 else -1)
        problem = allocopt.CBMAIProblem([rng.uniform()], [[1.0 + margin]], [1.0])
        infeasible = exact_optimum(problem) is None
        for run in (sfsr(problem, 10_000, rng=index), sfsr(problem, 10_000, score="lagrangian", rng=index),
                    uslp(problem, 10_000, rng=index)):
            judged += 1
            if run.declared_infeasible != infeasible or (not infeasible and run.support != (0, 1)):
                failures.append(f"{run.algorithm} on {problem!r}: support {run.support}, infeasible {infeasible}")
    return judged, failures


def run_hardness_class(seed: int, instances: int) -> tuple[int, list[str]]:
    """Every basis gap of random ``L = 1`` instances with one unknown arm (known-arm bases, shared unknown arm)."""
    rng = np.random.default_rng(seed)
    judged, failures = 0, []
    done = 0
    while done < instances:
        problem = random_one_unknown_problem(rng, n_arms=int(rng.integers(2, 4)))
        try:
            hardness = allocopt.cbmai_hardness(problem, 1.0, 0.5)
        except allocopt.InvalidInstanceError:
            continue  # infeasible or outside Assumption 1: no gap to judge
        done += 1
        support = hardness.optimal_support
        for row, basis in enumerate(hardness.bases):
            basis = tuple(int(column) for column in basis)
            if basis == support:
                continue
            judged += 1
            gap = float(hardness.basis_gaps[row])
            reference = one_unknown_gap(problem, support, basis, 1.0, 0.5)
            tag = f"{problem!r} I*={support} J={basis}: library {gap!r}, 1-D search {reference!r}"
            if not np.isfinite(gap):
                if np.isfinite(reference):
                    failures.append(tag)
                continue
            if gap > reference * (1 + 1e-6) + 1e-10:  # the library must not overestimate
                failures.append(tag)
            rewards, costs = hardness.witness(list(basis))
            distance = np.sum((rewards - problem.rewards) ** 2) + np.sum((costs - problem.costs) ** 2) / 0.25
            if witness_violation(problem, support, basis, rewards, costs) > 1e-9:
                failures.append(f"{tag}: the witness violates (9)")
            if abs(distance - gap) > 1e-6 * gap + 1e-12:  # ...nor underestimate: the witness attains the value
                failures.append(f"{tag}: the witness is at distance {distance!r}")
    return judged, failures


def test_differential_lp_classes():
    judged, failures = run_lp_classes(11, {"wide": 450, "wide_highs": 150, "wide_pulp": 40, "subsets": 200,
                                           "identical": 100, "single": 80})
    assert judged >= 1000
    assert failures == []


def test_differential_single_arm_algorithms():
    judged, failures = run_single_arm_algorithms(12, 20)
    assert judged == 60
    assert failures == []


def test_differential_hardness():
    judged, failures = run_hardness_class(13, 6)
    assert judged >= 12
    assert failures == []


@pytest.mark.slow
def test_differential_lp_classes_large():
    judged, failures = run_lp_classes(21, {"wide": 4000, "wide_highs": 1500, "wide_pulp": 300, "subsets": 1500,
                                           "identical": 700, "single": 500})
    assert judged >= 10_000
    assert failures == []


@pytest.mark.slow
def test_differential_single_arm_algorithms_large():
    judged, failures = run_single_arm_algorithms(22, 200)
    assert failures == []


@pytest.mark.slow
def test_differential_hardness_large():
    judged, failures = run_hardness_class(23, 60)
    assert judged >= 150
    assert failures == []


def test_fast_feasibility_test_matches_the_shares():
    # The algorithms' hot loop judges feasibility without the shares (evaluate_bases(diagnostics=False)); it must
    # classify every basis as the full test does, including the bases it leaves to the full test (tiny negative
    # coordinates, as p_0 = -1e-12 in the first instance) and batches of empirical matrices.
    from allocopt.algorithms._cbmai_common import empirical_matrices
    from allocopt.cbmai.bases import basis_layout, evaluate_bases

    def both(columns, objective, bounds, layout):
        full = evaluate_bases(columns, objective, bounds, layout)
        fast = evaluate_bases(columns, objective, bounds, layout, diagnostics=False)
        return full.feasible, fast.feasible

    rng = np.random.default_rng(31)
    problems = [allocopt.CBMAIProblem([0, 1], [[1e6, 2e-6]], [1e-6]),
                allocopt.CBMAIProblem([0, 1, 0], [[1e6, 2e-6, 0]], [1e-6])]
    problems += [random_wide_problem(rng) if index % 2 else random_dyadic_problem(rng) for index in range(400)]
    for problem in problems:
        matrix, rhs, objective = problem.standard_form()
        full, fast = both(matrix, objective, rhs[:-1], basis_layout(problem.n_columns, problem.n_costs + 1))
        np.testing.assert_array_equal(full, fast)
    problem = allocopt.CBMAIProblem.from_reference("cbmai-d2p")
    _, rhs, _ = problem.standard_form()
    for spread in (0.0, 0.05, 0.5):
        columns, objective = empirical_matrices(problem, problem.rewards + spread * rng.standard_normal((40, 24)),
                                                problem.costs + spread * rng.standard_normal((40, 2, 24)))
        full, fast = both(columns, objective, rhs[:-1], basis_layout(26, 3))
        np.testing.assert_array_equal(full, fast)
