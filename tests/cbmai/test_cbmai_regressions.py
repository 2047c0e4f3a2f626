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
from allocopt.exceptions import AllocoptError, InvalidArgumentError, SolverError

from cbmai_exact import (exact_optimum, judge_lagrangian, judge_result, one_unknown_gap, random_wide_problem,
                         solver_backends, witness_violation)

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


# ---------------------------------------------------------------------------------------------------------
# every backend certified like the enumeration (issue 28): the three reports, then the mechanism
# ---------------------------------------------------------------------------------------------------------
BACKENDS = [pytest.param(method, options, id=label) for label, method, options in solver_backends()]

# Reported instance 1: PuLP answered "optimal" with p violating cost row 0 by 19% (row 0 costs ~1e-7, row 1 ~5e5).
PULP_INFEASIBLE = {
    "rewards": [-0.1290102905625266, -2.1481589838681754, -1.734546945668158],
    "costs": [[6.236112411589593e-08, 3.014226994795961e-07, 6.53302975753519e-07],
              [493672.0750443369, 293777.6261020713, 479296.06998955674]],
    "bounds": [1.6461673326530155e-07, 343592.92804166826],
}
# Reported instance 2: PuLP answered value 0.94563 with p[6] = -1.1e-8 on an arm whose row-1 cost 786513 is
# 7.5e8 times the bound 0.001055 (the negative weight paid the budget).
PULP_NEGATIVE_WEIGHT = {
    "rewards": [-0.4992976393800193, 2.6653098727613935, 0.48918408028689253, 0.7810598658436485,
                -0.44642789877799827, 0.9448581448862241, 0.984134250674898, -0.6389180689625081],
    "costs": [[0.028918601342004423, 122334.87228188812, 1.2720548892707372e-06, 1.1233764618341057e-06,
               83585.74539595764, 0.036788700636143916, 2.1474848206840514e-05, 1.984687749200298e-06],
              [0.6904766542752688, 0.00045284689448333486, 11.59960742296606, 3.844158619145328e-06,
               1.4427224412838295e-06, 0.009742954118332038, 786513.2170100567, 3.303596024889087e-06]],
    "bounds": [54.66046996503706, 0.001055348319678365],
}
# Reported instance 3: HiGHS answered "infeasible" for the LP restricted to every column but arm 3 (K = 7, L = 3).
HIGHS_FEASIBLE_SUBSET = {
    "rewards": [-0.8126154956481006, -0.607392653638219, -0.7482922584246241, -1.2668250164657744,
                0.4449512708449519, 0.03269010004961176, 0.0018423176502688362],
    "costs": [[14.68054302543798, 5.158783137696471, 0.009333408052244552, 0.0004286002237232257,
               153207.36956612841, 1.6115260090109722e-06, 92282.48189046409],
              [18885.060551640327, 1.0542566135001327e-05, 0.06574575994420072, 81.58421918858134,
               3294.964238273618, 1773.629800395073, 8.863925824828959],
              [7.188031317154426e-06, 37407.339815190746, 31.662369176636417, 0.10100235961511955,
               11.608854354212388, 0.002274025869282925, 1.0933020941176077e-06]],
    "bounds": [0.013215838333841769, 0.1837838547864527, 793.7873445097783],
}
HIGHS_FEASIBLE_SUBSET_ARMS = [0, 1, 2, 4, 5, 6, 7, 8, 9]


def _judged(data, method, options, arms=None):
    """Every problem of ``solve_cbmai``'s answer and of the Lagrangian scores on the same backend, judged against
    the exact rational optimum (``cbmai_exact``)."""
    problem = allocopt.CBMAIProblem(data["rewards"], data["costs"], data["bounds"])
    columns = list(range(problem.n_columns)) if arms is None else arms
    exact = exact_optimum(problem, columns)
    result = allocopt.solve_cbmai(problem, method, arms=columns, **options)
    scores = allocopt.lagrangian_scores(problem, columns, method=method, **options)
    return exact, result, (judge_result(problem, columns, exact, result, method)
                           + judge_lagrangian(problem, columns, exact, scores, method))


@pytest.mark.parametrize(("method", "options"), BACKENDS)
def test_pulp_called_an_infeasible_lp_optimal(method, options):
    exact, result, problems = _judged(PULP_INFEASIBLE, method, options)
    assert exact is None  # exact rational arithmetic: no feasible mix
    assert result.status == "infeasible" and problems == []
    ray = result.certificate.farkas_ray
    if ray is not None:  # (the enumeration's verdict may rest on its bases alone)
        matrix, rhs, _ = allocopt.CBMAIProblem(**PULP_INFEASIBLE).standard_form()
        assert rhs @ ray == pytest.approx(-1.0) and np.all(matrix.T @ ray >= -1e-12 * np.abs(matrix.T) @ np.abs(ray))


@pytest.mark.parametrize(("method", "options"), BACKENDS)
def test_pulp_paid_the_budget_with_a_negative_weight(method, options):
    exact, result, problems = _judged(PULP_NEGATIVE_WEIGHT, method, options)
    assert float(exact) == pytest.approx(0.7995831698978194, rel=1e-15)  # the report's value, exact arithmetic
    assert result.status == "optimal" and problems == []
    assert np.all(result.p >= 0.0)


@pytest.mark.parametrize(("method", "options"), BACKENDS)
def test_highs_called_a_feasible_subset_infeasible(method, options):
    exact, result, problems = _judged(HIGHS_FEASIBLE_SUBSET, method, options, HIGHS_FEASIBLE_SUBSET_ARMS)
    assert float(exact) == pytest.approx(-0.7481340106288268, rel=1e-15)  # the report's value, exact arithmetic
    assert result.status == "optimal" and problems == []


def _fake_pulp(monkeypatch, label, x=None):
    """Make PuLP answer ``label`` with the point ``x`` (and zero multipliers) whatever the LP."""
    from allocopt.cbmai import _pulp

    def fake(matrix, rhs, objective, solver=None, *, verbose=False):
        point = None if x is None else np.asarray(x, dtype=float)
        return label, point, None if x is None else np.zeros(matrix.shape[0]), f"fake PuLP: {label}"

    monkeypatch.setattr(_pulp, "solve_with_pulp", fake)


def test_an_optimum_that_fails_the_certificate_gives_way_to_the_enumeration(monkeypatch):
    # arms (c, r) = (2, 1), (0, 0.2), cbar = 1. The fake solver returns the vertex of {arm 1, slack}, p = (0, 1),
    # value 0.2: feasible but not optimal (its dual (0, 0.2) prices arm 0 at 0.2 < 1). The optimum is p = (1/2, 1/2),
    # value 0.6 (by hand: the cost row binds, 2 p_0 = 1).
    _fake_pulp(monkeypatch, "Optimal", [0.0, 1.0, 1.0])
    problem = allocopt.CBMAIProblem([1.0, 0.2], [[2.0, 0.0]], [1.0])
    result = allocopt.solve_cbmai(problem, "pulp")
    assert result.status == "optimal" and result.p.tolist() == [0.5, 0.5] and result.value == pytest.approx(0.6)
    assert "feasible dual" in result.certificate_failure
    assert "the enumeration's answer is reported" in result.message and result.dual_rule.startswith("lambda")
    assert result.to_dict()["certificate_failure"] == result.certificate_failure


def test_an_infeasibility_claim_without_proof_gives_way_to_the_enumeration(monkeypatch):
    # The same feasible LP, which the fake solver calls infeasible: no Farkas ray can prove it.
    _fake_pulp(monkeypatch, "Infeasible")
    problem = allocopt.CBMAIProblem([1.0, 0.2], [[2.0, 0.0]], [1.0])
    result = allocopt.solve_cbmai(problem, "pulp")
    assert result.status == "optimal" and result.value == pytest.approx(0.6)
    assert "Farkas" in result.certificate_failure
    scores = allocopt.lagrangian_scores(problem, method="pulp")  # by hand: lambda = (0.4, 0.2), -(A^T lambda - mu)
    assert scores.tolist() == pytest.approx([0.0, 0.0, -0.4])


def test_without_the_enumeration_to_fall_back_on_the_answer_is_not_certified(monkeypatch):
    from allocopt.cbmai import solve as solve_module

    _fake_pulp(monkeypatch, "Optimal", [0.0, 1.0, 1.0])
    monkeypatch.setattr(solve_module, "ENUMERATION_BASIS_LIMIT", 0)
    problem = allocopt.CBMAIProblem([1.0, 0.2], [[2.0, 0.0]], [1.0])
    result = allocopt.solve_cbmai(problem, "pulp")
    assert (result.status, result.success, result.support, result.basis) == ("not_certified", False, (), ())
    assert np.isnan(result.value) and np.all(np.isnan(result.p)) and np.all(np.isnan(result.duals))
    assert "feasible dual" in result.message and "no fallback to the enumeration" in result.message
    with pytest.raises(SolverError, match=r"lagrangian_scores\(method='pulp'\): .* could not be certified"):
        allocopt.lagrangian_scores(problem, method="pulp")


@pytest.mark.parametrize("method", ["highs", "pulp"])
def test_a_solver_failure_falls_back_too(monkeypatch, method):
    # A backend that raises SolverError (no answer at all) is judged like an uncertified answer.
    from allocopt.cbmai import _highs, _pulp

    def broken(*args, **kwargs):
        raise SolverError("the solver broke")

    monkeypatch.setattr(_highs if method == "highs" else _pulp, "solve", broken)
    problem = allocopt.CBMAIProblem([1.0, 0.2], [[2.0, 0.0]], [1.0])
    result = allocopt.solve_cbmai(problem, method)
    assert result.status == "optimal" and result.value == pytest.approx(0.6)
    assert result.certificate_failure == "the solver broke"


def test_a_dual_feasible_only_relatively_must_also_bound_the_gap(monkeypatch):
    # Arm 0: reward 1, cost 1e-6; arm 1: reward 0.8, cost 1e10; bound 100. The optimum is p = (1, 0), value 1 (arm 0
    # alone is feasible and has the larger reward). The vertex of {arm 0, arm 1} spends the whole bound,
    # p_1 = (100 - 1e-6) / (1e10 - 1e-6) ~ 1e-8, value ~ 1 - 2e-9; its dual prices the slack at
    # (0.8 - 1) / (1e10 - 1e-6) ~ -2e-11, a violation of only 2e-11 relative to the objective, but the slack can
    # reach 100, so the optimum may exceed the value by 2e-9 (the gap bound): that vertex is not certified.
    p_1 = (100 - 1e-6) / (1e10 - 1e-6)
    _fake_pulp(monkeypatch, "Optimal", [1.0 - p_1, p_1, 0.0])
    problem = allocopt.CBMAIProblem([1.0, 0.8], [[1e-6, 1e10]], [100.0])
    assert exact_optimum(problem) == 1
    result = allocopt.solve_cbmai(problem, "pulp")
    assert result.status == "optimal" and result.value == 1.0 and result.p.tolist() == [1.0, 0.0]
    assert "gap" in result.certificate_failure
