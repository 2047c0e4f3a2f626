"""Differential tests of the CBMAI layer on the instance classes that used to break.

Every backend of ``solve_cbmai`` is run on every instance: the enumeration, HiGHS (scipy), and PuLP with each
solver it can run here (HiGHS and CBC); so are the Lagrangian scores built on each backend and the IV scores.
Every answer is judged against an evaluation written in the test and independent of allocopt's machinery
(``cbmai_exact``):

* LP values and statuses: exact rational vertex enumeration (``exact_optimum_by_bases``, itself checked against
  the vertex enumeration in the space of ``p``, ``exact_optimum``);
* the returned point: ``p >= 0``, ``1^T p = 1`` and the cost rows checked with numpy, relative to the magnitudes
  in each row; the dual: ``A^T lambda >= mu`` relative to its magnitudes, and ``b^T lambda`` equal to the exact
  optimum;
* IV and Lagrangian scores: the largest IV score is the optimum of the restricted LP (the optimal basis contains
  the support), the Lagrangian scores are ``<= 0`` with ``0`` reached, and both are ``-inf`` exactly when the
  restricted LP is infeasible;
* hardness gaps (``L = 1``, one unknown arm): a direct one-dimensional search (``cbmai_exact.one_unknown_gap``)
  and a numpy check that the library's witness satisfies the constraints of (9) at the reported distance.

A wrong answer is a status "optimal" whose value, point or dual is wrong, "infeasible" for a feasible LP or the
reverse, or an exception; "not_certified" makes no claim but is counted too (and must not occur here: every
instance is small enough for the fallback to the enumeration).

Classes: cost rows spanning 12, 14 and 16 decades with up to 8 arms and 3 costs (all columns and column
subsets), column subsets lacking slacks (degenerate, dyadic data with exact ties), identical cost columns,
``K = 1``, bases made of known arms and a shared single unknown arm.
"""

from __future__ import annotations

import numpy as np
import pytest

import allocopt
from allocopt.algorithms import sfsr, uslp

from cbmai_exact import (TOL, Tally, exact_optimum, exact_optimum_by_bases, judge_lagrangian, judge_result,
                         one_unknown_gap, random_arm_subset, random_dyadic_problem, random_one_unknown_problem,
                         random_wide_problem, solver_backends, witness_violation)

def check_lp_case(problem, arms=None, backends=None, scores=True, tally=None) -> list[str]:
    """All disagreements of the library with the exact evaluation on one instance (restricted to ``arms``), for
    every backend in ``backends`` (default: the enumeration) and, with ``scores``, the IV scores and the
    Lagrangian scores built on each backend; judged answers are counted in ``tally``."""
    columns = list(range(problem.n_columns)) if arms is None else list(arms)
    backends = solver_backends()[:1] if backends is None else backends
    tally = Tally() if tally is None else tally
    exact = exact_optimum_by_bases(problem, columns)
    before = len(tally.failures)
    for label, method, options in backends:
        tag = f"{problem!r} costs={problem.costs.tolist()} bounds={problem.bounds.tolist()} arms={columns} {label}"
        try:
            result = allocopt.solve_cbmai(problem, method, arms=columns, diagnose=False, **options)
        except allocopt.AllocoptError as error:
            tally.record(label, [f"{tag}: raised {error!r}"])
            continue
        tally.record(label, judge_result(problem, columns, exact, result, tag), result)
        if not scores:
            continue
        try:
            lagrangian = allocopt.lagrangian_scores(problem, columns, method=method, **options)
        except allocopt.AllocoptError as error:
            tally.record(f"lagrangian/{label}", [f"{tag} Lagrangian scores: raised {error!r}"])
            continue
        tally.record(f"lagrangian/{label}", judge_lagrangian(problem, columns, exact, lagrangian, f"{tag} (8)"))
    if scores:
        iv = allocopt.iv_scores(problem, columns)
        if exact is None:
            problems = [] if np.all(iv == -np.inf) else [f"{problem!r} arms={columns}: finite IV scores"]
        elif abs(np.max(iv) - float(exact)) > TOL * max(1.0, abs(float(exact))):
            problems = [f"{problem!r} arms={columns}: max IV {np.max(iv)!r}, exact {float(exact)!r}"]
        else:
            problems = []
        tally.record("iv", problems)
    return tally.failures[before:]


LP_CLASSES = ("wide", "wide_subsets", "subsets", "identical", "single")


def run_lp_classes(seed: int, counts: dict[str, int], tally: Tally | None = None) -> Tally:
    """Every backend (and the scores built on it) on each LP class, ``counts[name]`` instances of each:

    * ``wide``: cost rows spanning 12, 14 or 16 decades (in turn), up to 8 arms and 3 costs, signed rewards in
      half of them, all columns;
    * ``wide_subsets``: the same instances restricted to a random column subset lacking a slack;
    * ``subsets``: dyadic data with exact ties restricted to such subsets (degenerate vertices);
    * ``identical``: identical cost columns, whole problem and a subset;
    * ``single``: ``K = 1``, wide and dyadic.
    """
    rng = np.random.default_rng(seed)
    backends = solver_backends()
    tally = Tally() if tally is None else tally
    for index in range(counts.get("wide", 0)):
        problem = random_wide_problem(rng, decades=(12.0, 14.0, 16.0)[index % 3], n_arms=int(rng.integers(1, 9)),
                                      n_costs=int(rng.integers(1, 4)), signed_rewards=bool(index % 2))
        check_lp_case(problem, backends=backends, tally=tally)
    for index in range(counts.get("wide_subsets", 0)):
        problem = random_wide_problem(rng, decades=(12.0, 14.0, 16.0)[index % 3], n_arms=int(rng.integers(1, 9)),
                                      n_costs=int(rng.integers(1, 4)), signed_rewards=bool(index % 2))
        check_lp_case(problem, random_arm_subset(rng, problem), backends=backends, tally=tally)
    for _ in range(counts.get("subsets", 0)):
        problem = random_dyadic_problem(rng)
        check_lp_case(problem, random_arm_subset(rng, problem), backends=backends, tally=tally)
    for _ in range(counts.get("identical", 0)):
        problem = random_dyadic_problem(rng, n_arms=int(rng.integers(2, 6)), duplicate=True)
        check_lp_case(problem, backends=backends, tally=tally)
        check_lp_case(problem, random_arm_subset(rng, problem), backends=backends, tally=tally)
    for _ in range(counts.get("single", 0)):
        problem = random_wide_problem(rng, n_arms=1) if rng.random() < 0.5 else random_dyadic_problem(rng, n_arms=1)
        check_lp_case(problem, backends=backends, tally=tally)
    return tally


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


def _check_lp_tally(tally: Tally, minimum: int) -> None:
    backends = [label for label, _, _ in solver_backends()]
    expected = set(backends) | {f"lagrangian/{label}" for label in backends} | {"iv"}
    assert set(tally.tried) == expected, tally.table()  # every method and every PuLP solver available was run
    assert tally.judged >= minimum, tally.table()
    assert tally.failures == [], tally.table() + "\n" + "\n".join(tally.failures[:20])
    assert sum(tally.not_certified.values()) == 0, tally.table()


def test_differential_lp_classes():
    # a slice of the large suite below (about 800 judged answers, a few seconds per backend)
    tally = run_lp_classes(11, {"wide": 25, "wide_subsets": 25, "subsets": 16, "identical": 6, "single": 6})
    _check_lp_tally(tally, 700)


def test_exact_references_agree():
    # The two exact routes of cbmai_exact (vertices in the space of p; bases of the standard form by integer
    # Cramer) on instances small enough for both, whole problems and column subsets.
    rng = np.random.default_rng(14)
    for index in range(150):
        if index % 2:
            problem = random_wide_problem(rng, n_arms=int(rng.integers(1, 6)), n_costs=int(rng.integers(1, 4)),
                                          signed_rewards=True)
        else:
            problem = random_dyadic_problem(rng, duplicate=True)
        arms = None if index % 3 == 0 else random_arm_subset(rng, problem)
        assert exact_optimum(problem, arms) == exact_optimum_by_bases(problem, arms), (problem, arms)


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
    # about 12 000 judged answers (every backend, the Lagrangian scores on each, the IV scores); a few minutes
    tally = run_lp_classes(21, {"wide": 400, "wide_subsets": 400, "subsets": 200, "identical": 100, "single": 100})
    _check_lp_tally(tally, 10_000)


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
    from allocopt.algorithms.cbmai._common import empirical_matrices
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
