"""Regression tests: wrong answers, wrong statuses and raw exceptions of the CBMAI layer.

The first case of each test is the reproduction that exposed the fault. Expected values come from exact rational
arithmetic (``cbmai_exact.exact_optimum``), from closed forms written out in the test, or from an independent
one-dimensional search (``cbmai_exact.one_unknown_gap``); never from the code under test.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import allocopt
from allocopt.algorithms import cbmai_error_rate, sfsr, uslp
from allocopt.exceptions import AllocoptError, InvalidArgumentError

from cbmai_exact import exact_optimum, one_unknown_gap, random_wide_problem, witness_violation

METHODS = ("enumerate", "highs", "pulp")


def _relative_dual_violation(problem, result):
    """``max_j -(A_j^T lambda - mu_j) / (|A_j|^T |lambda| + |mu_j| + |mu|_inf)`` over the LP's columns, by numpy."""
    matrix, _, objective = problem.standard_form()
    columns = list(result.arms)
    reduced = matrix[:, columns].T @ result.duals - objective[columns]
    scale = np.abs(matrix[:, columns]).T @ np.abs(result.duals) + np.abs(objective[columns])
    scale += np.max(np.abs(objective[columns]))
    return float(np.max(np.maximum(-reduced / scale, 0.0)))


# ---------------------------------------------------------------------------------------------------------
# enumeration on rows that span many decades
# ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("method", METHODS)
def test_wide_row_is_infeasible(method):
    # Every mix costs at least min(1e6, 2e-6) = 2e-6 > 1e-6: infeasible (exact arithmetic agrees).
    problem = allocopt.CBMAIProblem([0, 1], [[1e6, 2e-6]], [1e-6])
    assert exact_optimum(problem) is None
    result = allocopt.solve_cbmai(problem, method)
    assert result.status == "infeasible"
    assert result.value == -np.inf


@pytest.mark.parametrize("method", METHODS)
def test_wide_row_optimum_is_one_half(method):
    # p_1 2e-6 <= 1e-6 with the zero-cost arm 2 taking the rest: p_1 = 1/2 exactly (2e-6 is exactly 2 * 1e-6 in
    # binary), value 1/2.
    problem = allocopt.CBMAIProblem([0, 1, 0], [[1e6, 2e-6, 0]], [1e-6])
    assert exact_optimum(problem) == Fraction(1, 2)
    result = allocopt.solve_cbmai(problem, method)
    assert result.status == "optimal"
    assert result.value == pytest.approx(0.5, rel=1e-12)
    assert result.support == (1, 2)
    assert _relative_dual_violation(problem, result) <= 1e-9


def test_three_hundred_wide_instances_have_no_wrong_value_or_status():
    rng = np.random.default_rng(20260)
    wrong = []
    for _ in range(300):
        problem = random_wide_problem(rng)
        exact = exact_optimum(problem)
        result = allocopt.solve_cbmai(problem, diagnose=False)
        if exact is None:
            if result.status != "infeasible":
                wrong.append((problem, result.value, None))
        elif result.status != "optimal" or abs(result.value - float(exact)) > 1e-9 * max(1.0, abs(float(exact))):
            wrong.append((problem, result.value, float(exact)))
        elif _relative_dual_violation(problem, result) > 1e-9:
            wrong.append((problem, "dual infeasible", float(exact)))
    assert wrong == []


def test_feasibility_is_judged_on_the_bound_not_on_the_largest_cost():
    # The basis {arm 1, slack} has slack 1e-6 - 2e-6 = -1e-6: a violation of the whole bound, which the table must
    # call infeasible; {arm 0, arm 1} needs p_0 = -1e-12 (a cost of -1e-6 on arm 0): infeasible too.
    table = allocopt.enumerate_bases(allocopt.CBMAIProblem([0, 1], [[1e6, 2e-6]], [1e-6]))
    assert table.bases.tolist() == [[0, 1], [0, 2], [1, 2]]
    assert table.feasible.tolist() == [False, False, False]
    assert table.invertible.tolist() == [True, True, True]


def test_highs_solves_instances_it_called_unknown():
    # Columns spanning 1e-5..1e6 (a case where linprog reported "model_status Unknown" or a wrong status before
    # the equilibration): the answer now agrees with exact arithmetic.
    rng = np.random.default_rng(7)
    for _ in range(100):
        problem = random_wide_problem(rng)
        exact = exact_optimum(problem)
        result = allocopt.solve_cbmai(problem, "highs", diagnose=False)
        if exact is None:
            assert result.status == "infeasible"
        else:
            assert result.status == "optimal"
            assert result.value == pytest.approx(float(exact), rel=1e-9, abs=1e-12)


# ---------------------------------------------------------------------------------------------------------
# arm subsets without a basis of their own
# ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("method", METHODS)
def test_single_arm_subset_is_feasible(method):
    # arms = [0]: p_0 = 1 costs exactly the bound 1, value r_0 = 1.
    problem = allocopt.CBMAIProblem([1, 0.5], [[1, 0.2]], [1])
    assert exact_optimum(problem, [0]) == 1
    result = allocopt.solve_cbmai(problem, method, arms=[0])
    assert result.status == "optimal"
    assert result.value == pytest.approx(1.0, rel=1e-12)
    assert result.p.tolist() == pytest.approx([1.0, 0.0])


def test_single_arm_subset_scores_are_finite():
    problem = allocopt.CBMAIProblem([1, 0.5], [[1, 0.2]], [1])
    # the only column is the optimal support: Lagrangian score 0 (minus a zero reduced cost), IV = the value 1
    assert allocopt.lagrangian_scores(problem, arms=[0]).tolist() == [0.0]
    assert allocopt.iv_scores(problem, arms=[0]).tolist() == [1.0]


@pytest.mark.parametrize("method", METHODS)
def test_identical_cost_columns(method):
    # Two arms with the same cost column (1, 1): A_X has rank 1. p = (1, 0) is feasible (cost = bound), value 1.
    problem = allocopt.CBMAIProblem([1, 0.5], [[1, 1]], [1])
    assert exact_optimum(problem, [0, 1]) == 1
    result = allocopt.solve_cbmai(problem, method, arms=[0, 1])
    assert result.status == "optimal"
    assert result.value == pytest.approx(1.0, rel=1e-12)
    assert allocopt.iv_scores(problem, arms=[0, 1]).tolist() == [1.0, 0.5]


def test_subset_that_cannot_meet_its_equality_is_infeasible():
    # arms = [1]: p_1 = 1 costs 0.2, but without its slack the row is an equality c p = 1.
    problem = allocopt.CBMAIProblem([1, 0.5], [[1, 0.2]], [1])
    assert exact_optimum(problem, [1]) is None
    assert allocopt.solve_cbmai(problem, arms=[1]).status == "infeasible"
    assert allocopt.lagrangian_scores(problem, arms=[1]).tolist() == [-np.inf]


# ---------------------------------------------------------------------------------------------------------
# hardness gaps the lattice could not reach
# ---------------------------------------------------------------------------------------------------------
def test_known_arm_basis_has_a_finite_gap():
    # J = {1, 2} (known arms): BFS p = (5/11, 6/11), value (0.2*5 + 0.6*6)/11 = 4.6/11. I* = {arm 0, slack} has
    # value r_0 = 1, so moving r_0 down to 4.6/11 ties: Delta^2 = (1 - 4.6/11)^2 / sigma_r^2 = (6.4/11)^2.
    problem = allocopt.CBMAIProblem([1, 0.2, 0.6], [[0.5, 0.4, 1.5]], [1], n_unknown=1)
    hardness = allocopt.cbmai_hardness(problem, 1.0, 0.5)
    assert hardness.optimal_support == (0, 3)
    expected = (6.4 / 11) ** 2
    assert hardness.basis_gap([1, 2]) == pytest.approx(expected, rel=1e-9)
    assert hardness.arm_gaps[1] <= expected * (1 + 1e-9)
    rewards, costs = hardness.witness([1, 2])
    assert witness_violation(problem, (0, 3), (1, 2), rewards, costs) <= 1e-9
    assert one_unknown_gap(problem, (0, 3), (1, 2), 1.0, 0.5) == pytest.approx(expected, rel=1e-7)


def test_shared_single_unknown_arm_gap_is_exact():
    # Only arm 0 is unknown and it is in both J = {0, 2} and I* = {0, 1}; the independent 1-D search gives
    # 0.351861 (the lattice gave 0.399424).
    problem = allocopt.CBMAIProblem([.833, .831, .117], [[1.316, .827, .361]], [1], n_unknown=1)
    hardness = allocopt.cbmai_hardness(problem, 1.0, 0.5)
    assert hardness.optimal_support == (0, 1)
    reference = one_unknown_gap(problem, (0, 1), (0, 2), 1.0, 0.5)
    assert reference == pytest.approx(0.351861, abs=5e-7)
    assert hardness.basis_gap([0, 2]) == pytest.approx(reference, rel=1e-7)
    rewards, costs = hardness.witness([0, 2])
    assert witness_violation(problem, (0, 1), (0, 2), rewards, costs) <= 1e-9
    distance = np.sum((rewards - problem.rewards) ** 2) + np.sum((costs - problem.costs) ** 2) / 0.25
    assert distance == pytest.approx(hardness.basis_gap([0, 2]), rel=1e-7)


# ---------------------------------------------------------------------------------------------------------
# K = 1
# ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("score", ["iv", "lagrangian"])
def test_single_arm_sfsr_declares_infeasibility(score):
    # The arm costs 2 > 1 = bound: infeasible. With N = 10^4 pulls the empirical cost is within 0.05 of 2.
    problem = allocopt.CBMAIProblem([1], [[2]], [1])
    assert exact_optimum(problem) is None
    assert allocopt.solve_cbmai(problem).status == "infeasible"
    for seed in range(5):
        run = sfsr(problem, 10_000, score=score, rng=seed)
        assert run.support == () and run.declared_infeasible
        assert int(run.pulls.sum()) <= 10_000
        assert uslp(problem, 10_000, rng=seed).support == ()


def test_single_arm_sfsr_returns_the_arm_when_feasible():
    problem = allocopt.CBMAIProblem([1], [[0.5]], [1])
    assert exact_optimum(problem) == 1
    run = sfsr(problem, 10_000, rng=0)
    assert run.support == (0, 1) and not run.declared_infeasible


# ---------------------------------------------------------------------------------------------------------
# library errors with the house message
# ---------------------------------------------------------------------------------------------------------
def test_raw_exceptions_are_library_errors():
    problem = allocopt.CBMAIProblem([1.0, 0.6], [[0.5, 0.2]], [1.0])
    hardness = allocopt.cbmai_hardness(problem)
    with pytest.raises(InvalidArgumentError, match=r"The 'problem' parameter of solve_cbmai must be a CBMAIProblem"):
        allocopt.solve_cbmai(dict)
    with pytest.raises(InvalidArgumentError, match=r"The 'basis' parameter of CBMAIHardness.witness .* Got \[0, 0\]"):
        hardness.witness([0, 0])
    with pytest.raises(InvalidArgumentError, match=r"'name' parameter of CBMAIProblem.from_reference .*'cbmai-d1p'"):
        allocopt.CBMAIProblem.from_reference("topk-example-1")
    with pytest.raises(InvalidArgumentError, match=r"'algorithm' parameter of cbmai_error_rate .* Got None instead"):
        cbmai_error_rate(problem, lambda *args, **kwargs: None, 10, 2, rng=0)
    for call in (lambda: allocopt.cbmai_hardness([1, 2]), lambda: allocopt.iv_scores("x"),
                 lambda: allocopt.enumerate_bases(None), lambda: sfsr({}, 10)):
        with pytest.raises(AllocoptError):
            call()


def test_messages_name_the_right_argument_and_place():
    problem = allocopt.CBMAIProblem([1.0, 0.6, 0.2], [[0.5, 0.2, 0.1]], [1.0])
    with pytest.raises(InvalidArgumentError, match=r"'rewards' parameter of CBMAIProblem.with_means .*length 3"):
        problem.with_means(rewards=[1.0, 2.0])
    with pytest.raises(InvalidArgumentError, match=r"'costs' parameter of CBMAIProblem.with_means"):
        problem.with_means(costs=[[1.0, 2.0]])
    with pytest.raises(InvalidArgumentError, match=r"'costs' parameter .*\(row, column\) \[0, 1\] are not finite"):
        allocopt.CBMAIProblem([1.0, 0.6], [[0.5, np.nan]], [1.0])


def test_bound_refuses_budgets_below_the_unknown_arms():
    hardness = allocopt.cbmai_hardness(allocopt.CBMAIProblem([1.0, 0.6], [[0.5, 0.2]], [1.0]))
    for budget in (-5, 1, np.nan, [100, -1], "100"):
        with pytest.raises(InvalidArgumentError, match=r"'budget' parameter of CBMAIHardness.bound"):
            hardness.bound(budget)
    assert np.all(np.isfinite(hardness.bound([2, 100])))
