"""IV scores (6), with the strict variant, and Lagrangian scores (8)."""

from __future__ import annotations

import numpy as np
import pytest
from cbmai_testlib import brute_force_bases, random_problem, table_1_problem

import allocopt


def brute_force_iv(problem, columns, strict=False, tol=1e-9):
    """(6) from the independent per-basis computation: best feasible basis value containing each column."""
    scores = {column: -np.inf for column in columns}
    for basis, x, value in brute_force_bases(problem, columns):
        if x is None or np.any(x < -tol):
            continue
        for slot, column in enumerate(basis):
            if strict and x[slot] <= tol:
                continue
            scores[column] = max(scores[column], value)
    return np.array([scores[column] for column in sorted(columns)])


def test_iv_matches_brute_force_on_random_subsets(rng):
    for _ in range(60):
        problem = random_problem(rng, n_costs=int(rng.integers(1, 4)), n_arms=int(rng.integers(2, 7)))
        size = int(rng.integers(1, problem.n_columns + 1))
        columns = sorted(rng.choice(problem.n_columns, size=size, replace=False).tolist())
        for strict in (False, True):
            np.testing.assert_allclose(allocopt.iv_scores(problem, columns, strict=strict),
                                       brute_force_iv(problem, columns, strict=strict), rtol=1e-9, atol=1e-12)


def test_strict_and_literal_iv_differ_at_a_degenerate_bfs():
    # Arm 0 costs exactly the bound 1.0, so basis {arm 0, arm 1} has the BFS p = (1, 0) with value r_0 = 1.0
    # and {arm 0, slack} has slack 0: under (6) arm 1 and the slack inherit 1.0; counting only BFSs where
    # they are positive, arm 1 and the slack only have the basis {arm 1, slack} (p_1 = 1, slack 0.5, value 0.3).
    problem = allocopt.CBMAIProblem([1.0, 0.3], [[1.0, 0.5]], [1.0])
    assert allocopt.iv_scores(problem).tolist() == [1.0, 1.0, 1.0]
    assert allocopt.iv_scores(problem, strict=True).tolist() == [1.0, 0.3, 0.3]


def test_figure_1_picture_for_one_constraint():
    # L = 1 (Figure 1): the IV of arm a is the highest point where a segment from a to another arm, or a
    # horizontal ray (the slack), meets the line c = cbar or stays below it. Hand computation for
    # arms (c, r) = (0.2, 0.3), (1.6, 1.0), (0.6, 0.8) and cbar = 1:
    #   arm 1 with arm 0: t 1.6 + (1 - t) 0.2 = 1 -> t = 4/7, value 4/7 + 3/7 0.3 = 0.7
    #   arm 1 with arm 2: t 1.6 + (1 - t) 0.6 = 1 -> t = 0.4, value 0.4 + 0.6 0.8 = 0.88
    #   arm 0 and arm 2 alone (with the slack) are feasible: 0.3 and 0.8; the slack's best is arm 2's 0.8.
    problem = allocopt.CBMAIProblem([0.3, 1.0, 0.8], [[0.2, 1.6, 0.6]], [1.0])
    np.testing.assert_allclose(allocopt.iv_scores(problem), [0.7, 0.88, 0.88, 0.8], rtol=1e-12)


def test_iv_of_the_optimal_support_is_the_optimum_on_table_1():
    # Every column of the optimal basis is in a feasible basis of value v*, and no basis does better.
    for name in ("cbmai-d1p", "cbmai-d2p", "cbmai-d3p"):
        problem = table_1_problem(name)
        result = allocopt.solve_cbmai(problem)
        scores = allocopt.iv_scores(problem)
        np.testing.assert_allclose(scores[list(result.support)], result.value, rtol=1e-12)
        assert np.max(scores) == pytest.approx(result.value, rel=1e-12)


def test_lagrangian_scores_are_minus_the_reduced_costs_of_an_optimal_dual(rng):
    for _ in range(60):
        problem = random_problem(rng, n_costs=int(rng.integers(1, 4)), n_arms=int(rng.integers(1, 7)))
        matrix, rhs, objective = problem.standard_form()
        scores = allocopt.lagrangian_scores(problem)
        highs = allocopt.solve_cbmai(problem, "highs", diagnose=False)
        if highs.status == "infeasible":
            assert np.all(scores == -np.inf)  # (8): the dual is unbounded
            continue
        assert np.all(scores <= 1e-9)
        np.testing.assert_allclose(scores[list(highs.support)], 0.0, atol=1e-9)
        # A random instance has a unique, non-degenerate optimum, hence a unique dual: every method's dual
        # gives the same scores mu - A^T lambda (computed here from HiGHS's and PuLP's duals).
        for method in ("highs", "pulp"):
            lam = allocopt.solve_cbmai(problem, method, diagnose=False).duals
            np.testing.assert_allclose(scores, objective - matrix.T @ lam, atol=1e-9)
            np.testing.assert_allclose(allocopt.lagrangian_scores(problem, method=method), scores, atol=1e-9)


def test_lagrangian_scores_on_a_subset_and_when_infeasible():
    # Hand computation: arms (c, r) = (2, 1), (0, 0.2), (0.5, 0.1), cbar = 1; the optimum mixes arms 0 and 1
    # with lambda = (0.4, 0.2): scores r_a - 0.4 c_a - 0.2 = (0, 0, -0.3) and -0.4 for the slack.
    problem = allocopt.CBMAIProblem([1.0, 0.2, 0.1], [[2.0, 0.0, 0.5]], [1.0])
    np.testing.assert_allclose(allocopt.lagrangian_scores(problem), [0.0, 0.0, -0.3, -0.4], atol=1e-12)
    # Without arm 1 (X = {arm 0, arm 2, slack}) the optimum mixes arms 0 and 2 (t 2 + (1 - t) 0.5 = 1, t = 1/3,
    # value 0.4 > 0.1 for arm 2 alone); lambda solves 2 l1 + l2 = 1, 0.5 l1 + l2 = 0.1: l1 = 0.6, l2 = -0.2.
    np.testing.assert_allclose(allocopt.lagrangian_scores(problem, [0, 2, 3]), [0.0, 0.0, -0.6], atol=1e-12)
    # Only arm 0 left, with the slack: infeasible, every score -inf.
    assert allocopt.lagrangian_scores(problem, [0, 3]).tolist() == [-np.inf, -np.inf]


def test_iv_minus_inf_when_no_feasible_basis_contains_the_arm():
    # Arm 1 (cost 3) can only be in a feasible basis by mixing with a cheap arm: with arms {1, slack} alone
    # nothing is feasible, so every score is -inf (SFSR's "infeasible" test).
    problem = allocopt.CBMAIProblem([1.0, 2.0], [[0.5, 3.0]], [1.0])
    assert allocopt.iv_scores(problem, [1, 2]).tolist() == [-np.inf, -np.inf]
    # with arm 0 present arm 1 mixes: t 3 + (1 - t) 0.5 = 1 -> t = 0.2, value 0.2 * 2 + 0.8 = 1.2
    np.testing.assert_allclose(allocopt.iv_scores(problem), [1.2, 1.2, 1.0], rtol=1e-12)


def test_score_arguments_are_validated():
    problem = allocopt.CBMAIProblem([1.0, 2.0], [[0.5, 3.0]], [1.0])
    with pytest.raises(allocopt.InvalidArgumentError, match="'strict' parameter of iv_scores must be True or False"):
        allocopt.iv_scores(problem, strict="yes")
    with pytest.raises(allocopt.InvalidArgumentError, match="'arms' parameter of iv_scores"):
        allocopt.iv_scores(problem, [5])
    with pytest.raises(allocopt.InvalidArgumentError, match="'method' parameter of lagrangian_scores"):
        allocopt.lagrangian_scores(problem, method="dual")
    # every argument error names the function called, not solve_cbmai underneath
    with pytest.raises(allocopt.InvalidArgumentError, match=r"'arms' parameter of lagrangian_scores .* Got \[\]"):
        allocopt.lagrangian_scores(problem, [])
    with pytest.raises(allocopt.InvalidArgumentError, match="'solver' parameter of lagrangian_scores"):
        allocopt.lagrangian_scores(problem, method="highs", solver="cbc")
    with pytest.raises(allocopt.InvalidArgumentError, match=r"^lagrangian_scores\(method='highs'\) got unknown"):
        allocopt.lagrangian_scores(problem, method="highs", tolerance=1e-3)
