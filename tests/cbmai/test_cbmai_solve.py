"""solve_cbmai: Table 1, cross-method agreement, duals, infeasible and degenerate instances."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest
from cbmai_testlib import brute_force_optimum, random_problem, table_1_problem

import allocopt
from allocopt.testing import get_instance

METHODS = ("enumerate", "highs", "pulp")


def check_duals(problem, result, columns=None, tol=1e-9):
    """Dual feasibility, complementary slackness and equal objective, computed here from the standard form."""
    matrix, rhs, objective = problem.standard_form()
    columns = np.arange(problem.n_columns) if columns is None else np.asarray(columns)
    lam = result.duals
    reduced = matrix[:, columns].T @ lam - objective[columns]
    scale = max(1.0, np.max(np.abs(objective)))
    assert np.all(reduced >= -tol * scale), "dual infeasible"
    assert np.max(np.abs(result.x[columns] * reduced)) <= tol * scale, "complementary slackness fails"
    assert rhs @ lam == pytest.approx(result.value, abs=tol * scale), "dual objective differs"
    np.testing.assert_allclose(matrix @ result.x, rhs, atol=tol)  # primal feasibility
    assert np.all(result.x >= -tol)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("name", ["cbmai-d1p", "cbmai-d2p", "cbmai-d3p"])
def test_table_1_supports_and_values(name, method):
    # Appendix C, Table 1: the bold arms (plus the basic slacks) and the values of spec/cbmai.md.
    reference = get_instance(name)
    result = allocopt.solve_cbmai(table_1_problem(name), method)
    assert result.status == "optimal"
    assert result.support == reference.expected["support"]
    assert result.value == pytest.approx(reference.expected["value"], abs=reference.expected["value_tolerance"])
    assert result.assumption_1.holds
    check_duals(table_1_problem(name), result)


def test_table_1_mixing_weights():
    # D2P: arms (0.8, 1.1) and (1.4, 0.7) mixed so that cost 1 binds: 0.8 p + 1.4 (1 - p) = 1 gives p = 2/3;
    # value 0.80 * 2/3 + 1.42 / 3 = 1.006667 (spec/cbmai.md). D3P: all three arms, both costs bind.
    d2p = allocopt.solve_cbmai(table_1_problem("cbmai-d2p"))
    np.testing.assert_allclose(d2p.p[[10, 20]], [2 / 3, 1 / 3], atol=1e-12)
    assert d2p.value == pytest.approx(0.80 * 2 / 3 + 1.42 / 3, abs=1e-12)
    d3p = allocopt.solve_cbmai(table_1_problem("cbmai-d3p"))
    costs = table_1_problem("cbmai-d3p").costs
    np.testing.assert_allclose(costs @ d3p.p, [1.0, 1.0], atol=1e-12)


def test_methods_agree_on_random_instances(rng):
    # 540 random instances, L = 1, 2, 3 in turn, about a fifth of them infeasible by construction.
    counts = {"optimal": 0, "infeasible": 0}
    for index in range(540):
        problem = random_problem(rng, n_costs=1 + index % 3)
        reference = brute_force_optimum(problem)
        results = {method: allocopt.solve_cbmai(problem, method, diagnose=False) for method in METHODS}
        status = "optimal" if np.isfinite(reference) else "infeasible"
        counts[status] += 1
        for method, result in results.items():
            assert result.status == status, (method, index)
            if status == "infeasible":
                assert result.support == () and result.value == -np.inf
                continue
            assert result.value == pytest.approx(reference, abs=1e-9 * max(1.0, abs(reference))), (method, index)
            check_duals(problem, result)
        if index % 10 == 0:
            # CBC through PuLP reads its solution back from a text file with 8 significant digits: 1e-6 here.
            cbc = allocopt.solve_cbmai(problem, "pulp", solver="cbc", diagnose=False)
            assert cbc.status == status
            if status == "optimal":
                assert cbc.value == pytest.approx(reference, abs=1e-6 * max(1.0, abs(reference)))
                check_duals(problem, cbc, tol=1e-6)
        values = [result.value for result in results.values()]
        if status == "optimal":
            assert max(values) - min(values) <= 1e-9 * max(1.0, abs(reference))
    assert counts["optimal"] >= 300 and counts["infeasible"] >= 60


def test_infeasible_instance_has_empty_support_and_a_farkas_ray():
    # Every arm's cost 1 exceeds the bound 0.5: no mixed arm is feasible.
    problem = allocopt.CBMAIProblem([1.0, 2.0, 3.0], [[0.9, 0.8, 1.2], [0.1, 0.2, 0.3]], [0.5, 1.0])
    matrix, rhs, _ = problem.standard_form()
    for method in METHODS:
        result = allocopt.solve_cbmai(problem, method)
        assert (result.status, result.support, result.basis, result.value) == ("infeasible", (), (), -np.inf)
        assert np.all(np.isnan(result.p)) and np.all(np.isnan(result.duals))
        ray = result.certificate.farkas_ray
        assert np.all(matrix.T @ ray >= -1e-12) and rhs @ ray < 0
        assert not result.optimal
        assert result.assumption_1.failures == ("the LP is infeasible: no basis is feasible",)


def test_degenerate_and_tied_instances_are_reported():
    # Arm 0 costs exactly the bound: the optimal vertex p = e_0 has slack 0, i.e. one nonzero coordinate for
    # L + 1 = 2 rows (degenerate; bases {0, 1} and {0, slack} describe it).
    degenerate = allocopt.CBMAIProblem([1.0, 0.3], [[1.0, 0.5]], [1.0])
    for method in METHODS:
        result = allocopt.solve_cbmai(degenerate, method)
        assert result.support == (0,) and result.value == pytest.approx(1.0, abs=1e-12)
        report = result.assumption_1
        assert report.degenerate and not report.holds and report.unique_optimum
        assert report.n_nonzeros == 1 and report.n_optimal_bases == 2
        assert any("degenerate" in failure for failure in report.failures)
        check_duals(degenerate, result)
        assert len(result.basis) == 2 and set(result.support) <= set(result.basis)
    # Two identical arms: two optimal vertices.
    tied = allocopt.CBMAIProblem([1.0, 1.0, 0.2], [[0.5, 0.5, 0.1]], [1.0])
    report = allocopt.solve_cbmai(tied).assumption_1
    assert not report.unique_optimum and report.n_optimal_vertices == 2
    assert any("several optimal solutions" in failure for failure in report.failures)


def test_restricted_lp_equals_smaller_instance(rng):
    # Dropping a true arm is the same as deleting it from the instance; dropping slack l turns cost l into an
    # equality, checked here with scipy's linprog on an explicit equality-constrained LP.
    from scipy.optimize import linprog

    for _ in range(20):
        problem = random_problem(rng, n_costs=2, n_arms=5, infeasible_share=0.0)
        arms = [0, 1, 3, 4, 5]  # arm 2 and slack 1 (column 6) removed
        restricted = allocopt.solve_cbmai(problem, arms=arms)
        linprog_result = linprog(-problem.rewards[[0, 1, 3, 4]],
                                 A_ub=problem.costs[[0]][:, [0, 1, 3, 4]], b_ub=problem.bounds[[0]],
                                 A_eq=np.vstack([problem.costs[[1]][:, [0, 1, 3, 4]], np.ones((1, 4))]),
                                 b_eq=[problem.bounds[1], 1.0], bounds=(0, None), method="highs")
        if linprog_result.status == 2:
            assert restricted.status == "infeasible"
            continue
        assert restricted.value == pytest.approx(-linprog_result.fun, abs=1e-9)
        assert restricted.x[2] == 0.0 and restricted.x[6] == 0.0
        check_duals(problem, restricted, arms)
        for method in ("highs", "pulp"):
            assert allocopt.solve_cbmai(problem, method, arms=arms).value == pytest.approx(restricted.value,
                                                                                           abs=1e-9)


def test_solvers_write_nothing_unless_asked():
    # In a fresh interpreter (HiGHS prints its banner from compiled code when a process builds its first model):
    # HiGHS through scipy and PuLP with each solver, and the Lagrangian scores on them, write nothing...
    from allocopt.cbmai._pulp import available_pulp_solvers

    calls = ["solve_cbmai(problem, 'highs')", "lagrangian_scores(problem, method='highs')"]
    for solver in available_pulp_solvers():
        calls += [f"solve_cbmai(problem, 'pulp', solver={solver!r})",
                  f"lagrangian_scores(problem, method='pulp', solver={solver!r})"]
    prelude = "from allocopt import CBMAIProblem, solve_cbmai, lagrangian_scores\n" \
              "problem = CBMAIProblem([1.0, 0.2], [[2.0, 0.0]], [1.0])\n"
    quiet = subprocess.run([sys.executable, "-c", prelude + "\n".join(calls)], capture_output=True, text=True)
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, "", "")
    # ... unless the caller asks (HiGHS's log through PuLP, and through scipy)
    for call in ("solve_cbmai(problem, 'pulp', solver='highs', verbose=True)",
                 "solve_cbmai(problem, 'highs', verbose=True)"):
        loud = subprocess.run([sys.executable, "-c", prelude + call], capture_output=True, text=True)
        assert loud.returncode == 0 and "HiGHS" in loud.stdout + loud.stderr


def test_pulp_raises_no_warnings():
    problem = table_1_problem("cbmai-d2p")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for solver in ("highs", "cbc"):
            allocopt.solve_cbmai(problem, "pulp", solver=solver)


def test_result_is_frozen_and_read_only():
    result = allocopt.solve_cbmai(table_1_problem("cbmai-d1p"))
    with pytest.raises(AttributeError):
        result.value = 0.0
    with pytest.raises(ValueError):
        result.p[0] = 1.0
    assert result.support_labels() == ["arm 5", "slack 0", "slack 1"]
    assert result.certificate.certifies(1e-12)


@pytest.mark.parametrize(
    ("kwargs", "fragments"),
    [
        (dict(method="simplex"), ["'method' parameter of solve_cbmai", "'enumerate', 'highs', 'pulp'", "'simplex'"]),
        (dict(method="highs", solver="cbc"), ["'solver' parameter of solve_cbmai", "None unless method='pulp'"]),
        (dict(method="pulp", solver="gurobi"), ["'solver' parameter of solve_cbmai", "'highs', 'cbc'"]),
        (dict(arms=[0, 9]), ["'arms' parameter of solve_cbmai", "0..2"]),
        # an LP over no column used to come back "infeasible"
        (dict(arms=[]), ["'arms' parameter of solve_cbmai", "nonempty collection", "Got [] instead"]),
        (dict(method="pulp", arms=[]), ["'arms' parameter of solve_cbmai", "nonempty collection"]),
        (dict(diagnose="yes"), ["'diagnose' parameter of solve_cbmai", "True or False", "'yes'"]),
        (dict(method="highs", verbose=1), ["'verbose' parameter of solve_cbmai", "True or False"]),
        (dict(method="enumerate", verbose=True), ["solve_cbmai(method='enumerate') got unknown option(s) 'verbose'"]),
    ],
)
def test_bad_arguments(kwargs, fragments):
    problem = allocopt.CBMAIProblem([1.0, 0.2], [[2.0, 0.0]], [1.0])
    with pytest.raises(allocopt.InvalidArgumentError) as error:
        allocopt.solve_cbmai(problem, **kwargs)
    for fragment in fragments:
        assert fragment in str(error.value)
