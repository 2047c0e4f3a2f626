"""Vectorised basis enumeration against an independent per-basis computation."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from cbmai_testlib import brute_force_bases, random_problem

import allocopt
from allocopt.cbmai.bases import basis_layout, evaluate_bases


@pytest.mark.parametrize("n_costs", [1, 2, 3, 4])
def test_every_basis_matches_numpy_solve(rng, n_costs):
    for _ in range(15):
        problem = random_problem(rng, n_costs=n_costs, n_arms=int(rng.integers(1, 7)))
        table = allocopt.enumerate_bases(problem)
        reference = brute_force_bases(problem)
        matrix, _, _ = problem.standard_form()
        assert table.n_bases == len(reference) == math.comb(problem.n_columns, n_costs + 1)
        for row, (basis, x, value) in enumerate(reference):
            assert tuple(table.bases[row]) == basis
            # determinant against numpy's LU determinant (independent)
            det = np.linalg.det(matrix[:, list(basis)])
            assert table.determinant[row] == pytest.approx(det, rel=1e-9, abs=1e-12)
            if x is None:
                assert not table.invertible[row]
                continue
            assert table.invertible[row]
            scale = max(1.0, np.max(np.abs(x)))
            np.testing.assert_allclose(table.x[row], x, rtol=1e-9, atol=1e-10 * scale)
            assert table.values[row] == pytest.approx(value, rel=1e-9, abs=1e-10 * scale)
            assert table.feasible[row] == bool(np.all(x >= -1e-9))


def test_exactly_singular_bases_are_screened():
    # Three arms on the line c2 = c1 + 0.3 (Table 1 grid points) make A_J singular; two arms with equal c2
    # and the slack of cost 1 make it singular too (det = +-(0.7 - 0.7)).
    problem = allocopt.CBMAIProblem([1.0, 0.5, 0.2], [[0.4, 0.6, 0.8], [0.7, 0.9, 1.1]], [1.0, 1.0])
    table = allocopt.enumerate_bases(problem)
    by_basis = {tuple(b): i for i, b in enumerate(table.bases)}
    assert not table.invertible[by_basis[(0, 1, 2)]]
    assert not table.feasible[by_basis[(0, 1, 2)]]
    assert np.isnan(table.values[by_basis[(0, 1, 2)]])
    assert table.hadamard_ratio[by_basis[(0, 1, 2)]] < 1e-15
    equal_c2 = allocopt.CBMAIProblem([1.0, 0.5], [[0.4, 0.6], [0.7, 0.7]], [1.0, 1.0])
    table = allocopt.enumerate_bases(equal_c2)
    assert not table.invertible[[tuple(b) for b in table.bases].index((0, 1, 2))]


def test_screen_is_scale_aware():
    # Multiplying cost row 0 and its bound by 1e8 is a row scaling of A x = b: the BFSs and the invertible
    # and feasible masks are unchanged (the Hadamard ratio is computed after row equilibration).
    rng = np.random.default_rng(5)
    problem = allocopt.CBMAIProblem(rng.normal(size=5), rng.uniform(size=(2, 5)), [0.5, 0.6])
    scaled = allocopt.CBMAIProblem(problem.rewards, problem.costs * np.array([[1e8], [1.0]]),
                                   problem.bounds * np.array([1e8, 1.0]))
    base, big = allocopt.enumerate_bases(problem), allocopt.enumerate_bases(scaled)
    np.testing.assert_array_equal(base.invertible, big.invertible)
    np.testing.assert_array_equal(base.feasible, big.feasible)
    np.testing.assert_allclose(base.hadamard_ratio, big.hadamard_ratio, rtol=1e-9)
    x_cost = np.where(np.isnan(base.x), 0.0, base.x)
    x_big = np.where(np.isnan(big.x), 0.0, big.x)
    # slack of row 0 is measured in the scaled units: divide it back
    slack0 = big.bases == problem.n_arms
    x_big[slack0] /= 1e8
    np.testing.assert_allclose(x_cost, x_big, rtol=1e-9, atol=1e-12)


def test_subset_of_columns_and_best_value(rng):
    problem = random_problem(rng, n_costs=2, n_arms=6, infeasible_share=0.0)
    arms = [0, 2, 3, 5, 7]  # four true arms and the slack of cost 1
    table = allocopt.enumerate_bases(problem, arms)
    assert table.arms.tolist() == arms
    assert [tuple(b) for b in table.bases] == list(itertools.combinations(arms, 3))
    feasible_values = [value for basis, x, value in brute_force_bases(problem, arms)
                       if x is not None and np.all(x >= -1e-9)]
    assert table.best_value() == pytest.approx(max(feasible_values, default=-np.inf), rel=1e-12)
    assert table.feasible_bases.shape == (len(feasible_values), 3)


def test_fewer_columns_than_rows_gives_no_basis():
    problem = allocopt.CBMAIProblem([1.0, 2.0], [[1.0, 2.0], [1.0, 1.0]], [3.0, 3.0])
    table = allocopt.enumerate_bases(problem, [0, 1])
    assert table.n_bases == 0 and table.best_value() == -np.inf


def test_layout_membership_lists_every_slot_of_every_column():
    layout = basis_layout(7, 3)
    for column in range(7):
        slots = layout.membership[column]
        assert slots.size == math.comb(6, 2)
        assert np.all(layout.slots.ravel()[slots] == column)  # slot-major flat indices
    # minor_ids point at the subset equal to the basis without that slot
    for combo, ids in zip(layout.combos, layout.minor_ids):
        for slot in range(3):
            assert tuple(layout.subsets[ids[slot]]) == tuple(np.delete(combo, slot))


def test_batched_evaluation_equals_one_by_one(rng):
    problems = [random_problem(rng, n_costs=2, n_arms=5) for _ in range(6)]
    matrices = np.stack([p.standard_form()[0] for p in problems])
    objectives = np.stack([p.standard_form()[2] for p in problems])
    bounds = np.stack([p.bounds for p in problems])
    layout = basis_layout(7, 3)
    batched = evaluate_bases(matrices, objectives, bounds, layout)
    for index, problem in enumerate(problems):
        single = allocopt.enumerate_bases(problem)
        np.testing.assert_array_equal(batched.feasible[index], single.feasible)
        np.testing.assert_array_equal(batched.x[index], single.x)


def test_tolerances_are_validated():
    problem = allocopt.CBMAIProblem([1.0], [[0.5]], [1.0])
    with pytest.raises(allocopt.InvalidArgumentError, match="'singular_tol' parameter of enumerate_bases"):
        allocopt.enumerate_bases(problem, singular_tol=1.5)
    with pytest.raises(allocopt.InvalidArgumentError, match="'feasibility_tol' parameter of enumerate_bases"):
        allocopt.enumerate_bases(problem, feasibility_tol=-1.0)
